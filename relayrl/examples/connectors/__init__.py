"""RLlib's `ray.rllib.examples.connectors`: example classes to copy."""
