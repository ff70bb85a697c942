"""PettingZoo envs as MultiAgentEnvs (RLlib's `PettingZooEnv` and `ParallelPettingZooEnv`).

    from pettingzoo.classic import tictactoe_v3
    from pettingzoo.classic import rps_v2
    PettingZooEnv(tictactoe_v3.env())            # AEC: turn-based, one agent acts per step
    ParallelPettingZooEnv(rps_v2.parallel_env())  # parallel: every live agent acts each step

AEC envs: an env step is the current agent's move; the observation returned is the next agent's
(agents that are done on the way are stepped with None, their final observation, cumulative reward and
flags returned). An agent's reward is what it collected since its previous move (PettingZoo's
cumulative reward at its turn), so the rewards others' moves give it are not lost.
"""
from typing import Any, Dict, Optional

import gymnasium as gym

from relayrl.env.multi_agent_env import MultiAgentEnv


def _require_pettingzoo_api(env, methods, kind: str) -> None:
    missing = [m for m in methods if not hasattr(env, m)]
    if missing:
        expected = "AECEnv (e.g. tictactoe_v3.env())" if kind == "PettingZooEnv" else \
            "ParallelEnv (e.g. rps_v2.parallel_env())"
        raise TypeError(f"{type(env).__name__} lacks {missing}: {kind} expects a PettingZoo {expected}.")


def _take_agents_and_spaces(wrapper: MultiAgentEnv, env) -> None:
    """The PettingZoo env's agents and per-agent spaces, as MultiAgentEnv attributes of `wrapper`."""
    wrapper.possible_agents = list(env.possible_agents)
    wrapper.agents = list(env.possible_agents)
    wrapper.observation_spaces = {aid: env.observation_space(aid) for aid in wrapper.possible_agents}
    wrapper.action_spaces = {aid: env.action_space(aid) for aid in wrapper.possible_agents}
    wrapper.observation_space = gym.spaces.Dict(wrapper.observation_spaces)
    wrapper.action_space = gym.spaces.Dict(wrapper.action_spaces)
    MultiAgentEnv.__init__(wrapper)


class PettingZooEnv(MultiAgentEnv):
    """A PettingZoo AEC env (turn-based) as a MultiAgentEnv."""

    def __init__(self, env):
        _require_pettingzoo_api(env, ("last", "observe", "observation_space"), "PettingZooEnv")
        self.env = env
        _take_agents_and_spaces(self, env)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        self.env.reset(seed=seed, options=options)
        self.agents = list(self.env.agents)
        agent = self.env.agent_selection
        return {agent: self.env.observe(agent)}, {agent: dict(self.env.infos.get(agent, {}))}

    def step(self, action_dict: Dict[Any, Any]):
        agent = self.env.agent_selection
        if agent not in action_dict:
            raise ValueError(f"PettingZooEnv.step() got actions for {list(action_dict)}, but it is the turn of "
                             f"agent {agent!r}: a turn-based env takes the action of the agent it last returned an "
                             "observation for.")
        self.env.step(action_dict[agent])
        observations, rewards, terminateds, truncateds, infos = {}, {}, {}, {}, {}
        while self.env.agents:
            observation, reward, terminated, truncated, info = self.env.last()
            current = self.env.agent_selection
            observations[current], rewards[current] = observation, float(reward)
            terminateds[current], truncateds[current], infos[current] = bool(terminated), bool(truncated), info
            if not (terminated or truncated):
                break
            self.env.step(None)  # a done agent leaves the env
        self.agents = list(self.env.agents)
        finished = not self.env.agents
        terminateds["__all__"] = finished and all(v for k, v in terminateds.items())
        truncateds["__all__"] = finished and not terminateds["__all__"]
        return observations, rewards, terminateds, truncateds, infos

    def close(self) -> None:
        self.env.close()

    def render(self):
        return self.env.render()


class ParallelPettingZooEnv(MultiAgentEnv):
    """A PettingZoo ParallelEnv (every live agent acts each step) as a MultiAgentEnv."""

    def __init__(self, env):
        _require_pettingzoo_api(env, ("possible_agents", "observation_space", "action_space", "step"),
                                "ParallelPettingZooEnv")
        self.par_env = env
        _take_agents_and_spaces(self, env)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        observations, infos = self.par_env.reset(seed=seed, options=options)
        self.agents = list(self.par_env.agents)
        return observations, infos or {}

    def step(self, action_dict: Dict[Any, Any]):
        observations, rewards, terminateds, truncateds, infos = self.par_env.step(action_dict)
        terminateds, truncateds = dict(terminateds), dict(truncateds)
        rewards = {aid: float(r) for aid, r in rewards.items()}
        self.agents = list(self.par_env.agents)
        done = {aid for aid in terminateds if terminateds[aid] or truncateds.get(aid, False)}
        finished = not self.agents or done >= set(observations)
        terminateds["__all__"] = finished and all(terminateds.values())
        truncateds["__all__"] = finished and not terminateds["__all__"]
        return observations, rewards, terminateds, truncateds, infos

    def close(self) -> None:
        self.par_env.close()

    def render(self):
        return self.par_env.render()


__all__ = ["PettingZooEnv", "ParallelPettingZooEnv"]
