"""`PolicyRunner`: steps a vector env with a Policy and returns postprocessed SampleBatches.

The old API stack's RolloutWorker, small: one `compute_actions` call per vector step for all sub-envs, rows
kept per episode (`Trajectory`), and each finished or cut trajectory goes through the policy's
`postprocess_trajectory` and `on_postprocess_trajectory` before it joins the batch `sample()` returns. The
same class runs in the driver and as a Ray actor (through relayrl.distributed's EnvRunnerActors).

Its envs are an EnvStepper's (relayrl/env/env_stepper.py), as every runner's: the same vector env, env checks,
episode limits, videos, sub-env failure recovery and reward clipping as the RLModule EnvRunners (the rows
hold the clipped rewards, the episodes' returns the env's own). Observations reach the policy preprocessed
(preprocessors.py: Discrete one-hot, Dict / Tuple flattened), and the rows hold them so.
"""
from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np

from relayrl.core.columns import DEFAULT_POLICY_ID
from relayrl.env.env_stepper import EnvStepper
from relayrl.env.episode_stats import EpisodeStats
from relayrl.env.vector_env import batch_actions, in_space_dtype, infos_per_env
from relayrl.metrics.metrics_logger import MetricsLogger
from relayrl.policy.models.catalog import ModelCatalog
from relayrl.policy.policy_callbacks import PolicyCallbacks, episode_kwargs
from relayrl.policy.rollout.episode import SINGLE_AGENT_ID, PolicyEpisode
from relayrl.policy.rollout.observation_filters import RunnerObservationFilters
from relayrl.policy.rollout.one_env_step import OneEnvNumpyStep
from relayrl.policy.rollout.one_env_vector import OneEnvSyncVectorEnv
from relayrl.policy.rollout.policy_map import build_policy_map
from relayrl.policy.rollout.policy_runner_state import PolicyRunnerState
from relayrl.policy.rollout.trajectory import Trajectory
from relayrl.policy.sample_batch import MultiAgentBatch, SampleBatch, concat_samples


