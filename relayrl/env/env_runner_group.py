"""`EnvRunnerGroup`: the local EnvRunner and the remote ones (Ray actors) behind one API.

With `num_env_runners=0` everything runs in this process and nothing imports Ray. With n > 0 the
group starts n EnvRunner actors (worker_index 1..n, see relayrl/distributed/) that sample in
parallel; the local runner then only provides spaces and a module for inference (as in RLlib).
"""
import logging
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from relayrl.env.connector_state_sync import CONNECTOR_KEYS, ConnectorStateSync, connector_part, state_sync_mode
from relayrl.env.env_runner import EnvRunner
from relayrl.env.runner_options import check_runner_options
from relayrl.env.wrappers.video_recorder import recording_worker_index

logger = logging.getLogger("relayrl")


class EnvRunnerGroup:
    """Owns the EnvRunners of an algorithm (training or evaluation)."""

    def __init__(self, *, config, env_runner_cls: Optional[type] = None, local_env_runner: bool = True,
                 num_env_runners: Optional[int] = None, num_in_process_env_runners: int = 0,
                 on_env_runners_recreated: Optional[Callable] = None):
        """`num_env_runners` (default: config.num_env_runners) remote runners become Ray actors.

        `num_in_process_env_runners=n` instead adds n EnvRunners with worker_index 1..n in this
        process, addressed like remote ones (no Ray; for tests and debugging).
        `on_env_runners_recreated(env_runner_group=, env_runner_indices=)` is called after failed
        runners were replaced (the Algorithm fires its callback from it).
        """
        self.config = config
        self._env_runner_cls = env_runner_cls or default_env_runner_class(config)
        check_runner_options(config, multi_agent=getattr(self._env_runner_cls, "MULTI_AGENT", False))
        self._on_recreated = on_env_runners_recreated
        self._local_env_runner = self._env_runner_cls(config=config, worker_index=0) if local_env_runner else None
        self._in_process: List[Any] = [
            self._env_runner_cls(config=config, worker_index=i, num_workers=num_in_process_env_runners)
            for i in range(1, num_in_process_env_runners + 1)
        ]
        n = config.num_env_runners if num_env_runners is None else num_env_runners
        self._actors = None
        if n > 0 and not self._in_process:
            from relayrl.distributed.env_runner_actors import EnvRunnerActors

            try:
                self._actors = EnvRunnerActors(config=config, env_runner_cls=self._env_runner_cls, num_env_runners=n)
            except BaseException:
                if self._local_env_runner is not None:
                    self._local_env_runner.stop()
                raise
        self.connector_sync = ConnectorStateSync()  # connector states last merged (connector_state_sync.py)
        self._restart_connector_states: Dict[str, Any] = {}  # what a restarted runner starts from
        self.training_iteration = 0  # the Algorithm's iteration in progress, as last told (set_training_iteration)
        self.num_env_steps_lost_lifetime = 0
        self._env_steps_lost_unreported = 0

    # -- access ------------------------------------------------------------------------------
    @property
    def local_env_runner(self) -> EnvRunner:
        return self._local_env_runner

    def local_worker(self) -> EnvRunner:
        """RLlib's older name for `local_env_runner`."""
        return self._local_env_runner

    @property
    def is_remote(self) -> bool:
        """True when the remote runners are Ray actors (sampling goes through them, never the local runner)."""
        return self._actors is not None

    def num_remote_env_runners(self) -> int:
        """Remote runners, healthy or not."""
        return len(self._actors.indices) if self._actors is not None else len(self._in_process)

    num_remote_workers = num_remote_env_runners

    def num_healthy_remote_workers(self) -> int:
        return len(self.healthy_env_runner_ids())

    num_healthy_remote_env_runners = num_healthy_remote_workers

    def healthy_env_runner_ids(self) -> List[int]:
        if self._actors is not None:
            return self._actors.healthy_indices()
        return list(range(1, len(self._in_process) + 1))

    healthy_worker_ids = healthy_env_runner_ids

    def num_remote_env_runner_restarts(self) -> int:
        """Remote runners replaced after a failure, over the group's lifetime."""
        return self._actors.num_restarts if self._actors is not None else 0

    num_remote_worker_restarts = num_remote_env_runner_restarts

    @property
    def remote_env_runners(self) -> List[Any]:
        """The healthy non-local runners in worker_index order, callable like local ones.

        For Ray actors these are `RemoteEnvRunnerProxy` objects (`proxy.get_state()` waits for the
        actor; `proxy.actor` is the handle); prefer foreach_env_runner, which calls all at once.
        """
        if self._actors is not None:
            from relayrl.distributed.remote_env_runner import RemoteEnvRunnerProxy

            return [RemoteEnvRunnerProxy(self._actors.ray, self._actors.actor(i), i, self.config.sample_timeout_s)
                    for i in self._actors.healthy_indices()]
        return list(self._in_process)

    def get_spaces(self):
        if self._local_env_runner is not None:
            return self._local_env_runner.get_spaces()
        if self._in_process:
            return self._in_process[0].get_spaces()
        return self.foreach_env_runner(lambda runner: runner.get_spaces(), local_env_runner=False)[0]

    # -- running functions on runners ----------------------------------------------------------
    def foreach_env_runner(self, func: Callable, *, local_env_runner: bool = True, healthy_only: bool = True,
                           remote_worker_ids: Optional[List[int]] = None, timeout_seconds: Optional[float] = None,
                           return_obj_refs: bool = False, sampling: bool = False, **kwargs) -> List[Any]:
        """`func(env_runner)` on the local runner (if asked) and the remote ones; returns the results.

        Remote calls run at once on all runners and wait at most `timeout_seconds` (default
        sample_timeout_s). A runner that fails or does not answer is left out of the results and
        handled per the fault_tolerance settings (restarted later, dropped, or the error raised).
        `sampling=True` says `func` samples: its failures count toward
        num_consecutive_env_runner_failures_tolerance and its successes reset that count.
        """
        results = []
        if local_env_runner and self._local_env_runner is not None:
            results.append(func(self._local_env_runner))
        if self._actors is None:
            ids = self.healthy_env_runner_ids() if remote_worker_ids is None else list(remote_worker_ids)
            return results + [func(self._in_process[i - 1]) for i in ids]
        if remote_worker_ids is not None:
            ids = list(remote_worker_ids)
        else:
            ids = self._actors.healthy_indices() if healthy_only else self._actors.indices
        if return_obj_refs:
            return results + list(self._actors.submit(ids, func=func))
        timeout = self.config.sample_timeout_s if timeout_seconds is None else timeout_seconds
        return results + [r.value for r in self._actors.call(ids, func=func, timeout=timeout, sampling=sampling)
                          if r.ok]

    foreach_worker = foreach_env_runner

    def foreach_env_runner_with_id(self, func: Callable, **kwargs) -> List[Any]:
        """Like foreach_env_runner with `func(worker_index, env_runner)`."""
        return self.foreach_env_runner(lambda runner: func(runner.worker_index, runner), **kwargs)

    foreach_worker_with_id = foreach_env_runner_with_id

    def foreach_env_runner_async(self, func: Callable, *, healthy_only: bool = True,
                                 remote_worker_ids: Optional[List[int]] = None) -> int:
        """Start `func(env_runner)` on the remote runners without waiting; returns how many calls started.

        A runner with max_requests_in_flight_per_env_runner unanswered calls is skipped. Collect
        the results with `fetch_ready_async_reqs()`.
        """
        if self._actors is None:
            raise ValueError("foreach_env_runner_async needs remote EnvRunners (num_env_runners > 0)")
        ids = self._actors.healthy_indices() if remote_worker_ids is None else list(remote_worker_ids)
        return self._actors.submit_async(ids, func=func,
                                         max_in_flight=self.config.max_requests_in_flight_per_env_runner)

    foreach_worker_async = foreach_env_runner_async

    def fetch_ready_async_reqs(self, *, timeout_seconds: Optional[float] = 0.0, wait_for_one: bool = False,
                               sampling: bool = False, **kwargs) -> List[Tuple[int, Any]]:
        """(worker_index, result) of the async calls finished within `timeout_seconds`; failures are handled.

        `wait_for_one`: wait (up to sample_timeout_s) until at least one call is answered. A call unanswered
        for sample_timeout_s fails its runner (restarted per the fault_tolerance settings). `sampling`: the
        calls sample; a failed one, and the failed runner's other unanswered calls, count as lost env steps.
        """
        if self._actors is None:
            return []
        actors = self._actors
        dropped_before = actors.num_async_calls_dropped
        results = actors.fetch_ready_async(timeout=timeout_seconds or 0.0, wait_for_one=wait_for_one,
                                           sampling=sampling)
        if sampling:
            failed = [r.worker_index for r in results if not r.ok]
            lost = sum(self._expected_steps_per_sample(i) for i in failed)
            lost += (actors.num_async_calls_dropped - dropped_before) * self._expected_steps_per_sample(1)
            self.num_env_steps_lost_lifetime += lost
            self._env_steps_lost_unreported += lost
        return [(r.worker_index, r.value) for r in results if r.ok]

    def foreach_env(self, func: Callable) -> List[List[Any]]:
        """`func(sub_env)` on every sub-env of every runner: one list of results per runner.

        With remote runners the local runner is skipped (its envs do not sample).
        """
        return self.foreach_env_runner(lambda env_runner: env_runner.foreach_env(func),
                                       local_env_runner=not self.is_remote)

    # -- sampling --------------------------------------------------------------------------------
    def sample_episodes(self, *, max_env_steps: int) -> Tuple[list, int, List[Dict[str, Any]]]:
        """Sample rounds on all healthy remote runners at once until `max_env_steps` were collected.

        Returns (episodes, env steps, one metrics dict per answer). Failed runners' samples are lost
        (estimated in `num_env_steps_lost`), failed runners are replaced once their restart delay
        has passed; with no runner left the error names the cause.
        """
        answers, steps = self._sample_rounds(max_env_steps, lambda answer: sum(len(e) for e in answer[0]),
                                             method="sample_and_get_metrics")
        return [e for episodes, _ in answers for e in episodes], steps, [metrics for _, metrics in answers]

    def sample_train_columns(self, *, max_env_steps: int, func: Callable) -> Tuple[list, int, List[Dict[str, Any]]]:
        """Like `sample_episodes`, but each runner answers `func(runner)` = (train-batch columns, env steps,
        metrics) (e.g. PPO's remote_train_columns): returns (one batch per answer, env steps, metrics)."""
        answers, steps = self._sample_rounds(max_env_steps, lambda answer: answer[1], func=func)
        return [batch for batch, _, _ in answers], steps, [metrics for _, _, metrics in answers]

    def _sample_rounds(self, max_env_steps: int, steps_of: Callable, **call) -> Tuple[list, int]:
        """Rounds of one sampling call on every healthy remote runner until `max_env_steps`; the answers in
        order, and their env steps. Failures are counted as lost steps and handled as `sample_episodes` says."""
        actors = self._actors
        answers, steps = [], 0
        self.probe_unhealthy_env_runners()
        while steps < max_env_steps:
            ids = actors.healthy_indices()
            if not ids:
                ids = self._wait_for_restarts(steps, max_env_steps)
            results = actors.call(ids, timeout=self.config.sample_timeout_s, sampling=True, **call)
            round_steps = 0
            for result in results:
                if result.ok:
                    answers.append(result.value)
                    round_steps += steps_of(result.value)
                else:
                    lost = self._expected_steps_per_sample(result.worker_index)
                    self.num_env_steps_lost_lifetime += lost
                    self._env_steps_lost_unreported += lost
            if round_steps == 0 and all(r.ok for r in results):
                raise RuntimeError("the remote EnvRunners returned no env steps; check rollout_fragment_length, "
                                   "batch_mode and the env")
            steps += round_steps
            self.probe_unhealthy_env_runners()
        return answers, steps

    def _expected_steps_per_sample(self, worker_index: int) -> int:
        return self.config.get_rollout_fragment_length(worker_index) * self.config.num_envs_per_env_runner

    def _wait_for_restarts(self, steps: int, max_env_steps: int) -> List[int]:
        """No healthy runner: wait for the next restart, or raise naming why nothing can be sampled."""
        actors = self._actors
        while True:
            wait = actors.seconds_until_next_restore()
            if wait is None:
                causes = "; ".join(f"worker_index={i}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                                   for i, e in sorted(actors.last_errors.items()))
                raise RuntimeError(
                    f"no healthy remote EnvRunner is left, so this iteration gathered {steps} of {max_env_steps} env "
                    f"steps (failures: {causes or 'none recorded'}). Enable "
                    "config.fault_tolerance(restart_failed_env_runners=True) to replace failed runners.")
            time.sleep(wait)
            if self.probe_unhealthy_env_runners():
                return actors.healthy_indices()

    # -- health ------------------------------------------------------------------------------------
    def probe_unhealthy_env_runners(self) -> List[int]:
        """Replace the failed remote runners whose restart delay has passed; returns their indices.

        The new actors get the last synced weights and connector states; then the
        `on_env_runners_recreated` hook runs (e.g. to re-apply a curriculum task).
        """
        if self._actors is None:
            return []
        restored = self._actors.restore_due()
        if restored:
            self.connector_sync.runners_started(restored, self._restart_connector_states)
        if restored and self.training_iteration:
            self._send_training_iteration(restored)
        if restored and self._on_recreated is not None:
            self._on_recreated(env_runner_group=self, env_runner_indices=restored)
        return restored

    def add_workers(self, num_workers: int, validate: bool = False) -> List[int]:
        """Start `num_workers` more remote runners (next worker indices), synced to the last weights."""
        if self._actors is None:
            raise ValueError("add_workers needs remote EnvRunners: build with num_env_runners > 0")
        indices = self._actors.add(num_workers)
        self.connector_sync.runners_started(indices, self._restart_connector_states)
        if self._actors.last_state_ref is not None:
            self._actors.call(indices, method="set_state", args=(self._actors.last_state_ref,),
                              timeout=self.config.sample_timeout_s)
        return indices

    add_env_runners = add_workers

    def fault_tolerance_metrics(self) -> Dict[str, int]:
        """Health numbers for the result dict; `num_env_steps_lost` counts since the previous call.

        Lost steps are an estimate: each failed sample() counts as rollout_fragment_length x
        num_envs_per_env_runner steps.
        """
        lost, self._env_steps_lost_unreported = self._env_steps_lost_unreported, 0
        return {
            "num_healthy_env_runners": self.num_healthy_remote_workers(),
            "num_remote_env_runner_restarts": self.num_remote_env_runner_restarts(),
            "num_env_runner_restarts": self.num_remote_env_runner_restarts(),  # the same, shorter name
            "num_env_steps_lost": lost,
            "num_env_steps_lost_lifetime": self.num_env_steps_lost_lifetime,
        }

    # -- weights ---------------------------------------------------------------------------------
    def sync_weights(self, policies=None, from_worker_or_learner_group=None, to_worker_indices=None,
                     global_vars=None, inference_only: bool = True, connector_states_from=None,
                     timeout_seconds: Optional[float] = None) -> None:
        """Copy the learner's (or a runner's) module weights to the runners, and sync the connector states.

        `connector_states_from`: the training EnvRunner whose env-to-module / module-to-env connector states
        (e.g. MeanStdFilter statistics) evaluation runners get. Without it, remote training runners' connector
        states are gathered, merged and sent back. merge_env_runner_states / broadcast_env_runner_states change
        both (connector_state_sync.py). With Ray the state is `ray.put` once and the same reference goes to every
        runner that gets it.
        """
        source = from_worker_or_learner_group
        if source is None:
            return
        state = {"rl_module": _weights_of(source, inference_only)}
        to_local, to_remote, to_restarted = {}, {}, {}
        if connector_states_from is not None:
            to_local, to_remote, to_restarted = self._evaluation_connector_states(connector_states_from)
        elif self._actors is not None and to_worker_indices is None:
            to_local, to_remote, to_restarted = self._training_connector_states()
        self._send_state(state, to_local, to_remote, to_restarted, to_worker_indices, timeout_seconds)

    def sync_restored_state(self, from_worker_or_learner_group) -> None:
        """After a checkpoint was restored into the local runner: the weights, and its connector states exactly
        as restored, go to every remote runner and become what later merges add to. (sync_weights would merge
        the remote runners' states onto the new group's empty base and drop the restored MeanStdFilter
        statistics.)"""
        pipelines = self.stateful_pipelines(self._local_env_runner)
        if self._actors is None or not pipelines:
            self.sync_weights(from_worker_or_learner_group=from_worker_or_learner_group)
            return
        restored = self.local_connector_states(pipelines)
        self.connector_sync.take_reference(restored)
        self.connector_sync.runners_started(self._actors.healthy_indices(), restored)  # they hold it from now on
        state = {"rl_module": _weights_of(from_worker_or_learner_group, True)}
        self._send_state(state, {}, restored, restored, None, None)

    def _send_state(self, state, to_local, to_remote, to_restarted, to_worker_indices, timeout_seconds) -> None:
        if self._actors is None:
            local_state = {**state, **to_local}
            self.foreach_env_runner(lambda env_runner: env_runner.set_state(local_state),
                                    remote_worker_ids=to_worker_indices)
            return
        if to_worker_indices is None and self._local_env_runner is not None:
            self._local_env_runner.set_state({**state, **to_local})
        ref = self._actors.ray.put({**state, **to_remote})
        if to_worker_indices is None:
            # A restarted runner starts from the driver's states even where live runners keep their own.
            same = to_restarted is to_remote or not to_restarted  # (one ray.put of the weights in the usual case)
            self._actors.last_state_ref = ref if same else self._actors.ray.put({**state, **to_restarted})
            self._restart_connector_states = to_restarted
        ids = self._actors.healthy_indices() if to_worker_indices is None else list(to_worker_indices)
        timeout = self.config.sample_timeout_s if timeout_seconds is None else timeout_seconds
        self._actors.call(ids, method="set_state", args=(ref,), timeout=timeout)

    def _training_connector_states(self) -> Tuple[dict, dict, dict]:
        """(for the local runner, the remote runners, restarted runners) per merge / broadcast_env_runner_states."""
        pipelines = self.stateful_pipelines(self._local_env_runner)
        if not pipelines:
            return {}, {}, {}
        merge, broadcast = state_sync_mode(self.config)
        if merge:
            merged = self.connector_sync.merge(pipelines, self._remote_connector_states(), broadcast=broadcast)
            return merged, (merged if broadcast else {}), merged
        reference = self.local_connector_states(pipelines)
        if broadcast:
            self.connector_sync.take_reference(reference)
            return {}, reference, reference
        return {}, {}, reference

    def _evaluation_connector_states(self, train_runner) -> Tuple[dict, dict, dict]:
        """Evaluation runners: the training runner's states ('training_only', False), their own merged pool
        (merge_env_runner_states=True, as RLlib, which merges only the evaluation runners' states), or their own
        unsynced states (broadcast_env_runner_states=False in the evaluation config)."""
        merge, broadcast = state_sync_mode(self.config)
        if not broadcast:
            return {}, {}, {}
        if not merge:
            reference = connector_part(train_runner.get_state(components=list(CONNECTOR_KEYS)))  # not episodes, envs
            return reference, reference, reference
        pipelines = self.stateful_pipelines(train_runner)  # (the same pipelines; an evaluation group has no local
        if self._actors is None or not pipelines:  # runner with remote ones) In-process: the local runner's own.
            return {}, {}, {}
        merged = self.connector_sync.merge(pipelines, self._remote_connector_states(), broadcast=True)
        return merged, merged, merged

    def local_connector_states(self, pipelines: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """The local runner's connector states as they are (of `pipelines`' keys, default all): the reference when
        merge_env_runner_states is off, and what a restore sends."""
        keys = list(CONNECTOR_KEYS if pipelines is None else pipelines)
        return connector_part(self._local_env_runner.get_state(components=keys))

    @staticmethod
    def stateful_pipelines(runner) -> Dict[str, Any]:
        """{"env_to_module_connector": pipeline, ...} of `runner`'s pipelines that keep state (only those cost a
        round trip)."""
        if runner is None:
            return {}
        pipelines = {"env_to_module_connector": runner._env_to_module, "module_to_env_connector": runner._module_to_env}
        return {key: p for key, p in pipelines.items() if _has_state(p)}

    def _remote_connector_states(self) -> Dict[int, Dict[str, Any]]:
        """{worker_index: connector states} of the healthy remote runners that answered."""
        results = self._actors.call(self._actors.healthy_indices(), method="get_connector_states",
                                    timeout=self.config.sample_timeout_s)
        return {r.worker_index: r.value for r in results if r.ok}

    def broadcast_state_async(self, state: Dict[str, Any], *, seq_no: int = 0,
                              restart_connector_states: Optional[Dict[str, Any]] = None) -> None:
        """Send `state` (weights, connector states) to every healthy remote runner without waiting: `ray.put`
        once; each runner takes it with its next `foreach_env_runner_async` call, before that call's function
        runs (after the samples it is already running), and only the newest state if several came since.
        Restarted runners get it too, with `restart_connector_states` instead of its connector states where given
        (broadcast_env_runner_states=False: a new runner starts from the driver's). `seq_no`: the weights'
        version, which the runners' samples then carry (IMPALA's policy lag)."""
        actors = self._actors
        if actors is None:
            raise ValueError("broadcast_state_async needs remote EnvRunners (num_env_runners > 0)")
        actors.broadcast_state(actors.ray.put(state), seq_no)
        self._restart_connector_states = connector_part(state)
        if restart_connector_states is not None and any(restart_connector_states.get(key) is not state.get(key)
                                                        for key in CONNECTOR_KEYS):
            weights = {key: value for key, value in state.items() if key not in CONNECTOR_KEYS}
            actors.last_state_ref = actors.ray.put({**weights, **restart_connector_states})
            self._restart_connector_states = dict(restart_connector_states)

    # -- the training iteration (named in video files) ---------------------------------------------
    def set_training_iteration(self, iteration: int) -> None:
        """Tell the runner that records videos the iteration in progress (its video files name it).

        Nothing is sent when no runner records. A Ray actor gets one message, not waited for: Ray runs an
        actor's calls from one caller in order, so the runner has it before its next sample. A runner
        replaced after a failure gets it again when it is restored.
        """
        self.training_iteration = iteration
        self._send_training_iteration(None)

    def _send_training_iteration(self, worker_indices: Optional[List[int]]) -> None:
        iteration = self.training_iteration
        if self._actors is None:
            runners = [self._local_env_runner, *self._in_process]
            index = recording_worker_index(self.config, len(self._in_process))
            if index is not None and index < len(runners) and runners[index] is not None:
                _set_training_iteration(runners[index], iteration)
            return
        index = recording_worker_index(self.config, len(self._actors.indices))
        if index is None or index not in self._actors.healthy_indices():
            return
        if worker_indices is None or index in worker_indices:
            self._actors.actor(index).apply.remote(_set_training_iteration, iteration)

    def require_healthy_runners(self) -> None:
        """Return once a remote runner is healthy (waiting for restarts); raise if none is left to restart."""
        if self._actors is not None and not self._actors.healthy_indices():
            self._wait_for_restarts(0, 1)

    def stop(self) -> None:
        if self._local_env_runner is not None:
            self._local_env_runner.stop()
        for runner in self._in_process:
            if hasattr(runner, "stop"):
                runner.stop()
        self._in_process = []
        if self._actors is not None:
            self._actors.stop()


def _set_training_iteration(runner, iteration: int) -> None:
    setter = getattr(runner, "set_training_iteration", None)  # (a custom EnvRunner class may lack it)
    if setter is not None:
        setter(iteration)


def _has_state(pipeline) -> bool:
    """Whether any piece keeps state (overrides get_state), e.g. MeanStdFilter."""
    from relayrl.connectors.connector_v2 import ConnectorV2

    return any(type(piece).get_state is not ConnectorV2.get_state for piece in getattr(pipeline, "connectors", []))


def default_env_runner_class(config) -> type:
    """config.env_runner_cls if set; else MultiAgentEnvRunner for a multi-agent config
    (config.multi_agent(policies=...)), else EnvRunner."""
    if getattr(config, "env_runner_cls", None) is not None:
        return config.env_runner_cls
    if getattr(config, "is_multi_agent", False):
        from relayrl.env.multi_agent_env_runner import MultiAgentEnvRunner

        return MultiAgentEnvRunner
    return EnvRunner


def _weights_of(source, inference_only: bool):
    """The module weights of a LearnerGroup / Learner (get_weights) or an EnvRunner (its module's state)."""
    if hasattr(source, "get_weights"):
        return source.get_weights(inference_only=inference_only)
    return source.module.get_state(inference_only=inference_only)
