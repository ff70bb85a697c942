"""What every example script shares: RLlib's example flags and stop rules (`ray.rllib.examples.utils`, also
`ray.rllib.utils.test_utils`), so example scripts ported from RLlib keep their flags and behaviour.

`run_rllib_example_script_experiment(config, args)` runs the experiment through Ray Tune and returns Tune's
ResultGrid, as RLlib's does; with `--no-tune` it trains in this process (no Ray) and returns the last result
dict. relayrl's own examples/ default to `--no-tune` (`parser.set_defaults(no_tune=True)`): the in-process
path starts in about a second. relayrl's extras: `--seed`, `on_algorithm_built`, `--as-test` also without Tune,
and a Tune trial that fails raises instead of returning quietly.
"""
import argparse
import math
import os
import tempfile
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

_RETURN = "env_runners/episode_return_mean"


def add_rllib_example_script_args(parser: Optional[argparse.ArgumentParser] = None, default_reward: float = 100.0,
                                  default_iters: int = 200, default_timesteps: int = 100_000
                                  ) -> argparse.ArgumentParser:
    """RLlib's example-script flags (and a parser if none is given)."""
    parser = parser or argparse.ArgumentParser()
    add = parser.add_argument
    add("--algo", type=str, default="PPO", help="the registered algorithm to use (get_trainable_cls(args.algo))")
    add("--framework", choices=["tf", "tf2", "torch"], default="torch",
        help="relayrl runs torch only ('tf'/'tf2' fail with a message)")
    add("--env", type=str, default=None, help="the gymnasium env id, if the script sets none")
    add("--num-env-runners", type=int, default=None, help="remote EnvRunners (Ray actors); default: the config's")
    add("--num-envs-per-env-runner", type=int, default=None, help="vectorised envs per EnvRunner")
    add("--num-agents", type=int, default=0, help="multi-agent: agents in the script's env (its config must be "
        "multi-agent: config.multi_agent(...))")
    add("--evaluation-num-env-runners", type=int, default=0)
    add("--evaluation-interval", type=int, default=0, help="evaluate every this many iterations (0: never)")
    add("--evaluation-duration", type=lambda v: v if v == "auto" else int(v), default=10)
    add("--evaluation-duration-unit", type=str, default="episodes", choices=["episodes", "timesteps"])
    add("--evaluation-parallel-to-training", action="store_true")
    add("--output", type=str, default=None, help="record the sampled episodes to this folder "
        "(config.offline_data(output=...))")
    add("--log-level", type=str, default=None, choices=["INFO", "DEBUG", "WARN", "ERROR"])
    add("--no-tune", action="store_true", help="train in this process instead of through Ray Tune")
    add("--num-samples", type=int, default=1, help="Tune trials")
    add("--max-concurrent-trials", type=int, default=None)
    add("--verbose", type=int, default=2, help="Tune's verbosity")
    add("--checkpoint-freq", type=int, default=0, help="save a checkpoint every this many iterations (0: never)")
    add("--checkpoint-at-end", action="store_true", help="save a checkpoint when training ends")
    add("--tune-max-report-freq", type=int, default=5)
    add("--wandb-key", type=str, default=None, help="not supported by relayrl's helper (ignored)")
    add("--wandb-project", type=str, default=None)
    add("--wandb-run-name", type=str, default=None)
    add("--stop-reward", type=float, default=default_reward,
        help="stop once env_runners/episode_return_mean reaches this")
    add("--stop-iters", type=int, default=default_iters, help="stop after this many train() calls")
    add("--stop-timesteps", type=int, default=default_timesteps, help="stop after this many sampled env steps")
    add("--as-test", action="store_true", help="fail unless the success metric (default: --stop-reward) was reached")
    add("--as-release-test", action="store_true")
    add("--num-learners", type=int, default=None, help="remote Learners (Ray actors, DDP)")
    add("--num-cpus-per-learner", type=float, default=None)
    add("--num-gpus-per-learner", type=float, default=None)
    add("--num-aggregator-actors-per-learner", type=int, default=None, help="not in relayrl (an error if > 0)")
    add("--num-cpus", type=int, default=0, help="CPUs for ray.init (0: all)")
    add("--num-gpus", type=int, default=None, help="old API stack: an error if > 0 (use --num-gpus-per-learner)")
    add("--old-api-stack", action="store_true", help="not in relayrl (an error)")
    add("--enable-new-api-stack", action="store_true", help="no longer needed (an error, as in RLlib)")
    add("--local-mode", action="store_true", help="no longer supported (an error, as in RLlib)")
    add("--seed", type=int, default=0, help="(relayrl) the seed example scripts pass to config.debugging()")
    return parser


