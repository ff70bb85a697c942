"""RLlib's `ray.rllib.examples._old_api_stack.policy`: hand-written old-stack Policies."""
