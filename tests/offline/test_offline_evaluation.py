"""Offline evaluation (`config.evaluation(offline_evaluation_interval=N)`): the Learner's loss on held-out data at
RLlib 2.60's result keys, no gradient step, the held-out input used, lifetime counts through a checkpoint, BC,
MARWIL, CQL and IQL with env evaluation on at the same time, and bad option values refused."""
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from relayrl import BCConfig, CQLConfig, MARWILConfig, PPOConfig
from relayrl.algorithms.iql import IQLConfig


def _rows(folder, n: int, seed: int, random_actions: bool = False) -> str:
    """CartPole-shaped rows whose action is a rule of the observation (obs[2] > 0), or random."""
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(n, 4)).astype(np.float32)
    actions = rng.integers(0, 2, n) if random_actions else (obs[:, 2] > 0).astype(np.int64)
    pq.write_table(pa.table({"obs": list(obs), "new_obs": list(obs), "actions": actions,
                             "rewards": np.ones(n, np.float32), "terminateds": np.zeros(n, bool),
                             "truncateds": np.zeros(n, bool)}), os.path.join(folder, "rows.parquet"))
    return str(folder)


def _bc(train, held_out=None, **evaluation):
    config = (BCConfig().environment("CartPole-v1").offline_data(input_=[train])
              .training(train_batch_size_per_learner=128, lr=1e-2).rl_module(model_config={"fcnet_hiddens": [16]})
              .debugging(seed=0, logger_config={"type": "none"})
              .evaluation(offline_evaluation_interval=1, **evaluation))
    if held_out is not None:
        config.evaluation(evaluation_config={"input_": [held_out]})
    return config


def _weights(algo):
    return {k: v.copy() for k, v in algo.learner_group.get_weights()["default_policy"].items()}


def _same(before, after) -> bool:
    return all(np.array_equal(before[k], after[k]) for k in before)


def _loss(result) -> float:
    return result["offline_eval_runners"]["default_policy"]["total_eval_loss"]


def test_keys_counts_and_no_weight_change(tmp_path):
    config = _bc(_rows(tmp_path / "train", 512, 0), _rows(tmp_path / "held", 256, 1),
                 offline_eval_batch_size_per_runner=64, dataset_num_iters_per_offline_eval_runner=3)
    algo = config.build_algo()
    try:
        first, second = algo.train(), algo.train()
        before = _weights(algo)
        optimizer = algo.learner_group.get_state(components="learner/optimizer")
        direct = algo.evaluate_offline()
        assert _same(before, _weights(algo))
        assert repr(optimizer) == repr(algo.learner_group.get_state(components="learner/optimizer"))
    finally:
        algo.stop()
    for result, n in ((first, 1), (second, 2)):
        evaluation = result["evaluation"]["offline_eval_runners"]
        module, everything = evaluation["default_policy"], evaluation["__all_modules__"]
        assert np.isfinite(module["total_eval_loss"]) and module["total_eval_loss"] > 0
        assert module["num_module_steps_sampled"] == 3 * 64 and module["module_sample_batch_size_mean"] == 64
        assert everything["dataset_num_iters_evaluated"] == 3
        assert everything["dataset_num_iters_evaluated_lifetime"] == 3 * n
        assert everything["num_env_steps_sampled_lifetime"] == 3 * 64 * n
    assert direct["offline_eval_runners"]["__all_modules__"]["dataset_num_iters_evaluated_lifetime"] == 9
    # The evaluation's steps are not training steps.
    assert second["num_env_steps_trained_lifetime"] == 2 * 128


def test_loss_tells_trained_from_random_data_and_resumes(tmp_path):
    """BC trained on rule data: lower loss on held-out rule data than on random-action data (held-out input used);
    the lifetime counts go on after a restore."""
    train = _rows(tmp_path / "train", 512, 0)
    algo = _bc(train, _rows(tmp_path / "held", 256, 1)).build_algo()
    try:
        untrained = _loss(algo.evaluate_offline())
        for _ in range(25):
            algo.train()
        on_rule_data = _loss(algo.evaluate_offline())
        checkpoint = algo.save_to_path(str(tmp_path / "checkpoint"))
    finally:
        algo.stop()
    resumed = _bc(train, _rows(tmp_path / "random", 256, 2, random_actions=True)).build_algo()
    try:
        resumed.restore_from_path(checkpoint)
        result = resumed.train()
    finally:
        resumed.stop()
    on_random_data = _loss(result["evaluation"])
    assert on_rule_data < 0.5 * untrained, (untrained, on_rule_data)
    assert on_random_data > 2 * on_rule_data, (on_rule_data, on_random_data)
    assert result["evaluation"]["offline_eval_runners"]["__all_modules__"]["dataset_num_iters_evaluated_lifetime"] == 28


