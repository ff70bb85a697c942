"""`EnvStepper`: the one way relayrl steps envs, behind every runner.

The single-agent and multi-agent EnvRunners and both Policy runners each hold one. It does, for all of them:
- `make()`: build the vector env from the config: the env's own vector env (VECTOR_ENTRY_POINT, where the
  runner can step one that auto-resets on the next step), a gymnasium SYNC/ASYNC vector env, or a
  MultiAgentVectorEnv; with each sub-env's first reset()/step() checked (unless disable_env_checking),
  the episode limits (horizon, soft_horizon, no_done_at_end) and the video recorder
  (record_video_every_n_episodes) wrapped around each sub-env;
- `step(actions)`: the vector env's step; with restart_failed_sub_environments a sub-env that raises is
  rebuilt instead of failing the runner (`recover`), and step() then returns None;
- `reward_clipping`: clip_rewards, keeping each sub-env's unclipped score (reward_clipping.py).
What a runner makes of the results (episodes, trajectories, batches) stays the runner's. Which runner kind
honours which option, and the build-time refusals where one cannot: runner_options.py.
"""
import logging
import traceback
from contextlib import contextmanager
from typing import Callable, List, Optional

from relayrl.env.env_checks import EnvAPIError
from relayrl.env.env_failures import SubEnvFailuresError
from relayrl.env.episode_limits import episode_limits_wrapper
from relayrl.env.multi_agent_vector_env import MultiAgentVectorEnv
from relayrl.env.native_vector_env import make_native_vector_env, wants_native
from relayrl.env.observation_mismatch import env_spec_name, observation_mismatch
from relayrl.env.registry import make_env_creator
from relayrl.env.runner_options import check_runner_options
from relayrl.env.reward_clipping import MultiAgentRewardClipping, RewardClipping
from relayrl.env.vector_env import foreach_sub_env, make_vector_env
from relayrl.env.wrappers.video_recorder import ITERATION_ATTRIBUTE, video_recorder_for

logger = logging.getLogger("relayrl")