def should_stop(stop: Mapping[str, float], result: Mapping[str, Any]) -> bool:
    """RLlib's rule: stop when ANY criterion is reached; keys may be "/"-nested (`env_runners/...`)."""
    for path, threshold in stop.items():
        value = _value_at(result, path)
        if value is not None and value == value and value >= threshold:  # `value == value`: not NaN
            return True
    return False


def _value_at(result: Mapping[str, Any], path: str) -> Any:
    value: Any = result
    for part in path.split("/"):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _refuse_unsupported(args) -> None:
    problems = {
        "enable_new_api_stack": "--enable-new-api-stack is no longer needed: the new API stack is all relayrl has",
        "old_api_stack": "--old-api-stack: relayrl has only RLlib's new API stack",
        "local_mode": "--local-mode is no longer supported",
    }
    for flag, message in problems.items():
        if getattr(args, flag, None):
            raise ValueError(message)
    if getattr(args, "num_gpus", None):
        raise ValueError("--num-gpus is the old API stack's: use --num-gpus-per-learner=1 with --num-learners=N")
    if getattr(args, "num_aggregator_actors_per_learner", None):
        raise ValueError("--num-aggregator-actors-per-learner: relayrl has no aggregator actors")


def _apply_args(config, args) -> None:
    """RLlib's: the flags given override the script's config."""
    if getattr(args, "num_agents", 0) and not config.is_multi_agent:
        raise ValueError(f"--num-agents={args.num_agents}, but the script's config is single-agent; build a "
                         "multi-agent env and call config.multi_agent(policies=..., policy_mapping_fn=...) with it "
                         "(see examples/multi_agent_cartpole.py).")
    config.framework(args.framework)
    if args.env is not None and config.env is None:
        config.environment(args.env)
    if args.num_env_runners is not None:
        config.env_runners(num_env_runners=args.num_env_runners)
    if args.num_envs_per_env_runner is not None:
        config.env_runners(num_envs_per_env_runner=args.num_envs_per_env_runner)
    learners = {"num_learners": args.num_learners, "num_cpus_per_learner": args.num_cpus_per_learner,
                "num_gpus_per_learner": args.num_gpus_per_learner}
    learners = {k: (int(v) if k == "num_cpus_per_learner" and float(v).is_integer() else v)
                for k, v in learners.items() if v is not None}
    if learners:
        config.learners(**learners)
    if args.evaluation_interval > 0:
        config.evaluation(evaluation_num_env_runners=args.evaluation_num_env_runners,
                          evaluation_interval=args.evaluation_interval, evaluation_duration=args.evaluation_duration,
                          evaluation_duration_unit=args.evaluation_duration_unit,
                          evaluation_parallel_to_training=args.evaluation_parallel_to_training)
    if args.log_level is not None:
        config.debugging(log_level=args.log_level)
    if getattr(args, "output", None) is not None:
        config.offline_data(output=args.output)


def run_rllib_example_script_experiment(base_config, args=None, *, stop: Optional[Dict[str, float]] = None,
                                        success_metric: Optional[Dict[str, float]] = None,
                                        trainable: Optional[type] = None, tune_callbacks: Optional[list] = None,
                                        keep_config: bool = False, keep_ray_up: bool = False, scheduler=None,
                                        progress_reporter=None, on_algorithm_built: Optional[Callable] = None):
    """Train `base_config` (changed by the flags unless `keep_config`) until a stop criterion holds.

    Through Ray Tune (returns Tune's ResultGrid) or, with `--no-tune`, in this process (returns the last result
    dict, printing one line per iteration). The default stop criteria come from `--stop-reward`,
    `--stop-timesteps` and `--stop-iters`; `success_metric` (e.g. `{"evaluation/env_runners/episode_return_mean":
    450}`) replaces the training-return criterion and is what `--as-test` checks. `on_algorithm_built(algo)`:
    called once the in-process algorithm is built (`--no-tune` only).
    """
    if args is None:
        args = add_rllib_example_script_args().parse_args()
    _refuse_unsupported(args)
    if getattr(args, "as_release_test", False):
        args.as_test = True
    success_metric = dict(success_metric or {_RETURN: args.stop_reward})
    stop = stop or {**success_metric, "num_env_steps_sampled_lifetime": args.stop_timesteps,
                    "training_iteration": args.stop_iters}
    if not keep_config:
        _apply_args(base_config, args)
    if args.no_tune:
        return _run_in_process(base_config, args, stop, success_metric, on_algorithm_built)
    if on_algorithm_built is not None:
        raise ValueError("on_algorithm_built works with --no-tune only (under Tune the algorithm lives in a trial)")
    from relayrl.tune.example_experiment import run_tune_experiment

    results = run_tune_experiment(base_config, args, stop=stop, trainable=trainable, tune_callbacks=tune_callbacks,
                                  keep_ray_up=keep_ray_up, scheduler=scheduler, progress_reporter=progress_reporter)
    if args.as_test:
        ((metric, value),) = success_metric.items()
        check_learning_achieved(results, value, metric=metric)
    return results


