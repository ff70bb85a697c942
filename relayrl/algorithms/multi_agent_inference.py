"""compute_single_action / compute_actions on a multi-agent RLModule algorithm: the module `policy_id` (or
`module_id`) computes the actions for observations of an agent it acts for.

The observations go through the local MultiAgentEnvRunner's pipelines (so FlattenObservations, filters, ...
treat them as in sampling) in throwaway one-step MultiAgentEpisodes of one agent mapped to that module: the
first of the env's agents that `policy_mapping_fn` maps to it (its observation space decides how the
connectors read the observation), else the first agent. The runner's episodes, filter statistics and metrics
are left untouched.
"""
from typing import Any, List, Optional

import gymnasium as gym
import numpy as np
import torch

from relayrl.connectors.module_to_env.get_actions import EXPLORATION, TIMESTEP
from relayrl.core.columns import Columns
from relayrl.episodes.multi_agent_episode import MultiAgentEpisode
from relayrl.metrics.metrics_logger import MetricsLogger


def compute_multi_agent_actions(runner, module_id: str, observations: List[Any], *, explore: bool,
                                infos: Optional[List[dict]] = None, timestep: Optional[int] = None) -> List[Any]:
    """The env actions for `observations` (each one agent's), one forward pass of module `module_id`."""
    from relayrl.algorithms.inference import _frozen_filters

    if module_id not in runner.module:
        raise ValueError(f"compute_single_action/compute_actions: unknown policy_id/module_id {module_id!r}; this "
                         f"multi-agent algorithm has {sorted(runner.module.keys())}.")
    agent_id, maps_to_module = _agent_for(runner, module_id)
    obs_space, act_space = runner.get_spaces()["__env_single__"]
    if maps_to_module:  # (a policy no agent maps to may have spaces of its own: PolicySpec)
        _check_shapes(observations, obs_space, agent_id, module_id)
    episodes = []
    for i, observation in enumerate(observations):
        episode = MultiAgentEpisode(observation_space=obs_space, action_space=act_space,
                                    agent_to_module_mapping_fn=lambda agent, episode: module_id)
        episode.add_env_reset(observations={agent_id: observation},
                              infos={agent_id: (infos[i] if infos else None) or {}})
        episodes.append(episode)
    shared_data, metrics = {}, MetricsLogger()  # (one dict: the module-to-env pipeline unmaps what was mapped)
    with _frozen_filters(runner._env_to_module), torch.inference_mode():
        batch = runner._env_to_module(rl_module=runner.module, batch={}, episodes=episodes, explore=explore,
                                      shared_data=shared_data, metrics=metrics)
        out = runner.module.forward_exploration(batch) if explore else runner.module.forward_inference(batch)
        if runner._use_exploration:
            timestep = runner.num_env_steps_sampled_lifetime if timestep is None else timestep
            runner.exploration[module_id].before_compute_actions(timestep=timestep, explore=explore)
            shared_data.update({EXPLORATION: runner.exploration, TIMESTEP: timestep})
        to_env = runner._module_to_env(rl_module=runner.module, batch=out, episodes=episodes, explore=explore,
                                       shared_data=shared_data, metrics=metrics)
    actions = to_env.get(Columns.ACTIONS_FOR_ENV, to_env[Columns.ACTIONS])  # one {agent_id: action} per episode
    return [by_agent[agent_id] for by_agent in actions]


def _check_shapes(observations, obs_space, agent_id, module_id: str) -> None:
    """A Box observation of another shape would fail deep in the module (`mat1 and mat2 shapes cannot be
    multiplied`): name the policy, the agent whose space it reads and the shape it takes."""
    space = obs_space.spaces.get(agent_id) if isinstance(obs_space, gym.spaces.Dict) else None
    if not isinstance(space, gym.spaces.Box):
        return
    for observation in observations:
        if np.shape(observation) != space.shape:
            raise ValueError(f"compute_single_action/compute_actions: policy {module_id!r} acts for agent "
                             f"{agent_id!r}, whose observations have shape {space.shape}; got shape "
                             f"{np.shape(observation)}. Pass that agent's observation, or the policy_id of the agent "
                             "the observation belongs to.")


def _agent_for(runner, module_id: str):
    from relayrl.connectors.common.agent_to_module_mapping import module_of_agent_before_sampling

    agents = list(runner.env.possible_agents)
    mapping_fn = runner.config.policy_mapping_fn
    for agent_id in agents:
        try:
            if mapping_fn is not None and module_of_agent_before_sampling(mapping_fn, agent_id) == module_id:
                return agent_id, True
        except Exception:  # a mapping function that needs a stepped episode: fall back to the first agent
            break
    return agents[0], False


__all__ = ["compute_multi_agent_actions"]
