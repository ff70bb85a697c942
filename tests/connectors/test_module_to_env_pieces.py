"""Module-to-env pieces: GetActions, NormalizeAndClipActions and the default pipeline's output."""
import gymnasium as gym
import numpy as np
import pytest
import torch
from connector_test_utils import LinearValueModule, reset_episode

from relayrl import ConnectorV2, PPOConfig
from relayrl.connectors import GetActions, NormalizeAndClipActions
from relayrl.connectors.module_to_env.normalize_and_clip_actions import (
    clip_action,
    unsquash_action,
)
from relayrl.core.columns import Columns
from relayrl.modules.rl_module import RLModule

DISCRETE = gym.spaces.Discrete(3)
BOX_OBS = gym.spaces.Box(-10, 10, (2,), np.float32)


def discrete_module():
    return LinearValueModule(observation_space=BOX_OBS, action_space=DISCRETE)


def box_module(shape=(2,)):
    return RLModule(observation_space=BOX_OBS, action_space=gym.spaces.Box(-1, 1, shape, np.float32))


# -- GetActions --------------------------------------------------------------------------------------
def test_get_actions_without_explore_is_the_argmax_with_logp():
    logits = torch.tensor([[0.0, 3.0, 1.0], [5.0, 0.0, 0.0], [0.0, 0.0, 0.1]])
    out = GetActions()(rl_module=discrete_module(), batch={Columns.ACTION_DIST_INPUTS: logits}, episodes=[],
                       explore=False)
    assert out[Columns.ACTIONS].tolist() == [1, 0, 2]
    assert Columns.ACTION_LOGP in out and out[Columns.ACTION_LOGP].shape == (3,)


def test_get_actions_with_explore_samples_from_the_distribution():
    torch.manual_seed(0)
    probs = torch.tensor([0.2, 0.5, 0.3])
    logits = probs.log().expand(20000, 3)
    out = GetActions()(rl_module=discrete_module(), batch={Columns.ACTION_DIST_INPUTS: logits}, episodes=[],
                       explore=True)
    actions = out[Columns.ACTIONS]
    freq = torch.bincount(actions, minlength=3).float() / len(actions)
    torch.testing.assert_close(freq, probs, atol=0.015, rtol=0)
    torch.testing.assert_close(out[Columns.ACTION_LOGP], probs.log()[actions])


def test_get_actions_gaussian():
    torch.manual_seed(1)
    mean, log_std = torch.tensor([[0.5, -0.5]]), torch.tensor([[-1.0, 0.0]])
    inputs = torch.cat([mean, log_std], dim=-1).expand(5000, 4)
    greedy = GetActions()(rl_module=box_module(), batch={Columns.ACTION_DIST_INPUTS: inputs[:2]}, episodes=[],
                          explore=False)
    torch.testing.assert_close(greedy[Columns.ACTIONS], mean.expand(2, 2))
    sampled = GetActions()(rl_module=box_module(), batch={Columns.ACTION_DIST_INPUTS: inputs}, episodes=[],
                           explore=True)
    a = sampled[Columns.ACTIONS]
    torch.testing.assert_close(a.mean(0), mean[0], atol=0.05, rtol=0)
    torch.testing.assert_close(a.std(0), log_std[0].exp(), atol=0.05, rtol=0)
    expected_logp = torch.distributions.Normal(mean[0], log_std[0].exp()).log_prob(a).sum(-1)
    torch.testing.assert_close(sampled[Columns.ACTION_LOGP], expected_logp)


def test_get_actions_keeps_module_actions_and_logp():
    batch = {Columns.ACTIONS: torch.tensor([2]), Columns.ACTION_DIST_INPUTS: torch.zeros(1, 3)}
    out = GetActions()(rl_module=discrete_module(), batch=batch, episodes=[], explore=True)
    assert out[Columns.ACTIONS].tolist() == [2] and Columns.ACTION_LOGP not in out
    batch = {Columns.ACTION_DIST_INPUTS: torch.zeros(1, 3), Columns.ACTION_LOGP: torch.tensor([-7.0])}
    out = GetActions()(rl_module=discrete_module(), batch=batch, episodes=[], explore=True)
    assert out[Columns.ACTION_LOGP].tolist() == [-7.0]


# -- NormalizeAndClipActions ----------------------------------------------------------------------------
SPACE = gym.spaces.Box(np.float32([-2.0, 0.0, -np.inf]), np.float32([2.0, 10.0, np.inf]), dtype=np.float32)


def test_unsquash_maps_minus_one_one_to_the_bounds_and_clips():
    np.testing.assert_allclose(unsquash_action(np.float32([-1, 1, 3.5]), SPACE), [-2, 10, 3.5])
    np.testing.assert_allclose(unsquash_action(np.float32([0, 0, -7]), SPACE), [0, 5, -7])
    np.testing.assert_allclose(unsquash_action(np.float32([0.5, -0.5, 0]), SPACE), [1, 2.5, 0])
    np.testing.assert_allclose(unsquash_action(np.float32([3, -4, 0]), SPACE), [2, 0, 0])  # clipped
    with np.errstate(all="raise"):  # no inf arithmetic on the unbounded dimension
        unsquash_action(np.float32([0, 0, 0]), SPACE)
    np.testing.assert_allclose(clip_action(np.float32([-5, 5, 1e9]), SPACE), [-2, 5, 1e9])


def m2e_batch(actions):
    return {Columns.ACTIONS: {(f"e{i}",): [np.float32(a)] for i, a in enumerate(actions)}}


