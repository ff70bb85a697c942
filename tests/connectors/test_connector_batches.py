"""The batches the default pipelines build from episodes of known content (env-to-module, Learner, PPO's GAE)."""
import gymnasium as gym
import numpy as np
import pytest
import torch
from connector_test_utils import (
    ACT_SPACE,
    OBS_SPACE,
    LinearValueModule,
    StatefulLinearValueModule,
    gae_reference,
    make_episode,
    o,
    reset_episode,
)

from relayrl import PPOConfig, RLModuleSpec
from relayrl.connectors import AddOneTsToEpisodesAndTruncate, GeneralAdvantageEstimation
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns

SPACES = {"__env_single__": (OBS_SPACE, ACT_SPACE)}


def module(cls=LinearValueModule, **model_config):
    return cls(observation_space=OBS_SPACE, action_space=ACT_SPACE, model_config=model_config)


# -- env-to-module ------------------------------------------------------------------------------------
def test_env_to_module_batch_is_the_stacked_newest_observations_in_episode_order():
    pipe = PPOConfig().build_env_to_module_connector(spaces=SPACES)
    e1 = reset_episode(o(1, 2), eid="e1")
    e2 = reset_episode(o(3, 4), eid="e2")
    e2.add_env_step(o(5, 6), 0, 1.0)
    e2.add_env_step(o(7, 8), 1, 1.0)
    e3 = make_episode([o(0, 0), o(9, 10)], [2], [0.0], eid="e3", lookback=1)  # numpy'd, len 0 after lookback
    out = pipe(rl_module=module(), batch={}, episodes=[e2, e1, e3], explore=True)
    assert set(out) == {Columns.OBS}
    assert isinstance(out[Columns.OBS], torch.Tensor) and out[Columns.OBS].dtype == torch.float32
    torch.testing.assert_close(out[Columns.OBS], torch.tensor([[7.0, 8.0], [1.0, 2.0], [9.0, 10.0]]))


def test_env_to_module_float64_observations_become_float32_tensors():
    space = gym.spaces.Box(-1, 1, (2,), np.float64)
    pipe = PPOConfig().build_env_to_module_connector(spaces={"__env_single__": (space, ACT_SPACE)})
    ep = reset_episode(np.array([0.5, -0.25]), obs_space=space)
    out = pipe(rl_module=None, batch={}, episodes=[ep])
    assert out[Columns.OBS].dtype == torch.float32
    torch.testing.assert_close(out[Columns.OBS], torch.tensor([[0.5, -0.25]]))


def test_env_to_module_keeps_obs_an_earlier_piece_added():
    from relayrl.connectors import ConnectorV2

    class Custom(ConnectorV2):
        def __call__(self, *, rl_module, batch, episodes, **kwargs):
            for ep in self.single_agent_episode_iterator(episodes):
                self.add_batch_item(batch, Columns.OBS, np.float32([-1, -1]), ep)
            return batch

    pipe = PPOConfig().env_runners(env_to_module_connector=lambda env, spaces, device: Custom()) \
        .build_env_to_module_connector(spaces=SPACES)
    out = pipe(rl_module=None, batch={}, episodes=[reset_episode(o(1, 1))])
    torch.testing.assert_close(out[Columns.OBS], torch.tensor([[-1.0, -1.0]]))


# -- Learner, default pieces -----------------------------------------------------------------------------
def known_episodes():
    e1 = make_episode([o(1, 0), o(2, 0), o(3, 0), o(4, 0)], [0, 1, 2], [1.0, 0.0, 2.0], terminated=True, eid="e1",
                      extra_model_outputs={Columns.ACTION_LOGP: [-0.1, -0.2, -0.3]})
    # A cut chunk: the first two steps are lookback (not trained on).
    e2 = make_episode([o(10, 0), o(11, 0), o(5, 0), o(6, 0), o(7, 0)], [1, 1, 0, 2], [9.0, 9.0, 1.0, 1.0],
                      lookback=2, eid="e2", extra_model_outputs={Columns.ACTION_LOGP: [-9, -9, -0.5, -0.6]})
    return e1, e2


