"""User env classes with Dict / Tuple observation spaces whose parts come as float64 arrays, Python lists or ints,
and a MultiAgentEnv returning float64 and lists for float32 Boxes: every observation of an episode, the last one
included, arrives in its space's dtypes (docs/vector_envs.md, "Env classes you write"). Through PPO with a user's
RLModule that reads the nested observations, and with the FlattenObservations piece users add for such spaces."""
import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from relayrl import Columns, PPOConfig, RLModule, RLModuleSpec, ValueFunctionAPI
from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations
from relayrl.env.vector_env import in_space_dtype
from test_user_env_classes import LAYOUTS, build, check_trains
from user_env_classes import LENGTH, DictObs, TupleOfListAndInt, TwoCounters

NESTED_ENVS = [DictObs, TupleOfListAndInt]


def parts(space, obs) -> list:
    """The parts of a Dict or Tuple observation, in the space's order."""
    if isinstance(space, gym.spaces.Dict):
        return [obs[key] for key in space.spaces]
    return list(obs)


class NestedObservationsModule(RLModule, ValueFunctionAPI):
    """A user's module for a Dict or Tuple of a float32 Box and a Discrete: Box part + one-hot of the Discrete one.
    It casts nothing: a float64 part would fail in torch's Linear (float32 weights)."""

    def setup(self):
        width = gym.spaces.flatdim(self.observation_space)
        self.pi, self.vf = nn.Linear(width, 2), nn.Linear(width, 1)

    def _features(self, obs):
        box, count = parts(self.observation_space, obs)
        return torch.cat([box, nn.functional.one_hot(count.long(), LENGTH + 1).float()], -1)

    def _forward(self, batch, **kwargs):
        return {Columns.ACTION_DIST_INPUTS: self.pi(self._features(batch[Columns.OBS]))}

    def compute_values(self, batch, embeddings=None):
        return self.vf(self._features(batch[Columns.OBS])).squeeze(-1)


def check_nested_episodes(episodes, space):
    """Each episode's observations: the Box part float32 [t, ...], the Discrete part int64 t, for t = 0..len."""
    assert episodes
    for episode in episodes:
        times = np.arange(len(episode) + 1)
        box, count = parts(space, episode.get_observations())
        assert box.dtype == np.float32 and count.dtype == np.int64
        np.testing.assert_array_equal(box, np.repeat(times[:, None], box.shape[1], axis=1))
        np.testing.assert_array_equal(count, times)
        assert episode.is_terminated == (len(episode) == LENGTH)


@pytest.mark.parametrize("num_envs, mode", LAYOUTS)
@pytest.mark.parametrize("env", NESTED_ENVS)
def test_nested_observations_arrive_in_the_spaces_dtypes_at_a_users_module(env, num_envs, mode):
    algo = (PPOConfig().environment(env).training(train_batch_size=40, minibatch_size=20, num_epochs=1)
            .env_runners(num_envs_per_env_runner=num_envs, gym_env_vectorize_mode=mode)
            .rl_module(rl_module_spec=RLModuleSpec(module_class=NestedObservationsModule))
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        episodes = algo.env_runner.sample(num_timesteps=20)
        check_nested_episodes(episodes, env().observation_space)
        assert any(e.is_done for e in episodes)  # (the last observations were looked at)
        check_trains(algo)
    finally:
        algo.stop()


@pytest.mark.parametrize("num_envs, mode", [(1, "SYNC"), (2, "ASYNC")])
@pytest.mark.parametrize("env", NESTED_ENVS)
def test_nested_observations_through_ppo_with_flatten_observations(env, num_envs, mode):
    algo = build(env, num_envs=num_envs, mode=mode, env_to_module_connector=lambda e, s, d: FlattenObservations())
    user_env = env()
    space = user_env.observation_space
    try:
        episodes = algo.env_runner.sample(num_timesteps=20)
        assert any(e.is_done for e in episodes)
        for episode in episodes:  # FlattenObservations writes the flat observations back into the episodes
            expected = [gym.spaces.flatten(space, user_env.obs()) for user_env.t in range(len(episode) + 1)]
            observations = episode.get_observations()
            assert observations.dtype == np.float32
            np.testing.assert_array_equal(observations, np.stack(expected))
        check_trains(algo)
    finally:
        algo.stop()


def test_in_space_dtype_casts_each_part_and_leaves_what_it_cannot():
    box = gym.spaces.Box(-1, 1, (2,), np.float32)
    space = gym.spaces.Dict(a=box, b=gym.spaces.Tuple((gym.spaces.Discrete(3), box)), c=gym.spaces.MultiBinary(2))
    cast = in_space_dtype(space, {"c": [1, 0], "b": [2, np.zeros(2)], "a": (0.5, 1.0), "extra": "kept out"})
    assert list(cast) == ["a", "b", "c"] and isinstance(cast["b"], tuple)  # the space's keys, in its order
    assert [type(v) for v in (cast["a"], cast["b"][0], cast["b"][1], cast["c"])] == [
        np.ndarray, np.int64, np.ndarray, np.ndarray]
    assert (cast["a"].dtype, cast["b"][1].dtype, cast["c"].dtype) == (np.float32, np.float32, np.int8)
    np.testing.assert_array_equal(cast["a"], [0.5, 1.0])
    missing_key = {"a": np.zeros(2)}  # (not the space's structure: left for the env checks to name)
    assert in_space_dtype(space, missing_key) is missing_key
    assert in_space_dtype(space["b"], [1]) == [1]
    ready = np.zeros(2, np.float32)
    assert in_space_dtype(box, ready) is ready  # the Box fast path: no copy
    assert in_space_dtype(gym.spaces.Text(5), "abc") == "abc"


def test_a_multi_agent_envs_observations_arrive_in_each_agents_space_dtype():
    algo = (PPOConfig().environment(TwoCounters, env_config={"size": 3})
            .multi_agent(policies={"p"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: "p")
            .env_runners(num_envs_per_env_runner=2).training(train_batch_size=40, minibatch_size=20, num_epochs=1)
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        episodes = algo.env_runner.sample(num_timesteps=20)
        assert any(e.is_done for e in episodes)
        for episode in episodes:  # "a" returns float64 arrays, "b" lists: both float32, the last observation too
            for agent in ("a", "b"):
                observations = np.asarray(episode.get_observations()[agent])
                assert observations.dtype == np.float32, agent
                np.testing.assert_array_equal(observations, np.repeat(np.arange(len(episode) + 1.0)[:, None], 3, 1))
        vector_env = algo.env_runner.env
        ready = {"a": np.zeros(3, np.float32), "b": np.ones(3, np.float32)}
        assert vector_env.in_agent_dtypes(ready) is ready  # a well-behaved env's observations: not copied
        assert algo.train()["env_runners"]["episode_return_mean"] == 2 * LENGTH
    finally:
        algo.stop()



def test_a_discrete_agents_int_observations_pass_without_a_cast():
    """Only Box agents are checked and cast per step: a Discrete agent's int is kept as the env gave it (as RLlib
    does), so turn-based envs such as rock-paper-scissors pay nothing."""
    from relayrl.env.multi_agent_vector_env import MultiAgentVectorEnv
    from relayrl.examples.envs.classes.multi_agent.rock_paper_scissors import RockPaperScissors

    vector_env = MultiAgentVectorEnv(RockPaperScissors, {}, num_envs=1, worker_index=0, num_workers=0)
    ints = {"player1": 2, "player2": np.int64(0)}
    assert vector_env.in_agent_dtypes(ints) is ints
    (observations,), _ = vector_env.reset(seed=0)
    assert vector_env.in_agent_dtypes(observations) is observations
