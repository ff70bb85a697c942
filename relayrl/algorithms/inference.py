"""Algorithm.compute_single_action / compute_actions (the `AlgorithmInference` mixin): one forward pass on the
local EnvRunner's pipelines.

Observations go through the runner's env-to-module pipeline (filters, frame stacking, flattening)
in throwaway one-step episodes, the module's forward_inference / forward_exploration, and the
module-to-env pipeline (exploration, unsquashing / clipping to the env's bounds). The runner's
ongoing episodes, its filter statistics and its metrics are left untouched.
"""
from contextlib import contextmanager
from typing import Any, List, Optional

import gymnasium as gym
import numpy as np
import torch

from relayrl.connectors.module_to_env.get_actions import EXPLORATION, TIMESTEP
from relayrl.connectors.module_to_env.normalize_and_clip_actions import NormalizeAndClipActions
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.core.tree import map_structure
from relayrl.episodes.single_agent_episode import SingleAgentEpisode
from relayrl.metrics.metrics_logger import MetricsLogger


def local_env_runner(algorithm, policy_id: Optional[str], module_id: Optional[str]):
    runner = algorithm.env_runner
    if runner is None and hasattr(algorithm, "inference_env_runner"):  # offline algorithms: built on first use
        runner = algorithm.inference_env_runner()
    if runner is None:
        raise ValueError("compute_single_action/compute_actions run on the local EnvRunner, and this algorithm has "
                         "none; build it with the default EnvRunnerGroup (local_env_runner=True).")
    module_id = module_id or policy_id or DEFAULT_MODULE_ID
    if module_id != DEFAULT_MODULE_ID and not getattr(runner, "MULTI_AGENT", False):
        raise ValueError(f"compute_single_action/compute_actions: unknown module_id {module_id!r}; this single-agent "
                         f"algorithm has only {DEFAULT_MODULE_ID!r}.")
    return runner


def _multi_agent_actions(runner, module_id, observations, state, *, infos, explore, timestep):
    """compute_actions_on_runner's result for a MultiAgentEnvRunner (multi_agent_inference.py)."""
    from relayrl.algorithms.multi_agent_inference import compute_multi_agent_actions

    if state is not None:
        raise ValueError("compute_single_action/compute_actions with a recurrent state is single-agent only; sample "
                         "with the multi-agent EnvRunner to carry each agent's state.")
    actions = compute_multi_agent_actions(runner, module_id, observations, explore=explore, infos=infos,
                                          timestep=timestep)
    return actions, [[] for _ in actions], [{} for _ in actions]


def compute_actions_on_runner(runner, observations: List[Any], *, states: Optional[List[Any]] = None,
                              infos: Optional[List[dict]] = None, explore: bool, timestep: Optional[int] = None,
                              unsquash_action: Optional[bool] = None, clip_action: Optional[bool] = None):
    """(env actions, state_outs, extra_fetches), one entry per observation, from ONE batched forward pass."""
    obs_space, act_space = runner.get_spaces()["__env_single__"]
    episodes = []
    for i, observation in enumerate(observations):
        _check_observation(observation, obs_space)
        episode = SingleAgentEpisode(observation_space=obs_space, action_space=act_space)
        episode.add_env_reset(observation, (infos[i] if infos else None) or {})
        episodes.append(episode)
    module, metrics = runner.module, MetricsLogger()  # a throwaway logger: inference is not sampling
    with _frozen_filters(runner._env_to_module), torch.inference_mode():
        batch = runner._env_to_module(rl_module=module, batch={}, episodes=episodes, explore=explore,
                                      shared_data={}, metrics=metrics)
        if states is not None and module.is_stateful():
            batch[Columns.STATE_IN] = _batched_states(states, module)
        out = module.forward_exploration(batch) if explore else module.forward_inference(batch)
        shared_data = {}
        if runner._use_exploration:
            timestep = runner.num_env_steps_sampled_lifetime if timestep is None else timestep
            runner.exploration.before_compute_actions(timestep=timestep, explore=explore)
            shared_data = {EXPLORATION: runner.exploration, TIMESTEP: timestep}
        with _action_transform(runner._module_to_env, unsquash_action, clip_action):
            to_env = runner._module_to_env(rl_module=module, batch=out, episodes=episodes, explore=explore,
                                           shared_data=shared_data, metrics=metrics)
    actions = to_env.pop(Columns.ACTIONS_FOR_ENV, None)
    if actions is None:
        actions = to_env.pop(Columns.ACTIONS)
    else:
        to_env.pop(Columns.ACTIONS, None)
    state_out = to_env.pop(Columns.STATE_OUT, None)
    if Columns.ACTION_LOGP in to_env and Columns.ACTION_PROB not in to_env:
        to_env[Columns.ACTION_PROB] = np.exp(np.asarray(to_env[Columns.ACTION_LOGP], np.float64))
    n = len(observations)
    return ([_row(actions, i) for i in range(n)],
            [_row(state_out, i) if state_out is not None else [] for i in range(n)],
            [{key: _row(value, i) for key, value in to_env.items()} for i in range(n)])


