"""`MultiAgentPolicyRunner`: a PolicyRunner for relayrl's MultiAgentEnv (seed 001 "Policies in Multi-Agent").

Each agent is mapped to a policy once per episode (`policy_mapping_fn(agent_id, episode, worker=...)`); per step,
each policy computes the actions of all its acting agents in one call. As in RLlib, the agents' trajectories are
postprocessed together, when the episode ends or sample() cuts it, each with the others' batches as
`other_agent_batches`. sample() returns a MultiAgentBatch counting env steps.
"""
from typing import Any

import numpy as np

from relayrl.env.env_context import EnvContext
from relayrl.env.multi_agent_env import MultiAgentEnv
from relayrl.env.registry import make_env_creator
from relayrl.policy.policy_callbacks import episode_kwargs
from relayrl.policy.rollout.episode import PolicyEpisode
from relayrl.policy.rollout.policy_map import build_policy_map
from relayrl.policy.rollout.policy_runner import PolicyRunner
from relayrl.policy.rollout.trajectory import Trajectory
from relayrl.policy.sample_batch import MultiAgentBatch, SampleBatch, concat_samples


def make_env(config, worker_index: int, num_workers: int):
    return make_env_creator(config.env)(EnvContext(config.env_config, worker_index, 0, num_workers))


class _AgentSlot:
    """One agent in the running episode: its policy, trajectory, RNN state and previous action/reward."""

    def __init__(self, agent_id, policy_id: str, policy, agent_index: int, eps_id: int, space):
        self.policy_id, self.policy = policy_id, policy
        self.trajectory = Trajectory(eps_id, agent_index, 0, 0)
        self.state = [np.asarray(s) for s in policy.get_initial_state()]
        self.prev_action = np.zeros_like(np.asarray(space.sample()))
        self.prev_reward = 0.0
        self.done = False


