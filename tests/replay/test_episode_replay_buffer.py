"""EpisodeReplayBuffer: storage of episode chunks, n-step transitions, FIFO eviction, errors."""
import gymnasium as gym
import numpy as np
import pytest
from replay_chunks import expected_row, make_chunk, reward_of

from relayrl import PPOConfig
from relayrl.core.columns import Columns
from relayrl.env.env_runner import EnvRunner
from relayrl.episodes.single_agent_episode import SingleAgentEpisode
from relayrl.replay import EpisodeReplayBuffer
from relayrl.testing import CountingEnv


def check_rows(batch, gamma, n_max, episodes):
    """Every row against a hand computation; episodes: {e: (available steps, done kind or None)}."""
    for i in range(len(batch[Columns.REWARDS])):
        e, t = (int(x) for x in batch[Columns.OBS][i])
        available, done = episodes[e]
        n = n_max if np.isscalar(n_max) else None
        steps = int(batch["n_step"][i])
        if n is None:  # random n: the row must be consistent with its own n (checked below)
            n = steps if steps < available - t else n_max[1]
            assert n_max[0] <= steps <= n_max[1] or steps == available - t
        ret, t_next, exp_steps, terminated, truncated = expected_row(e, t, n, gamma, available, done)
        assert steps == exp_steps, (e, t, steps)
        assert batch[Columns.REWARDS][i] == pytest.approx(ret, rel=1e-6)
        np.testing.assert_array_equal(batch[Columns.NEXT_OBS][i], [e, t_next])
        assert batch[Columns.TERMINATEDS][i] == terminated
        assert batch[Columns.TRUNCATEDS][i] == truncated
        assert batch[Columns.ACTIONS][i] == t


def test_columns_dtypes_and_sizes():
    buffer = EpisodeReplayBuffer(100, seed=0)
    buffer.add([make_chunk(0, 0, 5, terminated=True), make_chunk(1, 0, 3)])
    assert len(buffer) == buffer.get_num_timesteps() == buffer.get_added_timesteps() == 8
    assert buffer.get_num_episodes() == 2
    batch = buffer.sample()
    assert set(batch) == {Columns.OBS, Columns.ACTIONS, Columns.REWARDS, Columns.NEXT_OBS, Columns.TERMINATEDS,
                          Columns.TRUNCATEDS, "n_step", "weights", "indices"}
    assert len(batch[Columns.OBS]) == 16  # batch_size_B default
    assert batch[Columns.OBS].dtype == np.float32 and batch[Columns.OBS].shape == (16, 2)
    assert batch[Columns.REWARDS].dtype == np.float32
    assert batch["weights"].dtype == np.float32 and np.all(batch["weights"] == 1.0)
    assert batch["indices"].dtype == np.int64 and batch["n_step"].dtype == np.int64
    assert batch[Columns.TERMINATEDS].dtype == bool
    assert len(buffer.sample(5)[Columns.OBS]) == 5
    assert len(buffer.sample(batch_size_B=7)[Columns.OBS]) == 7


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_fixed_n_step_matches_hand_computation(n):
    buffer = EpisodeReplayBuffer(1000, seed=n)
    buffer.add([make_chunk(0, 0, 6, terminated=True), make_chunk(1, 0, 4, truncated=True), make_chunk(2, 0, 5)])
    batch = buffer.sample(400, n_step=n, gamma=0.9)
    check_rows(batch, 0.9, n, {0: (6, "terminated"), 1: (4, "truncated"), 2: (5, None)})
    # every stored transition shows up
    assert len({tuple(o) for o in batch[Columns.OBS]}) == 15


def test_n_step_across_chunk_boundaries_with_lookback():
    """Chunks of one episode (same id_, lookback buffers as EnvRunner cuts them) form one episode."""
    buffer = EpisodeReplayBuffer(1000, seed=1)
    buffer.add([make_chunk(0, 0, 3), make_chunk(1, 0, 2)])
    buffer.add([make_chunk(0, 3, 2, lookback=2), make_chunk(1, 2, 4, lookback=1, terminated=True)])
    buffer.add([make_chunk(0, 5, 3, lookback=3, truncated=True)])
    assert len(buffer) == 14 and buffer.get_num_episodes() == 2
    batch = buffer.sample(500, n_step=4, gamma=0.5)
    check_rows(batch, 0.5, 4, {0: (8, "truncated"), 1: (6, "terminated")})
    # a row starting at t=1 of episode 0 sums rewards of three chunks
    rows = np.flatnonzero((batch[Columns.OBS][:, 0] == 0) & (batch[Columns.OBS][:, 1] == 1))
    assert len(rows) and batch[Columns.REWARDS][rows[0]] == pytest.approx(
        sum(0.5 ** k * reward_of(0, 1 + k) for k in range(4)))


