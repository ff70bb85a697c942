"""RLlib's `ray.rllib.examples.learners.classes`: example classes to copy."""
