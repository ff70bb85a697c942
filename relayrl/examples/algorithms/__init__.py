"""RLlib's `ray.rllib.examples.algorithms`: example classes to copy."""
