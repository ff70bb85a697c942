"""`PolicyWorkerSet`: the local PolicyRunner and its remote copies (Ray actors), the old stack's WorkerSet.

Remote runners are relayrl's EnvRunnerActors (relayrl/distributed/) running a PolicyRunner: the same timeouts,
restarts and re-syncs as the RLModule runners. `sample()` returns the joined batch of all healthy runners and
hands the steps and episode metrics to `on_sampled` (the Algorithm counts and reports them).
"""
from collections.abc import Callable
from typing import Any

from relayrl.env.runner_options import check_policy_runner_options
from relayrl.policy.rollout.policy_runner import PolicyRunner
from relayrl.policy.sample_batch import concat_samples


def policy_runner_class(policy_specs: dict[str, Any], mapping_fn: Callable | None, multi_agent: bool,
                        config=None) -> type:
    """A PolicyRunner subclass that knows its policies and the ModelCatalog's custom models and action dists
    their configs name (it travels to Ray actors by value; they register those before building the policies)."""
    from relayrl.policy.models.catalog import ModelCatalog
    from relayrl.policy.rollout.multi_agent_policy_runner import MultiAgentPolicyRunner
    from relayrl.policy.rollout.policy_map import policy_config

    names = set()
    for spec in policy_specs.values() if config is not None else ():
        model = policy_config(config, spec)["model"]
        names |= {model.get("custom_model"), model.get("custom_action_dist")}
    mapping = staticmethod(mapping_fn) if mapping_fn is not None else None
    base = MultiAgentPolicyRunner if multi_agent else PolicyRunner
    return type(base.__name__, (base,), {"POLICY_SPECS": dict(policy_specs), "POLICY_MAPPING_FN": mapping,
                                           "MODEL_CATALOG": ModelCatalog.registrations(names)})


def env_is_multi_agent(config) -> bool:
    """Whether the config's env is a MultiAgentEnv (one instance is made and closed to see)."""
    from relayrl.env.env_context import EnvContext
    from relayrl.env.multi_agent_env import MultiAgentEnv
    from relayrl.env.registry import make_env_creator

    env_spec = config.env
    if isinstance(env_spec, type):
        return issubclass(env_spec, MultiAgentEnv)
    if isinstance(env_spec, str) and "/" not in env_spec:
        import gymnasium as gym

        if env_spec in gym.registry:
            return False
    env = make_env_creator(env_spec)(EnvContext(config.env_config, 0, 0, config.num_env_runners))
    try:
        return isinstance(env, MultiAgentEnv)
    finally:
        env.close()