def test_normalize_and_clip_actions_writes_actions_for_env_only():
    piece = NormalizeAndClipActions(None, SPACE, normalize_actions=True)
    batch = piece(rl_module=None, batch=m2e_batch([[-1, 1, 2], [3, 0, 0]]), episodes=[])
    assert batch[Columns.ACTIONS][("e0",)][0].tolist() == [-1, 1, 2]  # module's own actions kept (for logp)
    np.testing.assert_allclose(batch[Columns.ACTIONS_FOR_ENV][("e0",)][0], [-2, 10, 2])
    np.testing.assert_allclose(batch[Columns.ACTIONS_FOR_ENV][("e1",)][0], [2, 5, 0])

    clip_only = NormalizeAndClipActions(None, SPACE, normalize_actions=False, clip_actions=True)
    batch = clip_only(rl_module=None, batch=m2e_batch([[-3, 11, 2]]), episodes=[])
    np.testing.assert_allclose(batch[Columns.ACTIONS_FOR_ENV][("e0",)][0], [-2, 10, 2])

    neither = NormalizeAndClipActions(None, SPACE, normalize_actions=False, clip_actions=False)
    assert Columns.ACTIONS_FOR_ENV not in neither(rl_module=None, batch=m2e_batch([[9, 9, 9]]), episodes=[])
    discrete = NormalizeAndClipActions(None, DISCRETE)
    assert Columns.ACTIONS_FOR_ENV not in discrete(rl_module=None, batch={Columns.ACTIONS: [1]}, episodes=[])


# -- the default module-to-env pipeline -------------------------------------------------------------------
class _PerEpisodeNoOp(ConnectorV2):
    """A custom module-to-env piece: forces the general (per-episode) path around it."""

    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        for column in batch:
            assert isinstance(batch[column], dict)  # per-episode items
        return batch


@pytest.mark.parametrize("custom_piece", [False, True])
def test_default_pipeline_turns_module_output_into_per_env_rows(custom_piece):
    act_space = gym.spaces.Box(np.float32([0, 0]), np.float32([4, 8]), dtype=np.float32)
    cfg = PPOConfig()
    if custom_piece:
        cfg.env_runners(module_to_env_connector=lambda env, spaces: _PerEpisodeNoOp())
    pipe = cfg.build_module_to_env_connector(spaces={"__env_single__": (BOX_OBS, act_space)})
    episodes = [reset_episode([0, 0], obs_space=BOX_OBS) for _ in range(2)]
    module = box_module()
    dist_inputs = torch.tensor([[0.0, 1.0, -30.0, -30.0], [-1.0, 0.5, -30.0, -30.0]])  # ~deterministic
    out = pipe(rl_module=module, batch={Columns.ACTION_DIST_INPUTS: dist_inputs}, episodes=episodes, explore=True)
    assert set(out) == {Columns.ACTIONS, Columns.ACTIONS_FOR_ENV, Columns.ACTION_LOGP, Columns.ACTION_DIST_INPUTS}
    for column in out:
        # General path (custom piece): one list item per env; fast path: one array row per env.
        assert isinstance(out[column], list if custom_piece else np.ndarray) and len(out[column]) == 2
    np.testing.assert_allclose(out[Columns.ACTIONS][0], [0, 1], atol=1e-6)
    np.testing.assert_allclose(out[Columns.ACTIONS_FOR_ENV][0], [2, 8], atol=1e-5)  # [-1,1] -> [0,4] x [0,8]
    np.testing.assert_allclose(out[Columns.ACTIONS_FOR_ENV][1], [0, 6], atol=1e-5)
    assert isinstance(out[Columns.ACTION_DIST_INPUTS][1], np.ndarray)


def test_default_pipeline_discrete_inference_is_greedy():
    pipe = PPOConfig().build_module_to_env_connector(spaces={"__env_single__": (BOX_OBS, DISCRETE)})
    episodes = [reset_episode([0, 0], obs_space=BOX_OBS) for _ in range(3)]
    logits = torch.tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 2.0, 1.0]])
    out = pipe(rl_module=discrete_module(), batch={Columns.ACTION_DIST_INPUTS: logits}, episodes=episodes,
               explore=False)
    assert [int(a) for a in out[Columns.ACTIONS]] == [2, 0, 1]
    assert Columns.ACTIONS_FOR_ENV not in out
    assert [float(x) for x in out[Columns.ACTION_LOGP]] == [0.0, 0.0, 0.0]  # deterministic distribution


@pytest.mark.parametrize("explore", [True, False])
def test_env_runner_round_trip_on_pendulum(explore):
    """An EnvRunner samples Box-action episodes through the default module-to-env pipeline."""
    cfg = PPOConfig().environment("Pendulum-v1").env_runners(num_envs_per_env_runner=2, rollout_fragment_length=5) \
        .debugging(seed=3)
    from relayrl.env.env_runner import EnvRunner

    runner = EnvRunner(config=cfg)
    episodes = runner.sample(num_timesteps=10, explore=explore)
    assert sum(len(e) for e in episodes) == 10
    for ep in episodes:
        assert ep.get_actions().shape[1:] == (1,)
        assert Columns.ACTION_LOGP in ep.extra_model_outputs
    runner.stop()


def test_unsquash_of_a_fully_bounded_space_equals_the_masked_formula_bit_for_bit():
    space = gym.spaces.Box(np.float32([-2.0, 0.0, -0.5]), np.float32([2.0, 10.0, 3.0]), dtype=np.float32)
    actions = np.random.default_rng(0).normal(0, 1.5, (1000, 3)).astype(np.float32)  # some outside [-1, 1]
    low, high = space.low, space.high  # the general (masked) formula, all dimensions bounded
    expected = np.clip(low + (actions + 1.0) * (high - low) / 2.0, low, high).astype(np.float32)
    out = unsquash_action(actions, space)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(unsquash_action(np.float32([-1, 1, 5]), space), [-2, 10, 3])
