"""`EnvRunnerGroup`: the local EnvRunner (and, with Ray, remote ones) behind one API."""
from typing import Any, Callable, List, Optional

from relayrl.env.env_runner import EnvRunner


class EnvRunnerGroup:
    """Owns the EnvRunners of an algorithm (training or evaluation)."""

    def __init__(self, *, config, env_runner_cls: Optional[type] = None, local_env_runner: bool = True):
        self.config = config
        self._env_runner_cls = env_runner_cls or EnvRunner
        self._local_env_runner = self._env_runner_cls(config=config, worker_index=0) if local_env_runner else None
        self._remote_env_runners: List[Any] = []  # Ray actors (relayrl.distributed) when num_env_runners > 0

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

    def get_spaces(self):
        return self._local_env_runner.get_spaces()

    # -- running functions on runners ----------------------------------------------------------
    def foreach_env_runner(self, func: Callable, *, local_env_runner: bool = True, healthy_only: bool = True,
                           remote_worker_ids: Optional[List[int]] = None, timeout_seconds: Optional[float] = None,
                           **kwargs) -> List[Any]:
        """`func(env_runner)` on the local runner (if asked) and the remote ones; returns the results."""
        results = []
        if local_env_runner and self._local_env_runner is not None:
            results.append(func(self._local_env_runner))
        return results

    foreach_worker = foreach_env_runner

    def foreach_env(self, func: Callable) -> List[List[Any]]:
        """`func(sub_env)` on every sub-env of every runner: one list of results per runner."""
        return self.foreach_env_runner(lambda env_runner: env_runner.foreach_env(func))

    # -- weights ---------------------------------------------------------------------------------
    def sync_weights(self, policies=None, from_worker_or_learner_group=None, to_worker_indices=None,
                     global_vars=None, inference_only: bool = True) -> None:
        """Copy the learner's (or a runner's) module weights to the runners."""
        source = from_worker_or_learner_group
        if source is None:
            return
        if hasattr(source, "get_weights"):
            weights = source.get_weights(inference_only=inference_only)
        else:
            weights = source.module.get_state(inference_only=inference_only)
        state = {"rl_module": weights}
        self.foreach_env_runner(lambda env_runner: env_runner.set_state(state))

    def stop(self) -> None:
        if self._local_env_runner is not None:
            self._local_env_runner.stop()
        self._remote_env_runners = []
