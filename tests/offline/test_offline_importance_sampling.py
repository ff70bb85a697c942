"""Offline evaluation by importance sampling (`offline_evaluation_type="is"` / `"pdis"`): the module's episode return
estimated from logged episodes and the behaviour policy's `action_logp`, checked against the estimators computed
by hand, from transition rows (episodes split across reads and files) and from recorded episode rows."""
import glob
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from relayrl import BCConfig, PPOConfig
from relayrl.offline.reader import OfflineDataError

BEHAVIOUR_P0 = 0.7  # the logged policy's probability of action 0


def _logged_episodes(folder, lengths, seed: int, name: str = "rows", logp: bool = True):
    """Transition rows of episodes of `lengths` steps from a policy taking action 0 with BEHAVIOUR_P0; reward 1
    for action 0, 0.25 for action 1. Returns the episodes' (actions, rewards)."""
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    n = sum(lengths)
    actions = (rng.random(n) >= BEHAVIOUR_P0).astype(np.int64)
    rewards = np.where(actions == 0, 1.0, 0.25)
    ends = np.cumsum(lengths) - 1
    terminateds = np.zeros(n, bool)
    terminateds[ends] = True
    eps_id = np.repeat([f"{name}-{i}" for i in range(len(lengths))], lengths)
    obs = rng.normal(size=(n, 4)).astype(np.float32)
    columns = {"eps_id": eps_id, "obs": list(obs), "new_obs": list(obs), "actions": actions, "rewards": rewards,
               "terminateds": terminateds, "truncateds": np.zeros(n, bool)}
    if logp:
        columns["action_logp"] = np.log(np.where(actions == 0, BEHAVIOUR_P0, 1 - BEHAVIOUR_P0))
    pq.write_table(pa.table(columns), os.path.join(folder, f"{name}.parquet"))
    starts = np.concatenate([[0], ends[:-1] + 1])
    return [(actions[s:e + 1], rewards[s:e + 1]) for s, e in zip(starts, ends)]


def _by_hand(episodes, target_p0: float, kind: str) -> float:
    estimates = []
    for actions, rewards in episodes:
        ratios = np.where(actions == 0, target_p0 / BEHAVIOUR_P0, (1 - target_p0) / (1 - BEHAVIOUR_P0))
        if kind == "is":
            estimates.append(np.prod(ratios) * rewards.sum())
        else:
            estimates.append(np.dot(np.cumprod(ratios), rewards))
    return float(np.mean(estimates))


def _bc(inputs, kind: str, batch: int, iters: int, **more):
    return (BCConfig().environment("CartPole-v1").offline_data(input_=inputs)
            .training(train_batch_size_per_learner=32).rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0, logger_config={"type": "none"})
            .evaluation(offline_evaluation_interval=1, offline_evaluation_type=kind,
                        offline_eval_batch_size_per_runner=batch, dataset_num_iters_per_offline_eval_runner=iters,
                        **more))


def _fix_policy(algo, p0: float) -> None:
    """Make the module's policy take action 0 with probability p0 whatever it sees: zero weights, logits as bias."""
    weights = algo.learner_group.get_weights()["default_policy"]
    weights = {name: np.zeros_like(value) for name, value in weights.items()}
    last_bias, = [name for name, value in weights.items() if name.endswith("bias") and value.shape == (2,)]
    weights[last_bias] = np.log(np.array([p0, 1 - p0], dtype=weights[last_bias].dtype))
    algo.learner_group.set_weights({"default_policy": weights})


def _estimate(result) -> float:
    return result["offline_eval_runners"]["episode_return_mean"]