class PolicyRunner(PolicyRunnerState, RunnerObservationFilters):
    """Samples with the policies of `POLICY_SPECS` (set on the subclass the worker set makes)."""

    POLICY_SPECS: dict[str, Any] = {}
    POLICY_MAPPING_FN: Callable | None = None
    MULTI_AGENT = False  # which vector env the stepper builds
    MODEL_CATALOG: dict[str, dict[str, type]] = {}  # the driver's ModelCatalog registrations (worker_set.py)

    def __init__(self, *, config, worker_index: int = 0, num_workers: int | None = None,
                 recreated_worker: bool = False):
        seed = self._init_common(config, worker_index, num_workers, recreated_worker)
        spaces = {SINGLE_AGENT_ID: (self.env.single_observation_space, self.env.single_action_space)}
        self.policy_map, self.preprocessors = build_policy_map(self.POLICY_SPECS, config, spaces, seed=seed,
                                                               mapping_fn=self._map, callbacks=self.callbacks)
        self.policy_id = self._map(SINGLE_AGENT_ID)
        self.policy = self.policy_map[self.policy_id]
        self._preprocess = self._observing(self.policy_id)
        self._unroll_id = 0
        self._first_seed = seed  # a checkpoint taken before the first step restores to this reset
        self._pending: list[SampleBatch] = []  # finished trajectories not yet returned (complete_episodes)
        self._num_finished = 0  # episodes finished so far (sample(num_episodes=n) counts them)
        self._stepper.guarded(lambda: self._restart_episodes(seed=seed))

    def _init_common(self, config, worker_index: int, num_workers: int | None, recreated_worker: bool):
        """What every runner keeps (config, index, metrics, callbacks, global vars, its envs); returns its seed."""
        self.config = config
        self.worker_index = worker_index
        self._init_filters(config)
        ModelCatalog.add_registrations(self.MODEL_CATALOG)  # in a Ray actor, the driver's custom models
        self.num_workers = config.num_env_runners if num_workers is None else num_workers
        self.recreated_worker = recreated_worker
        self.metrics = MetricsLogger()
        self._stats = EpisodeStats(self.metrics, config.metrics_num_episodes_for_smoothing)
        self.callbacks = PolicyCallbacks(config)
        self.global_vars: dict[str, Any] = {"timestep": 0}
        self.training_iteration = 0  # the Algorithm's iteration in progress (only told when videos are recorded)
        self._stepper = EnvStepper(config, worker_index=worker_index, num_workers=self.num_workers,
                                   metrics=self.metrics, multi_agent=self.MULTI_AGENT, restart=self._restart_envs,
                                   next_step_autoreset=False, adapt=OneEnvSyncVectorEnv.adopt)
        self.make_env()
        return None if config.seed is None else int(config.seed) + 1000 * worker_index

    def make_env(self) -> None:
        """(Re)create the vector env from the config (the stepper's); the ongoing episodes restart with it."""
        self.env = self._stepper.make(iteration=self.training_iteration)
        self.num_envs = self.env.num_envs

    def _restart_envs(self) -> None:
        """A sub-env failed (restart_failed_sub_environments): new envs, new episodes (EnvStepper.recover)."""
        self.make_env()
        self._restart_episodes()

    @staticmethod
    def _preprocessing(preprocessor) -> Callable:
        """observations (batched) -> what the policy gets (preprocessors.py)."""
        return (lambda observations: observations) if preprocessor is None else preprocessor.transform_batch

    def _observing(self, policy_id: str) -> Callable:
        """observations (batched) -> what the policy gets: preprocessed, then filtered (observation_filters.py)."""
        preprocess = self._preprocessing(self.preprocessors[policy_id])
        obs_filter = self.observation_filter(policy_id)
        return preprocess if obs_filter is None else (lambda observations: obs_filter(preprocess(observations)))

    # -- policies --------------------------------------------------------------------------------------
    def _map(self, agent_id) -> str:
        fn = self.POLICY_MAPPING_FN
        if fn is None:
            return DEFAULT_POLICY_ID if DEFAULT_POLICY_ID in self.POLICY_SPECS else next(iter(self.POLICY_SPECS))
        return fn(agent_id, None, worker=self)

    def get_policy(self, policy_id: str = DEFAULT_POLICY_ID):
        return self.policy_map.get(policy_id)

    def foreach_policy(self, func: Callable) -> list:
        return [func(policy, pid) for pid, policy in self.policy_map.items()]

    def foreach_policy_to_train(self, func: Callable) -> list:
        return [func(self.policy_map[pid], pid) for pid in self.policies_to_train()]

    def policies_to_train(self) -> list[str]:
        from relayrl.policy.rollout.policy_map import trainable_policy_ids

        return trainable_policy_ids(self.config, self.policy_map)

    def get_weights(self, policies: list[str] | None = None) -> dict[str, Any]:
        return {pid: self.policy_map[pid].get_weights() for pid in (policies or self.policy_map)}

    def set_weights(self, weights: dict[str, Any], global_vars: dict | None = None, **kwargs) -> None:
        for pid, w in weights.items():
            if pid in self.policy_map:
                self.policy_map[pid].set_weights(w)
        if global_vars:
            self.set_global_vars(global_vars)

    def set_global_vars(self, global_vars: dict, **kwargs) -> None:
        self.global_vars.update(global_vars)
        for policy in self.policy_map.values():
            policy.on_global_var_update(global_vars)

    def learn_on_batch(self, samples) -> dict[str, Any]:
        """learn_on_batch of each trainable policy on its part of `samples`; {policy_id: results}."""
        batch = samples.as_multi_agent()
        trainable = set(self.policies_to_train())
        return {pid: self.policy_map[pid].learn_on_batch(b) for pid, b in batch.policy_batches.items()
                if pid in trainable}

    # -- the state a restarted actor is given ---------------------------------------------------------------
    def ping(self) -> str:
        return "pong"

    def apply(self, func: Callable, *args, **kwargs):
        return func(self, *args, **kwargs)

    def foreach_env(self, func: Callable) -> list:
        return self._stepper.foreach_env(func)

    def set_training_iteration(self, iteration: int) -> None:
        """The Algorithm's iteration in progress, named in this runner's video files."""
        self.training_iteration = iteration
        self._stepper.set_training_iteration(iteration)

    def get_metrics(self) -> dict[str, Any]:
        return self.metrics.reduce_for_merge()

    def stop(self) -> None:
        self._stepper.close()

    # -- sampling ----------------------------------------------------------------------------------------
    def sample(self, explore: bool | None = None, num_timesteps: int | None = None, num_episodes: int | None = None,
               force_reset: bool = False, **kwargs):
        """One fragment: `rollout_fragment_length` steps per sub-env (truncate_episodes), or at least that many
        steps of finished episodes (complete_episodes). A SampleBatch, or a MultiAgentBatch for several policies.

        As the RLModule EnvRunner (evaluation uses these): `num_episodes=n` steps until n episodes finished and
        returns only those (ongoing ones go on next time); `num_timesteps=n` steps n env steps (then cuts);
        `force_reset=True` drops the ongoing episodes and resets the envs first."""
        config = self.config
        explore = config.explore if explore is None else explore
        self._stepper.reward_clipping.use(config.clip_rewards)  # (reset_config may change it)
        with self._stepper.explaining_errors():  # (an observation that does not fit the space, named)
            if force_reset:
                self._stepper.guarded(self._restart_episodes)
            steps = 0
            step = partial(OneEnvNumpyStep.step, self) if OneEnvNumpyStep.applies(self) else self._step
            if num_episodes is not None:
                finished = self._num_finished
                while self._num_finished - finished < num_episodes:
                    steps += step(explore)
            else:
                target = num_timesteps if num_timesteps is not None else self.rollout_fragment_length() * self.num_envs
                complete = num_timesteps is None and config.batch_mode == "complete_episodes"
                while (sum(b.count for b in self._pending) if complete else steps) < target:
                    steps += step(explore)
                if not complete:
                    for i in range(self.num_envs):
                        self._cut(i)
        batches, self._pending = self._pending, []
        self._stats.on_steps(steps)
        samples = concat_samples(batches)
        if self.policy_id != DEFAULT_POLICY_ID:
            samples = MultiAgentBatch({self.policy_id: samples}, samples.count)
        for handler in self.callbacks.sample_end:
            handler(worker=self, env_runner=self, metrics_logger=self.metrics, samples=samples)
        return samples

    def _restart_episodes(self, seed: int | None = None) -> None:
        """Drop the ongoing episodes (their rows are not returned) and reset every sub-env."""
        observations, infos = self.env.reset(seed=seed)
        self._obs = self._preprocess(observations)
        self._infos = infos_per_env(infos, self.num_envs)
        self._episodes = [self._new_episode(i) for i in range(self.num_envs)]

    def rollout_fragment_length(self) -> int:
        length = self.config.rollout_fragment_length
        if length != "auto":
            return int(length)
        batch_size = self.config.train_batch_size
        return max(1, -(-batch_size // (max(self.num_workers, 1) * self.num_envs)))

    def _step(self, explore: bool) -> int:
        """One vector step of every sub-env; the env steps taken (0: a failed sub-env was recovered from)."""
        n, policy = self.num_envs, self.policy
        episodes = self._episodes
        if n == 1:  # one sub-env: a view, not np.stack's copy (the same values)
            states = [np.asarray(s)[None] for s in episodes[0].user_state]
            prev_actions = np.asarray(episodes[0].prev_action)[None]
        else:
            states = [np.stack([e.user_state[j] for e in episodes]) for j in range(len(episodes[0].user_state))]
            prev_actions = np.stack([e.prev_action for e in episodes])
        prev_rewards = np.array([e.prev_reward for e in episodes], dtype=np.float32)
        actions, state_out, extra = policy.compute_actions(
            self._obs, states, prev_action_batch=prev_actions, prev_reward_batch=prev_rewards,
            info_batch=self._infos, episodes=episodes, explore=explore, timestep=self.global_vars["timestep"])
        if len(state_out) != len(states):
            raise ValueError(f"{type(policy).__name__}.compute_actions returned {len(state_out)} state batches for "
                             f"{len(states)} state inputs; return one per get_initial_state() item.")
        space = self.env.single_action_space
        env_actions = batch_actions(space, actions if isinstance(actions, np.ndarray) else list(actions))
        if isinstance(space, gym.spaces.Box):
            env_actions = np.clip(env_actions, space.low, space.high)
        stepped = self._stepper.step(env_actions)
        if stepped is None:  # a sub-env failed: new envs and episodes (restart_failed_sub_environments)
            return 0
        next_obs, scores, terminateds, truncateds, infos = stepped
        rewards = self._stepper.reward_clipping.clipped(scores)  # the rows' (the episodes' returns: the scores)
        next_obs = self._preprocess(next_obs)
        infos_list = infos_per_env(infos, n)
        final_obs = self._final_observations(infos)
        for i, episode in enumerate(episodes):
            done = bool(terminateds[i] or truncateds[i])
            row = {SampleBatch.OBS: self._obs[i], SampleBatch.ACTIONS: actions[i],
                   SampleBatch.REWARDS: float(rewards[i]), SampleBatch.PREV_ACTIONS: episode.prev_action,
                   SampleBatch.PREV_REWARDS: episode.prev_reward,
                   SampleBatch.NEXT_OBS: final_obs[i] if done and final_obs is not None else next_obs[i],
                   SampleBatch.TERMINATEDS: bool(terminateds[i]), SampleBatch.TRUNCATEDS: bool(truncateds[i]),
                   SampleBatch.INFOS: infos_list[i]}
            for j in range(len(states)):
                row[f"state_in_{j}"] = episode.user_state[j]
                row[f"state_out_{j}"] = state_out[j][i]
            for key, values in extra.items():
                row[key] = values[i]
            episode.trajectory.add(row)
            episode.length += 1
            episode.add_step(SINGLE_AGENT_ID, self.policy_id, scores[i], infos_list[i])
            for handler in self.callbacks.episode_step:
                handler(**episode_kwargs(self, episode, i))
            if done:
                self._finish(i)
            else:
                episode.user_state = [s[i] for s in state_out]
                episode.prev_action, episode.prev_reward = actions[i], float(rewards[i])
        self._obs, self._infos = next_obs, infos_list
        self.global_vars["timestep"] += n
        return n

    def _final_observations(self, infos: dict):
        """The preprocessed (and filtered) final observations of the sub-envs whose episode ended (by index)."""
        final_obs = infos.get("final_obs")
        if final_obs is None:
            return None
        ended, space = infos["_final_obs"], self.env.single_observation_space
        if self.preprocessors[self.policy_id] is None and not self.filters:  # (as the batched observations)
            return {i: in_space_dtype(space, final_obs[i]) for i in range(self.num_envs) if ended[i]}
        return {i: self._preprocess([final_obs[i]])[0] for i in range(self.num_envs) if ended[i]}

    def _new_episode(self, i: int) -> PolicyEpisode:
        episode = PolicyEpisode(i, worker=self)
        episode.trajectory = Trajectory(episode.episode_id, 0, i, 0)
        episode.user_state = [np.asarray(s) for s in self.policy.get_initial_state()]
        episode.prev_action = np.zeros_like(np.asarray(self.env.single_action_space.sample()))
        episode.prev_reward = 0.0
        for handler in self.callbacks.episode_start:
            handler(**episode_kwargs(self, episode, i))
        return episode

    def _cut(self, i: int) -> None:
        """Postprocess what episode i collected so far (truncate_episodes); the episode goes on."""
        episode = self._episodes[i]
        if len(episode.trajectory):
            self._pending.append(self._postprocess(episode, episode.trajectory))

    def _finish(self, i: int) -> None:
        episode = self._episodes[i]
        self._pending.append(self._postprocess(episode, episode.trajectory))
        for handler in self.callbacks.episode_end:
            handler(**episode_kwargs(self, episode, i))
        self._stats.on_episode_done(episode)
        self._num_finished += 1
        self._episodes[i] = self._new_episode(i)

    def _postprocess(self, episode: PolicyEpisode, trajectory: Trajectory) -> SampleBatch:
        original = trajectory.to_batch(self._unroll_id)
        self._unroll_id += 1
        batch = self.policy.postprocess_trajectory(original.copy(shallow=True), {}, episode)
        if self.callbacks.wants_postprocess:
            self.callbacks.on_postprocess_trajectory(
                worker=self, episode=episode, agent_id=SINGLE_AGENT_ID, policy_id=self.policy_id,
                policies=self.policy_map, postprocessed_batch=batch,
                original_batches={SINGLE_AGENT_ID: (self.policy_id, self.policy, original)})
        return batch


__all__ = ["SINGLE_AGENT_ID", "PolicyRunner"]
