"""`EnvRunner`: steps a vector env with an RLModule through the connector pipelines, producing episodes.

The same class runs in the driver (the embedded default) and inside Ray actors.
"""
import logging
import traceback
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import torch

from relayrl.callbacks import CallbackDispatch
from relayrl.connectors.common.add_observations_from_episodes_to_batch import (
    VECTOR_ENV_OBSERVATIONS,
)
from relayrl.connectors.module_to_env.get_actions import EXPLORATION, TIMESTEP
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.env.current_env_runner import set_current_env_runner
from relayrl.env.env_checks import EnvAPIError
from relayrl.env.env_context import EnvContext
from relayrl.env.episode_limits import episode_limits_wrapper
from relayrl.env.env_runner_state import EnvRunnerState
from relayrl.env.episode_stats import EpisodeStats
from relayrl.env.infinite_lookback_buffer import unbatch_items
from relayrl.env.numpy_inference import plan_numpy_policy
from relayrl.env.registry import make_env_creator
from relayrl.env.single_agent_episode import SingleAgentEpisode
from relayrl.env.vector_env import (
    batch_actions,
    foreach_sub_env,
    has_env_infos,
    info_at,
    infos_per_env,
    make_vector_env,
    unbatch,
)
from relayrl.env.vector_step_log import VectorStepLog
from relayrl.env.wrappers.video_recorder import video_recorder_for
from relayrl.exploration.env_runner_exploration import build_env_runner_exploration
from relayrl.metrics.metrics_logger import MetricsLogger

logger = logging.getLogger("relayrl")


class SubEnvFailuresError(RuntimeError):
    """Sub-environments failed more than num_consecutive_env_runner_failures_tolerance times in a row
    (with restart_failed_sub_environments=True)."""


