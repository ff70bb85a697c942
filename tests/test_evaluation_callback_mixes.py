"""Evaluation and callbacks mixed with other features, as users' scripts mix them: a custom evaluation function
in parallel on remote runners with a multi-agent env, evaluation_config with "auto" duration, callbacks given three
ways with remote and async (IMPALA/APPO) runners and Tune, episode hooks in evaluation runners, and the Algorithm
hooks around evaluations and checkpoint restores. (tests/test_evaluation.py and tests/test_callbacks.py hold each
feature alone.)"""
import sys

import pytest

from relayrl import PPOConfig, RLlibCallback
from relayrl.algorithms.algorithm import Algorithm
from relayrl.algorithms.appo import APPOConfig
from relayrl.algorithms.impala import IMPALAConfig
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.testing.envs import CountingEnv



def in_a_ray_actor() -> bool:
    """True in a remote EnvRunner's process (a Ray actor), False in this test's (the driver's)."""
    import ray

    return ray.is_initialized() and ray.get_runtime_context().get_actor_id() is not None

HOOKS = []  # (hook, algorithm.iteration, ...) of the Algorithm-side hooks, which run in this process


@pytest.fixture(scope="module")
def ray_2_cpus():
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def clear_hooks():
    HOOKS.clear()


def tiny(config_class=PPOConfig, episode_len=3, **env_runners):
    config = (config_class().environment(CountingEnv, env_config={"episode_len": episode_len})
              .env_runners(**{"num_envs_per_env_runner": 1, "num_cpus_per_env_runner": 0.5, **env_runners})
              .training(train_batch_size=12).rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0))
    return config.training(minibatch_size=6, num_epochs=1) if config_class is PPOConfig else config


# -- 1. custom_evaluation_function, in parallel to training, on remote runners, multi-agent env ----------------------

def two_agents_evaluated_in_parallel_by(custom_evaluation_function):
    """A two-agent CountingEnv (a policy per agent), evaluated by the function on 2 remote runners in parallel."""
    return (tiny(episode_len=3)
            .environment(make_multi_agent(lambda env_config: CountingEnv(env_config)),
                         env_config={"num_agents": 2, "episode_len": 3})
            .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, episode, **kw: f"p{agent_id}")
            .evaluation(evaluation_interval=1, evaluation_num_env_runners=2, evaluation_parallel_to_training=True,
                        custom_evaluation_function=custom_evaluation_function))


def one_episode_per_runner(algorithm, eval_env_runner_group):
    def sample(runner):
        episode, = runner.sample(num_episodes=1)
        return runner.worker_index, runner.config.in_evaluation, sorted(episode.agent_ids), len(episode)

    return {"iteration_seen": algorithm.iteration,
            "runners": eval_env_runner_group.foreach_env_runner(sample, local_env_runner=False)}


def test_custom_evaluation_function_in_parallel_on_remote_runners_with_a_multi_agent_env(ray_2_cpus):
    config = two_agents_evaluated_in_parallel_by(one_episode_per_runner)
    algo = config.build_algo()
    try:
        for iteration in range(2):
            result = algo.train()
            # The function's dict is the evaluation result, as returned (episodes of 3 env steps, both agents acting).
            assert result["evaluation"] == {"iteration_seen": iteration,
                                            "runners": [(1, True, [0, 1], 3), (2, True, [0, 1], 3)]}
            assert set(result["env_runners"]["agent_episode_returns_mean"]) == {"0", "1"}  # as RLlib: str
    finally:
        algo.stop()


def rllib_style_logging_evaluation(algorithm, eval_env_runner_group):
    """RLlib 2.60's style: aggregate the runners' metrics under ("evaluation", "env_runners") and return
    (metrics, env_steps, agent_steps)."""
    runner_metrics = eval_env_runner_group.foreach_env_runner(
        lambda runner: (runner.sample(num_episodes=2), runner.get_metrics())[1], local_env_runner=False)
    algorithm.metrics.aggregate(runner_metrics, key=("evaluation", "env_runners"))
    return {"ignored": True}, 0, 0


def test_rllib_style_custom_evaluation_in_parallel_on_remote_runners_with_a_multi_agent_env(ray_2_cpus):
    config = two_agents_evaluated_in_parallel_by(rllib_style_logging_evaluation)
    algo = config.build_algo()
    try:
        for _ in range(2):
            evaluated = algo.train()["evaluation"]  # what the function logged, as RLlib reports it
            assert "ignored" not in evaluated and evaluated["env_runners"]["num_episodes"] == 2 * 2
            assert evaluated["env_runners"]["num_env_steps_sampled"] == 2 * 2 * 3
            assert evaluated["env_runners"]["agent_episode_returns_mean"] == {"0": 6.0, "1": 6.0}
    finally:
        algo.stop()


