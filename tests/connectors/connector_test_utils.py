"""Shared helpers for the connector tests: hand-made episodes and tiny RLModules with known outputs."""
import gymnasium as gym
import numpy as np
import torch
from torch import nn

from relayrl.core.columns import Columns
from relayrl.episodes.single_agent_episode import SingleAgentEpisode
from relayrl.modules.rl_module import RLModule, ValueFunctionAPI

OBS_SPACE = gym.spaces.Box(-100.0, 100.0, (2,), np.float32)
ACT_SPACE = gym.spaces.Discrete(3)


def o(*values) -> np.ndarray:
    return np.asarray(values, np.float32)


def make_episode(observations, actions, rewards, *, terminated=False, truncated=False, extra_model_outputs=None,
                 lookback=0, numpy=True, eid=None, obs_space=OBS_SPACE, act_space=ACT_SPACE):
    """An episode with the given data; the first `lookback` steps form the lookback buffer."""
    ep = SingleAgentEpisode(
        eid,
        observations=[np.asarray(x, obs_space.dtype) if isinstance(obs_space, gym.spaces.Box) else x
                      for x in observations],
        actions=list(actions),
        rewards=[float(r) for r in rewards],
        extra_model_outputs={k: list(v) for k, v in (extra_model_outputs or {}).items()},
        terminated=terminated,
        truncated=truncated,
        len_lookback_buffer=lookback,
        observation_space=obs_space,
        action_space=act_space,
    )
    return ep.to_numpy() if numpy else ep


def reset_episode(first_obs, eid=None, obs_space=OBS_SPACE, act_space=ACT_SPACE):
    """A list-based (ongoing) episode right after reset, as an EnvRunner holds it."""
    ep = SingleAgentEpisode(eid, observation_space=obs_space, action_space=act_space)
    is_box = isinstance(obs_space, gym.spaces.Box)
    ep.add_env_reset(np.asarray(first_obs, obs_space.dtype) if is_box else first_obs)
    return ep


class LinearValueModule(RLModule, ValueFunctionAPI):
    """V(obs) = obs[..., 0]; the policy logits are all zero (uniform). One dummy parameter."""

    def setup(self):
        self.dummy = nn.Parameter(torch.zeros(1))

    def _forward(self, batch, **kwargs):
        obs = batch[Columns.OBS]
        logits = torch.zeros(obs.shape[:-1] + (int(self.action_space.n),)) + 0.0 * self.dummy
        return {Columns.ACTION_DIST_INPUTS: logits}

    def compute_values(self, batch, embeddings=None):
        return batch[Columns.OBS][..., 0] + 0.0 * self.dummy


class StatefulLinearValueModule(LinearValueModule):
    """Same values, but stateful (so the time-dim / state pieces are active)."""

    def get_initial_state(self):
        return {"h": torch.zeros(2)}


def gae_reference(values, rewards, terminated, bootstrap_value, gamma, lambda_):
    """Plain per-episode GAE: returns (advantages, value_targets) for the real steps of one episode."""
    n = len(rewards)
    next_values = list(values[1:]) + [0.0 if terminated else bootstrap_value]
    advantages = [0.0] * n
    running = 0.0
    for t in reversed(range(n)):
        delta = rewards[t] + gamma * next_values[t] - values[t]
        running = delta + gamma * lambda_ * running
        advantages[t] = running
    return np.array(advantages), np.array(advantages) + np.array(values)
