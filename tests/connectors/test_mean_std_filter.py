"""MeanStdFilter: in-place normalisation of the newest observation, running statistics, clipping, merging."""
import gymnasium as gym
import numpy as np
import pytest
from connector_test_utils import reset_episode

from relayrl import PPOConfig
from relayrl.connectors import ConnectorPipelineV2, FlattenObservations, MeanStdFilter
from relayrl.core.columns import Columns

SPACE = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)


def feed(filt, observations, eid="e"):
    """Push observations one env step at a time through `filt` (as an EnvRunner does); return the episode."""
    ep = reset_episode(observations[0], eid=eid, obs_space=SPACE)
    filt(rl_module=None, batch={}, episodes=[ep])
    for x in observations[1:]:
        ep.add_env_step(np.asarray(x, np.float32), 0, 0.0)
        filt(rl_module=None, batch={}, episodes=[ep])
    return ep


def data(n, seed):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, 3)) * [1.0, 5.0, 0.1] + [0.0, 3.0, -2.0]).astype(np.float32)


def test_newest_observation_is_normalised_in_place_with_running_stats():
    obs = data(12, 0)
    filt = MeanStdFilter(SPACE, None)
    ep = reset_episode(obs[0], obs_space=SPACE)
    for t in range(len(obs)):
        if t > 0:
            ep.add_env_step(obs[t], 0, 0.0)
        batch = filt(rl_module=None, batch={}, episodes=[ep])
        assert batch == {}  # writes into the episode, not the batch
        seen = obs[:t + 1].astype(np.float64)
        mean = seen.mean(axis=0)
        std = seen.std(axis=0, ddof=1) if t > 0 else np.ones(3)
        np.testing.assert_allclose(filt._stat.mean, mean, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(filt._stat.std, std, rtol=1e-6)
        expected = (obs[t] - mean) / (std + 1e-8)
        np.testing.assert_allclose(ep.get_observations(-1), expected, rtol=1e-5, atol=1e-6)
        assert ep.get_observations(-1).dtype == np.float32
    # earlier observations stay as they were normalised at their time (not re-normalised)
    np.testing.assert_allclose(ep.get_observations(0), 0.0)
    assert filt._stat.count == 12


def test_clip_by_value_and_output_space():
    filt = MeanStdFilter(SPACE, None, clip_by_value=2.0)
    assert filt.observation_space == gym.spaces.Box(-2.0, 2.0, (3,), np.float32)
    obs = [np.zeros(3)] * 20 + [np.full(3, 1000.0)]
    obs[1] = np.ones(3)  # some variance
    ep = feed(filt, obs)
    np.testing.assert_array_equal(ep.get_observations(-1), [2.0, 2.0, 2.0])
    stacked = np.asarray(ep.get_observations())
    assert stacked.max() <= 2.0 and stacked.min() >= -2.0
    unclipped = MeanStdFilter(SPACE, None, clip_by_value=None)
    assert np.isinf(unclipped.observation_space.high).all()
    assert feed(unclipped, obs).get_observations(-1)[0] > 2.0


def test_options_de_mean_and_de_std_and_update_stats():
    obs = data(10, 1)
    only_mean = feed(MeanStdFilter(SPACE, None, de_std_to_one=False), obs)
    np.testing.assert_allclose(only_mean.get_observations(-1), obs[-1] - obs.astype(np.float64).mean(0), rtol=1e-5)
    learned = MeanStdFilter(SPACE, None)
    feed(learned, obs)
    frozen = MeanStdFilter(SPACE, None)
    frozen.set_state(learned.get_state())
    frozen.update_stats = False
    ep = feed(frozen, [obs[0]])
    assert frozen._stat.count == 10  # not updated
    np.testing.assert_allclose(ep.get_observations(-1), (obs[0] - learned._stat.mean) / (learned._stat.std + 1e-8),
                               rtol=1e-5)


def test_merge_states_equals_one_filter_that_saw_all_data():
    a_obs, b_obs = data(7, 2), data(11, 3)
    a, b, both = MeanStdFilter(SPACE, None), MeanStdFilter(SPACE, None), MeanStdFilter(SPACE, None)
    feed(a, a_obs, "a")
    feed(b, b_obs, "b")
    feed(both, np.concatenate([a_obs, b_obs]), "ab")
    merged = a.merge_states([a.get_state(), b.get_state(), {}])
    restored = MeanStdFilter(SPACE, None)
    restored.set_state(merged)
    assert restored._stat.count == 18
    np.testing.assert_allclose(restored._stat.mean, both._stat.mean, rtol=1e-9)
    np.testing.assert_allclose(restored._stat.std, both._stat.std, rtol=1e-9)
    allx = np.concatenate([a_obs, b_obs]).astype(np.float64)
    np.testing.assert_allclose(restored._stat.std, allx.std(0, ddof=1), rtol=1e-6)


def test_state_round_trip_and_reset():
    filt = MeanStdFilter(SPACE, None)
    assert filt.get_state() == {}
    feed(filt, data(5, 4))
    state = filt.get_state()
    other = MeanStdFilter(SPACE, None)
    other.set_state(state)
    assert other.get_state() == state
    other.reset_state()
    assert other.get_state() == {}


def test_non_box_space_needs_flatten_first():
    with pytest.raises(ValueError, match="FlattenObservations"):
        MeanStdFilter(gym.spaces.Discrete(3), None)
    pipe = ConnectorPipelineV2(gym.spaces.Discrete(3), None, connectors=[FlattenObservations(), MeanStdFilter()])
    assert pipe.observation_space == gym.spaces.Box(-10.0, 10.0, (3,), np.float32)


def test_in_env_to_module_pipeline_batch_holds_the_normalised_observation():
    cfg = PPOConfig().env_runners(env_to_module_connector=lambda env, spaces, device: MeanStdFilter(clip_by_value=5.0))
    pipe = cfg.build_env_to_module_connector(spaces={"__env_single__": (SPACE, gym.spaces.Discrete(2))})
    assert pipe.observation_space == gym.spaces.Box(-5.0, 5.0, (3,), np.float32)
    e1, e2 = reset_episode([1, 2, 3], obs_space=SPACE), reset_episode([3, 2, 1], obs_space=SPACE)
    out = pipe(rl_module=None, batch={}, episodes=[e1, e2])
    # e1 is normalised after one observation (mean = itself -> 0); e2 after two: mean (2, 2, 2), std
    # (sqrt 2, 0, sqrt 2). The batch holds what the episodes now hold.
    np.testing.assert_allclose(out[Columns.OBS][0].numpy(), 0.0)
    expected_2 = (np.array([3, 2, 1]) - 2.0) / (np.array([np.sqrt(2), 0, np.sqrt(2)]) + 1e-8)
    np.testing.assert_allclose(out[Columns.OBS][1].numpy(), expected_2, rtol=1e-5)
    np.testing.assert_allclose(e2.get_observations(-1), expected_2, rtol=1e-5)
    assert pipe.get_state()["MeanStdFilter"]["stat"]["count"] == 2  # pipeline state keyed by piece name
