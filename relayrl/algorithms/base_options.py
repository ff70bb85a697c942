"""AlgorithmConfig's own options: one `Option` record each (name, default, help, builder group,
check), and the help line of each builder group. Subclasses add theirs with `_OPTIONS`."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Optional, Union

from relayrl.algorithms.options import (
    BOOL,
    CALLABLE_OR_NONE,
    DICT,
    FRACTION,
    NON_NEGATIVE_FLOAT,
    NON_NEGATIVE_INT,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    Check,
    Option,
    either,
    is_bool,
    is_int,
    is_real,
    one_of,
    only_default,
    optional,
    schedule_or,
)
from relayrl.callbacks import CALLBACK_HOOKS, RLlibCallback
from relayrl.core.spaces import is_space

_ENV = Check("a registered env id (str), a gymnasium.Env subclass, a callable env_config -> env, "
             "or None", lambda v: v is None or isinstance(v, str) or callable(v),
             Optional[Union[str, type, Callable]])
_SPACE = Check("a gymnasium space or None", lambda v: v is None or is_space(v))
_CLIP_REWARDS = Check("None, a bool, or a positive float",
                      lambda v: v is None or BOOL.accepts(v) or POSITIVE_FLOAT.accepts(v),
                      Optional[Union[bool, float]])
_INT_OR_AUTO = either(POSITIVE_INT, one_of("auto"))
_MERGE_STATES = either(BOOL, one_of("training_only"))
# RLlib's num_cpus_per_learner: a Ray resource, so fractions are allowed (remote Learners sharing a core).
_CPUS_OR_AUTO = either(Check("a positive number of CPUs (fractions allowed, e.g. 0.5)", POSITIVE_FLOAT.test, float),
                       one_of("auto"))


def _model_config_from_tune(value: Any) -> Any:
    from relayrl.tune.model_config_search import model_config_from_tune

    return model_config_from_tune(value)  # (a DefaultModelConfig with search values, resolved by Tune)


_MODEL_CONFIG = Check("a dict or a dataclass instance such as DefaultModelConfig(...)",
                      lambda v: isinstance(v, Mapping) or (dataclasses.is_dataclass(v)
                                                           and not isinstance(v, type)), dict,
                      _model_config_from_tune)


def _is_callback_class(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, RLlibCallback)


_CALLBACKS_CLASS = Check("a RLlibCallback subclass or a list of them",
                         lambda v: _is_callback_class(v) or (isinstance(v, (list, tuple))
                                                             and all(map(_is_callback_class, v))),
                         Union[type, list])
_CALLBACK_FNS = Check("a callable, a list of callables, or None",
                      lambda v: v is None or callable(v) or (isinstance(v, (list, tuple))
                                                             and all(map(callable, v))),
                      Optional[Union[Callable, list]])
def _env_names(value: Any, import_name: Callable) -> Any:
    """A checkpoint's env: a "module:Class" path resolved through `import_name` (its Trust), a gymnasium
    "module:EnvId" string's module imported only as the trust model allows (`import_name.import_env_module`)."""
    from relayrl.env.registry import resolve_env_spec

    return resolve_env_spec(value, import_name, import_module=import_name.import_env_module)


def _type_is_path(value: Any) -> bool:
    """A config dict whose "type" is a 'pkg.module:Class' path (not a class or a built-in name)."""
    return isinstance(value, Mapping) and isinstance(value.get("type"), str) and any(c in value["type"] for c in ".:")


def _exploration_names(value: Any, import_name: Callable) -> Any:
    if not _type_is_path(value):
        return value
    from relayrl.exploration.make_exploration import resolve_exploration_class

    return {**value, "type": resolve_exploration_class(value["type"], import_name)}


def replay_buffer_names(value: Any, import_name: Callable) -> Any:
    """replay_buffer_config with a 'pkg.module.Class' type resolved (DQN's and SAC's option)."""
    if not _type_is_path(value):
        return value
    from relayrl.replay.make_replay_buffer import resolve_replay_buffer_class

    return {**value, "type": resolve_replay_buffer_class(value["type"], import_name)}


