"""`relayrl train ALGO ...`: build the config from flags, build the algorithm, train until a stop
criterion is met (RLlib's semantics: any one stops), then summarize."""
from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from relayrl.cli.flags import TrainArgs, UserError, parse_train_args

RETURN_KEY = "episode_return_mean"
STEPS_KEY = "num_env_steps_sampled_lifetime"
EXIT_INTERRUPTED = 130

STOP_REASONS = {
    "stop_reward": "stop reward reached",
    "stop_timesteps": "env step budget",
    "stop_iters": "iteration budget",
    "interrupted": "interrupted (Ctrl-C)",
}


@dataclass
class Run:
    """What one `relayrl train` run has done so far (shown live and in the summary)."""

    algorithm: str
    env: Any
    stop_reward: Optional[float] = None
    stop_timesteps: Optional[int] = None
    stop_iters: Optional[int] = None
    config: dict = field(default_factory=dict)  # the options given on the command line
    iteration: int = 0
    env_steps: int = 0
    return_mean: float = math.nan
    best_return: float = math.nan
    learner_stats: dict = field(default_factory=dict)
    build_time_s: float = 0.0
    train_time_s: float = 0.0
    stopped_by: Optional[str] = None
    vector_mode: Optional[str] = None  # gym_env_vectorize_mode the run samples with
    notes: list = field(default_factory=list)  # choices made for the user, shown when training starts
    resumed_env_steps: int = 0  # --restore: the env steps of the runs before this one (not in its speed)
    _train_start: Optional[float] = None

    # -- progress ---------------------------------------------------------------------------
    def start(self) -> None:
        self._train_start = time.perf_counter()

    def finish(self) -> None:
        if self._train_start is not None:
            self.train_time_s = time.perf_counter() - self._train_start
            self._train_start = None

    @property
    def elapsed_s(self) -> float:
        """Training time so far (still ticking while an iteration runs)."""
        if self._train_start is None:
            return self.train_time_s
        return time.perf_counter() - self._train_start

    @property
    def steps_per_s(self) -> float:
        elapsed = self.elapsed_s
        steps = self.env_steps - self.resumed_env_steps
        return steps / elapsed if elapsed > 0 and steps > 0 else math.nan

    def record(self, result: dict) -> None:
        """Take in one train() result and decide whether to stop."""
        self.iteration = int(result.get("training_iteration", self.iteration + 1))
        self.env_steps = int(result.get(STEPS_KEY, 0))
        self.return_mean = _float(result.get("env_runners", {}).get(RETURN_KEY))
        if math.isnan(self.return_mean):  # offline algorithms: no training episodes, the evaluation's return
            self.return_mean = _float(result.get("evaluation", {}).get("env_runners", {}).get(RETURN_KEY))
        if not math.isnan(self.return_mean) and not (self.return_mean <= self.best_return):
            self.best_return = self.return_mean  # (the comparison is False while best is nan)
        module_results = result.get("learners", {}).get("default_policy", {})
        self.learner_stats = {k: _float(v) for k, v in module_results.items()
                              if not k.startswith("num_") and not math.isnan(_float(v))}
        self.stopped_by = self.stop_reason()

    def stop_reason(self) -> Optional[str]:
        if self.stop_reward is not None and self.return_mean >= self.stop_reward:
            return "stop_reward"
        if self.stop_timesteps is not None and self.env_steps >= self.stop_timesteps:
            return "stop_timesteps"
        if self.stop_iters is not None and self.iteration >= self.stop_iters:
            return "stop_iters"
        return None

    # -- outcome ----------------------------------------------------------------------------
    @property
    def reached_stop_reward(self) -> Optional[bool]:
        if self.stop_reward is None:
            return None
        return self.return_mean >= self.stop_reward

    @property
    def exit_code(self) -> int:
        if self.stopped_by == "interrupted":
            return EXIT_INTERRUPTED
        return 1 if self.reached_stop_reward is False else 0

    def summary(self) -> dict:
        """The machine-readable summary printed by --json."""
        return _jsonable({
            "algorithm": self.algorithm,
            "env": self.env if isinstance(self.env, str) else repr(self.env),
            "training_iteration": self.iteration,
            STEPS_KEY: self.env_steps,
            RETURN_KEY: self.return_mean,
            "best_" + RETURN_KEY: self.best_return,
            "stop_reward": self.stop_reward,
            "stop_timesteps": self.stop_timesteps,
            "stop_iters": self.stop_iters,
            "stop_reward_reached": self.reached_stop_reward,
            "stopped_by": self.stopped_by,
            "build_time_s": self.build_time_s,
            "train_time_s": self.train_time_s,
            "gym_env_vectorize_mode": self.vector_mode,
            "env_steps_per_s": self.steps_per_s,
            "learners": {"default_policy": self.learner_stats},
            "config": self.config,
            "exit_code": self.exit_code,
        })


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _jsonable(value: Any) -> Any:
    """Strict JSON: nan -> null, inf -> "inf", unknown objects -> repr."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float):
        return None if math.isnan(value) else (str(value) if math.isinf(value) else value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return repr(value)


def _say(line: str) -> None:
    print(f"relayrl train: {line}", file=sys.stderr, flush=True)


class RunCheckpoints:
    """Checkpoints of a `relayrl train` run: `<run folder>/checkpoint_<iteration>` every `freq` iterations
    and at the end (RLlib's and Tune's checkpoint_freq / checkpoint_at_end)."""

    def __init__(self, algo, freq: int, at_end: bool):
        self.algo, self.freq, self.save_at_end = algo, freq, at_end
        # The logger's folder; with logger_config type "none", a fresh one under the results root.
        self.run_dir = algo.logdir or _fresh_run_dir(algo)
        self.last: Optional[str] = None

    def after_iteration(self, iteration: int) -> None:
        if self.freq and iteration % self.freq == 0:
            self._save(iteration)

    def at_end(self, iteration: int) -> None:
        if self.save_at_end and iteration > 0 and self.last != self._path(iteration):
            self._save(iteration)

    def _path(self, iteration: int) -> str:
        return os.path.join(self.run_dir, f"checkpoint_{iteration:06d}")

    def _save(self, iteration: int) -> None:
        self.last = self.algo.save_to_path(self._path(iteration))


def _fresh_run_dir(algo) -> str:
    from relayrl.algorithms.result_logger import default_logdir

    return default_logdir(type(algo).__name__, algo.config.env)


def run_train(argv: list) -> int:
    args: TrainArgs = parse_train_args(argv)
    from relayrl.algorithms.resolved_defaults import resolve_defaults
    from relayrl.cli.display import Display  # rich is imported only when training
    from relayrl.offline.reader import OfflineDataError
    from relayrl.env.vector_env import vectorize_mode_name

    table = args.config_class._option_table
    run = Run(args.algorithm, args.overrides.get("env", table["env"].default), args.stop_reward,
              args.stop_timesteps, args.stop_iters,
              config={table[name].dict_key: value for name, value in args.overrides.items()})
    display = Display()
    restore_from = _checkpoint_to_restore(args)  # before building: a wrong path fails at once
    for note in args.notes:
        print(f"relayrl train: note: {note}", file=sys.stderr)

    start = time.perf_counter()
    try:
        with display.building(run):
            config = _with_shared_policy_for_multi_agent_env(args.config_class().update_from_dict(args.overrides))
            config = _evaluated_if_offline(config, args.overrides, run)
            config = _iterations_within_step_budget(config, args.overrides, run)
            config.validate()
            run.notes += resolve_defaults(config, log=False)  # what the Algorithm would pick, shown here instead
            run.vector_mode = vectorize_mode_name(config.gym_env_vectorize_mode)
            algo = config.build_algo()
    except ValueError as err:  # bad env id, inconsistent options, bad model_config, ...
        if os.environ.get("RELAYRL_TRACEBACK"):
            raise
        raise UserError(_for_the_command_line(str(err)), prog=f"relayrl train {args.algorithm}") from None
    except KeyboardInterrupt:
        print("relayrl train: interrupted while building the algorithm", file=sys.stderr)
        return EXIT_INTERRUPTED
    if restore_from is not None:
        _restore(algo, restore_from, run, args.algorithm)
    run.build_time_s = time.perf_counter() - start

    checkpoints = RunCheckpoints(algo, args.checkpoint_freq, args.checkpoint_at_end)
    resumed_at = run.iteration
    try:
        display.started(run)
        _say(f"run folder: {checkpoints.run_dir}")
        with display.live(run):
            run.start()
            while run.stopped_by is None:
                run.record(algo.train())
                checkpoints.after_iteration(run.iteration)
                display.iteration(run)
    except KeyboardInterrupt:
        run.stopped_by = "interrupted"
    except OfflineDataError as err:  # bad rows in --input (found when read): their file, row, column and the fix
        if os.environ.get("RELAYRL_TRACEBACK"):
            raise
        raise UserError(str(err), prog=f"relayrl train {args.algorithm}") from None
    finally:
        run.finish()
        try:
            if run.iteration > resumed_at:  # a resumed run that trained nothing has its checkpoint already
                checkpoints.at_end(run.iteration)
        finally:
            algo.stop()
    display.summary(run)
    _say(f"run folder: {checkpoints.run_dir}" + (f" (last checkpoint: {checkpoints.last})" if checkpoints.last else ""))
    if args.json:
        print(json.dumps(run.summary()), flush=True)
    return run.exit_code


def _for_the_command_line(message: str) -> str:
    """A fix that is Python code (a connector is a function of the env) gets its command-line form too."""
    if "FlattenObservations" not in message:
        return message
    return (f"{message} From the command line: wrap the env in your file with gymnasium.wrappers.FlattenObservation "
            "(Discrete becomes one-hot; Dict and Tuple are flattened) and pass that class: --env my_envs:FlatEnv.")


def _checkpoint_to_restore(args: TrainArgs) -> Optional[str]:
    if args.restore is None:
        return None
    from relayrl.checkpoints.errors import CheckpointError
    from relayrl.checkpoints.format import read_manifest
    from relayrl.cli.evaluate import find_checkpoint

    prog = f"relayrl train {args.algorithm}"
    checkpoint = find_checkpoint(args.restore, prog=prog)
    try:
        stored = str(read_manifest(checkpoint).get("class", ""))
    except CheckpointError as err:
        raise UserError(f"--restore {checkpoint}: {err}", prog=prog) from None
    # Exactly this algorithm: a base class's checkpoint (IMPALA's into APPO) would fail later on the module's weights.
    expected = args.config_class().algo_class.__name__
    stored_name = stored.rpartition(":")[2]
    if stored_name != expected:
        raise UserError(f"--restore {checkpoint}: the checkpoint is {stored_name or 'not an algorithm'}'s ({stored}), "
                        f"not {expected}'s: resume it with `relayrl train {stored_name or 'ALGO'} ... --restore "
                        f"{args.restore}`", prog=prog)
    return checkpoint


def _cli_fix(err) -> str:
    """The flag for a fix the error names as a Python option (the reader position of other offline data)."""
    if "input_restore_position=False" in str(err):
        return (" On the command line: add `--input-restore-position false` to this `relayrl train` command "
                "(the data pass starts over, everything else is restored).")
    return ""


def _restore(algo, checkpoint: str, run: Run, algorithm: str) -> None:
    """--restore: the checkpoint's state into the algorithm built from the flags; the run goes on from its counters
    (a criterion already met stops before training). A checkpoint of another algorithm, or one whose module does not
    fit the flags' env and model, is refused in one line and nothing is trained."""
    from relayrl.checkpoints.errors import CheckpointError
    from relayrl.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME

    try:
        algo.restore_from_path(checkpoint)
    except (CheckpointError, ValueError) as err:
        algo.stop()
        raise UserError(f"--restore {checkpoint}: {err}{_cli_fix(err)}", prog=f"relayrl train {algorithm}") from None
    run.iteration = int(algo.iteration)
    run.env_steps = run.resumed_env_steps = int(algo._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0))
    run.stopped_by = run.stop_reason()
    run.notes.append(f"resumed from {checkpoint} at iteration {run.iteration}, {run.env_steps} env steps")


