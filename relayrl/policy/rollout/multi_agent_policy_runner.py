"""`MultiAgentPolicyRunner`: a PolicyRunner for relayrl's MultiAgentEnv (seed 001 "Policies in Multi-Agent").

It steps `num_envs_per_env_runner` MultiAgentEnvs at once (the EnvStepper's MultiAgentVectorEnv, with the same
env checks, episode limits, failure recovery and reward clipping as every runner). Each agent is mapped to a
policy once per episode (`policy_mapping_fn(agent_id, episode, worker=...)`); per step, each policy computes
the actions of all its acting agents in every env in one call, on preprocessed observations (preprocessors.py).
As in RLlib, the agents' trajectories of an episode are postprocessed together, when the episode ends or
sample() cuts it, each with the others' batches as `other_agent_batches`. sample() returns a MultiAgentBatch
counting env steps.
"""
from typing import Any

import numpy as np

from relayrl.env.episode_stats import EpisodeStats
from relayrl.policy.policy_callbacks import episode_kwargs
from relayrl.policy.rollout.episode import PolicyEpisode
from relayrl.policy.rollout.policy_map import build_policy_map
from relayrl.policy.rollout.policy_runner import PolicyRunner
from relayrl.policy.rollout.trajectory import Trajectory
from relayrl.policy.sample_batch import MultiAgentBatch, SampleBatch, concat_samples


class _AgentSlot:
    """One agent in a running episode: its policy, trajectory, RNN state and previous action/reward."""

    def __init__(self, policy_id: str, policy, agent_index: int, episode: PolicyEpisode, space):
        self.policy_id, self.policy = policy_id, policy
        self.trajectory = Trajectory(episode.episode_id, agent_index, episode.env_id, 0)
        self.state = [np.asarray(s) for s in policy.get_initial_state()]
        self.prev_action = np.zeros_like(np.asarray(space.sample()))
        self.prev_reward = 0.0
        self.done = False


class PolicyReturnStats(EpisodeStats):
    """EpisodeStats plus each agent's and each policy's return per episode, under the MultiAgentEnvRunner's keys
    (`agent_episode_returns_mean/<agent_id>`, `module_episode_returns_mean/<policy_id>`)."""

    def on_episode_done(self, episode, score=None) -> None:
        super().on_episode_done(episode, score=score)
        log, window = self.metrics.log_value, self.window
        by_policy = {}
        for (agent_id, policy_id), ret in episode.agent_rewards.items():
            log(("agent_episode_returns_mean", str(agent_id)), ret, reduce="mean", window=window)
            by_policy[policy_id] = by_policy.get(policy_id, 0.0) + ret
        for policy_id, ret in by_policy.items():
            log(("module_episode_returns_mean", policy_id), ret, reduce="mean", window=window)


