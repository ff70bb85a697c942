"""`EnvRunnerGroup`: the local EnvRunner (and, with Ray, remote ones) behind one API."""
from typing import Any, Callable, List, Optional

from relayrl.env.env_runner import EnvRunner


class EnvRunnerGroup:
    """Owns the EnvRunners of an algorithm (training or evaluation)."""

    def __init__(self, *, config, env_runner_cls: Optional[type] = None, local_env_runner: bool = True,
                 num_in_process_env_runners: int = 0):
        """`num_in_process_env_runners=n` adds n EnvRunners with worker_index 1..n in this process,
        addressed like remote ones (`local_env_runner=False`, `remote_worker_ids`); used by
        evaluation until Ray actors exist."""
        self.config = config
        self._env_runner_cls = env_runner_cls or EnvRunner
        self._local_env_runner = self._env_runner_cls(config=config, worker_index=0) if local_env_runner else None
        # Ray actors (relayrl.distributed) when num_env_runners > 0; for now in-process runners.
        self._remote_env_runners: List[Any] = [
            self._env_runner_cls(config=config, worker_index=i, num_workers=num_in_process_env_runners)
            for i in range(1, num_in_process_env_runners + 1)
        ]

    # -- access ------------------------------------------------------------------------------
    @property
    def local_env_runner(self) -> EnvRunner:
        return self._local_env_runner

    def local_worker(self) -> EnvRunner:
        """RLlib's older name for `local_env_runner`."""
        return self._local_env_runner

    def num_remote_env_runners(self) -> int:
        return len(self._remote_env_runners)

    num_remote_workers = num_remote_env_runners

    def num_healthy_remote_workers(self) -> int:
        return len(self._remote_env_runners)

    def healthy_env_runner_ids(self) -> List[int]:
        return list(range(1, len(self._remote_env_runners) + 1))

    @property
    def remote_env_runners(self) -> List[Any]:
        """The non-local runners, in worker_index order (in-process EnvRunner objects for now)."""
        return list(self._remote_env_runners)

    def get_spaces(self):
        runner = self._local_env_runner or self._remote_env_runners[0]
        return runner.get_spaces()

    # -- running functions on runners ----------------------------------------------------------
    def foreach_env_runner(self, func: Callable, *, local_env_runner: bool = True, healthy_only: bool = True,
                           remote_worker_ids: Optional[List[int]] = None, timeout_seconds: Optional[float] = None,
                           **kwargs) -> List[Any]:
        """`func(env_runner)` on the local runner (if asked) and the remote ones; returns the results."""
        results = []
        if local_env_runner and self._local_env_runner is not None:
            results.append(func(self._local_env_runner))
        ids = self.healthy_env_runner_ids() if remote_worker_ids is None else list(remote_worker_ids)
        for worker_id in ids:
            results.append(func(self._remote_env_runners[worker_id - 1]))
        return results

    foreach_worker = foreach_env_runner

    def foreach_env(self, func: Callable) -> List[List[Any]]:
        """`func(sub_env)` on every sub-env of every runner: one list of results per runner."""
        return self.foreach_env_runner(lambda env_runner: env_runner.foreach_env(func))

    # -- weights ---------------------------------------------------------------------------------
    def sync_weights(self, policies=None, from_worker_or_learner_group=None, to_worker_indices=None,
                     global_vars=None, inference_only: bool = True, connector_states_from=None) -> None:
        """Copy the learner's (or a runner's) module weights to the runners.

        `connector_states_from`: an EnvRunner whose env-to-module / module-to-env connector states
        (e.g. MeanStdFilter statistics) are copied too (evaluation runners get the training runner's).
        """
        source = from_worker_or_learner_group
        if source is None:
            return
        if hasattr(source, "get_weights"):
            weights = source.get_weights(inference_only=inference_only)
        else:
            weights = source.module.get_state(inference_only=inference_only)
        state = {"rl_module": weights}
        if connector_states_from is not None:
            runner_state = connector_states_from.get_state()
            for key in ("env_to_module_connector", "module_to_env_connector"):
                state[key] = runner_state[key]
        self.foreach_env_runner(lambda env_runner: env_runner.set_state(state), remote_worker_ids=to_worker_indices)

    def stop(self) -> None:
        if self._local_env_runner is not None:
            self._local_env_runner.stop()
        for runner in self._remote_env_runners:
            if hasattr(runner, "stop"):
                runner.stop()
        self._remote_env_runners = []
