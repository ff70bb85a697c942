"""Seed 001's from-scratch Policy with its recurrent state (the step counter) and extra action outputs, inside an
Algorithm with 2 remote runners (Ray). learn_on_batch sees state_in_0 / state_out_0 and the extra columns.

    python examples/custom_policy_from_scratch.py
"""
import numpy as np

from relayrl.algorithms.algorithm import Algorithm
from relayrl.policy.policy import Policy


class CustomPolicy(Policy):
    def __init__(self, observation_space, action_space, config):
        Policy.__init__(self, observation_space, action_space, config)
        self.w = 1.0

    def get_initial_state(self):
        return [0]  # the timestep of the episode, as RNN state

    def compute_actions(self, obs_batch, state_batches, prev_action_batch=None, prev_reward_batch=None,
                        info_batch=None, episodes=None, **kwargs):
        assert len(state_batches) == len(self.get_initial_state())
        new_state_batches = [[t + 1 for t in state_batches[0]]]
        action_info_batch = {"some_value": ["foo" for _ in obs_batch], "other_value": [12345 for _ in obs_batch]}
        return [self.action_space.sample() for _ in obs_batch], new_state_batches, action_info_batch

    def learn_on_batch(self, samples):
        assert (samples["state_out_0"] == samples["state_in_0"] + 1).all()
        assert set(samples["some_value"]) == {"foo"} and set(samples["other_value"]) == {12345}
        self.w += 1.0
        return {"rows": samples.count, "max_state": int(np.max(samples["state_in_0"]))}

    def get_weights(self):
        return {"w": self.w}

    def set_weights(self, weights):
        self.w = weights["w"]


class MyAlgo(Algorithm):
    def get_default_policy_class(self, config):
        return CustomPolicy


if __name__ == "__main__":
    import ray

    from relayrl.testing.example_script import add_rllib_example_script_args

    args = add_rllib_example_script_args(default_iters=3).parse_args()
    ray.init(num_cpus=3, include_dashboard=False)
    algo = MyAlgo(config={"env": "CartPole-v1", "num_workers": 2, "train_batch_size": 100, "seed": args.seed,
                          "logger_config": {"type": "none"}})
    for _ in range(args.stop_iters):
        result = algo.train()
        print(result["learners"]["default_policy"], result["env_runners"]["episode_return_mean"])
    print("remote weights:", algo.workers.foreach_worker(lambda w: w.get_policy().get_weights(), local_worker=False))
    algo.stop()
