"""`EnvRunnerActors`: the remote EnvRunners of one EnvRunnerGroup, kept healthy.

Every call has a timeout. A runner whose call raises (its env failed: RayTaskError), whose process
died (os._exit, ray.kill, a lost node: RayActorError and friends) or that does not answer in time is
marked unhealthy and killed. Then, per the config's fault_tolerance settings:

* restart_failed_env_runners: after delay_between_env_runner_restarts_s a new actor with the same
  worker_index (recreated_worker=True) replaces it, gets the last broadcast state (weights and
  connector states) and the env_config of a healthy runner; the group reports the indices so the
  algorithm can fire `on_env_runners_recreated`. A runner whose sample() calls fail more than
  num_consecutive_env_runner_failures_tolerance times in a row (a replacement that cannot be built
  counts too; a successful sample() resets the count; other calls, e.g. weight syncs, count neither
  way) ends the run: `EnvRunnerFailedError` with its last error.
* ignore_env_runner_failures: the runner stays out; the others go on.
* neither: `EnvRunnerFailedError` naming the worker_index, with the remote traceback.

An `EnvAPIError` (the env breaks gymnasium's API, env/env_checks.py) raises at once: a restarted
runner would fail the same way.
"""
import logging
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional

from relayrl.distributed.ray_setup import check_resources, ensure_ray_initialized
from relayrl.distributed.remote_env_runner import remote_env_runner_class
from relayrl.env.env_checks import EnvAPIError

logger = logging.getLogger("relayrl")


class EnvRunnerFailedError(RuntimeError):
    """A remote EnvRunner failed and the fault_tolerance settings say not to go on without it."""


@dataclass
class CallResult:
    worker_index: int
    ok: bool
    value: Any = None
    error: Optional[BaseException] = None


