"""Evaluation during training: interval, weight ordering, durations and rounding, overrides, custom fn."""
import copy

import numpy as np
import pytest
import torch

from relayrl import PPOConfig, RLlibCallback
from relayrl.algorithms.algorithm_config import AlgorithmConfig
from relayrl.testing.envs import CountingEnv

EPISODE_LEN = 4
EVAL_SAMPLES = []  # (weights checksum of the eval runner's module, worker_index, steps, episodes)


def checksum(state) -> float:
    if isinstance(state, dict):
        return sum(checksum(v) for v in state.values())
    if isinstance(state, (torch.Tensor, np.ndarray)):
        return float(np.asarray(state, dtype=np.float64).sum())
    return 0.0


class RecordEvalSamples(RLlibCallback):
    """Records evaluation samples in this process (local runners) and, for evaluation runners that
    are Ray actors, as metrics per worker index (summed across the evaluation)."""

    def on_sample_end(self, *, env_runner=None, metrics_logger=None, samples, **kwargs):
        if env_runner.config.in_evaluation:
            steps, episodes = sum(len(e) for e in samples), sum(e.is_done for e in samples)
            EVAL_SAMPLES.append((checksum(env_runner.module.get_state()), env_runner.worker_index, steps, episodes))
            for name, value in (("steps", steps), ("episodes", episodes)):
                metrics_logger.log_value(("eval_samples", str(env_runner.worker_index), name), value, reduce="sum")


class CountEvaluations(RLlibCallback):
    starts, ends = [], []

    def on_evaluate_start(self, *, algorithm, **kwargs):
        CountEvaluations.starts.append(algorithm.iteration)

    def on_evaluate_end(self, *, algorithm, evaluation_metrics, **kwargs):
        CountEvaluations.ends.append(evaluation_metrics)


@pytest.fixture(autouse=True)
def clear_records():
    EVAL_SAMPLES.clear()
    CountEvaluations.starts, CountEvaluations.ends = [], []


@pytest.fixture(scope="module")
def ray_2_cpus():
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def config(**evaluation):
    return (PPOConfig().environment(CountingEnv, env_config={"episode_len": EPISODE_LEN})
            .env_runners(num_envs_per_env_runner=1)
            .training(train_batch_size=16, minibatch_size=8, num_epochs=1, lr=0.01)
            .rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0)
            .evaluation(**evaluation))


def learner_checksum(algo) -> float:
    return checksum(algo.learner_group.get_weights(inference_only=True))


def test_evaluation_every_interval_carried_between_and_runners_are_separate():
    algo = config(evaluation_interval=2, evaluation_duration=2).callbacks(CountEvaluations).build_algo()
    try:
        assert algo.eval_env_runner_group is algo.evaluation_workers is not None
        assert algo.eval_env_runner_group is not algo.env_runner_group
        assert algo.eval_env_runner_group.local_env_runner is not algo.env_runner
        first, second = algo.train(), algo.train()
        assert "evaluation" not in first and CountEvaluations.starts == [1]  # iterations done (RLlib 2.60)
        evaluated = copy.deepcopy(second["evaluation"])
        second["evaluation"]["env_runners"]["episode_return_mean"] = -1.0  # a user's change to a returned result
        # As RLlib 2.60: an iteration that does not evaluate carries the last evaluation's results, unchanged.
        third = algo.train()
        assert CountEvaluations.starts == [1] and third["evaluation"] == evaluated
        fourth, fifth = algo.train(), algo.train()
        assert CountEvaluations.starts == [1, 3] and fifth["evaluation"] == fourth["evaluation"]
        assert fourth["evaluation"]["env_runners"]["num_episodes"] == 2
    finally:
        algo.stop()
    assert config().build_algo().eval_env_runner_group is None


def test_sequential_eval_uses_weights_after_the_step():
    algo = config(evaluation_interval=1, evaluation_duration=1).callbacks(RecordEvalSamples).build_algo()
    try:
        for _ in range(3):
            EVAL_SAMPLES.clear()
            result = algo.train()
            assert result["evaluation"]["env_runners"]["episode_return_mean"] == pytest.approx(10.0)
            assert EVAL_SAMPLES[0][0] == pytest.approx(learner_checksum(algo), rel=1e-6)
    finally:
        algo.stop()


