"""FrameStacking: env-to-module and Learner stacks, zero fill, lookback use, identical stacks on both sides."""
import gymnasium as gym
import numpy as np
import pytest
from connector_test_utils import make_episode, reset_episode

from relayrl import PPOConfig
from relayrl.connectors import (
    AddOneTsToEpisodesAndTruncate,
    ConnectorPipelineV2,
    FlattenObservations,
    FrameStacking,
    FrameStackingEnvToModule,
    FrameStackingLearner,
)
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns

SPACE = gym.spaces.Box(-100.0, 100.0, (2,), np.float32)
N = 4


def ob(t):
    """Observation at global step t: distinct, non-zero."""
    return np.float32([t + 1, -(t + 1) * 10])


def env_to_module(piece, episode):
    batch = piece(rl_module=None, batch={}, episodes=[episode])
    (items,) = batch[Columns.OBS].values()
    assert len(items) == 1
    return items[0]


def learner_rows(piece, episode):
    batch = piece(rl_module=None, batch={}, episodes=[episode])
    (items,) = batch[Columns.OBS].values()
    return np.concatenate([np.asarray(x).reshape(-1, x.shape[-1]) for x in items])


def expected_stack(t, first_available=0):
    """obs[t-3] .. obs[t] concatenated; zeros for steps before `first_available`."""
    return np.concatenate([ob(s) if s >= first_available else np.zeros(2, np.float32) for s in range(t - N + 1, t + 1)])


def test_output_space():
    piece = FrameStacking(SPACE, None, num_frames=N)
    assert piece.observation_space == gym.spaces.Box(np.tile(SPACE.low, N), np.tile(SPACE.high, N), dtype=np.float32)
    image = gym.spaces.Box(0, 255, (3, 3, 1), np.uint8)
    assert FrameStacking(image, None, num_frames=N).observation_space.shape == (3, 3, 4)
    with pytest.raises(ValueError, match="Box"):
        FrameStacking(gym.spaces.Discrete(3), None, num_frames=2)
    with pytest.raises(ValueError, match=">= 1"):
        FrameStacking(num_frames=0)


def test_rllib_side_names_pick_the_side():
    """RLlib's FrameStackingEnvToModule / FrameStackingLearner are FrameStacking fixed to one side (a bug once
    made FrameStackingLearner(num_frames=4) the env-to-module piece)."""
    learner, env_to_module_piece = FrameStackingLearner(SPACE, None, num_frames=N), FrameStackingEnvToModule(
        SPACE, None, num_frames=N)
    assert isinstance(learner, FrameStacking) and isinstance(env_to_module_piece, FrameStacking)
    assert learner._as_learner_connector and not env_to_module_piece._as_learner_connector
    assert learner.observation_space == env_to_module_piece.observation_space == FrameStacking(
        SPACE, None, num_frames=N).observation_space
    # The Learner piece stacks every step of the episode, like FrameStacking(..., as_learner_connector=True).
    ep = make_episode([ob(t) for t in range(7)], [0] * 6, [0.0] * 6, obs_space=SPACE)
    rows = learner_rows(learner, ep)
    assert rows.shape == (6, 8)
    np.testing.assert_array_equal(rows, learner_rows(FrameStacking(SPACE, None, num_frames=N,
                                                                   as_learner_connector=True), ep))
    np.testing.assert_array_equal(env_to_module(env_to_module_piece, ep), expected_stack(6))


def test_env_to_module_stacks_the_newest_observations_with_zero_left_fill():
    piece = FrameStacking(SPACE, None, num_frames=N)
    ep = reset_episode(ob(0), obs_space=SPACE)
    np.testing.assert_array_equal(env_to_module(piece, ep), expected_stack(0))
    np.testing.assert_array_equal(env_to_module(piece, ep)[:6], 0.0)
    for t in range(1, 7):
        ep.add_env_step(ob(t), 0, 0.0)
        np.testing.assert_array_equal(env_to_module(piece, ep), expected_stack(t))
    assert len(ep.get_observations(-1)) == 2  # the episode keeps single frames


def test_learner_stacks_every_step_of_an_episode_from_its_start():
    piece = FrameStacking(SPACE, None, num_frames=N, as_learner_connector=True)
    ep = make_episode([ob(t) for t in range(7)], [0] * 6, [0.0] * 6, obs_space=SPACE)
    rows = learner_rows(piece, ep)
    assert rows.shape == (6, 8)
    for t in range(6):
        np.testing.assert_array_equal(rows[t], expected_stack(t))


def test_learner_uses_lookback_frames_of_a_cut_chunk_and_zeros_beyond_them():
    piece = FrameStacking(SPACE, None, num_frames=N, as_learner_connector=True)
    # Steps 0..9 of an episode; the chunk covers steps 5..9, with 3 steps of lookback (obs 2, 3, 4).
    chunk = make_episode([ob(t) for t in range(2, 11)], [0] * 8, [0.0] * 8, lookback=3, obs_space=SPACE)
    rows = learner_rows(piece, chunk)
    assert rows.shape == (5, 8)
    for i, t in enumerate(range(5, 10)):
        np.testing.assert_array_equal(rows[i], expected_stack(t))
    # Only one step of lookback: the frames before it are zeros.
    short = make_episode([ob(t) for t in range(4, 11)], [0] * 6, [0.0] * 6, lookback=1, obs_space=SPACE)
    rows = learner_rows(piece, short)
    np.testing.assert_array_equal(rows[0], expected_stack(5, first_available=4))
    np.testing.assert_array_equal(rows[1], expected_stack(6, first_available=4))
    np.testing.assert_array_equal(rows[2], expected_stack(7))


