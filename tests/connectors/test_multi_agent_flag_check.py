"""A piece that takes RLlib's `multi_agent` flag, built without it in a multi-agent config (as the default
module's Discrete-observation error suggested), is named with the fix when the algorithm is built.

Before, `FlattenObservations()` flattened the Dict of all agents' spaces into one Box for every module and failed
with gymnasium's IndexError at the first sample (on remote runners: restarted every 60 s, a run that never ended).
"""
import gymnasium as gym
import numpy as np
import pytest

from relayrl import PPOConfig
from relayrl.connectors import FlattenObservations, FrameStacking, MeanStdFilter, PrevActionsPrevRewards
from relayrl.env.multi_agent_env import MultiAgentEnv


class BoxAndDiscreteAgents(MultiAgentEnv):
    def __init__(self, config=None):
        super().__init__()
        self.possible_agents = self.agents = ["a", "b"]
        self.observation_spaces = {"a": gym.spaces.Box(-1.0, 1.0, (3,), np.float32), "b": gym.spaces.Discrete(4)}
        self.action_spaces = {"a": gym.spaces.Discrete(2), "b": gym.spaces.Discrete(2)}
        self.t = 0

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return {"a": np.zeros(3, np.float32), "b": 0}, {}

    def step(self, action_dict):
        self.t += 1
        obs = {"a": np.full(3, 0.1 * (self.t % 5), np.float32), "b": self.t % 4}
        return obs, {"a": 1.0, "b": float(action_dict["b"])}, {"__all__": self.t >= 8}, {"__all__": False}, {}


def _config(pieces, **flat_kwargs):
    return (PPOConfig().environment(BoxAndDiscreteAgents)
            .env_runners(env_to_module_connector=lambda env, spaces, device: pieces())
            .training(train_batch_size=32, minibatch_size=16, num_epochs=1)
            .multi_agent(policies={"pa", "pb"}, policy_mapping_fn=lambda aid, episode, **kw: f"p{aid}")
            .debugging(seed=0, logger_config={"type": "none"}))


@pytest.mark.parametrize("pieces, named", [
    (lambda: FlattenObservations(), r"FlattenObservations\(multi_agent=True\)"),
    (lambda: [FlattenObservations(multi_agent=True), MeanStdFilter()], r"MeanStdFilter\(multi_agent=True\)"),
    (lambda: [PrevActionsPrevRewards(), FlattenObservations(multi_agent=True)],
     r"PrevActionsPrevRewards\(multi_agent=True\)"),
    (lambda: [FlattenObservations(multi_agent=True), FrameStacking(num_frames=2)],
     r"FrameStacking\(multi_agent=True\)"),
])
def test_a_piece_without_the_flag_in_a_multi_agent_config_is_named(pieces, named):
    with pytest.raises(ValueError, match=rf"env_to_module_connector of a multi-agent config.*{named}"):
        algo = _config(pieces).build_algo()
        algo.train()  # (before: the IndexError came here)


def test_with_the_flags_it_trains():
    algo = _config(lambda: [PrevActionsPrevRewards(multi_agent=True), FlattenObservations(multi_agent=True),
                            MeanStdFilter(multi_agent=True)]).build_algo()
    result = algo.train()
    assert {"pa", "pb"} <= set(result["learners"])
    assert algo.get_module("pb").observation_space.shape == (4 + 2 + 1,)  # one-hot obs, one-hot action, reward
    algo.stop()


def test_the_flag_in_a_single_agent_config_is_named():
    config = (PPOConfig().environment("CartPole-v1")
              .env_runners(env_to_module_connector=lambda env, spaces, device: FlattenObservations(multi_agent=True)))
    with pytest.raises(ValueError, match=r"FlattenObservations\(multi_agent=True\) in the env_to_module_connector "
                       "of a single-agent config: drop multi_agent=True"):
        config.build_algo()


def test_frame_stacking_with_the_flag_stacks_each_agents_frames_in_its_own_space():
    # (multi_agent=True was ignored: FrameStacking refused the Dict of the agents' spaces)
    algo = (_config(lambda: [FlattenObservations(multi_agent=True), FrameStacking(num_frames=3, multi_agent=True)])
            .env_runners(episode_lookback_horizon=2)
            .training(learner_connector=lambda obs_space, act_space: FrameStacking(
                num_frames=3, multi_agent=True, as_learner_connector=True))).build_algo()  # (episodes hold flat obs)
    assert algo.get_module("pa").observation_space.shape == (9,)  # 3 x Box(3)
    assert algo.get_module("pb").observation_space.shape == (12,)  # 3 x one-hot Discrete(4)
    result = algo.train()
    assert {"pa", "pb"} <= set(result["learners"])
    algo.stop()