def _row(data, i: int):
    return map_structure(lambda x: _numpy(x[i]), data)


def _numpy(x):
    if isinstance(x, torch.Tensor):
        x = x.numpy()
    return x


def _check_observation(observation, space) -> None:
    if isinstance(space, gym.spaces.Box) and np.shape(observation) != space.shape:
        raise ValueError(f"Observation of shape {np.shape(observation)} does not fit the env's observation space "
                         f"{space} (shape {space.shape}); pass ONE observation to compute_single_action, or a "
                         "dict / list of them to compute_actions.")


def _batched_states(states: List[Any], module) -> Any:
    device = next(module.parameters(), torch.empty(0)).device  # the runner's module may run on a GPU

    def stack(*items):
        return torch.as_tensor(np.stack([np.asarray(x, np.float32) for x in items]), device=device)
    return map_structure(stack, *states) if len(states) > 1 else map_structure(lambda x: stack(x), states[0])


def _pieces(pipeline):
    for piece in getattr(pipeline, "connectors", ()):
        yield piece
        yield from _pieces(piece)


@contextmanager
def _frozen_filters(pipeline):
    """Pieces with running statistics (MeanStdFilter: `update_stats`) normalise without updating them."""
    frozen = [piece for piece in _pieces(pipeline) if getattr(piece, "update_stats", False) is True]
    for piece in frozen:
        piece.update_stats = False
    try:
        yield
    finally:
        for piece in frozen:
            piece.update_stats = True


@contextmanager
def _action_transform(pipeline, unsquash_action: Optional[bool], clip_action: Optional[bool]):
    """Per-call unsquash_action / clip_action overrides of config.normalize_actions / clip_actions."""
    pieces = [p for p in _pieces(pipeline) if isinstance(p, NormalizeAndClipActions)]
    saved = [(p.normalize_actions, p.clip_actions) for p in pieces]
    for piece in pieces:
        if unsquash_action is not None:
            piece.normalize_actions = bool(unsquash_action)
        if clip_action is not None:
            piece.clip_actions = bool(clip_action)
    try:
        yield
    finally:
        for piece, (normalize, clip) in zip(pieces, saved):
            piece.normalize_actions, piece.clip_actions = normalize, clip


def compute_single_action(algorithm, observation=None, state=None, *, info=None, input_dict=None, policy_id=None,
                          module_id=None, full_fetch=False, explore=None, timestep=None, unsquash_action=None,
                          clip_action=None):
    if input_dict is not None:
        observation = input_dict.get(Columns.OBS, observation)
        state = input_dict.get(Columns.STATE_IN, state)
    if observation is None:
        raise ValueError("compute_single_action needs an observation: compute_single_action(obs) or "
                         "compute_single_action(input_dict={'obs': obs}).")
    runner = local_env_runner(algorithm, policy_id, module_id)
    explore = algorithm.config.explore if explore is None else bool(explore)
    if getattr(runner, "MULTI_AGENT", False):
        actions, state_outs, extras = _multi_agent_actions(
            runner, module_id or policy_id, [observation], state, infos=None if info is None else [info],
            explore=explore, timestep=timestep)
    else:
        actions, state_outs, extras = compute_actions_on_runner(
            runner, [observation], states=None if state is None else [state], infos=None if info is None else [info],
            explore=explore, timestep=timestep, unsquash_action=unsquash_action, clip_action=clip_action)
    if state is not None or full_fetch:
        return actions[0], state_outs[0], extras[0]
    return actions[0]


