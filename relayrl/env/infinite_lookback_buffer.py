"""The old import path of `InfiniteLookbackBuffer`: it lives in relayrl/episodes/ now."""
from relayrl.episodes.infinite_lookback_buffer import InfiniteLookbackBuffer, unbatch_items

__all__ = ["InfiniteLookbackBuffer", "unbatch_items"]
