"""RLlib's `ray.rllib.examples.envs.classes.utils`: helpers of its example envs."""