def test_learner_chunk_of_length_zero_adds_no_rows():
    piece = FrameStacking(SPACE, None, num_frames=N, as_learner_connector=True)
    rows = learner_rows(piece, make_episode([ob(0)], [], [], obs_space=SPACE))
    assert rows.shape == (0, 8)


@pytest.mark.parametrize("cut_lookback", [3, 5])
def test_env_to_module_and_learner_stacks_are_identical_across_a_cut(cut_lookback):
    e2m = FrameStacking(SPACE, None, num_frames=N)
    learner = FrameStacking(SPACE, None, num_frames=N, as_learner_connector=True)
    seen = {}  # global step -> what the module saw on the EnvRunner
    ep = reset_episode(ob(0), eid="e", obs_space=SPACE)
    seen[0] = env_to_module(e2m, ep)
    for t in range(1, 6):
        ep.add_env_step(ob(t), 0, 0.0)
        seen[t] = env_to_module(e2m, ep)
    successor = ep.cut(len_lookback_buffer=cut_lookback)  # as EnvRunner.sample() does in truncate mode
    np.testing.assert_array_equal(env_to_module(e2m, successor), seen[5])
    for t in range(6, 10):
        successor.add_env_step(ob(t), 0, 0.0, terminated=t == 9)
        seen[t] = env_to_module(e2m, successor)
    chunk1, chunk2 = ep.to_numpy(), successor.to_numpy()
    rows1, rows2 = learner_rows(learner, chunk1), learner_rows(learner, chunk2)
    np.testing.assert_array_equal(rows1, np.stack([seen[t] for t in range(0, 5)]))
    np.testing.assert_array_equal(rows2, np.stack([seen[t] for t in range(5, 9)]))


def test_in_the_ppo_learner_pipeline_the_artificial_step_gets_the_final_stack():
    cfg = PPOConfig().learners(
        learner_connector=lambda obs_space, act_space: FrameStacking(num_frames=N, as_learner_connector=True))
    pipe = cfg.build_learner_connector(SPACE, gym.spaces.Discrete(2))
    pipe.prepend(AddOneTsToEpisodesAndTruncate())
    assert pipe.observation_space.shape == (8,)
    ep = make_episode([ob(t) for t in range(4)], [0, 1, 0], [1.0, 1.0, 1.0], terminated=True, obs_space=SPACE)
    from relayrl.modules.multi_rl_module import MultiRLModule

    out = pipe(rl_module=MultiRLModule(), batch={}, episodes=[ep])
    obs = out[DEFAULT_MODULE_ID][Columns.OBS].numpy()
    assert obs.shape == (4, 8)
    for t in range(4):  # rows 0..2: the real steps; row 3: the artificial step on the final observation
        np.testing.assert_array_equal(obs[t], expected_stack(t))


def test_after_flatten_observations_the_zero_frames_have_the_flat_shape():
    disc = gym.spaces.Discrete(3)
    pipe = ConnectorPipelineV2(disc, gym.spaces.Discrete(2), connectors=[FlattenObservations(),
                                                                         FrameStacking(num_frames=3)])
    assert pipe.observation_space.shape == (9,)
    ep = reset_episode(2, obs_space=disc)
    out = pipe(rl_module=None, batch={}, episodes=[ep])
    (stack,) = out[Columns.OBS][(ep.id_,)]
    np.testing.assert_array_equal(stack, [0, 0, 0, 0, 0, 0, 0, 0, 1])
    ep.add_env_step(0, 1, 0.0)
    out = pipe(rl_module=None, batch={}, episodes=[ep])
    np.testing.assert_array_equal(out[Columns.OBS][(ep.id_,)][0], [0, 0, 0, 0, 0, 1, 1, 0, 0])


def test_images_stack_on_the_last_axis():
    space = gym.spaces.Box(0, 255, (2, 2, 1), np.uint8)
    frames = [np.full((2, 2, 1), t + 1, np.uint8) for t in range(3)]
    e2m = FrameStacking(space, None, num_frames=2)
    ep = reset_episode(frames[0], obs_space=space)
    ep.add_env_step(frames[1], 0, 0.0)
    stack = env_to_module(e2m, ep)
    assert stack.shape == (2, 2, 2) and stack.dtype == np.uint8
    np.testing.assert_array_equal(stack[..., 0], 1)
    np.testing.assert_array_equal(stack[..., 1], 2)
    ep.add_env_step(frames[2], 0, 0.0)
    learner = FrameStacking(space, None, num_frames=2, as_learner_connector=True)
    batch = learner(rl_module=None, batch={}, episodes=[ep.to_numpy()])
    (rows,) = batch[Columns.OBS][(ep.id_,)]
    assert rows.shape == (2, 2, 2, 2)
    np.testing.assert_array_equal(rows[0][..., 0], 0)
    np.testing.assert_array_equal(rows[0][..., 1], 1)
    np.testing.assert_array_equal(rows[1], stack)