def test_chunks_of_one_episode_in_one_add_call():
    buffer = EpisodeReplayBuffer(100, seed=2)
    buffer.add([make_chunk(0, 0, 2), make_chunk(0, 2, 2, lookback=1, terminated=True)])
    check_rows(buffer.sample(100, n_step=3, gamma=0.9), 0.9, 3, {0: (4, "terminated")})
    assert buffer.get_num_episodes() == 1


def test_unfinished_episode_uses_steps_available():
    buffer = EpisodeReplayBuffer(100, seed=3)
    buffer.add([make_chunk(0, 0, 4)])
    batch = buffer.sample(100, n_step=3, gamma=0.9)
    check_rows(batch, 0.9, 3, {0: (4, None)})
    last = batch[Columns.OBS][:, 1] == 3
    assert np.all(batch["n_step"][last] == 1) and not batch[Columns.TERMINATEDS].any()
    # once the continuation arrives the same step reaches further
    buffer.add([make_chunk(0, 4, 3, terminated=True, lookback=1)])
    check_rows(buffer.sample(100, n_step=3, gamma=0.9), 0.9, 3, {0: (7, "terminated")})


def test_random_n_step_range_hits_every_n():
    buffer = EpisodeReplayBuffer(1000, seed=4)
    buffer.add([make_chunk(e, 0, 30, terminated=True) for e in range(4)])
    batch = buffer.sample(2000, n_step=(2, 5), gamma=0.95)
    check_rows(batch, 0.95, (2, 5), {e: (30, "terminated") for e in range(4)})
    far_from_end = batch[Columns.OBS][:, 1] < 25
    assert set(batch["n_step"][far_from_end].tolist()) == {2, 3, 4, 5}
    counts = np.bincount(batch["n_step"][far_from_end])[2:]
    assert counts.min() > 0.15 * far_from_end.sum()  # roughly uniform over the 4 values


def test_fifo_eviction_drops_oldest_steps():
    buffer = EpisodeReplayBuffer(10, seed=5)
    buffer.add([make_chunk(0, 0, 6, terminated=True)])
    buffer.add([make_chunk(1, 0, 3)])
    assert len(buffer) == 9 and buffer.get_num_episodes() == 2
    buffer.add([make_chunk(1, 3, 4, lookback=1, terminated=True)])  # 13 steps added: 3 oldest of ep 0 dropped
    assert len(buffer) == 10 and buffer.get_added_timesteps() == 13 and buffer.get_num_episodes() == 2
    batch = buffer.sample(300, n_step=3, gamma=0.9)
    stored = {tuple(o) for o in batch[Columns.OBS].astype(int).tolist()}
    assert stored == {(0, t) for t in range(3, 6)} | {(1, t) for t in range(7)}
    check_rows(batch, 0.9, 3, {0: (6, "terminated"), 1: (7, "terminated")})
    buffer.add([make_chunk(2, 0, 8, terminated=True)])  # episode 0 is gone entirely
    assert buffer.get_num_episodes() == 2 and len(buffer) == 10