def test_learner_batch_rows_equal_the_episode_data():
    e1, e2 = known_episodes()
    pipe = PPOConfig().build_learner_connector(OBS_SPACE, ACT_SPACE)
    out = pipe(rl_module=module().as_multi_rl_module(), batch={}, episodes=[e1, e2], explore=False)
    assert list(out) == [DEFAULT_MODULE_ID]
    batch = out[DEFAULT_MODULE_ID]
    assert set(batch) == {Columns.OBS, Columns.ACTIONS, Columns.REWARDS, Columns.TERMINATEDS, Columns.TRUNCATEDS,
                          Columns.ACTION_LOGP}
    np.testing.assert_array_equal(batch[Columns.OBS].numpy()[:, 0], [1, 2, 3, 5, 6])
    np.testing.assert_array_equal(batch[Columns.ACTIONS].numpy(), [0, 1, 2, 0, 2])
    np.testing.assert_array_equal(batch[Columns.REWARDS].numpy(), [1, 0, 2, 1, 1])
    np.testing.assert_array_equal(batch[Columns.TERMINATEDS].numpy(), [False, False, True, False, False])
    np.testing.assert_array_equal(batch[Columns.TRUNCATEDS].numpy(), [False] * 5)
    np.testing.assert_allclose(batch[Columns.ACTION_LOGP].numpy(), [-0.1, -0.2, -0.3, -0.5, -0.6])
    assert batch[Columns.OBS].dtype == torch.float32 and batch[Columns.REWARDS].dtype == torch.float32


def test_learner_batch_from_list_based_episodes_equals_numpy_based():
    e1, e2 = known_episodes()
    l1 = make_episode([o(1, 0), o(2, 0), o(3, 0), o(4, 0)], [0, 1, 2], [1.0, 0.0, 2.0], terminated=True,
                      numpy=False, extra_model_outputs={Columns.ACTION_LOGP: [-0.1, -0.2, -0.3]})
    pipe = PPOConfig().build_learner_connector(OBS_SPACE, ACT_SPACE)
    a = pipe(rl_module=None, batch={}, episodes=[e1])
    b = pipe(rl_module=None, batch={}, episodes=[l1])
    assert set(a) == set(b)
    for key in a:
        torch.testing.assert_close(a[key].float(), b[key].float())


def test_learner_batch_with_dict_observations():
    space = gym.spaces.Dict({"pos": gym.spaces.Box(-5, 5, (2,), np.float32), "cell": gym.spaces.Discrete(4)})
    obs = [{"pos": np.float32([i, -i]), "cell": i % 4} for i in range(4)]
    ep = make_episode(obs, [0, 1, 0], [1, 2, 3], obs_space=space, eid="d")
    assert isinstance(ep.get_observations(slice(0, 3)), dict)  # numpy'd: a dict of arrays
    pipe = PPOConfig().build_learner_connector(space, ACT_SPACE)
    out = pipe(rl_module=None, batch={}, episodes=[ep])
    np.testing.assert_array_equal(out[Columns.OBS]["pos"].numpy(), [[0, 0], [1, -1], [2, -2]])
    np.testing.assert_array_equal(out[Columns.OBS]["cell"].numpy(), [0, 1, 2])


# -- Learner, PPO's pieces -------------------------------------------------------------------------------
GAMMA, LAMBDA = 0.9, 0.5


@pytest.fixture()
def ppo_learner():
    cfg = PPOConfig().training(gamma=GAMMA, lambda_=LAMBDA).rl_module(
        rl_module_spec=RLModuleSpec(module_class=LinearValueModule))
    return cfg.build_learner(spaces=SPACES)


