"""How an Algorithm runs Policies: its runners become a PolicyWorkerSet, its default training_step samples
`train_batch_size` env steps, calls `learn_on_batch` once and syncs the weights.

`Algorithm.setup` comes here when `get_default_policy_class(config)` gives a class (or the config's
`policies` name Policy classes); the RLModule/Learner path is not built then.
"""
import time
from collections import defaultdict
from contextlib import contextmanager

from relayrl.core.columns import DEFAULT_POLICY_ID
from relayrl.core.policy_spec import PolicySpec
from relayrl.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME
from relayrl.policy.execution import synchronous_parallel_sample, train_one_step
from relayrl.policy.policy import Policy
from relayrl.policy.policy_evaluation import make_policy_eval_group
from relayrl.policy.rollout.worker_set import PolicyWorkerSet


def policy_class_for(algo, config):
    """The algorithm's default Policy class, or None when it runs RLModules."""
    default = algo.get_default_policy_class(config)
    if default is not None:
        return default
    specs = getattr(config, "policies", None) or {}
    if any(isinstance(s.policy_class, type) and issubclass(s.policy_class, Policy) for s in specs.values()):
        return Policy  # only the specs' own classes are used
    return None


def policy_specs(config, default_class) -> dict:
    specs = getattr(config, "policies", None) or {DEFAULT_POLICY_ID: PolicySpec()}
    out = {}
    for pid, spec in specs.items():
        cls = spec.policy_class or (default_class if default_class is not Policy else None)
        out[pid] = PolicySpec(cls, spec.observation_space, spec.action_space, spec.config)
    return out


class _Timer:
    """RLlib's old `self._timers[name]`: a context manager that keeps the last duration."""

    def __init__(self):
        self.mean = 0.0

    @contextmanager
    def _timing(self):
        start = time.perf_counter()
        yield
        self.mean = time.perf_counter() - start

    def __enter__(self):
        self._context = self._timing()
        return self._context.__enter__()

    def __exit__(self, *exc):
        return self._context.__exit__(*exc)


def setup_policy_algorithm(algo, config, default_class) -> None:
    from relayrl.learner.torch_threads import limit_torch_threads

    algo._policy_based = True  # compute_single_action, reset_config and checkpoints take the Policy paths
    limit_torch_threads(config)  # the policies learn in this process: as a local Learner would
    algo._counters = defaultdict(int, algo._counters)
    algo._timers = defaultdict(_Timer)
    algo._by_agent_steps = getattr(config, "count_steps_by", "env_steps") == "agent_steps"

    def on_sampled(steps, runner_metrics):
        algo._counters[NUM_ENV_STEPS_SAMPLED_LIFETIME] += steps
        algo.metrics.merge_and_log_n_dicts(runner_metrics, key=ENV_RUNNER_RESULTS)

    specs, mapping_fn = policy_specs(config, default_class), getattr(config, "policy_mapping_fn", None)
    algo.env_runner_group = PolicyWorkerSet(config, specs, mapping_fn, on_sampled=on_sampled)
    algo.learner_group = None
    algo.eval_env_runner_group = make_policy_eval_group(config, specs, mapping_fn, algo.env_runner_group.local_worker())


def default_policy_training_step(algo):
    """Sample train_batch_size env steps, one learn_on_batch per trainable policy, sync weights."""
    batch = synchronous_parallel_sample(worker_set=algo.workers, max_env_steps=algo.config.train_batch_size)
    results = train_one_step(algo, batch)
    algo.workers.sync_weights(global_vars={"timestep": algo._counters[NUM_ENV_STEPS_SAMPLED_LIFETIME]})
    return results