def _run_in_process(config, args, stop, success_metric, on_algorithm_built) -> Dict[str, Any]:
    algo = config.build_algo()
    best = -math.inf
    ((metric, target),) = success_metric.items()
    try:
        if on_algorithm_built is not None:
            on_algorithm_built(algo)
        while True:
            result = algo.train()
            value = _value_at(result, metric)
            if value is not None and value == value:
                best = max(best, value)
            print(_progress_line(result), flush=True)
            iteration = result["training_iteration"]
            done = should_stop(stop, result)
            if args.checkpoint_freq and iteration % args.checkpoint_freq == 0 or done and args.checkpoint_at_end:
                path = algo.save_to_path(os.path.join(algo.logdir or tempfile.mkdtemp(prefix="relayrl_"),
                                                      f"checkpoint_{iteration:06d}"))
                print(f"checkpoint saved: {path}", flush=True)
            if done:
                break
    finally:
        algo.stop()
    if args.as_test and best < target:
        raise ValueError(f"`{metric}` of {target} not reached! (best: {best})")
    return result


def _progress_line(result: Mapping[str, Any]) -> str:
    line = (f"iter={result['training_iteration']} steps={result['num_env_steps_sampled_lifetime']} "
            f"return={result['env_runners']['episode_return_mean']:.2f}")
    evaluation = result.get("evaluation", {}).get("env_runners")
    if evaluation is not None:
        line += (f" eval_return={evaluation.get('episode_return_mean', float('nan')):.2f}"
                 f" eval_episodes={evaluation.get('num_episodes', 0)}")
    return line


def train_until_stop_flags(algo, args) -> Tuple[float, int]:
    """Train a built algorithm (e.g. one made from an old-style config dict) until `--stop-reward`,
    `--stop-timesteps` or `--stop-iters`, one line per iteration; stops it and returns (the last mean return,
    the env steps sampled)."""
    try:
        while True:
            result = algo.train()
            ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
            print(f"iter {result['training_iteration']:4d}  steps {steps:7d}  return {ret:6.1f}")
            if ret >= args.stop_reward or steps >= args.stop_timesteps or result["training_iteration"] >= args.stop_iters:
                return ret, steps
    finally:
        algo.stop()


def check_learning_achieved(tune_results, min_value: float, evaluation: Optional[bool] = None,
                            metric: str = _RETURN) -> None:
    """ValueError unless some result reached `min_value` for `metric` (RLlib's helper).

    `tune_results`: Tune's ResultGrid (every reported result of every trial counts) or a result dict.
    `evaluation`: True reads `evaluation/<metric>`, None does so where results have it.
    """
    values = []
    for result in _all_results(tune_results):
        key = f"evaluation/{metric}"
        use_eval = evaluation or (evaluation is None and _value_at(result, key) is not None)
        value = _value_at(result, key if use_eval else metric)
        if value is not None and value == value:
            values.append(value)
    best = max(values, default=-math.inf)
    if best < min_value:
        raise ValueError(f"`{metric}` of {min_value} not reached! (best: {best})")
    print(f"`{metric}` of {min_value} reached! ok")


def _all_results(tune_results):
    if isinstance(tune_results, Mapping):
        yield tune_results
        return
    for trial_result in tune_results:
        frame = getattr(trial_result, "metrics_dataframe", None)
        if frame is not None:  # every reported result, flattened with "/"
            for row in frame.to_dict("records"):
                yield _nest(row)
        if trial_result.metrics:
            yield trial_result.metrics


def _nest(flat: Mapping[str, Any]) -> Dict[str, Any]:
    nested: Dict[str, Any] = {}
    for key, value in flat.items():
        node = nested
        *parents, last = str(key).split("/")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                break
        else:
            node[last] = value
    return nested