# -- 2. evaluation_config: a harder level and explore=False, "auto" duration in parallel -----------------------------

class EpisodeFacts(RLlibCallback):
    """Logs, from inside the env the episode ran in, its length setting, and the runner's explore/in_evaluation."""

    def on_episode_end(self, *, env_runner, metrics_logger, env, env_index, **kwargs):
        metrics_logger.log_value("env_episode_len", env.unwrapped.envs[env_index].unwrapped.episode_len, reduce="max")
        metrics_logger.log_value("explore", float(env_runner.config.explore), reduce="max")
        metrics_logger.log_value("in_evaluation", float(env_runner.config.in_evaluation), reduce="max")


def test_evaluation_config_env_config_and_explore_with_auto_duration_in_parallel(ray_2_cpus):
    harder = {"episode_len": 9, "level": {"size": 3}}  # merged at every depth, as RLlib: "walls" stays
    config = (tiny().environment(env_config={"episode_len": 3, "level": {"size": 1, "walls": 2}})
              .callbacks(EpisodeFacts)
              .evaluation(evaluation_interval=1, evaluation_num_env_runners=1, evaluation_duration="auto",
                          evaluation_parallel_to_training=True,
                          evaluation_config=PPOConfig.overrides(explore=False, env_config=harder)))
    algo = config.build_algo()
    try:
        for _ in range(2):
            result = algo.train()
            trained, evaluated = result["env_runners"], result["evaluation"]["env_runners"]
            assert (trained["env_episode_len"], trained["explore"], trained["in_evaluation"]) == (3, 1.0, 0.0)
            assert (evaluated["env_episode_len"], evaluated["explore"], evaluated["in_evaluation"]) == (9, 0.0, 1.0)
            assert evaluated["episode_len_mean"] == 9 and evaluated["num_episodes"] >= 1
        eval_env_config, = algo.eval_env_runner_group.foreach_env(lambda env: env.env_config)[0]  # in the env
        assert eval_env_config == {"episode_len": 9, "level": {"size": 3, "walls": 2}}
        assert algo.env_runner.config.env_config == {"episode_len": 3, "level": {"size": 1, "walls": 2}}
        assert algo.config.explore
    finally:
        algo.stop()


# -- 3. callbacks three ways, on remote runners, synchronous (PPO) and asynchronous (IMPALA, APPO) sampling -----------

class CountA(RLlibCallback):
    def on_episode_end(self, *, episode, env_runner, metrics_logger, env, env_index, rl_module, **kwargs):
        assert metrics_logger is env_runner.metrics and rl_module is env_runner.module and episode.is_done
        assert 0 <= env_index < env.num_envs
        metrics_logger.log_value("a_episodes", 1, reduce="sum", clear_on_reduce=True)
        metrics_logger.log_value("a_in_a_runner_process", float(in_a_ray_actor()), reduce="min")
        metrics_logger.log_value("a_max_worker_index", env_runner.worker_index, reduce="max")

    def on_train_result(self, *, algorithm, metrics_logger, result, **kwargs):
        assert not in_a_ray_actor() and metrics_logger is algorithm.metrics
        result["a_iteration"] = result["training_iteration"]


class CountB(RLlibCallback):
    def on_episode_end(self, *, metrics_logger, **kwargs):
        metrics_logger.log_value("b_episodes", 1, reduce="sum", clear_on_reduce=True)

    def on_train_result(self, *, result, **kwargs):
        result["b_saw_a"] = result["a_iteration"]  # list order: A's change is in already


def count_in_function(*, episode, env_runner, metrics_logger, env_index, **kwargs):
    metrics_logger.log_value("f_episodes", 1, reduce="sum", clear_on_reduce=True)


def mark_in_function(*, algorithm, result, **kwargs):
    result["f_saw_b"] = result.get("b_saw_a", "no list")


@pytest.mark.parametrize("config_class,form", [
    (PPOConfig, "class"), (PPOConfig, "list and functions"),
    (IMPALAConfig, "list and functions"), (APPOConfig, "list and functions")])
