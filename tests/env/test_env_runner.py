"""EnvRunner: sampling amounts, episode contents, env creation, vectorisation, metrics, actions."""
import gymnasium as gym
import numpy as np
import pytest

import relayrl
from relayrl import PPOConfig
from relayrl.core.columns import Columns
from relayrl.env.env_context import EnvContext
from relayrl.env.env_runner import EnvRunner
from relayrl.env.env_runner_group import EnvRunnerGroup
from relayrl.metrics.metrics_logger import MetricsLogger
from relayrl.testing import CorridorEnv, CountingEnv


def make_runner(env=CountingEnv, env_config=None, worker_index=0, environment=None, **env_runners):
    # One env per runner unless a test asks for more: the expected amounts, episode lists and
    # `foreach_env(...)[0]` reads below are written for it (PPOConfig's own default is 8).
    env_runners.setdefault("num_envs_per_env_runner", 1)
    config = PPOConfig().environment(env, env_config=env_config or {}, **(environment or {}))
    config.env_runners(**env_runners)
    return EnvRunner(config=config, worker_index=worker_index)


def merged_metrics(*runners):
    logger = MetricsLogger()
    logger.merge_and_log_n_dicts([r.get_metrics() for r in runners], key="env_runners")
    return logger.reduce()["env_runners"]


def expected_obs(episode_len, env_id, start=0):
    return np.array([[t, env_id] for t in range(start, episode_len + 1)], np.float32)


# -- amounts -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("num_envs, fragment, episode_len", [(1, 5, 3), (3, 4, 7), (2, 10, 10)])
def test_truncate_episodes_returns_exact_steps(num_envs, fragment, episode_len):
    runner = make_runner(env_config={"episode_len": episode_len}, num_envs_per_env_runner=num_envs,
                         rollout_fragment_length=fragment)
    for _ in range(4):
        episodes = runner.sample()
        assert sum(len(e) for e in episodes) == fragment * num_envs
        assert all(e.is_numpy for e in episodes)
        assert all(len(e) > 0 for e in episodes)
    runner.stop()