def test_training_input_without_held_out_data(tmp_path):
    random_rows = _rows(tmp_path / "random", 256, 2, random_actions=True)
    algo = _bc(random_rows).build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    assert abs(_loss(result["evaluation"]) - np.log(2)) < 0.1  # random actions: about log 2 for any early policy


@pytest.mark.parametrize("config_class, data, env", [
    (MARWILConfig, "cartpole_rows", "CartPole-v1"),
    (BCConfig, "cartpole_episodes", "CartPole-v1"),
    (CQLConfig, "pendulum_rows", "Pendulum-v1"),
    (IQLConfig, "pendulum_rows", "Pendulum-v1"),
])
def test_algorithms_with_env_evaluation(config_class, data, env, request):
    config = (config_class().environment(env).offline_data(input_=request.getfixturevalue(data))
              .training(train_batch_size_per_learner=32).rl_module(model_config={"fcnet_hiddens": [8]})
              .debugging(seed=0, logger_config={"type": "none"})
              .evaluation(evaluation_interval=1, evaluation_duration=1, offline_evaluation_interval=1,
                          offline_eval_batch_size_per_runner=32))
    config.offline_data(input_read_episodes=data.endswith("episodes"))
    if config_class is CQLConfig:
        config.training(bc_iters=1)
    algo = config.build_algo()
    try:
        result = algo.train()
        learner = algo.learner_group._learner
        norms = dict(getattr(learner, "moving_avg_sqd_adv_norms", {}))
        before = _weights(algo)
        algo.evaluate_offline()
        assert _same(before, _weights(algo))
        assert {k: float(v) for k, v in norms.items()} == {
            k: float(v) for k, v in getattr(learner, "moving_avg_sqd_adv_norms", {}).items()}
    finally:
        algo.stop()
    evaluation = result["evaluation"]
    assert evaluation["env_runners"]["num_episodes"] == 1
    assert np.isfinite(evaluation["offline_eval_runners"]["default_policy"]["total_eval_loss"])
    assert evaluation["offline_eval_runners"]["default_policy"]["num_module_steps_sampled"] == 32


def test_custom_loss_function(tmp_path):
    def mean_action(learner, *, module_id, config, batch, fwd_out):
        return batch["actions"].float().mean()

    algo = _bc(_rows(tmp_path / "train", 256, 0), offline_loss_for_module_fn=mean_action).build_algo()
    try:
        loss = _loss(algo.evaluate_offline())
    finally:
        algo.stop()
    assert 0.3 < loss < 0.7  # the share of action 1 in the rows, not a log-likelihood


@pytest.mark.parametrize("options, message", [
    ({"num_offline_eval_runners": -1}, "num_offline_eval_runners"),
    ({"max_requests_in_flight_per_offline_eval_runner": 2}, "no such setting yet"),
    ({"max_num_offline_eval_runner_restarts": -1}, "max_num_offline_eval_runner_restarts"),
    ({"offline_evaluation_type": "wis"}, "'eval_loss', 'is', 'pdis'"),
    ({"offline_evaluation_interval": -1}, "offline_evaluation_interval"),
    ({"offline_eval_batch_size_per_runner": 0}, "offline_eval_batch_size_per_runner"),
    ({"dataset_num_iters_per_offline_eval_runner": None}, "dataset_num_iters_per_offline_eval_runner"),
    ({"offline_evaluation_parallel_to_training": True}, "after the training step"),
])
def test_bad_values_refused(options, message):
    with pytest.raises(ValueError, match=message):
        BCConfig().evaluation(**options)


def test_online_algorithm_refused():
    config = PPOConfig().environment("CartPole-v1").evaluation(offline_evaluation_interval=1)
    with pytest.raises(ValueError, match="no offline evaluation"):
        config.validate()


def test_evaluate_offline_needs_the_interval(tmp_path):
    config = _bc(_rows(tmp_path / "train", 128, 0)).evaluation(offline_evaluation_interval=None)
    algo = config.build_algo()
    try:
        with pytest.raises(ValueError, match="offline_evaluation_interval=N"):
            algo.evaluate_offline()
    finally:
        algo.stop()


