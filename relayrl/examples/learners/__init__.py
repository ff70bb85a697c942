"""RLlib's `ray.rllib.examples.learners`: example classes to copy."""