@pytest.mark.parametrize("train_batch_size, num_envs", [(60, 4), (50, 4), (100, 3)])
def test_truncate_episodes_auto_fragment(train_batch_size, num_envs):
    config = (PPOConfig().environment(CountingEnv).env_runners(num_envs_per_env_runner=num_envs)
              .training(train_batch_size=train_batch_size, minibatch_size=10))
    runner = EnvRunner(config=config)
    fragment = config.get_rollout_fragment_length(0)
    assert fragment == -(-train_batch_size // num_envs)
    for _ in range(3):
        assert sum(len(e) for e in runner.sample()) == fragment * num_envs
    assert sum(len(e) for e in runner.sample(num_timesteps=8 * num_envs)) == 8 * num_envs


def test_cut_chunks_continue_with_same_id_and_lookback():
    runner = make_runner(env_config={"episode_len": 7}, num_envs_per_env_runner=2, rollout_fragment_length=5)
    first = runner.sample()
    assert len(first) == 2 and not any(e.is_done for e in first)
    second = runner.sample()
    by_id = {e.id_: e for e in second}
    for chunk in first:
        nxt = by_id[chunk.id_]  # the continuation keeps the episode ID
        env_id = chunk.get_observations(0)[1]
        assert nxt.t_started == len(chunk) == 5 and nxt.is_done and len(nxt) == 2
        np.testing.assert_array_equal(nxt.get_observations(0), chunk.get_observations(-1))
        np.testing.assert_array_equal(nxt.get_observations(), expected_obs(7, env_id, start=5))
        # Lookback (1 step): the observation, action and reward before the chunk's first observation.
        np.testing.assert_array_equal(nxt.get_observations(-1, neg_index_as_lookback=True), [4, env_id])
        assert nxt.get_actions(-1, neg_index_as_lookback=True) == chunk.get_actions(-1)
        assert nxt.get_rewards(-1, neg_index_as_lookback=True) == 5.0
        np.testing.assert_array_equal(nxt.get_rewards(), [6.0, 7.0])
    # New episodes started in the same sample() call have fresh IDs.
    new_ids = {e.id_ for e in second} - {e.id_ for e in first}
    assert len(new_ids) == 2


def test_lookback_horizon_setting():
    runner = make_runner(env_config={"episode_len": 20}, rollout_fragment_length=6, episode_lookback_horizon=3)
    first = runner.sample()[0]
    second = runner.sample()[0]
    assert second.id_ == first.id_
    np.testing.assert_array_equal(second.get_observations(slice(-3, 0), neg_index_as_lookback=True)[:, 0], [3, 4, 5])


def test_complete_episodes_mode_returns_only_finished_episodes():
    runner = make_runner(env_config={"episode_len": 7}, num_envs_per_env_runner=2, rollout_fragment_length=5,
                         batch_mode="complete_episodes")
    for _ in range(3):
        episodes = runner.sample()
        assert episodes and all(e.is_done and e.is_terminated for e in episodes)
        assert sum(len(e) for e in episodes) >= 10
        assert all(len(e) == 7 and e.t_started == 0 for e in episodes)
        assert all(e.is_numpy for e in episodes)


def test_complete_episodes_with_long_episodes():
    runner = make_runner(env_config={"episode_len": 25}, rollout_fragment_length=4, batch_mode="complete_episodes")
    episodes = runner.sample()
    assert len(episodes) == 1 and len(episodes[0]) == 25
    np.testing.assert_array_equal(episodes[0].get_observations(), expected_obs(25, 0))


@pytest.mark.parametrize("num_envs", [1, 3])
def test_sample_num_episodes(num_envs):
    runner = make_runner(env_config={"episode_len": 4}, num_envs_per_env_runner=num_envs, rollout_fragment_length=3)
    runner.sample()  # leaves ongoing episodes behind; num_episodes starts fresh ones
    for k in (1, 2, 5):
        episodes = runner.sample(num_episodes=k)
        assert len(episodes) == k
        assert all(e.is_done and len(e) == 4 and e.t_started == 0 for e in episodes)
        assert len({e.id_ for e in episodes}) == k
    with pytest.raises(ValueError):
        runner.sample(num_timesteps=3, num_episodes=1)


# -- episode contents --------------------------------------------------------------------------------
def test_episode_data_matches_env():
    runner = make_runner(env_config={"episode_len": 6}, num_envs_per_env_runner=3, rollout_fragment_length=12,
                         batch_mode="complete_episodes")
    episodes = runner.sample()
    received = runner.foreach_env(lambda env: list(env.actions_received))
    assert len(received) == 3
    per_env = {}
    for e in episodes:
        env_id = int(e.get_observations(0)[1])
        assert e.is_terminated and not e.is_truncated
        np.testing.assert_array_equal(e.get_observations(), expected_obs(6, env_id))
        np.testing.assert_array_equal(e.get_rewards(), np.arange(1, 7, dtype=np.float32))
        assert e.get_return() == 21.0
        per_env.setdefault(env_id, []).extend(e.get_actions().tolist())
        # The module's outputs travel with the actions.
        logp = e.get_extra_model_outputs(Columns.ACTION_LOGP)
        assert logp.shape == (6,) and np.all(logp <= 0)
        assert e.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS).shape == (6, 2)
        assert len(e.get_infos()) == 7 and e.get_infos(-1)["t"] == 6
    assert set(per_env) == {0, 1, 2}
    for env_id, actions in per_env.items():
        assert actions == [int(a) for a in received[env_id][:len(actions)]]


def test_truncated_episodes_are_marked_truncated():
    runner = make_runner(env_config={"episode_len": 3, "truncate": True}, rollout_fragment_length=6)
    episodes = runner.sample()
    assert [len(e) for e in episodes] == [3, 3]
    assert all(e.is_truncated and not e.is_terminated for e in episodes)
    # The final observation of a truncated episode is kept (needed to bootstrap).
    np.testing.assert_array_equal(episodes[0].get_observations(-1), [3, 0])


def test_explore_false_is_deterministic():
    runner = make_runner(env_config={"episode_len": 5}, num_envs_per_env_runner=2,
                         rollout_fragment_length=50, batch_mode="complete_episodes")
    actions_by_obs = {}
    for explore in (False, False):
        for e in runner.sample(explore=explore):
            for obs, act in zip(e.get_observations()[:-1], e.get_actions()):
                actions_by_obs.setdefault(tuple(obs), set()).add(int(act))
    assert len(actions_by_obs) == 10
    assert all(len(acts) == 1 for acts in actions_by_obs.values())
    # The greedy action is the argmax of the module's logits.
    import torch
    for obs, acts in actions_by_obs.items():
        logits = runner.module.forward_inference({Columns.OBS: torch.tensor([obs])})[Columns.ACTION_DIST_INPUTS]
        assert acts == {int(logits.argmax())}