class EnvRunnerActors:
    """Remote EnvRunner actors with worker_index 1..n: calls with timeouts, health and restarts."""

    def __init__(self, *, config, env_runner_cls: type, num_env_runners: int, first_index: int = 1):
        self.ray = ensure_ray_initialized()
        self.config = config
        self._what = "evaluation EnvRunners" if getattr(config, "in_evaluation", False) else "EnvRunners"
        num_cpus = check_resources(self.ray, num_actors=num_env_runners, num_cpus=config.num_cpus_per_env_runner,
                                   num_gpus=config.num_gpus_per_env_runner, what=self._what)
        self._num_cpus = num_cpus
        self._actor_cls = remote_env_runner_class(self.ray, env_runner_cls, config, num_cpus=num_cpus)
        self._actors: Dict[int, Any] = {}
        self._healthy: Dict[int, bool] = {}
        self._dropped: set = set()  # failed for good (restarts off, or none left)
        self._failed_at: Dict[int, float] = {}
        self._failed_samples_in_a_row: Dict[int, int] = {}  # see handle_failures
        self._in_flight: Dict[Any, int] = {}  # async request ref -> worker_index
        self._submitted_at: Dict[Any, float] = {}  # async request ref -> time.monotonic() when sent
        self.num_async_calls_dropped = 0  # unanswered async calls of runners that failed (lifetime)
        self.last_errors: Dict[int, BaseException] = {}
        self.num_restarts = 0
        self.last_state_ref = None  # what a restarted runner is given (set by the group's sync_weights)
        self._pending_state = None  # (ref, seq_no) broadcast last: each runner takes it with its next async call
        self._num_states = 0  # states broadcast so far (lifetime)
        self._state_sent: Dict[int, int] = {}  # worker_index -> how many had been broadcast when its call took one
        self.add(num_env_runners, first_index=first_index)

    # -- creation -------------------------------------------------------------------------------
    def add(self, n: int, *, first_index: Optional[int] = None) -> List[int]:
        """Start n more actors (indices after the highest one); raise if any cannot be built."""
        start = first_index if first_index is not None else max(self._actors, default=0) + 1
        indices = list(range(start, start + n))
        handles = {i: self._create(i, config=self.config, recreated=False) for i in indices}
        ready = self._wait_built(handles, timeout=self.config.env_runner_restore_timeout_s)
        for i in indices:
            if i not in ready:
                self._kill(handles.values())
                error = self.last_errors.get(i)
                raise EnvRunnerFailedError(f"remote {self._what[:-1]} worker_index={i} could not be built: "
                                           f"{error}") from error
        for i in indices:
            self._actors[i], self._healthy[i], self._failed_samples_in_a_row[i] = handles[i], True, 0
        return indices

    def use_env_runner_class(self, env_runner_cls: type, config) -> None:
        """Runners created from now on (restarts, add) are `env_runner_cls` built with `config` (the Policy API's
        add_policy / remove_policy change the policies a runner class builds)."""
        self.config = config
        self._actor_cls = remote_env_runner_class(self.ray, env_runner_cls, config, num_cpus=self._num_cpus)

    def _create(self, worker_index: int, *, config, recreated: bool):
        from ray import cloudpickle

        return self._actor_cls.remote(config_blob=cloudpickle.dumps(config), driver_sys_path=list(sys.path),
                                      worker_index=worker_index, num_workers=config.num_env_runners,
                                      recreated_worker=recreated)

    def _wait_built(self, handles: Dict[int, Any], *, timeout: float, state_ref=None) -> List[int]:
        """Indices whose actor answered a ping (and took `state_ref`) within `timeout` seconds."""
        refs = {}
        for i, actor in handles.items():
            ref = actor.set_state.remote(state_ref) if state_ref is not None else actor.ping.remote()
            refs[ref] = i
        ready, _ = self.ray.wait(list(refs), num_returns=len(refs), timeout=timeout)
        ok = []
        for ref in ready:
            try:
                self.ray.get(ref)
                ok.append(refs[ref])
            except Exception as error:  # the constructor (e.g. the env's) raised, or the process died
                self.last_errors[refs[ref]] = error
        for ref, i in refs.items():
            if i not in ok and i not in self.last_errors:
                self.last_errors[i] = TimeoutError(f"not built within {timeout} s (are enough resources free?)")
        return sorted(ok)

    # -- state ------------------------------------------------------------------------------------
    @property
    def indices(self) -> List[int]:
        return sorted(self._actors)

    def healthy_indices(self) -> List[int]:
        return [i for i in sorted(self._actors) if self._healthy[i]]

    def actor(self, worker_index: int):
        return self._actors[worker_index]

    # -- calls ------------------------------------------------------------------------------------
    def call(self, ids: Iterable[int], *, method: Optional[str] = None, func: Optional[Callable] = None,
             timeout: Optional[float] = None, args: tuple = (), kwargs: Optional[dict] = None,
             per_worker_kwargs: Optional[Dict[int, dict]] = None, sampling: bool = False) -> List[CallResult]:
        """Call `method` (or `apply(func)`) on the given runners at once; failures are handled, then returned.

        `sampling=True`: the call is a sample(); see handle_failures for what that changes.
        """
        refs = self.submit(ids, method=method, func=func, args=args, kwargs=kwargs, per_worker_kwargs=per_worker_kwargs)
        return self.collect(refs, timeout=timeout, sampling=sampling)

    def submit(self, ids: Iterable[int], *, method: Optional[str] = None, func: Optional[Callable] = None,
               args: tuple = (), kwargs: Optional[dict] = None,
               per_worker_kwargs: Optional[Dict[int, dict]] = None) -> Dict[Any, int]:
        refs = {}
        for i in ids:
            actor = self._actors[i]
            call_kwargs = {**(kwargs or {}), **((per_worker_kwargs or {}).get(i, {}))}
            if func is not None:
                refs[actor.apply.remote(func, *args, **call_kwargs)] = i
            else:
                refs[getattr(actor, method).remote(*args, **call_kwargs)] = i
        return refs

    def collect(self, refs: Dict[Any, int], *, timeout: Optional[float], sampling: bool = False) -> List[CallResult]:
        """Wait up to `timeout` s for all `refs`; a call not answered by then counts as its runner's failure."""
        if not refs:
            return []
        ready, not_ready = self.ray.wait(list(refs), num_returns=len(refs), timeout=timeout)
        results, failures = [], []
        for ref in ready:
            i = refs[ref]
            try:
                results.append(CallResult(i, True, self.ray.get(ref)))
                if sampling:
                    self._failed_samples_in_a_row[i] = 0
            except Exception as error:
                failures.append(CallResult(i, False, error=error))
        for ref in not_ready:
            failures.append(CallResult(refs[ref], False, error=TimeoutError(
                f"no answer within {timeout} s (raise sample_timeout_s if the env is just slow)")))
        self.handle_failures(failures, sampling=sampling)
        return sorted(results + failures, key=lambda r: r.worker_index)

    # -- async calls ------------------------------------------------------------------------------
    def submit_async(self, ids: Iterable[int], *, func: Callable, max_in_flight: int) -> int:
        """`apply(func)` on each runner that has fewer than `max_in_flight` unanswered calls; returns the count."""
        busy: Dict[int, int] = {}
        for i in self._in_flight.values():
            busy[i] = busy.get(i, 0) + 1
        calls = [i for i in ids if self._healthy.get(i) for _ in range(max_in_flight - busy.get(i, 0))]
        now = time.monotonic()
        for i in calls:
            ref = self._submit_carrying_state(i, func)
            self._in_flight[ref] = i
            self._submitted_at[ref] = now
        return len(calls)

    def broadcast_state(self, state_ref, seq_no: int) -> None:
        """Hand `state_ref` (already `ray.put`) to every runner with its next async call; restarts get it too."""
        self.last_state_ref = state_ref
        self._pending_state = (state_ref, seq_no)
        self._num_states += 1

    def _submit_carrying_state(self, worker_index: int, func: Callable):
        """`apply(func)` on one runner, with the newest broadcast state first if it has not had it yet: one
        message per request, where a call per runner and broadcast made the driver's cost grow with runners x
        updates. A state replaced before a runner's next request never reaches it: it would act with the newer
        one anyway (Ray runs an actor's calls in order, so the timing is the same)."""
        actor = self._actors[worker_index]
        if self._pending_state is not None and self._state_sent.get(worker_index) != self._num_states:
            ref, seq_no = self._pending_state
            self._state_sent[worker_index] = self._num_states  # a count, not the ref: old states are freed
            return actor.apply.remote(_set_state_then, ref, seq_no, func)
        return actor.apply.remote(func)

    def fetch_ready_async(self, *, timeout: float, wait_for_one: bool = False,
                          sampling: bool = False) -> List[CallResult]:
        """The async calls answered within `timeout` s (with `wait_for_one`, up to sample_timeout_s until at
        least one is). A call unanswered for sample_timeout_s since it was sent counts as its runner's failure
        (the runner hangs): it is killed and restarted like any failed runner."""
        if not self._in_flight:
            return []
        refs = list(self._in_flight)
        if wait_for_one:
            self.ray.wait(refs, num_returns=1, timeout=self.config.sample_timeout_s)
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=timeout)
        done = {ref: self._in_flight.pop(ref) for ref in ready}
        for ref in ready:
            self._submitted_at.pop(ref, None)
        results = self.collect(done, timeout=0, sampling=sampling)
        limit = time.monotonic() - self.config.sample_timeout_s
        hung = {ref: i for ref, i in self._in_flight.items() if self._submitted_at.get(ref, limit) < limit}
        failures = []
        for ref, i in hung.items():
            self._in_flight.pop(ref)
            self._submitted_at.pop(ref, None)
            failures.append(CallResult(i, False, error=TimeoutError(
                f"no answer within sample_timeout_s={self.config.sample_timeout_s} s (raise it if the env is slow)")))
        self.handle_failures(failures, sampling=sampling)
        return results + failures

    def drop_in_flight(self, worker_index: int) -> int:
        """Forget a runner's unanswered async calls (it was killed); returns how many there were."""
        refs = [ref for ref, i in self._in_flight.items() if i == worker_index]
        for ref in refs:
            self._in_flight.pop(ref)
            self._submitted_at.pop(ref, None)
        return len(refs)

    def num_in_flight(self) -> int:
        return len(self._in_flight)

    # -- failures and restarts --------------------------------------------------------------------
    def handle_failures(self, failures: List[CallResult], *, sampling: bool = False) -> None:
        """Mark failed runners unhealthy and kill them; raise if the fault_tolerance settings say so.

        With restarts on, a runner whose sample() calls (`sampling=True`; a replacement that could not
        be built counts as well) failed more than num_consecutive_env_runner_failures_tolerance times
        in a row is given up and the error raised. Failures of other calls (weight syncs, foreach
        functions, pings) restart the runner but leave its count as it is.
        """
        if not failures:
            return
        cfg, fatal = self.config, None
        tolerance = cfg.num_consecutive_env_runner_failures_tolerance
        for failure in failures:
            i, error = failure.worker_index, failure.error
            if not self._healthy.get(i, False):
                continue
            self._healthy[i] = False
            self._failed_at[i] = time.monotonic()
            if sampling:
                self._failed_samples_in_a_row[i] = self._failed_samples_in_a_row.get(i, 0) + 1
            self.last_errors[i] = error
            self._kill([self._actors[i]])
            self.num_async_calls_dropped += self.drop_in_flight(i)  # its other unanswered calls are lost too
            message = f"remote {self._what[:-1]} worker_index={i} failed: {error}"
            if isinstance(error, EnvAPIError):  # the env's code breaks gymnasium's API: a restart fails again
                self._dropped.add(i)
                fatal = fatal or EnvRunnerFailedError(f"{message}\nA restarted runner would fail the same "
                                                      "way: fix the env as the error says.")
                fatal.__cause__ = error
                continue
            if cfg.restart_failed_env_runners:
                in_a_row = self._failed_samples_in_a_row.get(i, 0)
                if in_a_row > tolerance:
                    self._dropped.add(i)
                    fatal = fatal or EnvRunnerFailedError(
                        f"{message}\nIts sample() failed {in_a_row} times in a row (more than "
                        f"num_consecutive_env_runner_failures_tolerance={tolerance}); giving up. Fix the error "
                        "above, or raise config.fault_tolerance(num_consecutive_env_runner_failures_"
                        "tolerance=...) if the failures are transient.")
                    fatal.__cause__ = error
                    continue
                logger.warning("%s\nRestarting it in %s s.", message, cfg.delay_between_env_runner_restarts_s)
            elif cfg.ignore_env_runner_failures:
                self._dropped.add(i)
                logger.warning("%s\nGoing on without it (ignore_env_runner_failures=True).", message)
            else:
                fatal = fatal or EnvRunnerFailedError(
                    f"{message}\nSet config.fault_tolerance(restart_failed_env_runners=True) to replace failed "
                    "runners, or ignore_env_runner_failures=True to go on without them.")
                fatal.__cause__ = error
        if fatal is not None:
            raise fatal

    def restorable_indices(self) -> List[int]:
        if not self.config.restart_failed_env_runners:
            return []
        return [i for i in sorted(self._actors) if not self._healthy[i] and i not in self._dropped]

    def seconds_until_next_restore(self) -> Optional[float]:
        """None if no runner will ever be restored, else the wait until the next one is due."""
        pending = self.restorable_indices()
        if not pending:
            return None
        delay = self.config.delay_between_env_runner_restarts_s
        return max(0.0, min(self._failed_at[i] + delay for i in pending) - time.monotonic())

    def restore_due(self) -> List[int]:
        """Replace the failed runners whose restart delay has passed; returns the indices now healthy again."""
        cfg = self.config
        now = time.monotonic()
        due = [i for i in self.restorable_indices() if now - self._failed_at[i] >= cfg.delay_between_env_runner_restarts_s]
        if not due:
            return []
        left = cfg.max_num_env_runner_restarts - self.num_restarts
        if left < len(due):
            for i in due[max(left, 0):]:
                self._give_up(i, f"max_num_env_runner_restarts={cfg.max_num_env_runner_restarts} reached")
            due = due[:max(left, 0)]
        if not due:
            return []
        config = self._config_for_restart()
        handles = {i: self._create(i, config=config, recreated=True) for i in due}
        self.num_restarts += len(due)
        for i in due:
            self.last_errors.pop(i, None)
            self._state_sent.pop(i, None)  # its next request carries the state again (with its seq_no)
        ok = self._wait_built(handles, timeout=cfg.env_runner_restore_timeout_s, state_ref=self.last_state_ref)
        for i in due:
            self._actors[i] = handles[i]
            if i in ok:
                self._healthy[i] = True
                logger.warning("remote %s worker_index=%d restarted.", self._what[:-1], i)
            else:  # the replacement failed too: count it (as a failed sample) and try again after the delay
                self._healthy[i] = True
                self.handle_failures([CallResult(i, False, error=self.last_errors.get(i))], sampling=True)
        return ok

    def _give_up(self, worker_index: int, reason: str) -> None:
        self._dropped.add(worker_index)
        error = self.last_errors.get(worker_index)
        if not self.config.ignore_env_runner_failures:
            raise EnvRunnerFailedError(f"remote {self._what[:-1]} worker_index={worker_index} failed and cannot be "
                                       f"restarted ({reason}): {error}") from error
        logger.warning("remote %s worker_index=%d stays down: %s", self._what[:-1], worker_index, reason)

    def _config_for_restart(self):
        """The group's config with the env_config of a healthy runner (curriculum tasks set through it)."""
        config = self.config
        healthy = self.healthy_indices()
        if not healthy:
            return config
        ref = self._actors[healthy[0]].apply.remote(_env_config_of)
        try:
            env_config = self.ray.get(ref, timeout=config.env_runner_health_probe_timeout_s)
        except Exception:  # that runner's own failure shows up on its next call
            return config
        if env_config == dict(config.env_config):
            return config
        config = config.copy(copy_frozen=False)
        config.env_config = env_config  # (that runner's whole env_config: replaced, not merged as the builder does)
        return config

    def probe(self, ids: Iterable[int]) -> List[int]:
        """Ping the given runners (health-probe timeout); failures are handled; returns those that answered."""
        results = self.call(ids, method="ping", timeout=self.config.env_runner_health_probe_timeout_s)
        return [r.worker_index for r in results if r.ok]

    # -- shutdown ---------------------------------------------------------------------------------
    def _kill(self, actors) -> None:
        for actor in actors:
            try:
                self.ray.kill(actor, no_restart=True)
            except Exception:  # already gone
                pass

    def stop(self) -> None:
        healthy = [self._actors[i] for i in self.healthy_indices()]
        refs = [actor.stop.remote() for actor in healthy]
        if refs:  # close envs (and their subprocesses) politely, then make sure the actors are gone
            self.ray.wait(refs, num_returns=len(refs), timeout=5.0)
        free_before = self._free_cpus()
        self._kill(self._actors.values())
        self._actors.clear()
        self._healthy.clear()
        self._in_flight.clear()
        if free_before is not None:
            self._wait_released(free_before + len(healthy) * (self._num_cpus or 0.0))

    def _free_cpus(self) -> Optional[float]:
        """Ray's free CPUs; None once Ray is shut down (nothing to wait for then)."""
        try:
            return float(self.ray.available_resources().get("CPU", 0.0))
        except Exception:
            return None

    def _wait_released(self, cpus: float, timeout: float = 1.0) -> None:
        """Wait (at most `timeout` s) until Ray gives the killed actors' CPUs back (~0.1 s after the kill): an
        algorithm built right after `stop()` (restore into a new one) saw them taken and warned that its runners
        would wait for others to finish."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            free = self._free_cpus()
            if free is None or free >= cpus - 1e-6:
                return
            time.sleep(0.01)


def _set_state_then(runner, state: Dict[str, Any], seq_no: int, func: Callable):
    """Inside the actor: take a broadcast state (weights, connector states) and its version, then run `func`."""
    runner.set_state(state)
    runner.weights_seq_no = seq_no
    return func(runner)


def _env_config_of(env_runner) -> dict:
    return dict(env_runner.config.env_config)