def test_continuation_of_evicted_steps_is_not_linked():
    """The link from an overwritten step must not be written into the slot's new occupant."""
    buffer = EpisodeReplayBuffer(5, seed=6)
    buffer.add([make_chunk(0, 0, 2)])  # slots 0,1 (episode 0 open)
    buffer.add([make_chunk(1, 0, 4, terminated=True)])  # slots 2,3,4,0: overwrites ep 0 step 0
    buffer.add([make_chunk(2, 0, 1, terminated=True)])  # slot 1: ep 0's last step gone
    buffer.add([make_chunk(0, 2, 2, lookback=1, terminated=True)])  # continuation of the evicted ep 0
    batch = buffer.sample(200, n_step=4, gamma=0.9)
    stored = {tuple(o) for o in batch[Columns.OBS].astype(int).tolist()}
    assert stored == {(1, 2), (1, 3), (2, 0), (0, 2), (0, 3)}
    rows = batch[Columns.OBS][:, 0] == 1
    assert np.all(batch[Columns.NEXT_OBS][rows] == [[1, 4]])  # ep 1 never hops into ep 0's chunk
    check_rows(batch, 0.9, 4, {0: (4, "terminated"), 1: (4, "terminated"), 2: (1, "terminated")})


def test_add_larger_than_capacity_keeps_newest():
    buffer = EpisodeReplayBuffer(4, seed=7)
    buffer.add([make_chunk(0, 0, 3, terminated=True), make_chunk(1, 0, 3, terminated=True)])
    assert len(buffer) == 4 and buffer.get_added_timesteps() == 6 and buffer.get_num_episodes() == 2
    stored = {tuple(o) for o in buffer.sample(100)[Columns.OBS].astype(int).tolist()}
    assert stored == {(0, 2), (1, 0), (1, 1), (1, 2)}


def test_env_runner_chunks_round_trip():
    """What EnvRunner.sample() returns (cut chunks sharing id_) stores exactly the env's transitions."""
    config = PPOConfig().environment(CountingEnv, env_config={"episode_len": 7}).env_runners(
        num_envs_per_env_runner=2, rollout_fragment_length=5)
    runner = EnvRunner(config=config)
    buffer = EpisodeReplayBuffer(1000, seed=8)
    for _ in range(4):
        buffer.add(runner.sample())
    runner.stop()
    assert buffer.get_added_timesteps() == 40
    batch = buffer.sample(1000, n_step=3, gamma=0.9)
    t = batch[Columns.OBS][:, 0]
    steps = batch["n_step"]
    # CountingEnv: obs [t, env_id], reward t + 1; every episode has 7 steps and terminates
    np.testing.assert_array_equal(batch[Columns.NEXT_OBS][:, 0], t + steps)
    np.testing.assert_array_equal(batch[Columns.NEXT_OBS][:, 1], batch[Columns.OBS][:, 1])
    expected = sum(np.where(k < steps, 0.9 ** k * (t + k + 1), 0.0) for k in range(3))
    np.testing.assert_allclose(batch[Columns.REWARDS], expected, rtol=1e-6)
    ended = t + steps == 7
    np.testing.assert_array_equal(batch[Columns.TERMINATEDS], ended)
    complete = t + 3 <= 7
    # only steps whose continuation is not yet sampled may be short
    assert np.all(steps[complete & (batch["indices"] < 32)] == 3)


def test_nested_and_integer_observations():
    space = gym.spaces.Dict({"pos": gym.spaces.Box(-1, 1, (2,)), "id": gym.spaces.Discrete(5)})
    obs = [{"pos": np.full(2, t, np.float64), "id": t} for t in range(4)]
    episode = SingleAgentEpisode(observations=obs, observation_space=space, actions=[0, 1, 0],
                                 rewards=[1.0, 2.0, 3.0], terminated=True, len_lookback_buffer=0).to_numpy()
    buffer = EpisodeReplayBuffer(10, seed=9)
    buffer.add([episode])
    batch = buffer.sample(20, n_step=2, gamma=1.0)
    assert set(batch[Columns.OBS]) == {"pos", "id"}
    assert batch[Columns.OBS]["pos"].dtype == np.float32 and batch[Columns.OBS]["pos"].shape == (20, 2)
    assert np.issubdtype(batch[Columns.OBS]["id"].dtype, np.integer)
    t = batch[Columns.OBS]["id"]
    np.testing.assert_array_equal(batch[Columns.NEXT_OBS]["id"], np.minimum(t + 2, 3))
    np.testing.assert_array_equal(batch[Columns.NEXT_OBS]["pos"][:, 0], np.minimum(t + 2, 3))
    np.testing.assert_allclose(batch[Columns.REWARDS], np.where(t == 2, 3.0, 2 * t + 3))
    with pytest.raises(ValueError, match="expected a dict"):
        buffer.add([make_chunk(0, 0, 2)])