class MultiAgentPolicyRunner(PolicyRunner):
    def __init__(self, *, config, worker_index: int = 0, num_workers=None, recreated_worker: bool = False):
        self._seed = self._init_common(config, worker_index, num_workers, recreated_worker)
        self.env = make_env(config, worker_index, self.num_workers)
        if not isinstance(self.env, MultiAgentEnv):
            raise TypeError(f"{type(self.env).__name__} is not a MultiAgentEnv.")
        self.num_envs = 1
        agents = list(getattr(self.env, "possible_agents", None) or self.env.get_agent_ids())
        spaces = {a: (self.env.get_observation_space(a), self.env.get_action_space(a)) for a in agents}
        self.policy_map = build_policy_map(self.POLICY_SPECS, config, spaces, seed=self._seed,
                                           mapping_fn=self._map, callbacks=self.callbacks)
        self._unroll_id = 0
        self._pending: dict[str, list[SampleBatch]] = {}
        self._reset()

    def _map(self, agent_id, episode=None) -> str:
        if self.POLICY_MAPPING_FN is None:
            return super()._map(agent_id)
        return self.POLICY_MAPPING_FN(agent_id, episode, worker=self)

    def _reset(self) -> None:
        self._obs, infos = self.env.reset(seed=self._seed)
        self._seed = None  # seed only the first reset; later episodes follow the env's own generator
        self._infos = infos
        self._episode = PolicyEpisode(0, worker=self)
        self._slots: dict[Any, _AgentSlot] = {}
        for handler in self.callbacks.episode_start:
            handler(**episode_kwargs(self, self._episode, 0))

    def _slot(self, agent_id) -> _AgentSlot:
        slot = self._slots.get(agent_id)
        if slot is None:
            pid = self._map(agent_id, self._episode)
            slot = self._slots[agent_id] = _AgentSlot(agent_id, pid, self.policy_map[pid], len(self._slots),
                                                     self._episode.episode_id, self.env.get_action_space(agent_id))
        return slot

    def sample(self, explore=None, num_timesteps=None, num_episodes=None, force_reset=False, **kwargs):
        """A fragment as PolicyRunner.sample; `num_episodes=n`: until n episodes ended (only those returned),
        `num_timesteps=n`: n env steps, then cut; `force_reset`: the ongoing episode is dropped first."""
        explore = self.config.explore if explore is None else explore
        if force_reset:
            self._reset()
        target = self.rollout_fragment_length() if num_timesteps is None else num_timesteps
        complete = num_timesteps is None and (num_episodes is not None or self.config.batch_mode == "complete_episodes")
        steps = ended = 0
        while True:
            episode_over = self._step(explore)
            steps += 1
            if episode_over:
                self._end_episode()
                ended += 1
            if num_episodes is not None:
                if ended >= num_episodes:
                    break
            elif steps >= target and (not complete or episode_over):
                break
        if not complete:
            self._postprocess_agents([a for a, s in self._slots.items() if len(s.trajectory)])
        self._stats.on_steps(steps)
        pending, self._pending = self._pending, {}
        samples = MultiAgentBatch({pid: concat_samples(b) for pid, b in pending.items()}, steps)
        for handler in self.callbacks.sample_end:
            handler(worker=self, env_runner=self, metrics_logger=self.metrics, samples=samples)
        return samples

    def _step(self, explore: bool) -> bool:
        acting = [a for a in self._obs if not self._slot(a).done]
        by_policy: dict[str, list] = {}
        for agent in acting:
            by_policy.setdefault(self._slots[agent].policy_id, []).append(agent)
        actions, outputs = {}, {}
        for pid, agents in by_policy.items():
            slots = [self._slots[a] for a in agents]
            states = [np.stack([s.state[j] for s in slots]) for j in range(len(slots[0].state))]
            acts, state_out, extra = self.policy_map[pid].compute_actions(
                np.stack([self._obs[a] for a in agents]), states,
                prev_action_batch=np.stack([s.prev_action for s in slots]),
                prev_reward_batch=np.array([s.prev_reward for s in slots], np.float32),
                info_batch=[self._infos.get(a, {}) for a in agents], episodes=[self._episode] * len(agents),
                explore=explore, timestep=self.global_vars["timestep"])
            for i, agent in enumerate(agents):
                actions[agent] = acts[i]
                outputs[agent] = ([s[i] for s in state_out], {k: v[i] for k, v in extra.items()})
        next_obs, rewards, terminateds, truncateds, infos = self.env.step(actions)
        all_done = bool(terminateds.get("__all__") or truncateds.get("__all__"))
        for agent in acting:
            slot = self._slots[agent]
            state_out, extra = outputs[agent]
            terminated = bool(terminateds.get(agent, terminateds.get("__all__", False)))
            truncated = bool(truncateds.get(agent, truncateds.get("__all__", False))) and not terminated
            reward, info = float(rewards.get(agent, 0.0)), infos.get(agent, {})
            row = {SampleBatch.OBS: self._obs[agent], SampleBatch.ACTIONS: actions[agent], SampleBatch.REWARDS: reward,
                   SampleBatch.PREV_ACTIONS: slot.prev_action, SampleBatch.PREV_REWARDS: slot.prev_reward,
                   SampleBatch.NEXT_OBS: next_obs.get(agent, self._obs[agent]), SampleBatch.TERMINATEDS: terminated,
                   SampleBatch.TRUNCATEDS: truncated or (all_done and not terminated), SampleBatch.INFOS: info,
                   **{f"state_in_{j}": s for j, s in enumerate(slot.state)},
                   **{f"state_out_{j}": s for j, s in enumerate(state_out)}, **extra}
            slot.trajectory.add(row)
            self._episode.add_step(agent, slot.policy_id, reward, info)
            slot.state, slot.prev_action, slot.prev_reward = state_out, actions[agent], reward
            if terminated or truncated:
                slot.done = True  # its rows wait for the episode's end or cut: agents are postprocessed together
        self._episode.length += 1
        for handler in self.callbacks.episode_step:
            handler(**episode_kwargs(self, self._episode, 0))
        self._obs, self._infos = next_obs, infos
        self.global_vars["timestep"] += 1
        return all_done

    def _end_episode(self) -> None:
        self._postprocess_agents([a for a, s in self._slots.items() if len(s.trajectory)])
        for handler in self.callbacks.episode_end:
            handler(**episode_kwargs(self, self._episode, 0))
        self._stats.on_episode_done(self._episode)
        self._reset()

    def _postprocess_agents(self, agents: list) -> None:
        originals = {}
        for agent in agents:
            slot = self._slots[agent]
            originals[agent] = (slot.policy_id, slot.policy, slot.trajectory.to_batch(self._unroll_id))
            self._unroll_id += 1
        for agent, (pid, policy, original) in originals.items():
            others = {a: v for a, v in originals.items() if a != agent}
            batch = policy.postprocess_trajectory(original.copy(shallow=True), others, self._episode)
            if self.callbacks.wants_postprocess:
                self.callbacks.on_postprocess_trajectory(
                    worker=self, episode=self._episode, agent_id=agent, policy_id=pid, policies=self.policy_map,
                    postprocessed_batch=batch, original_batches=originals)
            self._pending.setdefault(pid, []).append(batch)

    def foreach_env(self, func) -> list:
        return [func(self.env)]

    def stop(self) -> None:
        self.env.close()
