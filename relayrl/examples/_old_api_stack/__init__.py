"""RLlib's `ray.rllib.examples._old_api_stack`: the old-stack example classes other example scripts import."""