def test_ppo_pieces_loss_mask_and_hand_computed_gae(ppo_learner):
    pipe = ppo_learner._learner_connector
    assert pipe[0].name == "AddOneTsToEpisodesAndTruncate" and pipe[-1].name == "GeneralAdvantageEstimation"
    e1, e2 = known_episodes()
    out = pipe(rl_module=ppo_learner.module, batch={}, episodes=[e1, e2], explore=False)[DEFAULT_MODULE_ID]

    # e1: 3 real steps + 1 artificial, e2: 2 real steps + 1 artificial.
    np.testing.assert_array_equal(out[Columns.LOSS_MASK].numpy(), [1, 1, 1, 0, 1, 1, 0])
    np.testing.assert_array_equal(out[Columns.OBS].numpy()[:, 0], [1, 2, 3, 4, 5, 6, 7])  # artificial: last obs
    np.testing.assert_array_equal(out[Columns.REWARDS].numpy(), [1, 0, 2, 0, 1, 1, 0])
    np.testing.assert_array_equal(out[Columns.ACTIONS].numpy(), [0, 1, 2, 2, 0, 2, 2])  # last action repeated
    np.testing.assert_array_equal(out[Columns.TERMINATEDS].numpy(), [0, 0, 1, 1, 0, 0, 1])

    # V(obs) = obs[0]. e1 terminated: no bootstrap. e2 cut: bootstraps with V(7) = 7.
    adv1, vt1 = gae_reference([1, 2, 3], [1, 0, 2], True, 4.0, GAMMA, LAMBDA)
    adv2, vt2 = gae_reference([5, 6], [1, 1], False, 7.0, GAMMA, LAMBDA)
    np.testing.assert_allclose(vt1, [2.9125, 2.25, 2.0])  # by hand: deltas 1.8, 0.7, -1.0
    np.testing.assert_allclose(vt2, [6.985, 7.3])  # deltas 1.4, 1.3
    np.testing.assert_allclose(out[Columns.VALUE_TARGETS].numpy(), np.concatenate([vt1, [0], vt2, [0]]), rtol=1e-6)

    raw = np.concatenate([adv1, adv2])
    standardized = (raw - raw.mean()) / raw.std()
    adv = out[Columns.ADVANTAGES].numpy()
    np.testing.assert_allclose(adv[[0, 1, 2, 4, 5]], standardized, rtol=1e-5, atol=1e-6)
    assert adv[3] == 0 and adv[6] == 0
    real = adv[out[Columns.LOSS_MASK].numpy()]
    assert abs(real.mean()) < 1e-6 and abs(real.std() - 1) < 1e-5


def test_ppo_user_piece_sees_the_extended_episodes(ppo_learner):
    """User pieces run after AddOneTsToEpisodesAndTruncate: episodes are one step longer."""
    from relayrl.connectors import ConnectorV2

    lengths = []

    class Lengths(ConnectorV2):
        def __call__(self, *, rl_module, batch, episodes, **kwargs):
            lengths.extend(len(e) for e in episodes)
            return batch

    ppo_learner._learner_connector.insert_after(AddOneTsToEpisodesAndTruncate, Lengths())
    e1, e2 = known_episodes()
    ppo_learner._learner_connector(rl_module=ppo_learner.module, batch={}, episodes=[e1, e2])
    assert lengths == [4, 3]


def test_ppo_update_from_episodes_runs_on_the_batch(ppo_learner):
    logits = [np.zeros(3, np.float32)] * 3
    e1 = make_episode([o(1, 0), o(2, 0), o(3, 0), o(4, 0)], [0, 1, 2], [1.0, 0.0, 2.0], terminated=True,
                      extra_model_outputs={Columns.ACTION_LOGP: [np.log(1 / 3)] * 3,
                                           Columns.ACTION_DIST_INPUTS: logits})
    results = ppo_learner.update(episodes=[e1])[DEFAULT_MODULE_ID]
    # The loss saw GAE's value targets on the 3 real rows only (the artificial row is masked):
    # V = 1, 2, 3 vs targets 2.9125, 2.25, 2.0 -> mean squared error.
    expected_vf_loss = np.mean(np.square([1.9125, 0.25, -1.0]))
    assert results["vf_loss"] == pytest.approx(expected_vf_loss, rel=1e-5)
    assert results["entropy"] == pytest.approx(np.log(3), rel=1e-5)  # uniform policy