def test_explore_true_samples_different_actions():
    runner = make_runner(env_config={"episode_len": 5}, rollout_fragment_length=200,
                         batch_mode="complete_episodes", explore=True)
    actions = np.concatenate([e.get_actions() for e in runner.sample()])
    assert set(actions.tolist()) == {0, 1}  # near-uniform initial policy


def test_config_explore_false_applies_by_default():
    runner = make_runner(env_config={"episode_len": 5}, rollout_fragment_length=100,
                         batch_mode="complete_episodes", explore=False)
    sequences = {tuple(e.get_actions().tolist()) for e in runner.sample()}
    assert len(sequences) == 1


def test_random_actions():
    runner = make_runner(env_config={"episode_len": 5, "num_actions": 4}, rollout_fragment_length=200,
                         batch_mode="complete_episodes")
    actions = np.concatenate([e.get_actions() for e in runner.sample(random_actions=True)])
    assert set(actions.tolist()) == {0, 1, 2, 3}


# -- env creation -----------------------------------------------------------------------------------
def _record_creator(seen):
    def creator(ctx):
        seen.append(ctx)
        return CountingEnv(ctx)
    return creator


def test_env_from_registered_name_gets_env_context():
    seen = []
    relayrl.register_env("test_counting_env", _record_creator(seen))
    runner = make_runner("test_counting_env", env_config={"episode_len": 3, "foo": "bar"},
                         num_envs_per_env_runner=2, worker_index=2)
    assert len(seen) == 2
    for i, ctx in enumerate(seen):
        assert isinstance(ctx, EnvContext)
        assert ctx["foo"] == "bar" and ctx["episode_len"] == 3
        assert ctx.worker_index == 2 and ctx.vector_index == i
    assert runner.foreach_env(lambda env: env.env_id) == [200, 201]
    assert sum(len(e) for e in runner.sample(num_episodes=2)) == 6


def test_env_from_creator_function():
    seen = []
    runner = make_runner(_record_creator(seen), env_config={"episode_len": 2}, num_envs_per_env_runner=3)
    assert [ctx.vector_index for ctx in seen] == [0, 1, 2]
    assert all(ctx.worker_index == 0 for ctx in seen)
    assert [len(e) for e in runner.sample(num_episodes=1)] == [2]


def test_env_from_class_taking_env_config():
    runner = make_runner(CountingEnv, env_config={"episode_len": 4}, num_envs_per_env_runner=2, worker_index=1)
    assert runner.foreach_env(lambda env: (env.episode_len, env.worker_index, env.vector_index)) == \
        [(4, 1, 0), (4, 1, 1)]


class NoArgEnv(CountingEnv):
    def __init__(self):
        super().__init__({"episode_len": 2})


def test_env_from_class_taking_no_args():
    runner = make_runner(NoArgEnv)
    assert [len(e) for e in runner.sample(num_episodes=1)] == [2]


def test_env_from_gymnasium_id_with_env_config_as_kwargs():
    runner = make_runner("CartPole-v1", env_config={"max_episode_steps": 5}, rollout_fragment_length=10)
    episodes = runner.sample(num_episodes=3)
    assert all(len(e) <= 5 for e in episodes)
    assert any(e.is_truncated and len(e) == 5 for e in episodes)  # CartPole rarely falls within 5 steps
    assert runner.get_spaces()["__env_single__"][0].shape == (4,)


def test_unknown_env_id_has_did_you_mean():
    with pytest.raises(ValueError, match="Did you mean `CartPole-v1`"):
        make_runner("Cartpole-v1")


def test_registered_name_beats_typo_hint():
    relayrl.register_env("my_corridor_env", lambda cfg: CorridorEnv(cfg))
    with pytest.raises(ValueError, match="my_corridor_env"):
        make_runner("my_coridor_env")


