"""Deterministic toy environments for tests and examples (`from relayrl.testing import CountingEnv`)."""
from relayrl.testing.envs import CorridorEnv, CountingEnv, SpacesEnv

__all__ = ["CorridorEnv", "CountingEnv", "SpacesEnv"]