_STR = Check("a str", lambda v: isinstance(v, str), str)

_SEED = optional(Check("an int >= 0", lambda v: is_int(v) and v >= 0, int))
_FRAMEWORK = Check("'torch' (relayrl's RLModules and Learners are torch-only: 'tf2' and 'tf' are not "
                   "supported; write TF models as a torch RLModule)", lambda v: v == "torch", str)
_DYNAMO_BACKEND = Check("a torch.compile backend name (str)", lambda v: isinstance(v, str) and v != "", str)
_DYNAMO_MODE = one_of("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_COMPILE_WORKER = Check("False (relayrl's EnvRunners act through a numpy forward pass for the default modules, "
                        "faster than a compiled torch call on a step's few rows; compile the Learner instead: "
                        "torch_compile_learner=True)", lambda v: v is False or (is_bool(v) and not v), bool)
_NUM_GPUS = Check("0 (the old API stack's GPUs for the algorithm process; for a GPU Learner use "
                  "config.learners(num_gpus_per_learner=1))",
                  lambda v: is_real(v) and v == 0, float)


def _whole_number(value: Any) -> bool:
    return is_int(value) or (is_real(value) and float(value).is_integer())


_HORIZON = Check("None or a positive whole number of steps", lambda v: v is None or (_whole_number(v) and v >= 1),
                 Optional[int], lambda v: v if v is None else int(v))

BASE_OPTIONS = (
    # environment()
    Option("env", None, "The env: a registered gymnasium id, a gymnasium.Env subclass, or a "
           "callable env_config -> env.", "environment", _ENV, positional=True, resolve_names=_env_names),
    Option("env_config", {}, "Arguments for the env's constructor or creator (a dict given here is merged into the "
           "current one at every depth, as RLlib's; `config.env_config = {...}` replaces it).", "environment", DICT,
           mutable=True, remakes_env=True, merges_dicts=True),
    Option("observation_space", None, "Observation space to use instead of the env's.",
           "environment", _SPACE, cli=False),
    Option("action_space", None, "Action space to use instead of the env's.", "environment",
           _SPACE, cli=False),
    Option("clip_rewards", None, "None: no clipping; True: clip to the reward's sign; c: clip to "
           "[-c, c].", "environment", _CLIP_REWARDS, mutable=True),
    Option("normalize_actions", True, "Map the module's actions from [-1, 1] to the env's Box "
           "bounds.", "environment", BOOL),
    Option("clip_actions", False, "Clip actions to the env's Box bounds before stepping.",
           "environment", BOOL),
    Option("disable_env_checking", False, "Skip the one-time checks of each sub-env's first reset() "
           "and step() results (gymnasium API: shapes, 5-tuple step, (obs, info) reset, numeric "
           "rewards).", "environment", BOOL),
    Option("record_video_every_n_episodes", None, "Write an mp4 of about every N-th episode of the whole "
           "run (all runners and sub-envs together) into video_dir; needs the video extra.", "environment",
           optional(POSITIVE_INT)),
    Option("video_dir", None, "Folder of the training videos; None: <logdir>/videos (the working "
           "directory's videos/ without a logdir).", "environment", optional(_STR)),
    # env_runners()
    Option("num_env_runners", 0, "Remote EnvRunner actors (Ray); 0 samples in the driver process.",
           "env_runners", NON_NEGATIVE_INT, aliases=("num_rollout_workers", "num_workers")),
    Option("num_envs_per_env_runner", 1, "Vectorised envs each EnvRunner steps at once.",
           "env_runners", POSITIVE_INT, aliases=("num_envs_per_worker",)),
    Option("create_env_on_local_worker", False, "RLlib's: whether the driver's EnvRunner makes an env when remote "
           "ones sample. relayrl's always does (it reads the spaces from it, and compute_single_action and "
           "in-process evaluation act in it), so True and False both run.", "env_runners", BOOL,
           aliases=("create_env_on_driver",)),
    Option("rollout_fragment_length", "auto", "Steps per env in each sample() call; 'auto' derives "
           "it from the train batch size.", "env_runners", _INT_OR_AUTO, mutable=True,
           aliases=("sample_batch_size",)),
    Option("batch_mode", "truncate_episodes", "'truncate_episodes' cuts episodes at the fragment "
           "length; 'complete_episodes' finishes them.", "env_runners",
           one_of("truncate_episodes", "complete_episodes")),
    Option("env_to_module_connector", None, "Callable (env, spaces, device) -> ConnectorV2 or "
           "list, put before the default env-to-module pieces.", "env_runners", CALLABLE_OR_NONE,
           cli=False),
    Option("module_to_env_connector", None, "Callable (env, spaces) -> ConnectorV2 or list, put "
           "before the default module-to-env pieces.", "env_runners", CALLABLE_OR_NONE, cli=False),
    Option("observation_filter", "NoFilter", "'MeanStdFilter' normalises observations by running statistics "
           "(a MeanStdFilter first in the env-to-module pipeline; vector observations only); 'NoFilter': none. "
           "A stateful module's default is 'MeanStdFilter' (docs/stateful_modules.md).", "env_runners",
           one_of("NoFilter", "MeanStdFilter")),
    Option("add_default_connectors_to_env_to_module_pipeline", True, "Add relayrl's default "
           "env-to-module pieces.", "env_runners", BOOL),
    Option("add_default_connectors_to_module_to_env_pipeline", True, "Add relayrl's default "
           "module-to-env pieces.", "env_runners", BOOL),
    Option("episode_lookback_horizon", 1, "Past steps a cut episode keeps for connectors that look "
           "back.", "env_runners", NON_NEGATIVE_INT),
    # Connector / filter state sync with remote runners (docs/distributed.md "Connector state sync").
    Option("merge_env_runner_states", "training_only", "Gather the remote EnvRunners' connector states "
           "(MeanStdFilter statistics) and merge them at each sync: True also for the evaluation runners (their own "
           "pool, apart from training's), 'training_only' for the training runners only, False never (the driver's "
           "state is the reference). The Policy API ignores it (use_worker_filter_stats).", "env_runners",
           _MERGE_STATES),
    Option("broadcast_env_runner_states", True, "Send the merged (or the driver's) connector states back to the "
           "remote EnvRunners at each sync; False keeps them on the driver and every remote runner keeps its own "
           "(in an evaluation config: evaluation runners keep their own, never the training statistics). The Policy "
           "API ignores it (update_worker_filter_stats).", "env_runners", BOOL),
    Option("use_worker_filter_stats", True, "Policy API (old stack): merge the remote runners' observation-filter "
           "deltas into the driver's statistics at each sync; False discards them. No effect on RLModule algorithms "
           "(merge_env_runner_states), as in RLlib.", "env_runners", BOOL),
    Option("update_worker_filter_stats", True, "Policy API (old stack): push the driver's filter statistics to "
           "the remote runners at each sync; False lets each keep its own (a restarted runner still starts from "
           "the driver's). No effect on RLModule algorithms (broadcast_env_runner_states), as in RLlib.",
           "env_runners", BOOL),
    Option("horizon", None, "Cut every episode after this many steps (truncated, as a gymnasium TimeLimit); "
           "None: the env's own limit.", "env_runners", _HORIZON, remakes_env=True),
    Option("soft_horizon", False, "At the horizon, end the episode (metrics, value bootstrap) but do not reset "
           "the env: the next episode goes on from its last observation.", "env_runners", BOOL, remakes_env=True),
    Option("no_done_at_end", False, "Report every episode end as truncated, never terminated, so value targets "
           "always bootstrap (for envs that never truly end).", "env_runners", BOOL, remakes_env=True),
    Option("explore", True, "Sample actions stochastically (forward_exploration) instead of "
           "greedily.", "env_runners", BOOL, mutable=True),
    Option("exploration_config", {}, "{'type': name | Exploration subclass | 'pkg.mod:Class', **its "
           "kwargs}; {}: the algorithm's default (see get_default_exploration_config()).",
           "env_runners", DICT, cli=False, resolve_names=_exploration_names),
    Option("numpy_inference", True, "Compute actions with the module's numpy forward where it declares "
           "one (NumpyForwardAPI; the default PPO module does, SAC's for Box actions) and its distribution "
           "has a numpy policy (Categorical, diagonal or tanh-squashed Gaussian), the connector pipelines running "
           "around it (same distribution and columns, own random stream); False always calls the torch "
           "module.", "env_runners", BOOL),
    Option("gym_env_vectorize_mode", "SYNC", "'SYNC' steps the vector envs in this process, "
           "'ASYNC' in subprocesses, 'VECTOR_ENTRY_POINT' uses the gymnasium id's own vectorised env "
           "where it has one (e.g. CartPole; else SYNC, with a warning). Left unset, ale-py's is picked for "
           "ALE/... ids where nothing in the run needs SYNC (docs/vector_envs.md). Stored upper-case.", "env_runners",
           one_of("SYNC", "ASYNC", "VECTOR_ENTRY_POINT", ignore_case=True)),
    Option("num_cpus_per_env_runner", 1, "CPUs Ray reserves for each remote EnvRunner actor "
           "(fractions allowed); also its torch thread count.", "env_runners", NON_NEGATIVE_FLOAT,
           aliases=("num_cpus_per_worker",)),
    Option("num_gpus_per_env_runner", 0, "GPUs per EnvRunner: > 0 runs its module's inference on cuda:0 (remote "
           "actors get theirs from Ray); 0 infers on the CPU.",
           "env_runners", NON_NEGATIVE_FLOAT, aliases=("num_gpus_per_worker",)),
    Option("custom_resources_per_env_runner", {}, "Custom Ray resources for each remote EnvRunner "
           "actor, e.g. {'spot': 1}.", "env_runners", DICT, aliases=("custom_resources_per_worker",)),
    Option("max_requests_in_flight_per_env_runner", 1, "Most unanswered calls per remote EnvRunner "
           "(foreach_env_runner_async).", "env_runners", POSITIVE_INT),
    Option("sample_timeout_s", 60.0, "Seconds to wait for a remote EnvRunner's sample(); a runner "
           "that takes longer counts as failed.", "env_runners", POSITIVE_FLOAT),
    Option("env_runner_cls", None, "An EnvRunner class to use instead of relayrl's (EnvRunner, or "
           "MultiAgentEnvRunner for multi-agent configs), e.g. EnvRunnerServerForExternalInference.",
           "env_runners", Check("an EnvRunner class or None", lambda v: v is None or isinstance(v, type), type),
           cli=False),
    # fault_tolerance()
    Option("restart_failed_env_runners", True, "Replace a crashed, hung or killed remote EnvRunner "
           "with a new actor (same worker_index); ignore_env_runner_failures is then moot.",
           "fault_tolerance", BOOL, aliases=("recreate_failed_env_runners", "recreate_failed_workers")),
    Option("ignore_env_runner_failures", False, "Without restarts: drop failed remote EnvRunners and "
           "go on with the others instead of raising.", "fault_tolerance", BOOL,
           aliases=("ignore_worker_failures",)),
    Option("max_num_env_runner_restarts", 1000, "Most EnvRunner restarts per group over the run.",
           "fault_tolerance", NON_NEGATIVE_INT, aliases=("max_num_worker_restarts",)),
    Option("delay_between_env_runner_restarts_s", 60.0, "Seconds between a failure and the restart "
           "(the other runners keep sampling meanwhile).", "fault_tolerance", NON_NEGATIVE_FLOAT,
           aliases=("delay_between_worker_restarts_s",)),
    Option("env_runner_health_probe_timeout_s", 30.0, "Seconds a new or probed EnvRunner actor may "
           "take to answer a ping.", "fault_tolerance", POSITIVE_FLOAT,
           aliases=("worker_health_probe_timeout_s",)),
    Option("env_runner_restore_timeout_s", 1800.0, "Seconds a restarted EnvRunner actor may take to "
           "be scheduled and built.", "fault_tolerance", POSITIVE_FLOAT,
           aliases=("worker_restore_timeout_s",)),
    Option("num_consecutive_env_runner_failures_tolerance", 100, "Failed sample() calls in a row "
           "of one remote EnvRunner (a successful sample() resets the count; weight syncs and other "
           "calls count neither way) that restarts tolerate; one more raises with its error. With "
           "restart_failed_sub_environments, also the sub-env failures one runner tolerates without a "
           "successful step between.", "fault_tolerance",
           POSITIVE_INT, aliases=("num_consecutive_worker_failures_tolerance",)),
    Option("restart_failed_sub_environments", False, "A sub-env whose step() or reset() raises is "
           "recreated inside its EnvRunner (the runner's envs are rebuilt, ongoing episodes dropped) "
           "instead of failing the runner.",
           "fault_tolerance", BOOL),
    # learners() (learner_class, learner_config_dict and the two connector options are also accepted by
    # training(), as in RLlib)
    Option("num_learners", 0, "Remote Learner actors (Ray, DDP); 0 trains in the driver process.",
           "learners", NON_NEGATIVE_INT),
    Option("num_cpus_per_learner", "auto", "CPUs a Learner reserves (a remote Learner asks Ray for them; "
           "fractions allowed); torch trains with max(1, floor(value)) threads (in the driver, also for sampling); "
           "'auto': 1, which avoids oversubscribing small machines, or for a module that sees images the usable "
           "cores (at most 4) when OpenMP's waits are passive (docs/learners.md).",
           "learners", _CPUS_OR_AUTO),
    Option("num_gpus_per_learner", 0, "GPUs per Learner (fractions allowed): with num_learners=0 the Learner in "
           "this process trains on cuda:0; Learner actors each get theirs from Ray and, with a GPU on every "
           "Learner, all-reduce over NCCL instead of gloo.", "learners", NON_NEGATIVE_FLOAT),
    Option("learner_class", None, "A Learner subclass to use instead of the algorithm's default.",
           "learners", Check("a Learner subclass or None", lambda v: v is None or isinstance(v, type), type),
           also_in=("training",), cli=False),
    Option("learner_config_dict", {}, "Any settings for a custom Learner (RLlib's): relayrl's own Learners read "
           "none of them; a Learner subclass reads them as self.config.learner_config_dict[...].", "learners", DICT,
           also_in=("training",), cli=False),
    Option("learner_connector", None, "Callable (obs_space, act_space) -> ConnectorV2 or list, put "
           "before the default learner pieces.", "learners", CALLABLE_OR_NONE, also_in=("training",),
           cli=False),
    Option("add_default_connectors_to_learner_pipeline", True, "Add relayrl's default learner "
           "pieces.", "learners", BOOL, also_in=("training",)),
    # training()
    Option("gamma", 0.99, "Discount factor.", "training", FRACTION, mutable=True),
    Option("lr", 0.001, "Learning rate, or a schedule [[timestep, value], ...] interpolated "
           "linearly.", "training", schedule_or(POSITIVE_FLOAT, NON_NEGATIVE_FLOAT), mutable=True),
    Option("train_batch_size_per_learner", None, "Timesteps per update per Learner; None: "
           "train_batch_size // max(num_learners, 1).", "training", optional(POSITIVE_INT), mutable=True),
    Option("train_batch_size", 32, "Timesteps per update over all Learners (used when "
           "train_batch_size_per_learner is None).", "training", POSITIVE_INT, mutable=True),
    Option("minibatch_size", None, "Timesteps per SGD minibatch; None: the whole batch.",
           "training", optional(POSITIVE_INT), aliases=("sgd_minibatch_size",), mutable=True),
    Option("num_epochs", 1, "Passes over each train batch.", "training", POSITIVE_INT,
           aliases=("num_sgd_iter",), mutable=True),
    Option("shuffle_batch_per_epoch", False, "Shuffle the train batch before each epoch.",
           "training", BOOL, aliases=("shuffle_sequences",), mutable=True),
    Option("grad_clip", None, "Clip gradients at this value (see grad_clip_by); None: no "
           "clipping.", "training", optional(POSITIVE_FLOAT), mutable=True),
    Option("grad_clip_by", "global_norm", "'value': each element; 'norm': each tensor's norm; "
           "'global_norm': the norm over all tensors.", "training",
           one_of("value", "norm", "global_norm"), mutable=True),
    # rl_module()
    Option("model_config", {}, "Model settings: a dict or a DefaultModelConfig.", "rl_module",
           _MODEL_CONFIG, aliases=("model_config_dict",)),
    Option("rl_module_spec", None, "An RLModuleSpec (or MultiRLModuleSpec) replacing parts of the "
           "algorithm's default module.", "rl_module", None, cli=False),
    # reporting()
    Option("metrics_num_episodes_for_smoothing", 100, "Recent episodes that episode metrics "
           "average over.", "reporting", POSITIVE_INT, aliases=("metrics_smoothing_episodes",)),
    Option("min_time_s_per_iteration", None, "train() repeats training_step() for at least this "
           "many seconds.", "reporting", optional(NON_NEGATIVE_FLOAT), mutable=True,
           aliases=("min_iter_time_s", "min_time_s_per_reporting")),
    Option("min_sample_timesteps_per_iteration", 0, "train() repeats training_step() until this "
           "many env steps were sampled.", "reporting", NON_NEGATIVE_INT, mutable=True,
           aliases=("timesteps_per_iteration", "min_sample_timesteps_per_reporting")),
    Option("min_train_timesteps_per_iteration", 0, "train() repeats training_step() until this "
           "many env steps were trained on.", "reporting", NON_NEGATIVE_INT, mutable=True,
           aliases=("min_train_timesteps_per_reporting",)),
    Option("legacy_result_keys", False, "Also report the old API stack's top-level result keys "
           "(episode_reward_mean/min/max, episode_len_mean, episodes_this_iter, policy_reward_mean, custom_metrics, "
           "timesteps_this_iter), for old Tune stop criteria and PBT metrics.", "reporting", BOOL, mutable=True),
    # evaluation()
    Option("evaluation_interval", None, "Evaluate every this many train() calls; None or 0: no "
           "evaluation.", "evaluation", optional(NON_NEGATIVE_INT)),
    Option("evaluation_duration", 10, "Episodes or timesteps (see evaluation_duration_unit) per "
           "evaluation, over all eval EnvRunners; 'auto' (parallel mode only): sample until the "
           "training step ends.", "evaluation", _INT_OR_AUTO,
           aliases=("evaluation_num_episodes",)),
    Option("evaluation_duration_unit", "episodes", "Unit of evaluation_duration: 'episodes' or "
           "'timesteps'.", "evaluation", one_of("episodes", "timesteps")),
    Option("evaluation_num_env_runners", 0, "Evaluation EnvRunners; 0 evaluates with one local "
           "runner. For now n > 0 creates n in-process runners (worker_index 1..n), not Ray actors.",
           "evaluation", NON_NEGATIVE_INT, aliases=("evaluation_num_workers",)),
    Option("evaluation_parallel_to_training", False, "Run evaluation in a thread during the "
           "training step, with the weights from before the step (results lag one iteration).",
           "evaluation", BOOL),
    Option("evaluation_config", None, "Config overrides for the eval EnvRunners, e.g. "
           "AlgorithmConfig.overrides(explore=False); dict values (env_config) are merged.",
           "evaluation", optional(DICT)),
    Option("custom_evaluation_function", None, "Callable (algo, eval_env_runner_group) -> metrics "
           "dict, run instead of the built-in evaluation.", "evaluation", CALLABLE_OR_NONE,
           cli=False, aliases=("custom_eval_function",)),
    Option("evaluation_force_reset_envs_before_iteration", True, "Reset the evaluation envs before each "
           "evaluation with evaluation_duration_unit='timesteps' (with 'episodes' every evaluation starts fresh "
           "episodes anyway); False goes on with their ongoing episodes.", "evaluation", BOOL),
    Option("evaluation_sample_timeout_s", 120.0, "Stop starting new evaluation sample() calls "
           "after this many seconds (in-process sample() calls are not interrupted).",
           "evaluation", POSITIVE_FLOAT),
    # debugging()
    Option("seed", None, "Seed for envs, modules and sampling (runners derive their own); None: "
           "random.", "debugging", _SEED),
    Option("log_level", "WARN", "Level of relayrl's loggers.", "debugging",
           one_of("DEBUG", "INFO", "WARN", "WARNING", "ERROR", ignore_case=True), mutable=True),
    Option("logger_config", None, "Where train() results go: None or a dict with 'logdir' (default "
           "$RELAYRL_RESULTS_DIR or ~/relayrl_results, then <Algo>_<env>_<time>) and 'type' "
           "('json+tensorboard' (default), 'json', 'none').", "debugging", optional(DICT)),
    Option("on_nonfinite_gradient", "raise", "A NaN or inf gradient (finite loss): 'raise' stops the "
           "update before the optimizer step (FloatingPointError naming the module and parameter); 'skip' "
           "drops that minibatch's step for the module and counts it (num_nonfinite_gradient_skips_lifetime).",
           "debugging", one_of("raise", "skip"), mutable=True),
    # framework(), resources(): RLlib's, for porting; relayrl runs torch, and its local Learner the CPU
    Option("framework_str", "torch", "Deep-learning framework; relayrl's modules and Learners are torch only.",
           "framework", _FRAMEWORK, key="framework", positional=True),
    Option("torch_compile_learner", False, "Compile the Learner's training pass with torch.compile "
           "(what: torch_compile_learner_what_to_compile). Pays off in long runs only: the first update "
           "compiles for seconds to a minute (docs/learners.md#compiling-the-learner).", "framework", BOOL),
    Option("torch_compile_learner_what_to_compile", "forward_train", "With torch_compile_learner: "
           "'forward_train' (each RLModule's forward_train) or 'complete_update' (forward_train and the "
           "losses in one graph; the gradient check and the optimizer step stay eager).", "framework",
           one_of("forward_train", "complete_update", ignore_case=True)),
    Option("torch_compile_learner_dynamo_backend", "inductor", "torch.compile's backend for the Learner "
           "(one of torch._dynamo.list_backends(); checked when the Learner is built).", "framework",
           _DYNAMO_BACKEND),
    Option("torch_compile_learner_dynamo_mode", None, "torch.compile's mode for the Learner (None: "
           "torch's default).", "framework", optional(_DYNAMO_MODE)),
    Option("torch_compile_worker", False, "RLlib's compiled EnvRunner forward; not supported (only False): "
           "relayrl's runners act through a numpy forward pass for the default modules.", "framework",
           _COMPILE_WORKER),
    Option("torch_compile_worker_dynamo_backend", "onnxrt", "RLlib's backend for torch_compile_worker "
           "(unused: torch_compile_worker is off).", "framework", _DYNAMO_BACKEND),
    Option("torch_compile_worker_dynamo_mode", None, "RLlib's mode for torch_compile_worker (unused: "
           "torch_compile_worker is off).", "framework", optional(_DYNAMO_MODE)),
    # api_stack(): RLlib's switch between its two stacks; relayrl picks by the config (a Policy class or not)
    Option("enable_rl_module_and_learner", True, "RLlib's new API stack (RLModules and Learners): relayrl's "
           "algorithms run on it; False (the old stack) only where the config runs an old-stack Policy class "
           "(PolicySpec(policy_class=...) or an Algorithm's get_default_policy_class).", "api_stack", BOOL,
           positional=True, cli=False),
    Option("enable_env_runner_and_connector_v2", True, "RLlib's EnvRunners and ConnectorV2 pipelines: True, or "
           "False together with enable_rl_module_and_learner=False for an old-stack Policy class.", "api_stack",
           BOOL, positional=True, cli=False),
    # experimental(): RLlib's; relayrl implements none of these switches, so only their defaults pass
    Option("_validate_config", True, "RLlib's switch to skip config validation; relayrl always validates.",
           "experimental", only_default(True, "relayrl always validates its configs"), cli=False),
    Option("_torch_lr_scheduler_classes", None, "RLlib's torch lr schedulers; not supported: give `lr` as a "
           "schedule instead.", "experimental", only_default(None, "torch lr schedulers are not supported; give lr "
                                                             "as a schedule: training(lr=[[0, 1e-3], [100000, 1e-4]])"),
           cli=False),
    Option("_torch_grad_scaler_class", None, "RLlib's mixed-precision grad scaler; not supported.", "experimental",
           only_default(None, "mixed-precision training with a grad scaler is not supported"), cli=False),
    Option("_use_msgpack_checkpoints", False, "RLlib's msgpack checkpoint format; relayrl writes its own.",
           "experimental", only_default(False, "relayrl writes its own checkpoint format (docs/checkpoints.md)"),
           cli=False),
    Option("num_gpus", 0, "Old API stack: GPUs of the algorithm process; only 0 (GPU Learners: "
           "config.learners(num_gpus_per_learner=1)).", "resources", _NUM_GPUS),
    # checkpointing()
    Option("export_native_model_files", False, "Also write each RLModule's inference forward as TorchScript "
           "(native_models/<module_id>/model.pt) into every checkpoint.", "checkpointing", BOOL),
    Option("checkpoint_trainable_policies_only", False, "Store only the modules the Learner trains "
           "(should_module_be_updated) in checkpoints.", "checkpointing", BOOL),
    # callbacks()
    Option("callbacks_class", RLlibCallback, "A RLlibCallback subclass (or a list of them, run in "
           "order) whose overridden hooks are called.", "callbacks", _CALLBACKS_CLASS,
           key="callbacks", positional=True, cli=False),
    *(Option(hook, None, f"Callable(s) run on `{hook}` after the callbacks class's method, in "
             "list order.", "callbacks", _CALLBACK_FNS, key=f"callbacks_{hook}", cli=False)
      for hook in CALLBACK_HOOKS),
)

BASE_GROUP_HELP = {
    "environment": "Sets the env and how its rewards and actions are treated.",
    "env_runners": "Sets how experience is sampled: EnvRunners, vector envs, fragments, "
                   "connectors.",
    "fault_tolerance": "Sets what happens when a remote EnvRunner crashes, hangs or is killed: "
                       "restart it, ignore it, or raise.",
    "learners": "Sets the Learners that update the module, and their connector pipeline.",
    "training": "Sets the training hyper-parameters.",
    "rl_module": "Sets the RLModule: a model config or a full RLModuleSpec.",
    "reporting": "Sets what one train() call covers and how metrics are smoothed.",
    "evaluation": "Sets evaluation during training: how often, how long, on which EnvRunners and "
                  "with which config overrides.",
    "debugging": "Sets the seed, the log level, where results are logged (logger_config) and what a "
                 "non-finite gradient does (on_nonfinite_gradient).",
    "callbacks": "Sets the callbacks: a RLlibCallback subclass (or list) and per-event callables.",
    "framework": "Sets the deep-learning framework ('torch', relayrl's only one) and torch.compile for "
                 "the Learner.",
    "resources": "RLlib's old resources() builder: num_gpus=0 only (GPUs go to Learners: learners()).",
    "experimental": "RLlib's experimental switches; relayrl implements none of them, so only their defaults pass.",
    "api_stack": "RLlib's choice of API stack. relayrl runs RLModules and Learners, or an old-stack Policy class "
                 "where the config gives one; False is accepted only for such a config.",
    "checkpointing": "Sets what checkpoints hold besides the full state: TorchScript exports of the modules.",
}