def test_callbacks_three_ways_on_remote_sync_and_async_runners(ray_2_cpus, config_class, form):
    config = tiny(config_class, num_env_runners=2, num_envs_per_env_runner=2, rollout_fragment_length=6).training(
        train_batch_size=24)
    if config_class is not PPOConfig:  # IMPALA/APPO iterate 10 s or 10,000 steps by default
        config = config.reporting(min_time_s_per_iteration=0, min_sample_timesteps_per_iteration=24)
    if form == "class":
        config = config.callbacks(CountA)
    else:
        config = config.callbacks([CountA, CountB], on_episode_end=count_in_function, on_train_result=mark_in_function)
    algo = config.build_algo()
    try:
        worker_indices, iteration = set(), 0
        # Async runners: an iteration may hear from one runner only (the other still starting on a busy machine),
        # so it goes on past 3 iterations until the second runner's episodes came, or 12.
        while iteration < 3 or (2 not in worker_indices and iteration < 12):
            iteration += 1
            result = algo.train()
            runners = result["env_runners"]
            assert runners["num_episodes"] > 0 and runners["a_episodes"] == runners["num_episodes"]
            assert runners["a_in_a_runner_process"] == 1.0 and runners["a_max_worker_index"] in (1, 2)
            worker_indices.add(runners["a_max_worker_index"])  # (async: one iteration may hear from one runner)
            assert result["a_iteration"] == iteration
            if form == "class":
                assert "b_episodes" not in runners and "f_saw_b" not in result
            else:
                assert runners["b_episodes"] == runners["f_episodes"] == runners["num_episodes"]
                assert result["b_saw_a"] == iteration and result["f_saw_b"] == iteration
        assert 2 in worker_indices  # the second remote runner's episodes ran the callbacks too
    finally:
        algo.stop()


def add_to_result(*, algorithm, result, **kwargs):
    result["my_score"] = 10 * result["training_iteration"]


def test_on_train_result_changes_reach_tune(ray_2_cpus, tmp_path):
    tune = pytest.importorskip("ray.tune")
    pytest.importorskip("ray.cloudpickle").register_pickle_by_value(sys.modules[__name__])  # trial actors
    config = tiny(num_env_runners=1).callbacks(on_train_result=add_to_result)
    run_config = tune.RunConfig(storage_path=str(tmp_path), name="mix", verbose=0, stop={"my_score": 30})
    result, = tune.Tuner(config.algo_class, param_space=config, run_config=run_config).fit()
    assert result.error is None
    assert result.metrics["my_score"] == 30 and result.metrics["training_iteration"] == 3  # Tune stopped on it


# -- 4. episode hooks in evaluation runners ------------------------------------------------------------------------

class CountSteps(RLlibCallback):
    def on_episode_step(self, *, env_runner, metrics_logger, **kwargs):
        name = "eval_hook_steps" if env_runner.config.in_evaluation else "train_hook_steps"
        metrics_logger.log_value(name, 1, reduce="sum", clear_on_reduce=True)

    def on_episode_end(self, *, env_runner, metrics_logger, **kwargs):
        metrics_logger.log_value("ended_in_evaluation", float(env_runner.config.in_evaluation), reduce="max")
        metrics_logger.log_value("ended_in_a_runner_process", float(in_a_ray_actor()), reduce="max")


@pytest.mark.parametrize("evaluation_runners,parallel", [(0, False), (2, True)])
def test_episode_hooks_in_evaluation_runners_log_under_evaluation(request, evaluation_runners, parallel):
    if evaluation_runners:
        request.getfixturevalue("ray_2_cpus")
    algo = (tiny().callbacks(CountSteps)
            .evaluation(evaluation_interval=1, evaluation_duration=4, evaluation_num_env_runners=evaluation_runners,
                        evaluation_parallel_to_training=parallel).build_algo())
    try:
        for _ in range(2):
            result = algo.train()
            trained, evaluated = result["env_runners"], result["evaluation"]["env_runners"]
            assert evaluated["eval_hook_steps"] == evaluated["num_env_steps_sampled"] == 4 * 3
            assert "train_hook_steps" not in evaluated and "eval_hook_steps" not in trained
            assert trained["train_hook_steps"] == trained["num_env_steps_sampled"]
            assert (evaluated["ended_in_evaluation"], trained["ended_in_evaluation"]) == (1.0, 0.0)
            assert evaluated["ended_in_a_runner_process"] == float(evaluation_runners > 0)
    finally:
        algo.stop()


class CountEvaluationEpisodes(RLlibCallback):
    def on_episode_end(self, *, metrics_logger, **kwargs):
        metrics_logger.log_value("evaluation_only_episodes", 1, reduce="sum", clear_on_reduce=True)