# -- vectorisation and foreach_env -------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["SYNC", "ASYNC"])
def test_foreach_env_reads_and_mutates_sub_envs(mode):
    runner = make_runner(env_config={"episode_len": 3}, num_envs_per_env_runner=4, gym_env_vectorize_mode=mode,
                         rollout_fragment_length=3)
    try:
        assert runner.foreach_env(lambda env: env.get_task()) == [0, 0, 0, 0]
        runner.foreach_env(lambda env: env.set_task(2))
        assert runner.foreach_env(lambda env: env.get_task()) == [2, 2, 2, 2]
        assert runner.foreach_env(lambda env: env.vector_index) == [0, 1, 2, 3]
        episodes = runner.sample()
        assert sum(len(e) for e in episodes) == 12
        assert sorted(int(e.get_observations(0)[1]) for e in episodes) == [0, 1, 2, 3]
        assert all(e.is_done and e.get_return() == 6.0 for e in episodes)
        # Sub-envs keep their state across steps (async ones live in worker processes).
        assert runner.foreach_env(lambda env: len(env.actions_received)) == [3, 3, 3, 3]
    finally:
        runner.stop()


def test_async_env_runner_gives_same_data_as_sync():
    results = {}
    for mode in ("SYNC", "ASYNC"):
        runner = make_runner(env_config={"episode_len": 5}, num_envs_per_env_runner=4, gym_env_vectorize_mode=mode,
                             rollout_fragment_length=5, explore=False)
        episodes = runner.sample()
        results[mode] = sorted((e.get_observations().tolist(), e.get_rewards().tolist()) for e in episodes)
        runner.stop()
    assert results["SYNC"] == results["ASYNC"]


def test_env_runner_group_foreach():
    config = PPOConfig().environment(CountingEnv).env_runners(num_envs_per_env_runner=2)
    group = EnvRunnerGroup(config=config)
    assert group.foreach_env_runner(lambda r: r.worker_index) == [0]
    assert group.foreach_worker(lambda r: r.num_envs) == [2]
    assert group.foreach_env_runner(lambda r: 1, local_env_runner=False) == []
    group.foreach_worker(lambda ev: ev.foreach_env(lambda env: env.set_task(5)))
    assert group.foreach_env(lambda env: env.get_task()) == [[5, 5]]
    assert group.local_env_runner is group.local_worker()
    group.stop()
    assert group.local_env_runner.env is None


def test_make_env_recreates_envs_with_new_config():
    runner = make_runner(env_config={"episode_len": 3}, rollout_fragment_length=4)
    runner.sample()
    spaces = runner.get_spaces()
    runner.config.environment(env_config={"episode_len": 6})
    runner.make_env()
    assert runner.get_spaces().keys() == spaces.keys()
    assert [len(e) for e in runner.sample(num_episodes=1)] == [6]
    # Episodes cut before make_env() never finish: nothing of them leaks into the metrics.
    m = merged_metrics(runner)
    assert m["episode_len_mean"] == pytest.approx((3 + 6) / 2)


# -- metrics -------------------------------------------------------------------------------------------
def test_metrics_counts():
    runner = make_runner(env_config={"episode_len": 4}, rollout_fragment_length=8)
    runner.sample()
    m = merged_metrics(runner)
    assert m["num_episodes"] == 2 and m["episode_return_mean"] == 10.0 and m["episode_len_mean"] == 4
    assert m["num_env_steps_sampled"] == 8 and m["num_env_steps_sampled_lifetime"] == 8


def test_metrics_use_last_n_episodes():
    config = PPOConfig().environment(CountingEnv, env_config={"episode_len": 2}) \
        .env_runners(num_envs_per_env_runner=1, rollout_fragment_length=2) \
        .reporting(metrics_num_episodes_for_smoothing=3)
    runner = EnvRunner(config=config)
    runner.sample()  # 1 episode, return 3
    runner.foreach_env(lambda env: setattr(env, "episode_len", 3))
    runner.sample(num_episodes=1)  # return 6
    runner.foreach_env(lambda env: setattr(env, "episode_len", 4))
    runner.sample(num_episodes=3)  # returns 10, 10, 10
    m = merged_metrics(runner)
    assert m["episode_return_mean"] == 10.0
    assert m["episode_return_min"] == 10.0 and m["episode_return_max"] == 10.0
    assert m["num_episodes"] == 5