def test_parallel_eval_uses_weights_from_before_the_step():
    algo = config(evaluation_interval=1, evaluation_duration=2,
                  evaluation_parallel_to_training=True).callbacks(RecordEvalSamples).build_algo()
    try:
        before = learner_checksum(algo)
        for _ in range(3):
            EVAL_SAMPLES.clear()
            result = algo.train()
            after = learner_checksum(algo)
            assert after != pytest.approx(before, rel=1e-9)
            assert all(c == pytest.approx(before, rel=1e-6) for c, *_ in EVAL_SAMPLES)
            assert result["evaluation"]["env_runners"]["num_episodes"] == 2
            before = after
    finally:
        algo.stop()


def test_auto_duration_samples_while_training_runs():
    algo = config(evaluation_interval=1, evaluation_duration="auto",
                  evaluation_parallel_to_training=True).build_algo()
    try:
        result = algo.train()
        assert result["evaluation"]["env_runners"]["num_episodes"] >= 1
    finally:
        algo.stop()


def test_auto_duration_requires_parallel():
    with pytest.raises(ValueError, match="evaluation_parallel_to_training=True"):
        config(evaluation_interval=1, evaluation_duration="auto").build_algo()


@pytest.mark.parametrize("unit,duration,runners,expected_steps,expected_per_runner", [
    ("episodes", 10, 0, 10 * EPISODE_LEN, {0: 10}),
    ("episodes", 10, 1, 10 * EPISODE_LEN, {1: 10}),
    ("episodes", 10, 3, 10 * EPISODE_LEN, {1: 4, 2: 3, 3: 3}),
    ("episodes", 2, 3, 2 * EPISODE_LEN, {1: 1, 2: 1}),
    ("timesteps", 10, 0, 10, {0: 10}),
    ("timesteps", 10, 1, 10, {1: 10}),
    ("timesteps", 10, 3, 12, {1: 4, 2: 4, 3: 4}),
])
def test_duration_and_rounding(unit, duration, runners, expected_steps, expected_per_runner, request):
    if runners:  # evaluation EnvRunners are Ray actors: a small local Ray, shut down after this module
        request.getfixturevalue("ray_2_cpus")
    algo = (config(evaluation_interval=1, evaluation_duration=duration, evaluation_duration_unit=unit,
                   evaluation_num_env_runners=runners)
            .env_runners(num_cpus_per_env_runner=0.5).callbacks(RecordEvalSamples).build_algo())
    try:
        indices = algo.eval_env_runner_group.foreach_env_runner(lambda r: r.worker_index)
        assert indices == ([0] if runners == 0 else list(range(1, runners + 1)))
        metrics = algo.evaluate()["env_runners"]
        assert metrics["num_env_steps_sampled"] == expected_steps
        name = "episodes" if unit == "episodes" else "steps"
        per_runner = {int(index): counts[name] for index, counts in metrics["eval_samples"].items()
                      if counts[name] > 0}
        assert per_runner == expected_per_runner
        if unit == "episodes":
            assert metrics["num_episodes"] == duration
    finally:
        algo.stop()


def test_evaluation_config_overrides_reach_only_eval_runners():
    overrides = AlgorithmConfig.overrides(explore=False, env_config={"episode_len": 7})
    algo = config(evaluation_interval=1, evaluation_duration=3, evaluation_config=overrides).build_algo()
    try:
        assert algo.config.explore and algo.env_runner.config.env_config == {"episode_len": EPISODE_LEN}
        assert algo.evaluation_config.in_evaluation and not algo.config.in_evaluation
        assert algo.evaluation_config.explore is False
        assert algo.env_runner.foreach_env(lambda env: env.episode_len) == [EPISODE_LEN]
        assert algo.eval_env_runner_group.foreach_env(lambda env: env.episode_len) == [[7]]
        result = algo.train()
        assert result["evaluation"]["env_runners"]["episode_len_mean"] == 7
        assert result["env_runners"]["episode_len_mean"] == EPISODE_LEN
        # explore=False: greedy actions, the same in every eval episode (obs differ only by step).
        actions = algo.eval_env_runner_group.foreach_env(lambda env: env.actions_received)[0][0]
        per_episode = [tuple(int(a) for a in actions[i:i + 7]) for i in range(0, len(actions), 7)]
        assert len(per_episode) == 3 and len(set(per_episode)) == 1
    finally:
        algo.stop()


