"""RLlib's `ray.rllib.examples.connectors.classes`: example classes to copy."""