def test_metrics_of_many_episodes_in_one_run_match_the_episodes():
    # Finished episodes are logged together at the end of a sampling run: same figures as one by one.
    config = PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=4) \
        .reporting(metrics_num_episodes_for_smoothing=10).debugging(seed=3)
    runner = EnvRunner(config=config)
    episodes = runner.sample(num_episodes=25)
    returns = [float(e.get_return()) for e in episodes]
    assert len(set(returns)) > 1  # the check below can tell a window from the wrong one
    m = merged_metrics(runner)
    assert m["num_episodes"] == 25
    # The window keeps the last 10 in the order the episodes finished, which is the returned order.
    assert m["episode_return_mean"] == pytest.approx(np.mean(returns[-10:]))
    assert m["episode_return_min"] == min(returns[-10:]) and m["episode_return_max"] == max(returns[-10:])
    assert m["episode_len_max"] == max(len(e) for e in episodes[-10:])


def test_metrics_count_full_return_of_chunked_episodes():
    runner = make_runner(env_config={"episode_len": 10}, num_envs_per_env_runner=2, rollout_fragment_length=3)
    for _ in range(4):  # 12 steps per env: episodes of 10 are split over 4 chunks
        runner.sample()
    m = merged_metrics(runner)
    assert m["num_episodes"] == 2
    assert m["episode_return_mean"] == 55.0 and m["episode_len_mean"] == 10
    assert m["num_env_steps_sampled"] == 24


def test_metrics_per_call_counts_reset_and_lifetime_counts_accumulate():
    runner = make_runner(env_config={"episode_len": 2}, rollout_fragment_length=4)
    logger = MetricsLogger()  # as the Algorithm does: one logger merging every get_metrics()
    for i in (1, 2, 3):
        runner.sample()
        logger.merge_and_log_n_dicts([runner.get_metrics()], key="env_runners")
        m = logger.reduce()["env_runners"]
        assert m["num_episodes"] == 2 and m["num_env_steps_sampled"] == 4
        assert m["num_env_steps_sampled_lifetime"] == 4 * i and m["num_episodes_lifetime"] == 2 * i


# -- rewards and actions -------------------------------------------------------------------------------
def test_clip_rewards_true_uses_sign():
    runner = make_runner(env_config={"episode_len": 3, "reward_scale": -2.5}, rollout_fragment_length=3,
                         environment={"clip_rewards": True})
    episode = runner.sample()[0]
    np.testing.assert_array_equal(episode.get_rewards(), [-1.0, -1.0, -1.0])


def test_clip_rewards_float_clips():
    runner = make_runner(env_config={"episode_len": 4}, rollout_fragment_length=4,
                         environment={"clip_rewards": 2.5})
    episode = runner.sample()[0]
    np.testing.assert_array_equal(episode.get_rewards(), [1.0, 2.0, 2.5, 2.5])
    # The Learner gets the clipped rewards; the return reported is the env's own score, 1 + 2 + 3 + 4.
    assert merged_metrics(runner)["episode_return_mean"] == 10.0


def test_unclipped_score_spans_chunks_and_survives_a_checkpoint():
    def runner():
        return make_runner(env_config={"episode_len": 6}, rollout_fragment_length=4,
                           environment={"clip_rewards": 1.0})

    first = runner()
    chunk = first.sample()[0]  # 4 of the episode's 6 steps: rewards 1..4 clipped to 1
    np.testing.assert_array_equal(chunk.get_rewards(), [1.0] * 4)
    restored = runner()
    restored.set_state(first.get_state())
    for r in (first, restored):
        r.sample()  # the episode's last 2 steps (5, 6), then a new one
        assert merged_metrics(r)["episode_return_mean"] == 21.0  # 1 + ... + 6, not 6 clipped ones


def test_no_reward_clipping_by_default():
    runner = make_runner(env_config={"episode_len": 4, "reward_scale": 10.0}, rollout_fragment_length=4)
    np.testing.assert_array_equal(runner.sample()[0].get_rewards(), [10.0, 20.0, 30.0, 40.0])


class RecordActions(gym.Wrapper):
    def __init__(self, env):
        super().__init__(env)
        self.received = []

    def step(self, action):
        self.received.append(np.array(action, copy=True))
        return self.env.step(action)


def _pendulum_runner(**environment):
    relayrl.register_env("recorded_pendulum", lambda ctx: RecordActions(gym.make("Pendulum-v1")))
    return make_runner("recorded_pendulum", rollout_fragment_length=200, environment=environment)