def test_empty_chunks_are_ignored_and_seed_fixes_samples():
    a, b = EpisodeReplayBuffer(50, seed=11), EpisodeReplayBuffer(50, seed=11)
    for buffer in (a, b):
        buffer.add([make_chunk(0, 0, 0), make_chunk(1, 0, 9, terminated=True)])
    assert len(a) == 9
    x, y = a.sample(10, n_step=(1, 3)), b.sample(10, n_step=(1, 3))
    for key in x:
        np.testing.assert_array_equal(x[key], y[key])


@pytest.mark.parametrize("kwargs, error, match", [
    ({"n_step": 0}, ValueError, "n_step"),
    ({"n_step": (3, 2)}, ValueError, "low > high"),
    ({"n_step": (1, 2, 3)}, ValueError, "low, high"),
    ({"num_items": 0}, ValueError, "num_items"),
    ({"num_items": 4, "batch_size_B": 5}, ValueError, "pass one"),
    ({"n_stpe": 3}, TypeError, "Did you mean `n_step`"),
    ({"sample_episodes": True}, ValueError, "sample_episodes"),
])
def test_bad_sample_arguments(kwargs, error, match):
    buffer = EpisodeReplayBuffer(10)
    buffer.add([make_chunk(0, 0, 3)])
    with pytest.raises(error, match=match):
        buffer.sample(**kwargs)


def test_bad_construction_and_input():
    with pytest.raises(ValueError, match="capacity"):
        EpisodeReplayBuffer(0)
    with pytest.raises(ValueError, match="batch_length_T"):
        EpisodeReplayBuffer(10, batch_length_T=0)
    with pytest.raises(TypeError, match="Did you mean `capacity`"):
        EpisodeReplayBuffer(capacty=10)
    buffer = EpisodeReplayBuffer(10)
    with pytest.raises(ValueError, match="empty"):
        buffer.sample()
    with pytest.raises(TypeError, match="SingleAgentEpisode"):
        buffer.add([{"obs": 1}])
    buffer.add([make_chunk(0, 0, 2)])
    # Sequences (stateful modules) need the stored recurrent state these episodes lack.
    with pytest.raises(ValueError, match="stateful RLModule"):
        buffer.sample(2, batch_length_T=4)
    other = SingleAgentEpisode(observations=[np.zeros(3, np.float32)] * 2, actions=[0], rewards=[0.0],
                               len_lookback_buffer=0).to_numpy()
    with pytest.raises(ValueError, match="shape"):
        buffer.add([other])


@pytest.mark.parametrize("capacity, max_chunk", [(7, 2), (20, 3), (64, 9)])
def test_random_stream_of_chunks_against_a_model(capacity, max_chunk):
    """Many envs, random chunk lengths and episode ends: stored steps are the newest `capacity` ones and
    every sampled row matches the hand computation (covers wrap-around, links, the observation ring growing)."""
    rng = np.random.default_rng(capacity)
    buffer = EpisodeReplayBuffer(capacity, seed=capacity)
    episodes, order, running = {}, [], {}  # e -> [available, done]; add order of (e, t); env -> (e, t)
    next_e = 0
    for _ in range(40):
        chunks = []
        for env in range(3):
            if env not in running:
                running[env], next_e = (next_e, 0), next_e + 1
            e, t0 = running[env]
            length = int(rng.integers(1, max_chunk + 1))
            end = rng.choice(["", "terminated", "truncated"], p=[0.6, 0.2, 0.2])
            chunks.append(make_chunk(e, t0, length, lookback=int(rng.integers(0, 3)),
                                     terminated=end == "terminated", truncated=end == "truncated"))
            episodes[e] = [t0 + length, end or None]
            order += [(e, t) for t in range(t0, t0 + length)]
            if end:
                del running[env]
            else:
                running[env] = (e, t0 + length)
        buffer.add(chunks)
        batch = buffer.sample(30 * capacity, n_step=4, gamma=0.8)  # enough to see every stored step
        stored = {tuple(o) for o in batch[Columns.OBS].astype(int).tolist()}
        assert stored == set(order[-capacity:])
        assert buffer.get_num_episodes() == len({e for e, _ in order[-capacity:]})
        for i in np.unique(batch["indices"], return_index=True)[1]:  # each stored step once
            e, t = batch[Columns.OBS][i].astype(int)
            available, done = episodes[e]
            steps = int(batch["n_step"][i])
            ret, t_next, exp_steps, terminated, truncated = expected_row(e, t, 4, 0.8, available, done)
            assert (steps, batch[Columns.NEXT_OBS][i].tolist()) == (exp_steps, [e, t_next])
            assert batch[Columns.REWARDS][i] == pytest.approx(ret, rel=1e-5)
            assert (batch[Columns.TERMINATEDS][i], batch[Columns.TRUNCATEDS][i]) == (terminated, truncated)
    grown = buffer._storage.obs_ring.capacity > capacity + capacity // 8 + 1
    assert grown or max_chunk > 3  # short chunks need more than one extra observation row per 8 steps
    restored = EpisodeReplayBuffer(capacity)
    restored.set_state(buffer.get_state())
    x, y = buffer.sample(100, n_step=(1, 4)), restored.sample(100, n_step=(1, 4))
    for key in x:
        np.testing.assert_array_equal(x[key], y[key])