class MultiAgentPolicyRunner(PolicyRunner):
    MULTI_AGENT = True  # the stepper builds a MultiAgentVectorEnv

    def __init__(self, *, config, worker_index: int = 0, num_workers=None, recreated_worker: bool = False):
        self._seed = self._init_common(config, worker_index, num_workers, recreated_worker)
        self._stats = PolicyReturnStats(self.metrics, config.metrics_num_episodes_for_smoothing)
        first = self.env.envs[0]
        spaces = {a: (first.get_observation_space(a), first.get_action_space(a)) for a in self.env.possible_agents}
        self.policy_map, self.preprocessors = build_policy_map(self.POLICY_SPECS, config, spaces, seed=self._seed,
                                                               mapping_fn=self._map, callbacks=self.callbacks)
        self._unroll_id = 0
        self._pending: dict[str, list[SampleBatch]] = {}
        self._pending_steps = 0  # env steps of the finished episodes in _pending (complete_episodes)
        self._num_ended = 0  # episodes ended so far (sample(num_episodes=n) counts them)
        self._stepper.guarded(self._restart_episodes)

    def _map(self, agent_id, episode=None) -> str:
        if self.POLICY_MAPPING_FN is None:
            return super()._map(agent_id)
        return self.POLICY_MAPPING_FN(agent_id, episode, worker=self)

    def _restart_episodes(self, seed=None) -> None:
        """Drop the ongoing episodes and reset every env (the first reset with the runner's seed)."""
        observations, infos = self.env.reset(seed=self._seed)
        self._seed = None  # seed only the first reset; later episodes follow the envs' own generators
        self._obs, self._infos = observations, infos
        self._episodes = [self._new_episode(i) for i in range(self.num_envs)]
        self._slots: list[dict[Any, _AgentSlot]] = [{} for _ in range(self.num_envs)]
        if self._filtering:
            self._obs = [self._filtered(i, obs) for i, obs in enumerate(observations)]

    def _filtered(self, i: int, observations: dict) -> dict:
        """With an observation filter: env i's observations as each agent's policy gets them (preprocessed, then
        filtered), each pushed once as it arrives (observation_filters.py); mapped to policies now."""
        out = {}
        for agent, obs in observations.items():
            pid = self._slot(i, agent).policy_id
            preprocessor = self.preprocessors[pid]
            obs = np.asarray(obs)[None] if preprocessor is None else preprocessor.transform_batch([obs])
            out[agent] = self.observation_filter(pid)(obs)[0]
        return out

    def _new_episode(self, i: int) -> PolicyEpisode:
        episode = PolicyEpisode(i, worker=self)
        for handler in self.callbacks.episode_start:
            handler(**episode_kwargs(self, episode, i))
        return episode

    def _slot(self, i: int, agent_id) -> _AgentSlot:
        slots = self._slots[i]
        slot = slots.get(agent_id)
        if slot is None:
            pid = self._map(agent_id, self._episodes[i])
            slot = slots[agent_id] = _AgentSlot(pid, self.policy_map[pid], len(slots), self._episodes[i],
                                                self.env.envs[i].get_action_space(agent_id))
        return slot

    def _can_store_sampling(self) -> bool:
        return False  # a multi-agent runner's ongoing episodes are not checkpointed (its policies' states are)

    def sample(self, explore=None, num_timesteps=None, num_episodes=None, force_reset=False, **kwargs):
        """A fragment as PolicyRunner.sample: `rollout_fragment_length` steps per env (truncate_episodes), or at
        least that many env steps of finished episodes (complete_episodes); `num_episodes=n`: until n episodes
        ended (only those returned), `num_timesteps=n`: n env steps, then cut; `force_reset`: the ongoing
        episodes are dropped first."""
        explore = self.config.explore if explore is None else explore
        self._stepper.reward_clipping.use(self.config.clip_rewards)  # (reset_config may change it)
        if force_reset:
            self._stepper.guarded(self._restart_episodes)
        complete = num_timesteps is None and (num_episodes is not None or self.config.batch_mode == "complete_episodes")
        target = num_timesteps if num_timesteps is not None else self.rollout_fragment_length() * self.num_envs
        steps, ended = 0, self._num_ended
        while True:
            steps += self._step(explore)
            if num_episodes is not None:
                if self._num_ended - ended >= num_episodes:
                    break
            elif (self._pending_steps if complete else steps) >= target:
                break
        if not complete:
            for i in range(self.num_envs):
                self._postprocess_agents(i, [a for a, s in self._slots[i].items() if len(s.trajectory)])
        self._stats.on_steps(steps)
        pending, self._pending = self._pending, {}
        count = self._pending_steps if complete else steps
        self._pending_steps = 0
        samples = MultiAgentBatch({pid: concat_samples(b) for pid, b in pending.items()}, count)
        for handler in self.callbacks.sample_end:
            handler(worker=self, env_runner=self, metrics_logger=self.metrics, samples=samples)
        return samples

    def _step(self, explore: bool) -> int:
        """One step of every env: one compute_actions call per policy for its acting agents in all envs."""
        by_policy: dict[str, list] = {}
        for i, observations in enumerate(self._obs):
            for agent in observations:
                slot = self._slot(i, agent)
                if not slot.done:
                    by_policy.setdefault(slot.policy_id, []).append((i, agent))
        actions = [{} for _ in range(self.num_envs)]
        outputs = {}
        for pid, keys in by_policy.items():
            self._compute_actions(pid, keys, explore, actions, outputs)
        stepped = self._stepper.step(actions)
        if stepped is None:  # an env failed: new envs and episodes (restart_failed_sub_environments)
            return 0
        next_obs, scores, terminateds, truncateds, infos, resets = stepped
        rewards = self._stepper.reward_clipping.clipped(scores)  # the rows' (the episodes' returns: the scores)
        if self._filtering:
            next_obs = [self._filtered(i, obs) for i, obs in enumerate(next_obs)]
        for (i, agent), output in outputs.items():
            self._record(i, agent, output, next_obs[i], scores[i].get(agent, 0.0), float(rewards[i].get(agent, 0.0)),
                         terminateds[i], truncateds[i], infos[i])
        for i in range(self.num_envs):
            self._episodes[i].length += 1
            for handler in self.callbacks.episode_step:
                handler(**episode_kwargs(self, self._episodes[i], i))
            if resets[i] is None:
                self._obs[i], self._infos[i] = next_obs[i], infos[i]
            else:
                self._end_episode(i, *resets[i])
        self.global_vars["timestep"] += self.num_envs
        return self.num_envs

    def _compute_actions(self, pid: str, keys: list, explore: bool, actions: list, outputs: dict) -> None:
        """The actions of the (env index, agent) `keys` that policy `pid` acts for, into `actions`, and
        `outputs[(i, agent)]`: (action, state_out, extra outputs, the preprocessed observation)."""
        slots = [self._slots[i][agent] for i, agent in keys]
        observations = [self._obs[i][agent] for i, agent in keys]
        preprocessor = self.preprocessors[pid]
        if preprocessor is None or self._filtering:  # (filtered observations are preprocessed as they arrive)
            obs = np.stack(observations)
        else:
            obs = preprocessor.transform_batch(observations)
        states = [np.stack([s.state[j] for s in slots]) for j in range(len(slots[0].state))]
        acts, state_out, extra = self.policy_map[pid].compute_actions(
            obs, states, prev_action_batch=np.stack([s.prev_action for s in slots]),
            prev_reward_batch=np.array([s.prev_reward for s in slots], np.float32),
            info_batch=[self._infos[i].get(agent, {}) for i, agent in keys],
            episodes=[self._episodes[i] for i, _ in keys], explore=explore, timestep=self.global_vars["timestep"])
        for row, (i, agent) in enumerate(keys):
            actions[i][agent] = acts[row]
            outputs[(i, agent)] = (acts[row], [s[row] for s in state_out], {k: v[row] for k, v in extra.items()},
                                   obs[row])

    def _record(self, i, agent, output, next_obs, score, reward, terminateds, truncateds, infos):
        """One agent's row of one env step (`output`: _compute_actions')."""
        slot, (action, state_out, extra, obs) = self._slots[i][agent], output
        terminated = bool(terminateds.get(agent, terminateds.get("__all__", False)))
        all_done = bool(terminateds.get("__all__") or truncateds.get("__all__"))
        truncated = bool(truncateds.get(agent, truncateds.get("__all__", False))) and not terminated
        info = infos.get(agent, {})
        preprocessor = self.preprocessors[slot.policy_id]
        new_obs = next_obs.get(agent)
        if new_obs is None:
            new_obs = obs
        elif preprocessor is not None and not self._filtering:
            new_obs = preprocessor.transform(new_obs)
        row = {SampleBatch.OBS: obs, SampleBatch.ACTIONS: action, SampleBatch.REWARDS: reward,
               SampleBatch.PREV_ACTIONS: slot.prev_action, SampleBatch.PREV_REWARDS: slot.prev_reward,
               SampleBatch.NEXT_OBS: new_obs, SampleBatch.TERMINATEDS: terminated,
               SampleBatch.TRUNCATEDS: truncated or (all_done and not terminated), SampleBatch.INFOS: info,
               **{f"state_in_{j}": s for j, s in enumerate(slot.state)},
               **{f"state_out_{j}": s for j, s in enumerate(state_out)}, **extra}
        slot.trajectory.add(row)
        self._episodes[i].add_step(agent, slot.policy_id, score, info)
        slot.state, slot.prev_action, slot.prev_reward = state_out, action, reward
        if terminated or truncated:
            slot.done = True  # its rows wait for the episode's end or cut: agents are postprocessed together

    def _end_episode(self, i: int, observations: dict, infos: dict) -> None:
        """Env i's episode ended (and the env reset to `observations`): postprocess, report, start the next."""
        self._postprocess_agents(i, [a for a, s in self._slots[i].items() if len(s.trajectory)])
        episode = self._episodes[i]
        for handler in self.callbacks.episode_end:
            handler(**episode_kwargs(self, episode, i))
        self._stats.on_episode_done(episode)
        self._num_ended += 1
        self._pending_steps += episode.length
        self._obs[i], self._infos[i] = observations, infos
        self._episodes[i], self._slots[i] = self._new_episode(i), {}
        if self._filtering:
            self._obs[i] = self._filtered(i, observations)

    def _postprocess_agents(self, i: int, agents: list) -> None:
        originals = {}
        for agent in agents:
            slot = self._slots[i][agent]
            originals[agent] = (slot.policy_id, slot.policy, slot.trajectory.to_batch(self._unroll_id))
            self._unroll_id += 1
        for agent, (pid, policy, original) in originals.items():
            others = {a: v for a, v in originals.items() if a != agent}
            batch = policy.postprocess_trajectory(original.copy(shallow=True), others, self._episodes[i])
            if self.callbacks.wants_postprocess:
                self.callbacks.on_postprocess_trajectory(
                    worker=self, episode=self._episodes[i], agent_id=agent, policy_id=pid, policies=self.policy_map,
                    postprocessed_batch=batch, original_batches=originals)
            self._pending.setdefault(pid, []).append(batch)