def test_bad_evaluation_config_key_raises():
    with pytest.raises(KeyError, match="no option"):
        config(evaluation_interval=1, evaluation_config={"explor": False}).build_algo()


def test_videos_asked_of_evaluation_runners_alone_are_refused_naming_the_ways():
    # (they were dropped without a word: evaluation runners record nothing)
    config = PPOConfig().environment("CartPole-v1").evaluation(
        evaluation_interval=1, evaluation_config={"record_video_every_n_episodes": 1})
    with pytest.raises(ValueError, match=r"evaluation_config=\{'record_video_every_n_episodes': 1\}: relayrl records "
                       r"videos of training episodes only.*relayrl evaluate CHECKPOINT --video-dir.*EnvRenderCallback"):
        config.validate()
    # the training runners' value repeated (what evaluation inherits anyway), or turned off, is fine
    PPOConfig().environment("CartPole-v1", record_video_every_n_episodes=5).evaluation(
        evaluation_interval=1, evaluation_config={"record_video_every_n_episodes": 5}).validate()
    PPOConfig().environment("CartPole-v1", record_video_every_n_episodes=5).evaluation(
        evaluation_interval=1, evaluation_config={"record_video_every_n_episodes": None}).validate()


def test_custom_evaluation_function_and_callbacks():
    seen = []

    def custom_eval(algorithm, eval_env_runner_group):
        seen.append(eval_env_runner_group)
        lengths = eval_env_runner_group.foreach_env_runner(lambda r: r.worker_index, local_env_runner=False)
        return {"my_metric": 42, "runners": lengths}

    algo = (config(evaluation_interval=1, evaluation_num_env_runners=2, custom_evaluation_function=custom_eval)
            .callbacks(CountEvaluations).build_algo())
    try:
        for i in range(2):
            result = algo.train()
            assert result["evaluation"] == {"my_metric": 42, "runners": [1, 2]}
        assert seen == [algo.eval_env_runner_group] * 2
        assert CountEvaluations.starts == [0, 1]  # once per evaluation, after the step, before it is counted
        assert CountEvaluations.ends == [{"my_metric": 42, "runners": [1, 2]}] * 2
    finally:
        algo.stop()


def test_evaluate_without_eval_runners_raises():
    algo = config().build_algo()
    try:
        with pytest.raises(ValueError, match="evaluation_interval"):
            algo.evaluate()
    finally:
        algo.stop()


def test_connector_state_synced_to_eval_runners():
    from relayrl.connectors.env_to_module.mean_std_filter import MeanStdFilter

    cfg = config(evaluation_interval=1, evaluation_duration=1).env_runners(
        env_to_module_connector=lambda env, spaces=None, device=None: MeanStdFilter())
    algo = cfg.build_algo()
    try:
        algo.train()
        train_state = algo.env_runner.get_state()["env_to_module_connector"]
        algo.eval_env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group,
                                                connector_states_from=algo.env_runner)
        eval_state = algo.eval_env_runner_group.local_env_runner.get_state()["env_to_module_connector"]
        assert checksum(eval_state) == pytest.approx(checksum(train_state))
    finally:
        algo.stop()


@pytest.mark.parametrize("explore_in_evaluation", [False, True])
def test_a_seeded_run_trains_the_same_with_and_without_evaluation(explore_in_evaluation):
    """Building and running the evaluation runners draws random numbers (module initialisation, exploration),
    but from the global generators' saved state: the training episodes and weights are those of a run without."""
    def train(with_evaluation):
        config = (PPOConfig().environment("CartPole-v1")
                  .training(train_batch_size=256, minibatch_size=64, num_epochs=2)
                  .debugging(seed=0, logger_config={"type": "none"}))
        if with_evaluation:
            config = config.evaluation(evaluation_interval=1, evaluation_duration=2,
                                       evaluation_config={"explore": explore_in_evaluation})
        algo = config.build_algo()
        try:
            returns = [algo.train()["env_runners"]["episode_return_mean"] for _ in range(3)]
            return returns, algo.learner_group.get_module().state_dict()
        finally:
            algo.stop()

    returns, weights = train(False)
    returns_with, weights_with = train(True)
    assert returns_with == returns
    assert all(torch.equal(weights[k], weights_with[k]) for k in weights)