def test_counters_and_metrics():
    buffer = EpisodeReplayBuffer(5, seed=0)
    buffer.add([make_chunk(0, 0, 3, terminated=True), make_chunk(1, 0, 2)])
    buffer.sample(4)
    buffer.sample(6)
    buffer.add([make_chunk(1, 2, 3, lookback=1, terminated=True)])  # drops episode 0 entirely
    assert buffer.get_metrics() == {
        "num_env_steps_stored": 5, "num_env_steps_added_lifetime": 8, "num_env_steps_sampled_lifetime": 10,
        "num_episodes_stored": 1, "num_episodes_evicted_lifetime": 1, "capacity": 5}


def test_list_based_chunks_work_like_numpy_ones():
    a, b = EpisodeReplayBuffer(20, seed=1), EpisodeReplayBuffer(20, seed=1)
    a.add([make_chunk(0, 0, 4, terminated=True)])
    obs = [np.array([0, t], np.float32) for t in range(5)]
    b.add([SingleAgentEpisode("ep0", observations=obs, actions=[0, 1, 2, 3], rewards=[1.0, 2.0, 3.0, 4.0],
                              terminated=True, len_lookback_buffer=0)])
    x, y = a.sample(30, n_step=2), b.sample(30, n_step=2)
    for key in x:
        np.testing.assert_array_equal(x[key], y[key])


def test_multi_agent_episode_gets_a_clear_error():
    class FakeMultiAgentEpisode:
        agent_episodes = {}

        def get_observations(self):
            return {}

    with pytest.raises(TypeError, match="agent episodes"):
        EpisodeReplayBuffer(5).add([FakeMultiAgentEpisode()])


def test_done_chunk_without_steps_ends_the_episode():
    buffer = EpisodeReplayBuffer(20, seed=0)
    buffer.add([make_chunk(0, 0, 3)])
    buffer.add([make_chunk(0, 3, 0, lookback=1, terminated=True)])
    batch = buffer.sample(50, n_step=5, gamma=0.9)
    check_rows(batch, 0.9, 5, {0: (3, "terminated")})
    assert batch[Columns.TERMINATEDS].any()
    buffer.add([make_chunk(0, 0, 2, truncated=True)])  # the id_ is free again: a new episode
    assert buffer.get_num_episodes() == 2


def test_out_of_order_chunk_raises_before_changing_anything():
    buffer = EpisodeReplayBuffer(20, seed=0)
    buffer.add([make_chunk(0, 0, 3)])
    with pytest.raises(ValueError, match="starts at t=5.*ends at t=3"):
        buffer.add([make_chunk(1, 0, 2), make_chunk(0, 5, 2)])
    with pytest.raises(ValueError, match="starts at t=4"):
        buffer.add([make_chunk(0, 3, 2), make_chunk(0, 4, 2)])  # same batch
    assert len(buffer) == 3
    buffer.add([make_chunk(0, 3, 2, terminated=True)])
    check_rows(buffer.sample(50, n_step=4, gamma=0.9), 0.9, 4, {0: (5, "terminated")})
