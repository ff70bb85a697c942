"""Sub-env failures inside an EnvRunner (`restart_failed_sub_environments`): rebuild the envs, go on.

Mixed into the EnvRunners; it needs their `make_env()` and `_reset_envs(explore)`.
"""
import logging
import traceback

from relayrl.env.env_checks import EnvAPIError

logger = logging.getLogger("relayrl")


class SubEnvFailuresError(RuntimeError):
    """Sub-environments failed more than num_consecutive_env_runner_failures_tolerance times in a row
    (with restart_failed_sub_environments=True)."""


class SubEnvRecovery:
    """`_step_envs` and `_reset_envs_or_recover`: the env calls of the sampling loop, with recovery."""

    def _step_envs(self, actions, explore: bool):
        """`env.step(actions)`; with restart_failed_sub_environments a raising env is rebuilt instead of
        failing the runner: the vector env is recreated, its ongoing episodes are dropped (their steps
        are not returned) and sampling goes on (see _recover_from_env_failure)."""
        if not self.config.restart_failed_sub_environments:
            return self.env.step(actions)
        try:
            stepped = self.env.step(actions)
        except Exception as error:
            self._recover_from_env_failure(error, explore)
            return None
        self._consecutive_env_failures = 0
        return stepped

    def _reset_envs_or_recover(self, explore: bool) -> None:
        """`_reset_envs`; with restart_failed_sub_environments a raising reset() is handled like a raising step()."""
        if not self.config.restart_failed_sub_environments:
            return self._reset_envs(explore)
        try:
            self._reset_envs(explore)
        except Exception as error:
            self._recover_from_env_failure(error, explore)

    def _recover_from_env_failure(self, error: Exception, explore: bool) -> None:
        """Rebuild and reset the vector env after a sub-env raised, until a reset works.

        An `EnvAPIError` (env/env_checks.py) is raised at once: a rebuilt env would break the API again.
        Every other failure (of step(), reset() or the rebuild) counts; a successful step() resets the count
        (a successful reset alone does not). More than num_consecutive_env_runner_failures_tolerance
        failures in a row raise `SubEnvFailuresError` carrying the last error and its traceback; that
        fails this sample() and so the runner (a remote one is then restarted per fault_tolerance).
        """
        tolerance = self.config.num_consecutive_env_runner_failures_tolerance
        while True:
            if isinstance(error, EnvAPIError):  # the env's code breaks the API: a rebuilt env would too
                raise error
            self._consecutive_env_failures += 1
            if self._consecutive_env_failures > tolerance:
                trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
                raise SubEnvFailuresError(
                    f"EnvRunner worker_index={self.worker_index}: its sub-environments failed "
                    f"{self._consecutive_env_failures} times in a row without a successful step (more than "
                    f"num_consecutive_env_runner_failures_tolerance={tolerance}, "
                    f"restart_failed_sub_environments=True). The last failure:\n{trace}") from error
            logger.warning("EnvRunner %d: a sub-environment raised %r; recreating the envs "
                           "(restart_failed_sub_environments=True)", self.worker_index, error)
            self.metrics.log_value("num_env_restarts", 1, reduce="sum")
            try:
                self._close_env_quietly()
                self.make_env()
                self._reset_envs(explore)
                return
            except Exception as next_error:  # the new env failed to build or reset: that counts too
                error = next_error

    def _close_env_quietly(self) -> None:
        """Close a broken env without letting its close() raise; make_env() then builds a new one."""
        try:
            self.env.close()
        except Exception:  # the env is being replaced because it is broken
            logger.debug("closing the failed env raised", exc_info=True)
        self.env = None