def test_normalize_actions_unsquashes_to_pendulum_bounds():
    runner = _pendulum_runner(normalize_actions=True)
    episodes = runner.sample()
    module_actions = np.concatenate([e.get_actions() for e in episodes])
    env_actions = np.stack(runner.foreach_env(lambda env: env.received)[0])
    assert module_actions.shape == env_actions.shape == (200, 1)
    # [-1, 1] -> [-2, 2]: a = low + (x + 1) * (high - low) / 2, clipped to the bounds.
    np.testing.assert_allclose(env_actions, np.clip(2.0 * module_actions, -2.0, 2.0), rtol=1e-5, atol=1e-6)
    assert np.abs(env_actions).max() <= 2.0
    assert not np.allclose(env_actions, module_actions)
    # The log-probs belong to the module's (stored) actions.
    assert np.all(np.isfinite(episodes[0].get_extra_model_outputs(Columns.ACTION_LOGP)))


def test_normalize_actions_false_passes_actions_through():
    runner = _pendulum_runner(normalize_actions=False)
    module_actions = np.concatenate([e.get_actions() for e in runner.sample()])
    env_actions = np.stack(runner.foreach_env(lambda env: env.received)[0])
    np.testing.assert_allclose(env_actions, module_actions, rtol=1e-6)


def test_clip_actions_clips_to_bounds():
    runner = make_runner(env_config={"continuous": True, "action_low": -0.1, "action_high": 0.1, "episode_len": 50},
                         rollout_fragment_length=50, environment={"normalize_actions": False, "clip_actions": True})
    module_actions = np.concatenate([e.get_actions() for e in runner.sample()])
    env_actions = np.stack(runner.foreach_env(lambda env: env.actions_received)[0])
    assert np.abs(module_actions).max() > 0.1  # the policy's initial std is 1
    np.testing.assert_allclose(env_actions, np.clip(module_actions, -0.1, 0.1), rtol=1e-6)


# -- state -------------------------------------------------------------------------------------------
def test_set_state_loads_module_weights():
    a = make_runner()
    b = make_runner()
    state = a.get_state()
    b.set_state(state)
    for k, v in b.module.get_state().items():
        np.testing.assert_array_equal(v, state["rl_module"][k])
    assert a.ping() == "pong"


def test_seeded_runners_are_reproducible():
    def observations(seed):
        import torch
        torch.manual_seed(seed)
        config = PPOConfig().environment("CartPole-v1").env_runners(rollout_fragment_length=30).debugging(seed=seed)
        runner = EnvRunner(config=config)
        return [e.get_observations().tolist() for e in runner.sample()]

    assert observations(3) == observations(3)


def test_sample_num_episodes_takes_an_equal_share_from_every_sub_env():
    """Keeping simply the first episodes to end would return only the short ones (biased returns)."""
    from relayrl.testing.envs import CountingEnv

    def creator(ctx):  # sub-env 0: 2-step episodes, sub-env 1: 10-step episodes
        return CountingEnv({"episode_len": 2 if ctx.vector_index == 0 else 10})

    config = PPOConfig().environment(creator).env_runners(num_envs_per_env_runner=2)
    runner = EnvRunner(config=config)
    try:
        episodes = runner.sample(num_episodes=4)
        assert sorted(len(e) for e in episodes) == [2, 2, 10, 10]
        episodes = runner.sample(num_episodes=3)  # the odd one goes to the first sub-env
        assert sorted(len(e) for e in episodes) == [2, 2, 10]
    finally:
        runner.stop()


def test_clip_rewards_changed_in_the_runner_config_applies_at_the_next_sample():
    runner = make_runner(env_config={"episode_len": 4}, rollout_fragment_length=4)
    np.testing.assert_array_equal(runner.sample()[0].get_rewards(), [1.0, 2.0, 3.0, 4.0])
    runner.config.environment(clip_rewards=True)  # as Tune's reset_config does
    np.testing.assert_array_equal(runner.sample()[0].get_rewards(), [1.0, 1.0, 1.0, 1.0])
    runner.config.environment(clip_rewards=1.5)
    np.testing.assert_array_equal(runner.sample()[0].get_rewards(), [1.0, 1.5, 1.5, 1.5])