class PolicyWorkerSet:
    def __init__(self, config, policy_specs: dict[str, Any], mapping_fn: Callable | None = None,
                 on_sampled: Callable | None = None):
        check_policy_runner_options(config)
        self.config = config
        self.runner_cls = policy_runner_class(policy_specs, mapping_fn, env_is_multi_agent(config), config)
        self._local = self.runner_cls(config=config, worker_index=0, num_workers=config.num_env_runners)
        self._actors = None
        if config.num_env_runners > 0:
            from relayrl.distributed.env_runner_actors import EnvRunnerActors

            self._actors = EnvRunnerActors(config=config, env_runner_cls=self.runner_cls,
                                           num_env_runners=config.num_env_runners)
            self.sync_weights()
        self.on_sampled = on_sampled

    # -- RLlib's accessors -------------------------------------------------------------------------------
    def local_worker(self) -> PolicyRunner:
        return self._local

    @property
    def local_env_runner(self) -> PolicyRunner:
        return self._local

    @property
    def is_remote(self) -> bool:
        return self._actors is not None

    def remote_workers(self) -> list[Any]:
        """The healthy remote runners' Ray actor handles."""
        if self._actors is None:
            return []
        return [self._actors.actor(i) for i in self._actors.healthy_indices()]

    @property
    def remote_env_runners(self) -> list[Any]:
        """RLlib's new name for `remote_workers()`: the healthy remote runners' Ray actor handles."""
        return self.remote_workers()

    def num_remote_workers(self) -> int:
        return 0 if self._actors is None else len(self._actors.indices)

    num_remote_env_runners = num_remote_workers

    def num_healthy_remote_workers(self) -> int:
        return 0 if self._actors is None else len(self._actors.healthy_indices())

    def use_policies(self, config, policy_specs: dict[str, Any]) -> None:
        """After add_policy / remove_policy (policy_set_changes.py): what a runner restarted from now on is built
        from (it then takes the last broadcast weights)."""
        self.config = config
        mapping_fn = config.policy_mapping_fn or self.runner_cls.POLICY_MAPPING_FN
        self.runner_cls = policy_runner_class(policy_specs, mapping_fn, self.runner_cls.MULTI_AGENT, config)
        if self._actors is not None:
            self._actors.use_env_runner_class(self.runner_cls, config)

    # -- weights -------------------------------------------------------------------------------------------
    def sync_weights(self, policies: list[str] | None = None, from_worker_or_learner_group=None,
                     to_worker_indices: list[int] | None = None, global_vars: dict | None = None,
                     **kwargs) -> None:
        """Send the local (or given) runner's policy weights to the remote runners."""
        if global_vars:
            self._local.set_global_vars(global_vars)
        if self._actors is None:
            return
        source = from_worker_or_learner_group or self._local
        state = {"policy_weights": source.get_weights(policies), "global_vars": dict(self._local.global_vars)}
        ref = self._actors.ray.put(state)
        if policies is None:
            self._actors.last_state_ref = ref  # what a restarted runner gets
        ids = to_worker_indices or self._actors.healthy_indices()
        self._actors.call(ids, method="set_state", args=(ref,), timeout=self.config.sample_timeout_s)

    # -- observation filters (observation_filters.py) ---------------------------------------------------------
    def synchronize_filters(self, *, merge: bool = True, push: bool | None = None) -> None:
        """RLlib's FilterManager.synchronize: the remote runners' filter deltas since the last sync are merged
        into the local runner's statistics, and the local statistics are sent to every remote runner.
        `use_worker_filter_stats=False` (or merge=False, e.g. after a restore) discards the deltas;
        `update_worker_filter_stats=False` (push=None reads it; a restore passes push=True) lets each remote runner
        keep its own statistics. Nothing without remote runners or filters."""
        local = self._local
        if self._actors is None or not local._filtering:
            return
        use_deltas = merge and self.config.use_worker_filter_stats
        push = self.config.update_worker_filter_stats if push is None else push
        ids = self._actors.healthy_indices()
        timeout = self.config.sample_timeout_s
        if use_deltas:
            for result in self._actors.call(ids, method="get_filter_deltas", timeout=timeout):
                if result.ok:
                    local.apply_filter_deltas(result.value)
        if push:  # (the runners' buffers start empty again: deltas not merged are dropped)
            self._send_filters(ids)

    def _send_filters(self, worker_indices: list[int]) -> None:
        ref = self._actors.ray.put({"filters": self._local.filter_states()})
        self._actors.call(worker_indices, method="set_state", args=(ref,), timeout=self.config.sample_timeout_s)

    def _restore_due(self) -> list[int]:
        """Replace the failed runners whose restart delay has passed; they start from the last weights and the
        driver's current filter statistics (not empty ones until the next sync)."""
        restored = self._actors.restore_due()
        if restored and self._local._filtering:
            if self.config.use_worker_filter_stats:  # (what a new runner saw while built: its first resets)
                for result in self._actors.call(restored, method="get_filter_deltas",
                                                timeout=self.config.sample_timeout_s):
                    if result.ok:
                        self._local.apply_filter_deltas(result.value)
            self._send_filters(restored)
        return restored

    # -- sampling ------------------------------------------------------------------------------------------
    def sample(self, **kwargs):
        """One sample() from every healthy runner (the local one only if there are no remote ones)."""
        if self._actors is None:
            batches, metrics = [self._local.sample(**kwargs)], [self._local.get_metrics()]
        else:
            self._restore_due()  # failed runners whose restart delay has passed come back first
            results = self._actors.call(self._actors.healthy_indices(), method="sample_and_get_metrics",
                                        kwargs=kwargs, timeout=self.config.sample_timeout_s, sampling=True)
            batches = [r.value[0] for r in results if r.ok]
            metrics = [r.value[1] for r in results if r.ok]
        batch = concat_samples(batches)
        if self.on_sampled is not None:
            self.on_sampled(batch.env_steps(), metrics)
        return batch

    def foreach_worker(self, func: Callable, local_worker: bool = True, healthy_only: bool = True) -> list:
        out = [func(self._local)] if local_worker else []
        if self._actors is not None:
            out += [r.value for r in self._actors.call(self._actors.healthy_indices(), func=func,
                                                       timeout=self.config.sample_timeout_s) if r.ok]
        return out

    def foreach_env_runner(self, func: Callable, local_env_runner: bool = True, healthy_only: bool = True,
                           **kwargs) -> list:
        """RLlib's EnvRunnerGroup name and keywords for foreach_worker (as the evaluation runners take them)."""
        return self.foreach_worker(func, local_worker=local_env_runner, healthy_only=healthy_only)

    def set_training_iteration(self, iteration: int) -> None:
        """The Algorithm's iteration in progress, for the runner that records videos (its files name it)."""
        self.foreach_worker(lambda runner: runner.set_training_iteration(iteration))

    def foreach_policy(self, func: Callable) -> list:
        return [r for results in self.foreach_worker(lambda w: w.foreach_policy(func)) for r in results]

    def fault_tolerance_metrics(self) -> dict[str, int]:
        actors = self._actors
        restarts = 0 if actors is None else actors.num_restarts
        return {"num_healthy_env_runners": self.num_healthy_remote_workers(),
                "num_remote_env_runner_restarts": restarts, "num_env_runner_restarts": restarts,
                "num_env_steps_lost": 0, "num_env_steps_lost_lifetime": 0}

    def stop(self) -> None:
        self._local.stop()
        if self._actors is not None:
            self._actors.stop()