def test_gae_on_a_stateful_module_pads_sequences_and_matches_flat_gae():
    """Recurrent batch: (sequences, max_seq_len) columns; GAE over them equals the flat computation."""
    cfg = PPOConfig().training(gamma=GAMMA, lambda_=LAMBDA).rl_module(
        rl_module_spec=RLModuleSpec(module_class=StatefulLinearValueModule, model_config={"max_seq_len": 3}))
    learner = cfg.build_learner(spaces=SPACES)
    e1, e2 = known_episodes()
    out = learner._learner_connector(rl_module=learner.module, batch={}, episodes=[e1, e2])[DEFAULT_MODULE_ID]
    # e1: 4 rows -> 2 sequences of 3; e2: 3 rows -> 1 sequence.
    np.testing.assert_array_equal(out[Columns.SEQ_LENS].numpy(), [3, 1, 3])
    assert out[Columns.OBS].shape == (3, 3, 2)
    assert out[Columns.STATE_IN]["h"].shape == (3, 2)
    np.testing.assert_array_equal(out[Columns.LOSS_MASK].numpy(), [[1, 1, 1], [0, 0, 0], [1, 1, 0]])
    np.testing.assert_array_equal(out[Columns.OBS].numpy()[..., 0], [[1, 2, 3], [4, 0, 0], [5, 6, 7]])
    adv1, vt1 = gae_reference([1, 2, 3], [1, 0, 2], True, 4.0, GAMMA, LAMBDA)
    adv2, vt2 = gae_reference([5, 6], [1, 1], False, 7.0, GAMMA, LAMBDA)
    np.testing.assert_allclose(out[Columns.VALUE_TARGETS].numpy(),
                               [[vt1[0], vt1[1], vt1[2]], [0, 0, 0], [vt2[0], vt2[1], 0]], rtol=1e-6)
    raw = np.concatenate([adv1, adv2])
    std = (raw - raw.mean()) / raw.std()
    np.testing.assert_allclose(out[Columns.ADVANTAGES].numpy(),
                               [[std[0], std[1], std[2]], [0, 0, 0], [std[3], std[4], 0]], rtol=1e-5, atol=1e-6)


def test_gae_requires_its_columns():
    gae = GeneralAdvantageEstimation(gamma=0.9, lambda_=1.0)
    batch = {DEFAULT_MODULE_ID: {Columns.OBS: torch.zeros(2, 2), Columns.REWARDS: torch.zeros(2),
                                 Columns.TERMINATEDS: torch.zeros(2, dtype=torch.bool)}}
    with pytest.raises(KeyError, match="loss_mask"):
        gae(rl_module=module().as_multi_rl_module(), batch=batch, episodes=[])


def h(x):
    return {"h": np.float32([x, -x])}


def test_stateful_env_to_module_adds_time_axis_and_latest_state():
    pipe = PPOConfig().build_env_to_module_connector(spaces=SPACES)
    stateful = module(StatefulLinearValueModule)
    fresh = reset_episode(o(1, 1), eid="fresh")
    chunk = make_episode([o(0, 0), o(2, 2)], [0], [0.0], lookback=1, eid="chunk", numpy=False,
                         extra_model_outputs={Columns.STATE_OUT: [h(7)]})
    chunk.t_started = chunk.t = 5  # a successor chunk starting at t=5 (len 0, lookback holds the state)
    ongoing = make_episode([o(0, 0), o(3, 3), o(4, 4)], [0, 1], [0.0, 0.0], eid="ongoing", numpy=False,
                           extra_model_outputs={Columns.STATE_OUT: [h(1), h(2)]})
    out = pipe(rl_module=stateful, batch={}, episodes=[fresh, chunk, ongoing])
    assert out[Columns.OBS].shape == (3, 1, 2)
    torch.testing.assert_close(out[Columns.OBS][:, 0], torch.tensor([[1.0, 1.0], [2.0, 2.0], [4.0, 4.0]]))
    torch.testing.assert_close(out[Columns.STATE_IN]["h"], torch.tensor([[0.0, 0.0], [7.0, -7.0], [2.0, -2.0]]))


def test_stateful_chunk_without_state_lookback_raises_clearly():
    pipe = PPOConfig().build_env_to_module_connector(spaces=SPACES)
    chunk = make_episode([o(2, 2)], [], [], eid="chunk", numpy=False, extra_model_outputs={Columns.STATE_OUT: []})
    chunk.t_started = chunk.t = 5
    with pytest.raises(ValueError, match="episode_lookback_horizon"):
        pipe(rl_module=module(StatefulLinearValueModule), batch={}, episodes=[chunk])
