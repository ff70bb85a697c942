"""The connector examples: their pieces on known data, and short training runs through `main()`."""
import importlib.util
import pathlib
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
import torch
from connector_test_utils import make_episode, reset_episode

from relayrl.connectors import ConnectorV2, FrameStacking
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
TINY = ["--stop-iters", "1", "--train-batch-size", "200", "--num-envs", "2"]


def load(name):
    spec = importlib.util.spec_from_file_location(f"relayrl_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Tiny networks: one intra-op thread is much faster than several competing for a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class Spy(ConnectorV2):
    """Learner piece recording (copies of) what it sees: episodes' obs/rewards, or the finished batch."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.episodes = []
        self.batches = []

    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        if DEFAULT_MODULE_ID in batch:  # after BatchIndividualItems: the train batch
            self.batches.append({k: v.clone() for k, v in batch[DEFAULT_MODULE_ID].items()
                                 if isinstance(v, torch.Tensor)})
        else:
            self.episodes.append([(np.array(ep.get_observations(slice(None, -1))), np.array(ep.get_rewards()))
                                  for ep in self.single_agent_episode_iterator(episodes, False)])
        return batch


# -- count_based_intrinsic_rewards.py -------------------------------------------------------------------
@pytest.fixture(scope="module")
def count_based():
    return load("count_based_intrinsic_rewards")


def test_count_based_piece_on_known_episodes(count_based):
    space = gym.spaces.Box(-10, 10, (2,), np.float32)
    a, b, c = [0, 0], [1, 0], [0, 1]
    piece = count_based.CountBasedIntrinsicRewards()
    e1 = make_episode([a, b, a, c], [0, 0, 0], [0.0, 0.0, 1.0], obs_space=space)
    e2 = make_episode([a, a, b], [0, 0], [0.5, 0.0], obs_space=space)
    out = piece(rl_module=None, batch={}, episodes=[e1, e2])
    assert out == {}  # the rewards change in the episodes, not in the batch
    # e1 sees a(1) b(1) a(2); e2 sees a(3) a(4); the last observations (c, b) are not counted.
    np.testing.assert_allclose(e1.get_rewards(), [0 + 1, 0 + 1, 1 + 1 / 2])
    np.testing.assert_allclose(e2.get_rewards(), [0.5 + 1 / 3, 0 + 1 / 4])
    assert piece._counts == Counter({(0.0, 0.0): 4, (1.0, 0.0): 1})


def test_corridor_env(count_based):
    env = count_based.Corridor({"length": 4})
    assert env.reset()[0] == 0 and env.max_episode_steps == 6
    assert env.step(0)[:4] == (0, 0.0, False, False)  # wall
    assert env.step(1)[:4] == (1, 0.0, False, False)
    env.step(1)
    assert env.step(1)[:4] == (3, 1.0, True, False)
    env.reset()
    results = [env.step(0) for _ in range(6)]
    assert results[-1][3] and not results[-2][3]  # truncated after 6 steps


def test_count_based_training_the_loss_sees_the_intrinsic_rewards(count_based):
    length = 5
    args = count_based.get_parser().parse_args(TINY + ["--corridor-length", str(length), "--seed", "3"])
    config = count_based.build_config(args)
    counter_piece, spy = count_based.CountBasedIntrinsicRewards(), Spy()
    config.learners(learner_connector=lambda obs_space, act_space: [counter_piece, spy])
    algo = config.build_algo()
    try:
        learner_pipe = algo.learner_group._learner._learner_connector
        assert [c.name for c in learner_pipe.connectors[:3]] == \
            ["AddOneTsToEpisodesAndTruncate", "CountBasedIntrinsicRewards", "Spy"]
        batch_spy = Spy()
        learner_pipe.append(batch_spy)  # after GeneralAdvantageEstimation: exactly what the loss gets
        algo.train()
    finally:
        algo.stop()

    (episodes,) = spy.episodes
    # Recount independently. Observations are one-hot cells; the extrinsic reward is 1 only for the
    # step into the last cell (the artificial step PPO appends repeats the last observation, reward 0).
    counts = Counter()
    expected_rewards = []
    first_obs, first_rew = episodes[0][0][0], episodes[0][1][0]
    for obs, rewards in episodes:
        assert obs.shape == (len(rewards), length)
        cells = obs.argmax(-1)
        extrinsic = np.zeros(len(rewards))
        extrinsic[:-1] = cells[1:] == length - 1
        for i, o in enumerate(obs):
            counts[tuple(o)] += 1
            extrinsic[i] += 1 / counts[tuple(o)]
        np.testing.assert_allclose(rewards, extrinsic, rtol=1e-6)
        expected_rewards.append(extrinsic)
    assert first_obs.argmax() == 0 and first_rew == 1.0  # start cell, seen for the first time: 0 + 1/1
    assert counter_piece._counts == counts

    (batch,) = batch_spy.batches
    np.testing.assert_allclose(batch[Columns.REWARDS].numpy(), np.concatenate(expected_rewards), rtol=1e-6)
    assert (batch[Columns.REWARDS].numpy() > 0).all()  # every step got a bonus > 0


def test_count_based_main_runs(count_based):
    result = count_based.main(TINY + ["--corridor-length", "6"])
    assert result["training_iteration"] == 1 and result["num_env_steps_sampled_lifetime"] >= 200
    assert count_based.main(TINY + ["--no-intrinsic"])["training_iteration"] == 1


# -- frame_stacking.py --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def frame_stacking():
    return load("frame_stacking")


def test_stack_four_observations_equals_builtin_frame_stacking_on_both_sides(frame_stacking):
    space = gym.spaces.Box(-10, 10, (3,), np.float32)
    obs = [np.float32([t, -t, 0.5 * t]) for t in range(1, 9)]
    mine, builtin = frame_stacking.StackFourObservations(space, None), FrameStacking(space, None, num_frames=4)
    assert mine.observation_space == builtin.observation_space
    assert mine.observation_space.shape == (12,)
    ep = reset_episode(obs[0], obs_space=space)
    for t in range(1, 8):
        a = mine(rl_module=None, batch={}, episodes=[ep])[Columns.OBS][(ep.id_,)][0]
        b = builtin(rl_module=None, batch={}, episodes=[ep])[Columns.OBS][(ep.id_,)][0]
        np.testing.assert_array_equal(a, b)
        ep.add_env_step(obs[t], 0, 0.0)
    np.testing.assert_array_equal(a, np.concatenate(obs[3:7]))
    mine_l = frame_stacking.StackFourObservations(space, None, as_learner_connector=True)
    builtin_l = FrameStacking(space, None, num_frames=4, as_learner_connector=True)
    chunk = make_episode(obs, [0] * 7, [0.0] * 7, lookback=2, obs_space=space)  # a cut chunk: 5 steps
    a = mine_l(rl_module=None, batch={}, episodes=[chunk])[Columns.OBS][(chunk.id_,)][0]
    b = builtin_l(rl_module=None, batch={}, episodes=[chunk])[Columns.OBS][(chunk.id_,)][0]
    assert a.shape == (5, 12)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a[0], np.concatenate([np.zeros(3), obs[0], obs[1], obs[2]]))  # 1 zero frame
    np.testing.assert_array_equal(a[4], np.concatenate(obs[3:7]))


@pytest.mark.parametrize("builtin", [False, True])
def test_frame_stacking_example_module_gets_box_16(frame_stacking, builtin):
    args = frame_stacking.get_parser().parse_args(TINY + (["--builtin"] if builtin else []))
    algo = frame_stacking.build_config(args).build_algo()
    try:
        assert algo.get_module().observation_space.shape == (16,)
        assert algo.learner_group.get_module(DEFAULT_MODULE_ID).observation_space.shape == (16,)
        assert algo.env_runner._env_to_module.observation_space.shape == (16,)
        assert algo.config.episode_lookback_horizon == 3
        result = algo.train()
        assert result["learners"][DEFAULT_MODULE_ID]["num_module_steps_trained"] >= 200
        episodes = algo.env_runner.sample(num_timesteps=20)
        assert all(ep.get_observations().shape[1:] == (4,) for ep in episodes)  # episodes keep single frames
    finally:
        algo.stop()


def test_frame_stacking_main_runs(frame_stacking):
    result = frame_stacking.main(TINY)
    assert result["training_iteration"] == 1


def test_builtin_frame_stacking_improves_return_in_a_few_iterations(frame_stacking):
    args = frame_stacking.get_parser().parse_args(["--builtin", "--train-batch-size", "1000", "--num-envs", "2",
                                                   "--seed", "0"])
    algo = frame_stacking.build_config(args).build_algo()
    try:
        returns = [algo.train()["env_runners"]["episode_return_mean"] for _ in range(5)]
    finally:
        algo.stop()
    assert returns[-1] > returns[0] + 5, returns  # seed 0: about 23 -> 35


# -- custom_env_to_module_connector.py -----------------------------------------------------------------
@pytest.fixture(scope="module")
def custom():
    return load("custom_env_to_module_connector")


def test_add_time_step_piece(custom):
    space = gym.spaces.Box(-1, 1, (2,), np.float32)
    piece = custom.AddTimeStepToObs(space, None, max_episode_steps=10)
    assert piece.observation_space == gym.spaces.Box(np.float32([-1, -1, 0]), np.float32([1, 1, 1]))
    ep = reset_episode([0.5, 0.5], obs_space=space)
    piece(rl_module=None, batch={}, episodes=[ep])
    ep.add_env_step(np.float32([0.1, 0.2]), 0, 0.0)
    piece(rl_module=None, batch={}, episodes=[ep])
    np.testing.assert_allclose(np.stack(ep.get_observations()), [[0.5, 0.5, 0.0], [0.1, 0.2, 0.1]])
    successor = ep.cut(len_lookback_buffer=1)
    successor.add_env_step(np.float32([0.3, 0.3]), 0, 0.0)
    piece(rl_module=None, batch={}, episodes=[successor])
    np.testing.assert_allclose(successor.get_observations(-1), [0.3, 0.3, 0.2])  # global t, not chunk t


def test_custom_env_to_module_example_trains(custom):
    args = custom.get_parser().parse_args(TINY)
    algo = custom.build_config(args).build_algo()
    try:
        assert algo.get_module().observation_space.shape == (5,)
        assert algo.learner_group.get_module(DEFAULT_MODULE_ID).observation_space.shape == (5,)
        algo.train()
        for ep in algo.env_runner.sample(num_timesteps=30):
            obs = ep.get_observations()
            assert obs.shape[1:] == (5,)
            np.testing.assert_allclose(obs[:, 4], np.arange(ep.t_started, ep.t + 1) / 500, rtol=1e-6)
    finally:
        algo.stop()
    assert custom.main(TINY)["training_iteration"] == 1