class EnvRunner(EnvRunnerState):
    """Single-agent EnvRunner (RLlib's SingleAgentEnvRunner). Its checkpoint state: env_runner_state.py."""

    def __init__(self, *, config, worker_index: int = 0, num_workers: Optional[int] = None,
                 recreated_worker: bool = False, **kwargs):
        # An unfrozen copy, as in RLlib: curriculum code changes a runner's env settings in place, e.g.
        # `env_runner.config.environment(env_config=...)` then `env_runner.make_env()`.
        self.config = config.copy(copy_frozen=False) if hasattr(config, "copy") else config
        self.worker_index = worker_index
        self.num_workers = config.num_env_runners if num_workers is None else num_workers
        self.recreated_worker = recreated_worker
        self.metrics = MetricsLogger()
        self._stats = EpisodeStats(self.metrics, config.metrics_num_episodes_for_smoothing)
        self._seed = None if config.seed is None else int(config.seed) + 1000 * worker_index
        self.env = None
        self.module = None
        self._callbacks = CallbackDispatch(self.config)
        # Handlers per event, looked up once; an empty tuple means the sampling loop skips the event.
        handlers = self._callbacks.handlers
        self._cb_created, self._cb_start = handlers("on_episode_created"), handlers("on_episode_start")
        self._cb_step, self._cb_end = handlers("on_episode_step"), handlers("on_episode_end")
        self._cb_sample_end = handlers("on_sample_end")
        self._prev_chunks: Dict[str, list] = {}  # episode id -> chunks handed out (only with on_episode_end)
        self.num_env_steps_sampled_lifetime = 0  # the `timestep` Exploration objects see
        self.weights_seq_no = 0  # the version of the weights it acts with (set by IMPALA's broadcasts: policy lag)
        self._consecutive_env_failures = 0  # sub-env failures since the last good step (see _recover_from_env_failure)
        self._inference_rng = None  # numpy inference's sampling Generator (see env/numpy_inference.py)
        self.make_env()
        self.make_module()

    # -- construction ------------------------------------------------------------------------
    def make_env(self) -> None:
        """(Re)create the vector env from the config; the next sample() starts fresh episodes."""
        if self.env is not None:
            self.env.close()
        for episode in getattr(self, "_episodes", []):  # ongoing episodes end with the old env
            self._stats.forget(episode)
            self._prev_chunks.pop(episode.id_, None)
        creator = make_env_creator(self.config.env)
        self.env = make_vector_env(
            creator, self.config.env_config, num_envs=self.config.num_envs_per_env_runner,
            worker_index=self.worker_index, num_workers=self.num_workers, mode=self.config.gym_env_vectorize_mode,
            check_env=not self.config.disable_env_checking, wrap=episode_limits_wrapper(self.config),
            record_video=video_recorder_for(self.config, self.worker_index, self.num_workers),
        )
        self._callbacks("on_environment_created", env_runner=self, metrics_logger=self.metrics, env=self.env,
                        env_context=EnvContext(self.config.env_config, self.worker_index, 0, self.num_workers))
        self.num_envs = self.env.num_envs
        self._single_env_action_space = self.env.single_action_space
        module_spaces = getattr(self, "_spaces", {}).get(DEFAULT_MODULE_ID)
        self._spaces = {
            "__env__": (self.env.observation_space, self.env.action_space),
            "__env_single__": (
                self.config.observation_space or self.env.single_observation_space,
                self.config.action_space or self.env.single_action_space,
            ),
        }
        if module_spaces is not None:  # make_env() alone keeps the module (and its spaces)
            self._spaces[DEFAULT_MODULE_ID] = module_spaces
        self._episodes: List[SingleAgentEpisode] = []
        self._cached_to_module = None
        self._needs_reset = True

    def make_module(self) -> None:
        """Build the connector pipelines and the (inference-only) RLModule for the env's spaces."""
        self._env_to_module = self.config.build_env_to_module_connector(env=self.env, spaces=self._spaces)
        self._module_to_env = self.config.build_module_to_env_connector(env=self.env, spaces=self._spaces)
        module_spaces = (self._env_to_module.observation_space, self._env_to_module.action_space)
        self._spaces[DEFAULT_MODULE_ID] = module_spaces
        spec = self.config.get_rl_module_spec(spaces=self._spaces, inference_only=True)
        self.module = spec.build()
        self.module.eval()
        # `self.exploration` (RLlib's exploration API); GetActions calls it only when it is not the default.
        self.exploration, self._use_exploration, self._exploration_on_episode_start = build_env_runner_exploration(
            self.config, module_spaces[1], model=self.module, worker_index=self.worker_index,
            num_workers=self.num_workers)

    @property
    def policy_config(self):
        """The old API stack's name for the runner's config: `env_runner.policy_config["in_evaluation"]`."""
        return self.config

    def get_spaces(self) -> Dict[str, Any]:
        return dict(self._spaces)

    # -- sampling ------------------------------------------------------------------------------
    def sample(self, *, num_timesteps: Optional[int] = None, num_episodes: Optional[int] = None,
               explore: Optional[bool] = None, random_actions: bool = False,
               force_reset: bool = False) -> List[SingleAgentEpisode]:
        """Step the envs and return finished episodes plus (truncate mode) the cut ongoing chunks.

        Default amount: `rollout_fragment_length * num_envs` steps. With `num_episodes` (or
        batch_mode="complete_episodes") only finished episodes are returned.
        """
        if num_timesteps is not None and num_episodes is not None:
            raise ValueError("Pass num_timesteps or num_episodes to sample(), not both.")
        set_current_env_runner(self)  # get_global_worker() in callbacks (seed 000)
        explore = self.config.explore if explore is None else explore
        complete = num_episodes is not None or self.config.batch_mode == "complete_episodes"
        if num_timesteps is None and num_episodes is None:
            num_timesteps = self.config.get_rollout_fragment_length(self.worker_index) * self.num_envs
        if self._needs_reset or force_reset or num_episodes is not None:
            self._reset_envs_or_recover(explore)
        policy = plan_numpy_policy(self, random_actions)
        done_episodes = self._run(num_timesteps, num_episodes, explore, random_actions, complete, policy)
        if complete:
            samples = done_episodes[:num_episodes] if num_episodes is not None else done_episodes
        else:
            chunks = []
            for i, episode in enumerate(self._episodes):
                if len(episode) == 0:
                    continue
                successor = episode.cut(len_lookback_buffer=self.config.episode_lookback_horizon)
                self._stats.on_chunk_cut(episode)
                chunks.append(episode.to_numpy())
                if self._cb_end:  # on_episode_end gets the chunks handed out before the episode ended
                    self._prev_chunks.setdefault(episode.id_, []).append(episode)
                self._episodes[i] = successor
            samples = done_episodes + chunks
        for handler in self._cb_sample_end:
            handler(env_runner=self, metrics_logger=self.metrics, samples=samples)
        return samples

    def _reset_envs(self, explore: bool) -> None:
        seed = self._seed
        if seed is not None:
            self._seed = None  # seed only the first reset; later resets continue the env's own RNG
        # Ongoing episodes are dropped: forget the returns of their already handed-out chunks.
        for episode in self._episodes:
            self._stats.forget(episode)
            self._prev_chunks.pop(episode.id_, None)
        self._episodes = [self._make_episode() for _ in range(self.num_envs)]
        for i, episode in enumerate(self._episodes):
            self._episode_callbacks(self._cb_created, episode, i)
        observations, infos = self.env.reset(seed=seed)
        batched_obs, observations = observations, unbatch(self.env.observation_space, observations)
        for i, episode in enumerate(self._episodes):
            self._start_episode(episode, observations[i], info_at(infos, i), i)
        self._cached_to_module = self._env_to_module_call(self._episodes, explore, batched_obs)
        self._needs_reset = False

    def _make_episode(self) -> SingleAgentEpisode:
        obs_space, act_space = self._spaces["__env_single__"]
        return SingleAgentEpisode(observation_space=obs_space, action_space=act_space)

    def _new_episode(self, observation, info, env_index: int) -> SingleAgentEpisode:
        """The episode that follows a finished one in sub-env `env_index` (which auto-reset already)."""
        episode = self._make_episode()
        if self._cb_created:
            self._episode_callbacks(self._cb_created, episode, env_index)
        self._start_episode(episode, observation, info, env_index)
        return episode

    def _start_episode(self, episode, observation, info, env_index: int) -> None:
        """The reset observation goes in, then on_episode_start (callbacks, then the exploration object)."""
        episode.add_env_reset(observation, info)
        if self._cb_start:
            self._episode_callbacks(self._cb_start, episode, env_index)
        if self._exploration_on_episode_start is not None:
            self._exploration_on_episode_start(environment=self.env, episode=episode, env_index=env_index)

    def _episode_callbacks(self, handlers, episode, env_index: int, **extra) -> None:
        for handler in handlers:
            handler(episode=episode, env_runner=self, metrics_logger=self.metrics, env=self.env,
                    env_index=env_index, rl_module=self.module, **extra)

    def _env_to_module_call(self, episodes, explore, vector_observations=None):
        # Passing the vector env's observations lets the default pieces skip reading each episode.
        shared_data = {} if vector_observations is None else {VECTOR_ENV_OBSERVATIONS: vector_observations}
        return self._env_to_module(rl_module=self.module, batch={}, episodes=episodes, explore=explore,
                                   shared_data=shared_data, metrics=self.metrics)

    def _compute_actions(self, explore: bool, random_actions: bool, timestep: int = 0,
                         policy=None) -> Dict[str, Any]:
        """The module-to-env pipeline's output for the cached env-to-module batch. A numpy `policy`
        (env/numpy_inference.py) stands in for the torch module where it takes the batch."""
        if random_actions:
            space = self._spaces["__env_single__"][1]
            actions = [space.sample() for _ in range(self.num_envs)]
            return {Columns.ACTIONS: actions}
        to_module = self._cached_to_module
        observations = None if policy is None else policy.observations_in(to_module)
        if observations is not None:  # (no Exploration object then: see plan_numpy_policy)
            return self._module_to_env(rl_module=self.module, batch=policy(observations, explore),
                                       episodes=self._episodes, explore=explore, shared_data={}, metrics=self.metrics)
        with torch.inference_mode():
            shared_data = {}
            if self._use_exploration:
                self.exploration.before_compute_actions(timestep=timestep, explore=explore)
                shared_data = {EXPLORATION: self.exploration, TIMESTEP: timestep}
            if explore:
                out = self.module.forward_exploration(to_module)
            else:
                out = self.module.forward_inference(to_module)
            return self._module_to_env(rl_module=self.module, batch=out, episodes=self._episodes, explore=explore,
                                       shared_data=shared_data, metrics=self.metrics)

    def _run(self, num_timesteps, num_episodes, explore, random_actions, complete,
             policy=None) -> List[SingleAgentEpisode]:
        """The sampling loop. A numpy `policy` (env/numpy_inference.py) computes the actions instead of
        the torch module; one that skips the pipelines reads the vector env's observations directly."""
        done_episodes, steps, done_steps = [], 0, 0
        direct = policy is not None and not policy.calls_pipelines
        policy_obs = policy.observations_in(self._cached_to_module) if direct else None
        clip = self.config.clip_rewards
        if num_episodes is not None:
            # Each sub-env owes a fixed share of the episodes. Keeping simply the first episodes to end
            # would favour short episodes and bias evaluation returns low.
            quota = [num_episodes // self.num_envs + (i < num_episodes % self.num_envs) for i in range(self.num_envs)]
        log = self._step_log(num_timesteps, random_actions)
        while True:
            if num_episodes is not None:
                if len(done_episodes) >= num_episodes:
                    break
            elif (done_steps if complete else steps) >= num_timesteps:
                break
            if direct:
                to_env = policy(policy_obs, explore)
            else:
                to_env = self._compute_actions(explore, random_actions, self.num_env_steps_sampled_lifetime + steps,
                                               policy)
            actions = to_env.pop(Columns.ACTIONS)
            env_actions = to_env.pop(Columns.ACTIONS_FOR_ENV, actions)
            stepped = self._step_envs(batch_actions(self._single_env_action_space, env_actions), explore)
            if stepped is None:  # a sub-env failed and the envs were recreated (restart_failed_sub_environments)
                if log is not None:
                    log.drop_pending()
                if direct:
                    policy_obs = policy.observations_in(self._cached_to_module)
                continue
            batched_obs, rewards, terminateds, truncateds, infos = stepped
            observations = unbatch(self.env.observation_space, batched_obs)
            if clip is True:
                rewards = np.sign(rewards)
            elif clip:
                rewards = np.clip(rewards, -clip, clip)
            steps += self.num_envs
            finished = None
            if log is not None:
                finished = self._log_step(log, actions, to_env, batched_obs, rewards, terminateds, truncateds, infos)
                if finished is None:  # the step does not fit the log's columns: record per episode from now on
                    self._hand_over_pending(log)
                    log = None
            if finished is None:
                finished = self._record_step(actions, to_env, observations, rewards, terminateds, truncateds, infos)
            if self._cb_step:
                for i, episode in enumerate(self._episodes):
                    self._episode_callbacks(self._cb_step, episode, i)
            if finished:
                ended = [self._episodes[i] for i in finished]
                if self._env_to_module.WRITES_EPISODES:
                    # Let pieces that write episodes see the terminal observations (e.g. MeanStdFilter).
                    self._env_to_module_call(ended, explore)
                for i, episode in zip(finished, ended):
                    # With num_episodes, episodes beyond a sub-env's share are dropped (not logged).
                    if num_episodes is None or quota[i] > 0:
                        if num_episodes is not None:
                            quota[i] -= 1
                        if self._cb_end:
                            self._episode_callbacks(self._cb_end, episode, i,
                                                    prev_episode_chunks=self._prev_chunks.pop(episode.id_, []))
                        episode.to_numpy()  # first: the return then sums an array, not a list
                        self._stats.on_episode_done(episode)
                        done_steps += len(episode)
                        done_episodes.append(episode)
                    else:
                        self._prev_chunks.pop(episode.id_, None)
                    self._episodes[i] = self._new_episode(observations[i], info_at(infos, i), i)
            if direct:
                policy_obs = batched_obs
            else:
                self._cached_to_module = self._env_to_module_call(self._episodes, explore, batched_obs)
        if direct and steps:  # the pipeline's batch, for the next call (or a checkpoint)
            self._cached_to_module = self._env_to_module_call(self._episodes, explore, policy_obs)
        if log is not None:
            self._hand_over_pending(log)
        self._stats.on_steps(steps)
        self.num_env_steps_sampled_lifetime += steps
        return done_episodes

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

    def _step_log(self, num_timesteps: Optional[int], random_actions: bool) -> Optional[VectorStepLog]:
        """A VectorStepLog for this sampling run when nothing reads the ongoing episodes between steps
        (no on_episode_step callback, no connector piece that reads episodes); None otherwise."""
        if (random_actions or self._cb_step or self._env_to_module.WRITES_EPISODES
                or self._env_to_module.reads_episodes(self.module) or self._module_to_env.reads_episodes(self.module)):
            return None
        return VectorStepLog(self.num_envs, capacity=-(-num_timesteps // self.num_envs) if num_timesteps else 64)

    def _log_step(self, log, actions, extra_outputs, observations, rewards, terminateds, truncateds,
                  infos) -> Optional[List[int]]:
        """`_record_step` through the step log: the step goes into its columns and only the episodes that
        ended take their steps. None, recording nothing, if the step does not fit the columns."""
        step_infos = infos_per_env(infos, self.num_envs) if infos and has_env_infos(infos) else None
        if not log.write(observations, actions, rewards, extra_outputs, step_infos):
            return None
        done = (terminateds | truncateds).tolist()  # (a list: `in` is cheaper than ndarray.any() on 8 items)
        if True not in done:
            return []
        finished = [i for i, ended in enumerate(done) if ended]
        final_infos = infos.get("final_info", {})
        for i in finished:
            log.hand_over(i, self._episodes[i], final_observation=infos["final_obs"][i],
                          final_info=info_at(final_infos, i), terminated=bool(terminateds[i]),
                          truncated=bool(truncateds[i]))
        return finished

    def _hand_over_pending(self, log: VectorStepLog) -> None:
        """The ongoing episodes take their steps from the log, as items, so they can go on."""
        for i, episode in enumerate(self._episodes):
            log.hand_over(i, episode)

    def _record_step(self, actions, extra_outputs, observations, rewards, terminateds, truncateds,
                     infos) -> List[int]:
        """`add_env_step` on every sub-env's episode; returns the sub-envs whose episode just ended.

        This runs once per env per step, so every column is split into per-env items once per step
        (`list()` / `tolist()` in C) instead of being indexed per env.
        """
        n = self.num_envs
        keys = list(extra_outputs)
        extras = zip(*[unbatch_items(values) for values in extra_outputs.values()]) if keys else [()] * n
        rewards, terms, truncs = rewards.tolist(), terminateds.tolist(), truncateds.tolist()
        rows = zip(self._episodes, unbatch_items(observations), unbatch_items(actions), rewards, terms, truncs,
                   infos_per_env(infos, n), extras)
        finished = []
        for i, (episode, obs, action, reward, term, trunc, info, extra) in enumerate(rows):
            extra = dict(zip(keys, extra))
            if term or trunc:
                episode.add_env_step(infos["final_obs"][i], action, reward, info_at(infos.get("final_info", {}), i),
                                     terminated=term, truncated=trunc, extra_model_outputs=extra)
                finished.append(i)
            else:
                episode.add_env_step(obs, action, reward, info, extra_model_outputs=extra)
        return finished

    # -- metrics, state, helpers ----------------------------------------------------------
    def get_metrics(self) -> Dict[str, Any]:
        """Raw metrics since the last call, in the mergeable form (`MetricsLogger.reduce_for_merge`)."""
        return self.metrics.reduce_for_merge()

    def foreach_env(self, func: Callable) -> List:
        """`func(sub_env)` for every sub-env of this runner's vector env; returns the results."""
        return foreach_sub_env(self.env, func)

    def ping(self) -> str:
        return "pong"

    def assert_healthy(self) -> None:
        assert self.env is not None and self.module is not None, "EnvRunner has no env or module."

    def stop(self) -> None:
        if self.env is not None:
            self.env.close()
            self.env = None


SingleAgentEnvRunner = EnvRunner