def count_with_a_function(*, metrics_logger, **kwargs):
    metrics_logger.log_value("evaluation_only_function", 1, reduce="sum", clear_on_reduce=True)


@pytest.mark.parametrize("overrides", [{"callbacks_class": CountEvaluationEpisodes},
                                       {"callbacks_on_episode_end": count_with_a_function}])
def test_evaluation_config_callbacks_run_only_in_evaluation_runners(overrides):
    algo = (tiny().callbacks(CountSteps)
            .evaluation(evaluation_interval=1, evaluation_duration=2,
                        evaluation_config=PPOConfig.overrides(**overrides)).build_algo())
    try:
        result = algo.train()
        trained, evaluated = result["env_runners"], result["evaluation"]["env_runners"]
        name, = {"evaluation_only_episodes", "evaluation_only_function"} & set(evaluated)
        assert evaluated[name] == 2 and name not in trained
        # A class replaces the main config's (as RLlib); a function is added after the main class's methods.
        assert ("eval_hook_steps" in evaluated) == ("callbacks_on_episode_end" in overrides)
        assert trained["train_hook_steps"] == trained["num_env_steps_sampled"]
    finally:
        algo.stop()


# -- 5. Algorithm hooks around evaluations and checkpoint restores ---------------------------------------------------

class AlgorithmHooks(RLlibCallback):
    def on_algorithm_init(self, *, algorithm, **kwargs):
        HOOKS.append(("init", algorithm.iteration))

    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        HOOKS.append(("loaded", algorithm.iteration))

    def on_evaluate_start(self, *, algorithm, metrics_logger=None, **kwargs):
        assert metrics_logger is algorithm.metrics
        HOOKS.append(("evaluate_start", algorithm.iteration))

    def on_evaluate_end(self, *, algorithm, evaluation_metrics, **kwargs):
        HOOKS.append(("evaluate_end", algorithm.iteration, evaluation_metrics["env_runners"]["num_episodes"]))
        evaluation_metrics["changed_by_on_evaluate_end"] = True  # reaches `result["evaluation"]`, as in RLlib


@pytest.mark.parametrize("evaluation_runners,parallel", [(0, False), (0, True), (1, False), (1, True)])
def test_evaluate_hooks_around_each_evaluation_and_restores(request, tmp_path, evaluation_runners, parallel):
    if evaluation_runners:
        request.getfixturevalue("ray_2_cpus")
    config = tiny().callbacks(AlgorithmHooks).evaluation(
        evaluation_interval=2, evaluation_duration=2, evaluation_num_env_runners=evaluation_runners,
        evaluation_parallel_to_training=parallel)
    algo = config.build_algo()
    try:
        results = [algo.train() for _ in range(4)]
        # As RLlib 2.60 (both modes): once per evaluation, `iteration` = the iterations done before this one.
        assert HOOKS == [("init", 0), ("evaluate_start", 1), ("evaluate_end", 1, 2),
                         ("evaluate_start", 3), ("evaluate_end", 3, 2)]
        assert results[1]["evaluation"]["env_runners"]["num_episodes"] == 2
        assert results[1]["evaluation"]["changed_by_on_evaluate_end"] is True
        HOOKS.clear()
        assert algo.evaluate()["changed_by_on_evaluate_end"]  # evaluate() called directly: the same hooks, once
        assert HOOKS == [("evaluate_start", 4), ("evaluate_end", 4, 2)]
        path = algo.save_to_path(tmp_path / "checkpoint")
        algo.train()
        HOOKS.clear()
        algo.restore_from_path(path)
        assert HOOKS == [("loaded", 4)] and algo.iteration == 4  # once, with the state loaded
    finally:
        algo.stop()
    HOOKS.clear()
    restored = Algorithm.from_checkpoint(path, trusted=[AlgorithmHooks, CountingEnv])  # (test classes: passed)
    try:
        assert HOOKS == [("init", 0), ("loaded", 4)]  # built (fresh state), then loaded
        HOOKS.clear()
        fifth = restored.train()  # does not evaluate: carries the 4th iteration's evaluation, from the checkpoint
        assert fifth["evaluation"] == results[3]["evaluation"] and restored.iteration == 5
        restored.train()  # the 6th iteration evaluates
        assert HOOKS == [("evaluate_start", 5), ("evaluate_end", 5, 2)]
    finally:
        restored.stop()
