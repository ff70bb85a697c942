"""`MultiAgentEnvRunner`: steps several MultiAgentEnvs with a MultiRLModule, producing MultiAgentEpisodes.

The same construction, callbacks, failure recovery, metrics and checkpoint state as the single-agent
`EnvRunner`; what differs is the env (a `MultiAgentVectorEnv` of agent dicts), the episodes
(`MultiAgentEpisode`, each agent mapped to its module by `policy_mapping_fn`), the module (one
sub-module per policy) and the sampling plan (env/sampling/multi_agent_plan.py): one forward pass per
module per step for the agents about to act, in every env at once; agents that do not act (turn-based
games, finished agents) get no action.
"""
from typing import Any, Dict, Optional

from relayrl.connectors.common.agent_to_module_mapping import MEMORIZED_MAP_STRUCTURE
from relayrl.core.columns import Columns
from relayrl.core.devices import device_for
from relayrl.env.env_runner import EnvRunner
from relayrl.env.multi_agent_episode_stats import MultiAgentEpisodeStats
from relayrl.env.multi_agent_vector_env import MultiAgentVectorEnv
from relayrl.env.sampling import SampleAmount
from relayrl.env.sampling.multi_agent_plan import plan_multi_agent_sampling
from relayrl.env.unmapped_module_spaces import check_module_spaces, spaces_by_module
from relayrl.episodes.multi_agent_episode import MultiAgentEpisode
from relayrl.exploration.env_runner_exploration import build_env_runner_exploration


