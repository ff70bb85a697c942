"""RLlib's `ray.rllib.examples.algorithms.classes`: example classes to copy."""