class EnvStepper:
    """The vector env of one runner, built, stepped and recovered as the config says (module docstring).

    `restart`: the runner's "the env failed: make it again and start new episodes" (make_env() and a
    reset), which `recover` calls after closing the broken env. `next_step_autoreset`: whether the runner
    can step a vector env that auto-resets on the next step (the env's own vector implementations); a
    runner that cannot gets SYNC, with a warning, when the config asks for one. `adapt`: applied to each
    vector env built (a runner's own fast path for it, e.g. the Policy runner's OneEnvSyncVectorEnv).
    """

    def __init__(self, config, *, worker_index: int, num_workers: int, metrics, multi_agent: bool = False,
                 restart: Optional[Callable[[], None]] = None, next_step_autoreset: bool = True,
                 adapt: Optional[Callable] = None):
        check_runner_options(config, multi_agent=multi_agent)
        self.config, self.worker_index, self.num_workers = config, worker_index, num_workers
        self.metrics, self.multi_agent, self.restart = metrics, multi_agent, restart
        self.next_step_autoreset, self.adapt = next_step_autoreset, adapt
        self.env = None
        self.records_video = False
        self.consecutive_failures = 0  # sub-env failures since the last good step (see recover)
        self.reward_clipping: Optional[RewardClipping] = None
        self.step = self._step_or_recover

    # -- building -----------------------------------------------------------------------------
    def make(self, *, iteration: int = 0):
        """(Re)build the vector env (closing the old one); `iteration`: the training iteration video files
        start with. Returns the env."""
        self.close()
        config = self.config
        env = self._build(iteration)
        self.env = env = env if self.adapt is None else self.adapt(env)
        clipping = MultiAgentRewardClipping if self.multi_agent else RewardClipping
        self.reward_clipping = clipping(config.clip_rewards, env.num_envs)
        # Without recovery the loop calls the env's own step: no layer in between.
        self.step = self._step_or_recover if config.restart_failed_sub_environments else env.step
        return env

    def _build(self, iteration: int):
        config, num_envs = self.config, self.config.num_envs_per_env_runner
        if self.multi_agent:
            return MultiAgentVectorEnv(make_env_creator(config.env), config.env_config, num_envs=num_envs,
                                       worker_index=self.worker_index, num_workers=self.num_workers,
                                       check_env=not config.disable_env_checking,
                                       wrap=episode_limits_wrapper(config, multi_agent=True),
                                       env_label=env_spec_name(config.env))
        native = wants_native(config)
        if native and self.next_step_autoreset:
            env = make_native_vector_env(config, num_envs=num_envs, worker_index=self.worker_index)
            if env is not None:
                return env
        elif native and self.worker_index <= 1:
            logger.warning("gym_env_vectorize_mode='VECTOR_ENTRY_POINT': the Policy API's runners step envs that "
                           "reset in the step that ends an episode; using SYNC vector envs instead.")
        record_video = video_recorder_for(config, self.worker_index, self.num_workers, iteration=iteration)
        self.records_video = record_video is not None
        return make_vector_env(make_env_creator(config.env), config.env_config, num_envs=num_envs,
                               worker_index=self.worker_index, num_workers=self.num_workers,
                               mode="SYNC" if native else config.gym_env_vectorize_mode,
                               check_env=not config.disable_env_checking, wrap=episode_limits_wrapper(config),
                               record_video=record_video, env_label=env_spec_name(config.env))

    # -- stepping, with recovery ------------------------------------------------------------------
    def _step_or_recover(self, actions):
        """`env.step(actions)`, or None after a raising sub-env was recovered from (restart_failed_sub_environments:
        the envs were rebuilt and the runner's ongoing episodes dropped)."""
        try:
            stepped = self.env.step(actions)
        except Exception as error:
            self.recover(self._explained(error))
            return None
        self.consecutive_failures = 0
        return stepped

    @contextmanager
    def explaining_errors(self):
        """Run the block (a runner's sampling); a ValueError the vector env raised because a sub-env's observation
        does not fit the observation space becomes an EnvAPIError naming the env, the space and the value
        (observation_mismatch.py), unless disable_env_checking. Only a raised error is looked at: stepping pays
        nothing."""
        try:
            yield
        except ValueError as error:
            explained = self._explained(error)
            if explained is error:
                raise
            raise explained from error

    def _explained(self, error: Exception) -> Exception:
        if self.config.disable_env_checking:  # (the env checks' error, so off with them: the env's own error)
            return error
        return observation_mismatch(self.env, error, env_spec=self.config.env, worker_index=self.worker_index) or error

    def guarded(self, call: Callable[[], None]) -> None:
        """`call()` (a runner's reset of its envs and episodes); with restart_failed_sub_environments a raising
        reset() is recovered from as a raising step()."""
        if not self.config.restart_failed_sub_environments:
            return call()
        try:
            call()
        except Exception as error:
            self.recover(error)

    def recover(self, error: Exception) -> None:
        """Rebuild and reset the envs after a sub-env raised (the runner's `restart`), until a reset works.

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
            self.consecutive_failures += 1
            if self.consecutive_failures > tolerance:
                trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
                raise SubEnvFailuresError(
                    f"EnvRunner worker_index={self.worker_index}: its sub-environments failed "
                    f"{self.consecutive_failures} times in a row without a successful step (more than "
                    f"num_consecutive_env_runner_failures_tolerance={tolerance}, "
                    f"restart_failed_sub_environments=True). The last failure:\n{trace}") from error
            logger.warning("EnvRunner %d: a sub-environment raised %r; recreating the envs "
                           "(restart_failed_sub_environments=True)", self.worker_index, error)
            self.metrics.log_value("num_env_restarts", 1, reduce="sum")
            try:
                self._close_quietly()
                self.restart()
                return
            except Exception as next_error:  # the new env failed to build or reset: that counts too
                error = next_error

    # -- the rest of the env's life ---------------------------------------------------------------
    def set_training_iteration(self, iteration: int) -> None:
        """The training iteration the recording sub-env names in its video files."""
        if self.records_video:  # the recorder is sub-env 0's outermost wrapper; the other sub-envs ignore it
            self.env.set_attr(ITERATION_ATTRIBUTE, iteration)

    def foreach_env(self, func: Callable) -> List:
        return foreach_sub_env(self.env, func)

    def close(self) -> None:
        if self.env is not None:
            env, self.env = self.env, None
            env.close()

    def _close_quietly(self) -> None:
        """Close a broken env without letting its close() raise; the runner's restart builds a new one."""
        try:
            self.close()
        except Exception:  # the env is being replaced because it is broken
            logger.debug("closing the failed env raised", exc_info=True)
        self.env = None


__all__ = ["EnvStepper", "SubEnvFailuresError"]
