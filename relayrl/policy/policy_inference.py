"""`algo.compute_single_action` / `algo.compute_actions` for Policy-based algorithms: the local runner's Policy.

As RLlib's old stack: `policy_id` picks the policy, `explore=None` follows the config, prev_action /
prev_reward / info / episode reach the policy; with `state` or full_fetch=True the result is
(action, state_out, extra_fetches). Box actions are clipped to the action space, as the runner clips what
it sends to the env (clip_action=False leaves them). Observations are preprocessed as the runner preprocesses
the env's (relayrl/policy/preprocessors.py: Discrete one-hot, Dict / Tuple flattened), then filtered with the
local runner's observation filter without updating it (observation_filter="MeanStdFilter", as RLlib's
`filters[policy_id](obs, update=False)`).
"""
from typing import Any

import gymnasium as gym
import numpy as np

from relayrl.core.columns import DEFAULT_POLICY_ID


def _policy(algorithm, policy_id, module_id):
    """(the policy, observations (batched) -> what it gets: preprocessed, filtered without updating)."""
    pid = module_id or policy_id or DEFAULT_POLICY_ID
    runner = algorithm.env_runner_group.local_worker()
    policy = runner.get_policy(pid)
    if policy is None:
        raise ValueError(f"compute_single_action/compute_actions: unknown policy_id {pid!r}; this algorithm has "
                         f"{sorted(runner.policy_map)}.")
    preprocessor, obs_filter = runner.preprocessors.get(pid), runner.observation_filter(pid)

    def prepare(observations):
        obs = np.stack([np.asarray(o) for o in observations]) if preprocessor is None \
            else preprocessor.transform_batch(observations)
        return obs if obs_filter is None else obs_filter(obs, update=False)

    return policy, (None if preprocessor is None and obs_filter is None else prepare)


def _clip(policy, action, clip_action):
    space = policy.action_space
    if clip_action is False or not isinstance(space, gym.spaces.Box):
        return action
    return np.clip(action, space.low, space.high)


def policy_compute_single_action(algorithm, observation=None, state=None, *, prev_action=None, prev_reward=None,
                                 info=None, input_dict=None, policy_id=None, module_id=None, full_fetch=False,
                                 explore=None, timestep=None, episode=None, clip_action=None, **kwargs):
    policy, preprocessor = _policy(algorithm, policy_id, module_id)
    explore = algorithm.config.explore if explore is None else bool(explore)
    if preprocessor is not None and observation is not None:
        observation = preprocessor([observation])[0]
    action, state_out, extra = policy.compute_single_action(
        observation, state, prev_action=prev_action, prev_reward=prev_reward, info=info, input_dict=input_dict,
        episode=episode, explore=explore, timestep=timestep)
    action = _clip(policy, action, clip_action)
    if state is not None or full_fetch:
        return action, state_out, extra
    return action


def policy_compute_actions(algorithm, observations, state=None, *, prev_action=None, prev_reward=None, info=None,
                           policy_id=None, module_id=None, full_fetch=False, explore=None, timestep=None,
                           episodes=None, clip_actions=None, **kwargs) -> Any:
    """A dict {agent_id: obs} gives dicts keyed the same; a list / array of observations a stacked array."""
    policy, preprocessor = _policy(algorithm, policy_id, module_id)
    explore = algorithm.config.explore if explore is None else bool(explore)
    keys = list(observations) if isinstance(observations, dict) else None
    if preprocessor is not None:
        obs = preprocessor([observations[k] for k in keys] if keys is not None else list(observations))
    elif keys is not None:
        obs = np.stack([np.asarray(observations[k]) for k in keys])
    else:
        obs = np.asarray(observations)
    if keys is not None and state is not None:
        state = [np.stack([np.asarray(state[k][j]) for k in keys]) for j in range(len(state[keys[0]]))]
    actions, state_out, extra = policy.compute_actions(obs, state, prev_action_batch=prev_action,
                                                       prev_reward_batch=prev_reward, explore=explore,
                                                       timestep=timestep, episodes=episodes)
    actions = _clip(policy, np.asarray(actions), clip_actions)
    if keys is not None:
        actions = {k: actions[i] for i, k in enumerate(keys)}
        state_out = {k: [s[i] for s in state_out] for i, k in enumerate(keys)}
        extra = {k: {name: v[i] for name, v in extra.items()} for i, k in enumerate(keys)}
    if state is not None or full_fetch:
        return actions, state_out, extra
    return actions
