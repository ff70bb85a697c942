"""Deterministic toy environments for tests and examples (`from relayrl.testing import CountingEnv`)."""
from relayrl.testing.envs import CorridorEnv, CountingEnv, SpacesEnv
from relayrl.testing.example_envs import StatelessCartPole
from relayrl.testing.image_envs import DotSideContinuousEnv, DotSideEnv

__all__ = ["CorridorEnv", "CountingEnv", "DotSideContinuousEnv", "DotSideEnv", "SpacesEnv", "StatelessCartPole"]
