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
        np.testing.assert_allclose(filt.running_stat().mean, mean, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(filt.running_stat().std, std, rtol=1e-6)
        expected = (obs[t] - mean) / (std + 1e-8)
        np.testing.assert_allclose(ep.get_observations(-1), expected, rtol=1e-5, atol=1e-6)
        assert ep.get_observations(-1).dtype == np.float32
    # earlier observations stay as they were normalised at their time (not re-normalised)
    np.testing.assert_allclose(ep.get_observations(0), 0.0)
    assert filt.running_stat().count == 12


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
    assert frozen.running_stat().count == 10  # not updated
    stat = learned.running_stat()
    np.testing.assert_allclose(ep.get_observations(-1), (obs[0] - stat.mean) / (stat.std + 1e-8), rtol=1e-5)


def test_merge_states_equals_one_filter_that_saw_all_data():
    a_obs, b_obs = data(7, 2), data(11, 3)
    a, b, both = MeanStdFilter(SPACE, None), MeanStdFilter(SPACE, None), MeanStdFilter(SPACE, None)
    feed(a, a_obs, "a")
    feed(b, b_obs, "b")
    feed(both, np.concatenate([a_obs, b_obs]), "ab")
    merged = a.merge_states([a.get_state(), b.get_state(), {}])
    restored = MeanStdFilter(SPACE, None)
    restored.set_state(merged)
    assert restored.running_stat().count == 18
    np.testing.assert_allclose(restored.running_stat().mean, both.running_stat().mean, rtol=1e-9)
    np.testing.assert_allclose(restored.running_stat().std, both.running_stat().std, rtol=1e-9)
    allx = np.concatenate([a_obs, b_obs]).astype(np.float64)
    np.testing.assert_allclose(restored.running_stat().std, allx.std(0, ddof=1), rtol=1e-6)


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


# -- multi_agent=True: statistics per agent ----------------------------------------------------------------
AGENT_SPACES = gym.spaces.Dict({"a": SPACE, "b": SPACE})


def feed_agents(filt, by_agent):
    """Push each agent's observations through `filt` as agent episodes (agent ids set)."""
    for agent_id, observations in by_agent.items():
        ep = reset_episode(observations[0], eid=f"ep-{agent_id}", obs_space=SPACE)
        ep.agent_id = agent_id
        filt(rl_module=None, batch={}, episodes=[ep])
        for x in observations[1:]:
            ep.add_env_step(np.asarray(x, np.float32), 0, 0.0)
            filt(rl_module=None, batch={}, episodes=[ep])


def test_multi_agent_filter_keeps_statistics_per_agent():
    filt = MeanStdFilter(AGENT_SPACES, None, multi_agent=True)
    assert filt.observation_space == gym.spaces.Dict({aid: gym.spaces.Box(-10.0, 10.0, (3,), np.float32)
                                                      for aid in ("a", "b")})
    a_obs, b_obs = data(6, 5), data(9, 6) * 3.0 + 7.0
    feed_agents(filt, {"a": a_obs, "b": b_obs})
    for agent_id, obs in (("a", a_obs), ("b", b_obs)):
        stat = filt.running_stat(agent_id)
        assert stat.count == len(obs)
        np.testing.assert_allclose(stat.mean, obs.astype(np.float64).mean(0), rtol=1e-6)


def test_multi_agent_state_round_trips_and_merges_per_agent():
    a1, a2, both = (MeanStdFilter(AGENT_SPACES, None, multi_agent=True) for _ in range(3))
    first = {"a": data(5, 7), "b": data(4, 8)}
    second = {"a": data(6, 9), "b": data(7, 10)}
    feed_agents(a1, first)
    feed_agents(a2, second)
    feed_agents(both, {aid: np.concatenate([first[aid], second[aid]]) for aid in ("a", "b")})
    restored = MeanStdFilter(AGENT_SPACES, None, multi_agent=True)
    restored.set_state(a1.merge_states([a1.get_state(), a2.get_state()]))
    for agent_id in ("a", "b"):
        assert restored.running_stat(agent_id).count == both.running_stat(agent_id).count
        np.testing.assert_allclose(restored.running_stat(agent_id).mean, both.running_stat(agent_id).mean, rtol=1e-9)
        np.testing.assert_allclose(restored.running_stat(agent_id).std, both.running_stat(agent_id).std, rtol=1e-9)


def test_remote_runners_per_agent_statistics_count_the_broadcast_base_once():
    """merge_connector_states (remote EnvRunners): each runner starts from the broadcast state and adds its own."""
    from relayrl.distributed.connector_states import merge_connector_states

    base_filter, whole = (MeanStdFilter(AGENT_SPACES, None, multi_agent=True) for _ in range(2))
    base_data = {"a": data(5, 11), "b": data(5, 12)}
    runner_data = [{"a": data(4, 13), "b": data(3, 14)}, {"a": data(6, 15), "b": data(2, 16)}]
    feed_agents(base_filter, base_data)
    runner_states = []
    for added in runner_data:
        runner = MeanStdFilter(AGENT_SPACES, None, multi_agent=True)
        runner.set_state(base_filter.get_state())
        feed_agents(runner, added)
        runner_states.append({"MeanStdFilter": runner.get_state()})
    feed_agents(whole, {aid: np.concatenate([base_data[aid]] + [d[aid] for d in runner_data]) for aid in ("a", "b")})
    pipeline = ConnectorPipelineV2(connectors=[MeanStdFilter(AGENT_SPACES, None, multi_agent=True)])
    merged = merge_connector_states(pipeline, {"MeanStdFilter": base_filter.get_state()}, runner_states)
    restored = MeanStdFilter(AGENT_SPACES, None, multi_agent=True)
    restored.set_state(merged["MeanStdFilter"])
    for agent_id in ("a", "b"):
        assert restored.running_stat(agent_id).count == whole.running_stat(agent_id).count
        np.testing.assert_allclose(restored.running_stat(agent_id).mean, whole.running_stat(agent_id).mean, rtol=1e-9)


def test_a_single_agent_state_is_refused_by_a_multi_agent_filter():
    from relayrl.checkpoints.state_checks import Where

    single = MeanStdFilter(SPACE, None)
    feed(single, data(3, 17))
    with pytest.raises(Exception, match="multi_agent=True"):
        MeanStdFilter(AGENT_SPACES, None, multi_agent=True).check_state(single.get_state(), Where("filter"))


def test_multi_agent_ppo_normalises_each_agents_observations():
    from relayrl.testing.multi_agent_example_envs import MultiAgentCartPole

    config = (PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
              .env_runners(env_to_module_connector=lambda env, spaces, device: MeanStdFilter(multi_agent=True))
              .training(train_batch_size=128, minibatch_size=64, num_epochs=1)
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda aid, *a, **kw: f"p{aid}")
              .debugging(seed=0))
    algo = config.build_algo()
    try:
        algo.train()
        piece = algo.env_runner._env_to_module.connectors[0]
        assert isinstance(piece, MeanStdFilter)
        assert {0, 1} <= set(piece._stats) and piece.running_stat(0).count > 0
        observations = np.concatenate([np.asarray(ep.agent_episodes[0].get_observations())
                                       for ep in algo.env_runner.sample() if 0 in ep.agent_episodes])
        assert np.abs(observations).max() <= 10.0  # normalised and clipped, in the episodes
    finally:
        algo.stop()