class MultiAgentEnvRunner(EnvRunner):
    """RLlib's MultiAgentEnvRunner: `sample()` returns `MultiAgentEpisode`s (finished ones and, in
    truncate_episodes mode, the cut chunks of ongoing ones)."""

    EPISODE_STATS = MultiAgentEpisodeStats
    MULTI_AGENT = True  # the stepper builds a MultiAgentVectorEnv

    def __init__(self, *, config, **kwargs):
        self._cached_map_structure: Dict[str, list] = {}  # which (episode, agent) each row of the cached batch is
        super().__init__(config=config, **kwargs)

    # -- construction ----------------------------------------------------------------------------
    def _set_env_spaces(self) -> None:
        old = getattr(self, "_spaces", {})
        agent_spaces = (self.env.single_observation_space, self.env.single_action_space)
        self._spaces = {"__env__": agent_spaces, "__env_single__": agent_spaces}
        self._spaces.update({k: v for k, v in old.items() if not k.startswith("__")})  # the modules' spaces stay

    def make_module(self) -> None:
        """The multi-agent pipelines and the MultiRLModule (a sub-module per policy) for the env's spaces."""
        config = self.config
        device = device_for("num_gpus_per_env_runner", config.num_gpus_per_env_runner)  # as EnvRunner.make_module
        self._env_to_module = config.build_env_to_module_connector(env=self.env, spaces=self._spaces,
                                                                   device=None if device.type == "cpu" else device)
        self._module_to_env = config.build_module_to_env_connector(env=self.env, spaces=self._spaces)
        self._spaces.update(spaces_by_module(self._env_to_module.observation_space, self._env_to_module.action_space,
                                             config.policies))
        spec = config.get_multi_rl_module_spec(spaces=self._spaces, inference_only=True)
        check_module_spaces(spec)
        self.module = spec.build().to(device)
        self.module.eval()
        self.exploration, self._use_exploration = ExplorationByModule(), False
        for module_id, sub_module in self.module.items():
            exploration, used, _ = build_env_runner_exploration(
                config, sub_module.action_space, model=sub_module, worker_index=self.worker_index,
                num_workers=self.num_workers)
            self.exploration[module_id] = exploration
            self._use_exploration = self._use_exploration or used
        self._exploration_on_episode_start = None

    # -- sampling ----------------------------------------------------------------------------------
    def _plan_sampling(self, explore: bool, random_actions: bool, num_timesteps: Optional[int], amount=None):
        return plan_multi_agent_sampling(self, explore=explore, random_actions=random_actions)

    def _sample_amount(self, num_timesteps, num_episodes, complete: bool) -> SampleAmount:
        return SampleAmount(num_timesteps=num_timesteps, num_episodes=num_episodes, complete=complete,
                            num_envs=self.num_envs, count_agent_steps=self.config.count_steps_by == "agent_steps")

    def _run(self, plan, amount: SampleAmount) -> int:
        """The multi-agent sampling loop: the plan's action source acts for every agent about to act (one {agent:
        action} dict per env), the envs step (and reset where an episode ended), its recorder records."""
        actions, recorder, explore = plan.actions, plan.recorder, plan.actions.explore
        env_steps = agent_steps = 0
        by_agents = self.config.count_steps_by == "agent_steps"
        clip_rewards, step = self._reward_clipping.use(self.config.clip_rewards), self._stepper.step
        while not amount.reached(agent_steps if by_agents else env_steps):
            to_env = actions(self.num_env_steps_sampled_lifetime + env_steps)
            stepped = step(to_env.get(Columns.ACTIONS_FOR_ENV, to_env[Columns.ACTIONS]))
            if stepped is None:  # a sub-env failed and the envs were recreated (restart_failed_sub_environments)
                recorder.drop_pending()
                actions.restart()
                clip_rewards = self._reward_clipping.use(self.config.clip_rewards)  # (the new envs')
                continue
            observations, rewards, *rest = stepped
            finished, acted = recorder.record(to_env, observations, clip_rewards(rewards), *rest)
            env_steps += self.num_envs
            agent_steps += acted
            if self._cb_step:
                for i, episode in enumerate(self._episodes):
                    self._episode_callbacks(self._cb_step, episode, i)
            if finished:
                self._end_episodes(finished, stepped[5].__getitem__, amount, explore)  # (the resets)
            actions.next_step(stepped)
        actions.finish(env_steps)
        recorder.finish()
        return env_steps

    @staticmethod
    def _handed_out(episode: MultiAgentEpisode) -> MultiAgentEpisode:
        """As EnvRunner's, and without the agents that have no step in it (nothing to train on)."""
        return episode.prune_empty_agents().to_numpy()

    @staticmethod
    def _starts(observations, infos):
        # (MultiAgentVectorEnv gives a list per env: the reset's, or the step's auto-resets by env index)
        return lambda i: (observations[i], infos[i])

    def _make_episode(self) -> MultiAgentEpisode:
        obs_space, act_space = self._spaces["__env_single__"]
        return MultiAgentEpisode(observation_space=obs_space, action_space=act_space,
                                 agent_to_module_mapping_fn=self.config.agent_to_module_mapping_fn)

    def _add_reset(self, episode: MultiAgentEpisode, observations, infos) -> None:
        episode.add_env_reset(observations=observations, infos=infos)

    def _env_to_module_call(self, episodes, explore, vector_observations=None):
        shared_data = {}
        batch = self._env_to_module(rl_module=self.module, batch={}, episodes=episodes, explore=explore,
                                    shared_data=shared_data, metrics=self.metrics)
        if episodes is self._episodes:
            self._cached_map_structure = shared_data.get(MEMORIZED_MAP_STRUCTURE, {})
        return batch

    # -- checkpoint state hooks (env_runner_state.py) ------------------------------------------------
    def _module_state_of(self, state):
        return state

    def _sampling_state(self) -> Dict[str, Any]:
        """Plus which (episode, agent) each row of the cached batch is: the first step after a restore sends
        the module's actions to those agents (without it, no agent would get one)."""
        state = super()._sampling_state()
        if state["ongoing"]:
            state["cached_map_structure"] = {mid: [list(key) for key in keys]
                                             for mid, keys in self._cached_map_structure.items()}
        return state

    def _set_sampling_state(self, state: Dict[str, Any]) -> None:
        super()._set_sampling_state(state)
        if not self._needs_reset:
            self._cached_map_structure = {mid: [tuple(key) for key in keys]
                                          for mid, keys in state.get("cached_map_structure", {}).items()}

    def _episode_to_state(self, episode: MultiAgentEpisode) -> Dict[str, Any]:
        state = episode.get_state()
        state["agent_episodes"] = [[aid, _without_spaces(s)] for aid, s in state["agent_episodes"]]
        return state

    def _episode_from_state(self, state: Dict[str, Any]) -> MultiAgentEpisode:
        obs_space, act_space = self._spaces["__env_single__"]
        return MultiAgentEpisode.from_state(state, observation_space=obs_space, action_space=act_space,
                                            agent_to_module_mapping_fn=self.config.agent_to_module_mapping_fn)

    def _is_sync(self) -> bool:
        return isinstance(self.env, MultiAgentVectorEnv)


class ExplorationByModule(dict):
    """{module_id: exploration}, checkpointed as one part: each module's exploration state (e.g. EpsilonGreedy's
    RNG) under its id, so a resumed multi-agent run explores exactly as the original."""

    def get_state(self) -> Dict[str, Any]:
        return {mid: e.get_state() for mid, e in self.items() if callable(getattr(e, "get_state", None))}

    def check_state(self, state: Dict[str, Any], where) -> None:
        from relayrl.checkpoints.state_checks import check_mapping

        for mid, module_state in check_mapping(state, where, known=list(self), owner="a MultiAgentEnvRunner").items():
            check = getattr(self[mid], "check_state", None)
            if check is not None:
                check(module_state, where / mid)

    def set_state(self, state: Dict[str, Any]) -> None:
        for mid, module_state in state.items():
            self[mid].set_state(module_state)


def _without_spaces(state: Dict[str, Any]) -> Dict[str, Any]:
    from relayrl.env.env_runner_state import _episode_state_without_spaces

    return _episode_state_without_spaces(state)