def _iterations_within_step_budget(config, overrides: dict, run: Run):
    """--stop-timesteps is checked after each iteration: an iteration that samples at least
    min_sample_timesteps_per_iteration (IMPALA's and APPO's default: 10,000) would overshoot a smaller budget
    (--stop-timesteps 3000 ran 10,000 steps). Unless that option is given, iterations sample at least the budget."""
    budget, minimum = run.stop_timesteps, config.min_sample_timesteps_per_iteration
    if budget is None or "min_sample_timesteps_per_iteration" in overrides or not minimum or minimum <= budget:
        return config
    run.notes.append(f"min_sample_timesteps_per_iteration lowered from {minimum} to the --stop-timesteps budget "
                     f"{budget} (set --min-sample-timesteps-per-iteration to choose)")
    return config.reporting(min_sample_timesteps_per_iteration=budget)


def _evaluated_if_offline(config, overrides: dict, run: Run):
    """An offline algorithm (`--input DIR`) samples no episodes: its env evaluates it every iteration (greedy
    actions), and that return is the one reported and compared with --stop-reward, unless flags say otherwise."""
    if not config.READS_OFFLINE_DATA or "evaluation_interval" in overrides:
        return config
    run.notes.append("offline training: the env evaluates the policy every iteration (greedy actions); "
                     "set --evaluation-interval to change")
    config.evaluation(evaluation_interval=1)
    if "evaluation_config" not in overrides:
        config.evaluation(evaluation_config={"explore": False})
    return config


def _with_shared_policy_for_multi_agent_env(config):
    """An env class that is a MultiAgentEnv (e.g. `--env relayrl.examples.envs.classes.multi_agent.MultiAgentCartPole
    --env-config '{"num_agents": 2}'`) trains multi-agent with one module every agent maps to (RLlib's default
    mapping: `default_policy`). Per-agent policies need a Python config (config.multi_agent(...)): a mapping
    function is code, not a flag."""
    from relayrl.env.multi_agent_env import MultiAgentEnv
    from relayrl.env.registry import resolve_env_spec

    env = resolve_env_spec(config.env)
    if config.is_multi_agent or not (isinstance(env, type) and issubclass(env, MultiAgentEnv)):
        return config
    return config.multi_agent(policies={"default_policy"})