def compute_actions(algorithm, observations, state=None, *, info=None, policy_id=None, module_id=None,
                    full_fetch=False, explore=None, timestep=None, unsquash_actions=None, clip_actions=None):
    """A dict {agent_id: obs} gives dicts keyed the same; a list / array of observations gives a stacked array."""
    runner = local_env_runner(algorithm, policy_id, module_id)
    explore = algorithm.config.explore if explore is None else bool(explore)
    keys = list(observations) if isinstance(observations, dict) else None
    obs_list = [observations[k] for k in keys] if keys is not None else list(observations)
    if not obs_list:
        raise ValueError("compute_actions got no observations.")
    states = [state[k] for k in keys] if keys is not None and state is not None else state
    infos = [info.get(k) for k in keys] if keys is not None and isinstance(info, dict) else info
    if getattr(runner, "MULTI_AGENT", False):
        actions, state_outs, extras = _multi_agent_actions(runner, module_id or policy_id, obs_list, state,
                                                           infos=infos, explore=explore, timestep=timestep)
    else:
        actions, state_outs, extras = compute_actions_on_runner(
            runner, obs_list, states=None if states is None else list(states), infos=infos, explore=explore,
            timestep=timestep, unsquash_action=unsquash_actions, clip_action=clip_actions)
    if keys is not None:
        actions_out: Any = dict(zip(keys, actions))
        states_out: Any = dict(zip(keys, state_outs))
        extras_out: Any = dict(zip(keys, extras))
    else:
        actions_out, states_out = np.stack([np.asarray(a) for a in actions]), state_outs
        extras_out = {key: np.stack([np.asarray(e[key]) for e in extras]) for key in extras[0]} if extras else {}
    if state is not None or full_fetch:
        return actions_out, states_out, extras_out
    return actions_out


__all__ = ["compute_single_action", "compute_actions", "compute_actions_on_runner"]


class AlgorithmInference:
    """RLlib's compute_single_action / compute_actions on an Algorithm (see docs/exploration.md)."""

    def compute_single_action(self, observation=None, state=None, *, prev_action=None, prev_reward=None, info=None,
                              input_dict=None, policy_id=DEFAULT_MODULE_ID, full_fetch=False, explore=None,
                              timestep=None, episode=None, unsquash_action=None, clip_action=None, module_id=None,
                              **kwargs):
        """The env action for one observation, computed by the local EnvRunner's pipelines and module.

        explore=None uses config.explore. With `state` (recurrent modules) or full_fetch=True, returns
        (action, state_out, extra_fetches). prev_action / prev_reward / episode are accepted and unused.
        """
        if getattr(self, "_policy_based", False):  # the Policy API (relayrl/policy/): the local runner's Policy
            from relayrl.policy.policy_inference import policy_compute_single_action

            return policy_compute_single_action(
                self, observation, state, prev_action=prev_action, prev_reward=prev_reward, info=info,
                input_dict=input_dict, policy_id=policy_id, module_id=module_id, full_fetch=full_fetch,
                explore=explore, timestep=timestep, episode=episode, clip_action=clip_action)
        return compute_single_action(self, observation, state, info=info, input_dict=input_dict, policy_id=policy_id,
                                     module_id=module_id, full_fetch=full_fetch, explore=explore, timestep=timestep,
                                     unsquash_action=unsquash_action, clip_action=clip_action)

    compute_action = compute_single_action  # RLlib 1.x's name (seeds 000, 003)

    def compute_actions(self, observations, state=None, *, prev_action=None, prev_reward=None, info=None,
                        policy_id=DEFAULT_MODULE_ID, full_fetch=False, explore=None, timestep=None, episodes=None,
                        unsquash_actions=None, clip_actions=None, module_id=None, **kwargs):
        """Actions for a dict {agent_id: obs} (a dict back) or a batch of observations (an array back),
        in one forward pass; with `state` or full_fetch=True: (actions, state_outs, extra_fetches)."""
        if getattr(self, "_policy_based", False):
            from relayrl.policy.policy_inference import policy_compute_actions

            return policy_compute_actions(
                self, observations, state, prev_action=prev_action, prev_reward=prev_reward, info=info,
                policy_id=policy_id, module_id=module_id, full_fetch=full_fetch, explore=explore, timestep=timestep,
                episodes=episodes, clip_actions=clip_actions)
        return compute_actions(self, observations, state, info=info, policy_id=policy_id, module_id=module_id,
                               full_fetch=full_fetch, explore=explore, timestep=timestep,
                               unsquash_actions=unsquash_actions, clip_actions=clip_actions)