def test_callbacks_see_and_change_the_metrics(tmp_path):
    calls = []

    def on_end(*, algorithm, evaluation_metrics, **kwargs):
        calls.append("end")
        evaluation_metrics["default_policy"]["my_metric"] = 1.0

    config = _bc(_rows(tmp_path / "train", 256, 0)).callbacks(
        on_evaluate_offline_start=lambda **kwargs: calls.append("start"), on_evaluate_offline_end=on_end)
    algo = config.build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    assert calls == ["start", "end"]
    assert result["evaluation"]["offline_eval_runners"]["default_policy"]["my_metric"] == 1.0


def test_more_remote_runners_than_files_refused(tmp_path):
    config = _bc(_rows(tmp_path / "train", 128, 0), num_offline_eval_runners=2)
    with pytest.raises(ValueError, match="has 1 file"):
        config.build_algo()


@pytest.mark.slow
def test_remote_runners_evaluate_their_shares(tmp_path):
    """Two Ray actors, one file each: their summed counts, and the loss of the embedded evaluation within noise;
    the embedded evaluation beside remote Learners."""
    import ray

    train = _rows(tmp_path / "train", 512, 0)
    held = tmp_path / "held"
    _rows(held / "a", 256, 1)
    _rows(held / "b", 256, 3)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        results = {}
        for runners in (0, 2):
            algo = _bc(train, str(held), num_offline_eval_runners=runners, offline_eval_batch_size_per_runner=128,
                       dataset_num_iters_per_offline_eval_runner=4).build_algo()
            try:
                for _ in range(10):
                    result = algo.train()
                before = _weights(algo)
                results[runners] = result["evaluation"]["offline_eval_runners"]
                assert _same(before, _weights(algo))
            finally:
                algo.stop()
        # Remote Learners (DDP) train; the embedded evaluation's Learner copy stays out of their group.
        algo = _bc(train, str(held)).learners(num_learners=2).offline_data(input_reader="embedded").build_algo()
        try:
            algo.train()
            with_remote_learners = _loss(algo.train()["evaluation"])
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    assert np.isfinite(with_remote_learners)
    remote, embedded = results[2], results[0]
    assert remote["__all_modules__"]["dataset_num_iters_evaluated"] == 8
    assert remote["__all_modules__"]["num_env_steps_sampled_lifetime"] == 10 * 2 * 4 * 128
    assert embedded["__all_modules__"]["dataset_num_iters_evaluated"] == 4
    loss_remote, loss_embedded = (r["default_policy"]["total_eval_loss"] for r in (remote, embedded))
    assert abs(loss_remote - loss_embedded) < 0.25 * loss_embedded, (loss_remote, loss_embedded)


def test_multi_agent_module_beside_a_multi_agent_env_evaluation(cartpole_rows):
    """BC's one module "main" under multi_agent; evaluation_config sets input_='sampler' and other policies for
    the env evaluation: the offline evaluation keeps the training input and module."""
    from relayrl.core.policy_spec import PolicySpec
    from relayrl.examples._old_api_stack.policy.random_policy import RandomPolicy
    from relayrl.examples.envs.classes.multi_agent import MultiAgentCartPole

    import gymnasium as gym

    cartpole = gym.make("CartPole-v1")
    config = (BCConfig().environment(observation_space=cartpole.observation_space, action_space=cartpole.action_space)
              .offline_data(input_=cartpole_rows)
              .multi_agent(policies={"main"}, policy_mapping_fn=lambda *a, **k: "main")
              .training(train_batch_size=32).rl_module(model_config={"fcnet_hiddens": [8]})
              .debugging(seed=0, logger_config={"type": "none"})
              .evaluation(evaluation_interval=1, evaluation_duration=1, offline_evaluation_interval=1,
                          offline_eval_batch_size_per_runner=32,
                          evaluation_config=BCConfig.overrides(
                              input_="sampler", explore=False, env=MultiAgentCartPole, env_config={"num_agents": 2},
                              policies={"main": PolicySpec(), "random": PolicySpec(policy_class=RandomPolicy)},
                              policy_mapping_fn=lambda aid, *a, **kw: "main" if aid == 0 else "random")))
    algo = config.build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    offline = result["evaluation"]["offline_eval_runners"]
    assert set(offline) == {"main", "__all_modules__"} and np.isfinite(offline["main"]["total_eval_loss"])
    assert result["evaluation"]["env_runners"]["num_episodes"] == 1