@pytest.mark.parametrize("kind", ["is", "pdis"])
def test_the_estimate_is_the_estimator_over_whole_episodes(tmp_path, kind):
    # 3 files of episodes of 1-6 steps, read 5 rows at a time: episodes continue across reads and files.
    rng = np.random.default_rng(1)
    episodes, files = [], []
    for i in range(3):
        lengths = list(rng.integers(1, 7, 8))
        lengths.append(40 - sum(lengths) % 40 if sum(lengths) % 40 else 40)  # each file: a multiple of 40 rows
        episodes += _logged_episodes(tmp_path, lengths, seed=i, name=f"part{i}")
        files.append(str(tmp_path / f"part{i}.parquet"))
    total_rows = sum(len(actions) for actions, _ in episodes)
    algo = _bc(files, kind, batch=5, iters=total_rows // 5).build_algo()
    try:
        for p0 in (0.2, BEHAVIOUR_P0):
            _fix_policy(algo, p0)
            result = algo.evaluate_offline()
            evaluation = result["offline_eval_runners"]
            assert evaluation["num_episodes"] == len(episodes)
            assert _estimate(result) == pytest.approx(_by_hand(episodes, p0, kind), rel=1e-5)
            assert evaluation["module_episode_return_mean"]["default_policy"] == _estimate(result)
            assert evaluation["__all_modules__"]["num_env_steps_sampled"] == total_rows
            if p0 == BEHAVIOUR_P0:  # the behaviour policy itself: every ratio is 1, the logged returns' mean
                assert _estimate(result) == pytest.approx(np.mean([r.sum() for _, r in episodes]), rel=1e-5)
        assert _by_hand(episodes, 0.2, kind) != pytest.approx(_by_hand(episodes, BEHAVIOUR_P0, kind), rel=1e-2)
    finally:
        algo.stop()


def test_is_and_pdis_weigh_an_early_reward_differently(tmp_path):
    episodes = _logged_episodes(tmp_path, [3] * 20, seed=5)
    results = {}
    for kind in ("is", "pdis"):
        algo = _bc([str(tmp_path)], kind, batch=60, iters=1).build_algo()
        try:
            _fix_policy(algo, 0.2)
            results[kind] = _estimate(algo.evaluate_offline())
        finally:
            algo.stop()
    assert results["is"] == pytest.approx(_by_hand(episodes, 0.2, "is"), rel=1e-5)
    assert results["pdis"] == pytest.approx(_by_hand(episodes, 0.2, "pdis"), rel=1e-5)
    assert results["is"] != pytest.approx(results["pdis"], rel=1e-3)


def test_recorded_episode_rows_are_estimated(tmp_path):
    # PPO records its episodes (with action_logp) as episode rows; BC's "is" estimate reads them whole.
    from relayrl.offline.episode_rows import ITEM_COLUMN, decode_episode_state

    ppo = (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=2)
           .training(train_batch_size=200, num_epochs=1).offline_data(output=str(tmp_path / "rec"))
           .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        for _ in range(3):
            ppo.train()
    finally:
        ppo.stop()
    files = sorted(glob.glob(str(tmp_path / "rec" / "**" / "*.parquet"), recursive=True))
    states = [decode_episode_state(item) for f in files for item in pq.read_table(f).column(ITEM_COLUMN).to_pylist()]
    assert states
    algo = _bc(files, "is", batch=len(states), iters=1).offline_data(input_read_episodes=True).build_algo()
    try:
        _fix_policy(algo, 0.5)
        evaluation = algo.evaluate_offline()["offline_eval_runners"]
    finally:
        algo.stop()
    expected = []
    for state in states:
        def logged(buffer):  # an episode state's buffer: {"data": ..., "lookback": steps before the episode}
            return np.asarray(buffer["data"], np.float64)[int(buffer.get("lookback", 0)):]

        logp, rewards = logged(state["extra_model_outputs"]["action_logp"]), logged(state["rewards"])
        assert len(logp) == len(rewards) > 0
        expected.append(np.exp(np.sum(np.log(0.5) - logp)) * np.sum(rewards))
    assert evaluation["num_episodes"] == len(states)
    assert evaluation["episode_return_mean"] == pytest.approx(np.mean(expected), rel=1e-5)


def test_data_without_action_logp_is_refused_with_the_fix(tmp_path):
    _logged_episodes(tmp_path, [4] * 10, seed=0, logp=False)
    algo = _bc([str(tmp_path)], "pdis", batch=20, iters=1).build_algo()
    try:
        with pytest.raises(OfflineDataError, match="no column 'action_logp'.*offline_evaluation_type='eval_loss'"):
            algo.evaluate_offline()
    finally:
        algo.stop()


def test_configs_it_cannot_estimate_are_refused(tmp_path):
    _logged_episodes(tmp_path, [4] * 10, seed=0)
    with pytest.raises(ValueError, match="offline_evaluation_type"):
        _bc([str(tmp_path)], "wis", batch=20, iters=1)
    # (On transition rows a recurrent module is refused for training already: test_offline_feature_mixes.py.)
    with pytest.raises(ValueError, match="is recurrent"):
        _bc([str(tmp_path)], "is", batch=20, iters=1).rl_module(model_config={"use_lstm": True}).build_algo()


@pytest.mark.slow
def test_remote_runners_estimate_their_shares_as_the_embedded_runner_does(tmp_path):
    import ray

    episodes = _logged_episodes(tmp_path, [4, 6] * 5, seed=2, name="a")
    episodes += _logged_episodes(tmp_path, [5] * 10, seed=3, name="b")
    files = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        results = {}
        for runners, iters in ((0, 10), (2, 5)):  # each remote runner reads its own file once, the embedded both
            algo = _bc(files, "pdis", batch=10, iters=iters, num_offline_eval_runners=runners).build_algo()
            try:
                _fix_policy(algo, 0.4)
                results[runners] = algo.evaluate_offline()["offline_eval_runners"]
            finally:
                algo.stop()
    finally:
        ray.shutdown()
    for evaluation in results.values():
        assert evaluation["num_episodes"] == len(episodes)
        assert evaluation["episode_return_mean"] == pytest.approx(_by_hand(episodes, 0.4, "pdis"), rel=1e-5)
