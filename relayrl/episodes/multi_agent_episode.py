"""MultiAgentEpisode: one multi-agent env episode (chunk), a `SingleAgentEpisode` per agent.

Env time and agent time differ: an env step moves every agent's clock only if the agent got an
observation. `env_t_to_agent_t[agent_id]` maps each env step of the chunk (0 = its first
observation) to the agent's step index in its own episode chunk, or `"S"` (`SKIP_ENV_TS_TAG`) where
the agent did not step.

Turn-based semantics (RLlib's): the agents to act next are those with an observation at the last env
step (`get_agents_to_act()`, done agents left out). An agent that acted but got no observation in the
same env step keeps its action "hanging" (with its extra model outputs and the rewards it collects
meanwhile) until its next observation, which completes its step. Rewards before an agent's first
observation count only in `get_return(include_hanging_rewards=True)`. An agent that terminates
without a final observation repeats its last one; one that acted and is then truncated without a
final observation is an error (its value bootstrap would have nothing to read), as is any data for an
agent after it is done.
"""
from __future__ import annotations

import copy
import os
import time
from typing import Any, Callable, Dict, List, Optional

import gymnasium as gym

from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.episodes.infinite_lookback_buffer import InfiniteLookbackBuffer
from relayrl.episodes.single_agent_episode import SingleAgentEpisode

SKIP_ENV_TS_TAG = "S"
_MISSING = object()


class MultiAgentEnvError(Exception):
    """A multi-agent env broke the MultiAgentEnv contract (the message names the agent and the env step)."""


def default_agent_to_module_mapping_fn(agent_id, episode, **kwargs) -> str:
    """RLlib's default: every agent maps to `default_policy`."""
    return DEFAULT_MODULE_ID


class MultiAgentEpisode:
    """RLlib's `MultiAgentEpisode` API: `add_env_reset` / `add_env_step` with dicts by agent id, getters by
    env step or agent step, `cut`, `to_numpy`, `get_return`, `module_for`, `get_state` / `from_state`.

    Observations etc. passed to the constructor (lists of dicts by agent id, one per env step) are replayed
    as this chunk's own steps.
    """

    def __init__(self, id_: Optional[str] = None, *, observations: Optional[List[dict]] = None,
                 observation_space: Optional[gym.Space] = None, infos: Optional[List[dict]] = None,
                 actions: Optional[List[dict]] = None, action_space: Optional[gym.Space] = None,
                 rewards: Optional[List[dict]] = None, terminateds=False, truncateds=False,
                 extra_model_outputs: Optional[List[dict]] = None, env_t_started: Optional[int] = None,
                 agent_t_started: Optional[dict] = None, len_lookback_buffer="auto",
                 agent_episode_ids: Optional[dict] = None, agent_module_ids: Optional[dict] = None,
                 agent_to_module_mapping_fn: Optional[Callable] = None):
        self.id_ = os.urandom(16).hex() if id_ is None else id_
        self.observation_space = observation_space
        self.action_space = action_space
        self.agent_to_module_mapping_fn = agent_to_module_mapping_fn or default_agent_to_module_mapping_fn
        self._agent_to_module_mapping: Dict[Any, str] = dict(agent_module_ids or {})
        self._agent_episode_ids: Dict[Any, str] = dict(agent_episode_ids or {})
        self._agent_t_started: Dict[Any, int] = dict(agent_t_started or {})
        self.agent_episodes: Dict[Any, SingleAgentEpisode] = {}
        self.env_t_to_agent_t: Dict[Any, InfiniteLookbackBuffer] = {}
        self.env_t_started = env_t_started or 0
        self.env_t = self.env_t_started
        self.is_terminated = False
        self.is_truncated = False
        self._last_agents: List[Any] = []  # agents with an observation at the latest env step
        self._hanging_actions_end: Dict[Any, Any] = {}
        self._hanging_extra_model_outputs_end: Dict[Any, dict] = {}
        self._hanging_rewards_end: Dict[Any, float] = {}
        self._hanging_rewards_begin: Dict[Any, float] = {}
        self._custom_data: Dict[str, Any] = {}
        self._custom_metrics: Dict[str, float] = {}
        self._start_time = time.perf_counter()
        self._last_step_time: Optional[float] = None
        if observations:
            self._replay(observations, infos, actions, rewards, terminateds, truncateds, extra_model_outputs)

    def _replay(self, observations, infos, actions, rewards, terminateds, truncateds, extra_model_outputs) -> None:
        infos = infos or [{} for _ in observations]
        self.add_env_reset(observations=observations[0], infos=infos[0])
        for t in range(1, len(observations)):
            last = t == len(observations) - 1
            self.add_env_step(observations[t], (actions or [])[t - 1], (rewards or [])[t - 1], infos[t],
                              terminateds=_flags(terminateds, last), truncateds=_flags(truncateds, last),
                              extra_model_outputs=(extra_model_outputs or [None] * t)[t - 1])

    # ---- properties ------------------------------------------------------------------------------
    @property
    def agent_ids(self) -> List[Any]:
        return list(self.agent_episodes)

    @property
    def custom_data(self) -> Dict[str, Any]:
        return self._custom_data

    @property
    def user_data(self) -> Dict[str, Any]:
        return self._custom_data

    @property
    def custom_metrics(self) -> Dict[str, float]:
        return self._custom_metrics

    @property
    def is_reset(self) -> bool:
        return bool(self.agent_episodes) or bool(self._last_agents)

    @property
    def is_done(self) -> bool:
        return self.is_terminated or self.is_truncated

    @property
    def is_numpy(self) -> bool:
        return bool(self.agent_episodes) and all(e.is_numpy for e in self.agent_episodes.values())

    def __len__(self) -> int:
        return self.env_t - self.env_t_started

    def env_steps(self) -> int:
        return len(self)

    def agent_steps(self) -> int:
        return sum(len(e) for e in self.agent_episodes.values())

    def get_return(self, include_hanging_rewards: bool = False) -> float:
        total = sum(e.get_return() for e in self.agent_episodes.values())
        if include_hanging_rewards:
            total += sum(self._hanging_rewards_begin.values()) + sum(self._hanging_rewards_end.values())
        return float(total)

    def get_duration_s(self) -> float:
        end = self._last_step_time if (self.is_done and self._last_step_time is not None) else time.perf_counter()
        return end - self._start_time

    def module_for(self, agent_id) -> str:
        """The module id `agent_to_module_mapping_fn(agent_id, episode)` gives (called once per agent, then cached)."""
        module_id = self._agent_to_module_mapping.get(agent_id, _MISSING)
        if module_id is _MISSING:
            module_id = self._agent_to_module_mapping[agent_id] = self.agent_to_module_mapping_fn(agent_id, self)
        return module_id

    # Both return the ids as a set-like view in the env's order (set operations work; iterating it gives the
    # same order in every process, which a set of strings would not: seeded runs repeat).
    def get_agents_to_act(self):
        """Agents with an observation at the latest env step that are not done: they act next."""
        episodes = self.agent_episodes
        return dict.fromkeys(aid for aid in self._last_agents if aid in episodes and not episodes[aid].is_done).keys()

    def get_agents_that_stepped(self):
        """Agents with an observation at the latest env step (done agents included)."""
        return dict.fromkeys(self._last_agents).keys()

    def __repr__(self) -> str:
        returns = {a: e.get_return() for a, e in self.agent_episodes.items()}
        return (f"MAEps(len={len(self)} done={self.is_done} Rs={returns} "
                f"id_={self.id_})")

    # ---- collecting ------------------------------------------------------------------------------
    def add_env_reset(self, *, observations: Dict[Any, Any], infos: Optional[Dict[Any, dict]] = None) -> None:
        if self.is_reset:
            raise AssertionError(f"MultiAgentEpisode {self.id_} has already been reset.")
        infos = infos or {}
        for agent_id, observation in observations.items():
            self._new_agent(agent_id, observation, infos.get(agent_id), env_index=0)
        self._last_agents = list(observations)
        self._start_time = time.perf_counter()

    def add_env_step(self, observations: Dict[Any, Any], actions: Dict[Any, Any], rewards: Dict[Any, float],
                     infos: Optional[Dict[Any, dict]] = None, *, terminateds: Optional[dict] = None,
                     truncateds: Optional[dict] = None, extra_model_outputs: Optional[Dict[Any, dict]] = None) -> None:
        """One env step: `actions` are what the agents sent, the rest what the env returned (dicts by agent
        id, `terminateds` / `truncateds` with "__all__")."""
        if self.is_done:
            raise MultiAgentEnvError(f"MultiAgentEpisode {self.id_} is done; it takes no more env steps.")
        infos, terminateds, truncateds = infos or {}, terminateds or {}, truncateds or {}
        extra_model_outputs = extra_model_outputs or {}
        self.env_t += 1
        index = self.env_t - self.env_t_started
        stepped = {}
        # Agents already done: data for them is an error (one set per step, not a lookup per agent and dict).
        done = [agent_id for agent_id, episode in self.agent_episodes.items() if episode.is_done]
        for agent_id in actions:
            if done and agent_id in done:
                self._check_not_done(agent_id, "an action")
            self._hanging_actions_end[agent_id] = actions[agent_id]
            self._hanging_extra_model_outputs_end[agent_id] = extra_model_outputs.get(agent_id) or {}
        for agent_id, reward in rewards.items():
            if done and agent_id in done:
                self._check_not_done(agent_id, "a reward")
            if agent_id in self.agent_episodes:
                self._hanging_rewards_end[agent_id] = self._hanging_rewards_end.get(agent_id, 0.0) + reward
            else:  # before the agent's first observation
                self._hanging_rewards_begin[agent_id] = self._hanging_rewards_begin.get(agent_id, 0.0) + reward
        for agent_id, observation in observations.items():
            if done and agent_id in done:
                self._check_not_done(agent_id, "an observation")
            term, trunc = bool(terminateds.get(agent_id, False)), bool(truncateds.get(agent_id, False))
            if agent_id not in self.agent_episodes:
                self._new_agent(agent_id, observation, infos.get(agent_id), env_index=index)
                episode = self.agent_episodes[agent_id]
                episode.is_terminated, episode.is_truncated = term, trunc
                stepped[agent_id] = 0
                continue
            if agent_id not in self._hanging_actions_end:
                raise MultiAgentEnvError(
                    f"Agent {agent_id!r} got an observation at env step {self.env_t} without having acted since its "
                    "last one: only agents with an observation act, so each observation must answer an action "
                    "(or be the agent's first).")
            if agent_id in actions and agent_id not in rewards:
                raise MultiAgentEnvError(f"Agent {agent_id!r} acted and got an observation at env step {self.env_t} "
                                         "but no reward: the env's rewards dict must hold every agent it observes.")
            stepped[agent_id] = self._complete_step(agent_id, observation, infos.get(agent_id), term, trunc)
        for agent_id in set(terminateds) | set(truncateds):
            if agent_id == "__all__" or agent_id in observations:
                continue
            self._end_without_observation(agent_id, bool(terminateds.get(agent_id)), bool(truncateds.get(agent_id)),
                                          infos.get(agent_id), stepped)
        self.is_terminated = bool(terminateds.get("__all__", False))
        self.is_truncated = bool(truncateds.get("__all__", False)) and not self.is_terminated
        if not self.is_done and self.agent_episodes and all(e.is_done for e in self.agent_episodes.values()) \
                and not self._hanging_actions_end:
            self.is_terminated = True  # every agent finished on its own
        if self.is_done:
            self._end_remaining_agents(stepped)
        for agent_id, buffer in self.env_t_to_agent_t.items():
            if len(buffer.data) <= index:  # agents that did not step (joined agents are padded already)
                buffer.data.append(stepped.get(agent_id, SKIP_ENV_TS_TAG))
        self._last_agents = list(observations)
        self._last_step_time = time.perf_counter()

    def _check_not_done(self, agent_id, what: str) -> None:
        episode = self.agent_episodes.get(agent_id)
        if episode is not None and episode.is_done:
            raise MultiAgentEnvError(f"The env returned {what} for agent {agent_id!r} at env step {self.env_t}, "
                                     "after the agent was done (terminated or truncated).")

    def _new_agent(self, agent_id, observation, info, env_index: int) -> None:
        spaces = self.observation_space
        if isinstance(spaces, gym.spaces.Dict) and agent_id not in spaces.spaces:
            raise MultiAgentEnvError(
                f"The env returned an observation for agent {agent_id!r}, which is not in its observation spaces "
                f"(agents: {list(spaces.spaces)}); declare it in possible_agents / observation_spaces.")
        episode = SingleAgentEpisode(
            self._agent_episode_ids.get(agent_id), observation_space=_sub_space(spaces, agent_id),
            action_space=_sub_space(self.action_space, agent_id), agent_id=agent_id,
            module_id=self.module_for(agent_id), multi_agent_episode_id=self.id_,
            t_started=self._agent_t_started.get(agent_id, 0))
        episode.add_env_reset(observation, info)
        self.agent_episodes[agent_id] = episode
        self.env_t_to_agent_t[agent_id] = InfiniteLookbackBuffer([SKIP_ENV_TS_TAG] * env_index + [0])

    def _complete_step(self, agent_id, observation, info, terminated: bool, truncated: bool) -> int:
        """The agent's hanging action, its rewards and `observation` become one step of its episode."""
        episode = self.agent_episodes[agent_id]
        episode.add_env_step(observation, self._hanging_actions_end.pop(agent_id),
                             self._hanging_rewards_end.pop(agent_id, 0.0), info, terminated=terminated,
                             truncated=truncated,
                             extra_model_outputs=self._hanging_extra_model_outputs_end.pop(agent_id, None))
        return len(episode)

    def _end_without_observation(self, agent_id, terminated: bool, truncated: bool, info, stepped: dict) -> None:
        if not (terminated or truncated):
            return
        episode = self.agent_episodes.get(agent_id)
        if episode is None:  # done before its first observation: no episode to record
            return
        if agent_id in self._hanging_actions_end:
            if not terminated:
                raise MultiAgentEnvError(
                    f"Agent {agent_id!r} acted and was then truncated at env step {self.env_t} without a final "
                    "observation; a truncated agent needs one (its value is bootstrapped from it).")
            stepped[agent_id] = self._complete_step(agent_id, episode.get_observations(-1), info, True, False)
        else:
            episode.is_terminated, episode.is_truncated = terminated, truncated and not terminated

    def _end_remaining_agents(self, stepped: dict) -> None:
        """The episode ended: agents still going end with it (a hanging action completes on the last observation)."""
        for agent_id, episode in self.agent_episodes.items():
            if episode.is_done:
                continue
            if agent_id in self._hanging_actions_end:
                stepped[agent_id] = self._complete_step(agent_id, episode.get_observations(-1), None,
                                                        self.is_terminated, self.is_truncated)
            else:
                episode.is_terminated, episode.is_truncated = self.is_terminated, self.is_truncated

    def validate(self) -> None:
        for agent_id, episode in self.agent_episodes.items():
            episode.validate()
            if len(self.env_t_to_agent_t[agent_id]) != len(self) + 1:
                raise AssertionError(f"env_t_to_agent_t[{agent_id!r}] has {len(self.env_t_to_agent_t[agent_id])} "
                                     f"entries for {len(self)} env steps.")

    def to_numpy(self) -> "MultiAgentEpisode":
        for episode in self.agent_episodes.values():
            episode.to_numpy()
        return self

    def cut(self, len_lookback_buffer: int = 0) -> "MultiAgentEpisode":
        """Successor chunk starting at `env_t`: each agent still going continues in a cut of its episode (which
        keeps the agent's last observation, so a hanging action completes there); hanging actions and rewards
        move to the successor."""
        if self.is_done:
            raise RuntimeError(f"Cannot cut MultiAgentEpisode {self.id_}: it is already done.")
        successor = MultiAgentEpisode(self.id_, observation_space=self.observation_space,
                                      action_space=self.action_space, env_t_started=self.env_t,
                                      agent_to_module_mapping_fn=self.agent_to_module_mapping_fn)
        successor._agent_to_module_mapping = dict(self._agent_to_module_mapping)
        last = set(self._last_agents)
        for agent_id, episode in self.agent_episodes.items():
            if episode.is_done:
                continue
            successor.agent_episodes[agent_id] = episode.cut(len_lookback_buffer=len_lookback_buffer)
            successor.env_t_to_agent_t[agent_id] = InfiniteLookbackBuffer([0 if agent_id in last else SKIP_ENV_TS_TAG])
        successor._last_agents = [aid for aid in self._last_agents if aid in successor.agent_episodes]
        successor._hanging_actions_end = dict(self._hanging_actions_end)
        successor._hanging_extra_model_outputs_end = dict(self._hanging_extra_model_outputs_end)
        successor._hanging_rewards_end = dict(self._hanging_rewards_end)
        successor._hanging_rewards_begin = dict(self._hanging_rewards_begin)
        successor._custom_data = copy.deepcopy(self._custom_data)
        successor._custom_metrics = dict(self._custom_metrics)
        successor._start_time = self._start_time
        return successor

    def prune_empty_agents(self) -> "MultiAgentEpisode":
        """Drop the agents without a step in this chunk (nothing to train on); returns self."""
        for agent_id in [a for a, e in self.agent_episodes.items() if len(e) == 0]:
            del self.agent_episodes[agent_id]
            del self.env_t_to_agent_t[agent_id]
        return self

    # ---- getters -----------------------------------------------------------------------------------
    def get_observations(self, indices=None, agent_ids=None, *, env_steps: bool = True,
                         neg_index_as_lookback: bool = False, fill=None, one_hot_discrete: bool = False,
                         return_list: bool = False):
        return self._get("observations", indices, agent_ids, env_steps, neg_index_as_lookback, fill, return_list,
                         one_hot_discrete=one_hot_discrete)

    def get_infos(self, indices=None, agent_ids=None, *, env_steps: bool = True, neg_index_as_lookback: bool = False,
                  fill=None, return_list: bool = False):
        return self._get("infos", indices, agent_ids, env_steps, neg_index_as_lookback, fill, return_list)

    def get_actions(self, indices=None, agent_ids=None, *, env_steps: bool = True,
                    neg_index_as_lookback: bool = False, fill=None, one_hot_discrete: bool = False,
                    return_list: bool = False):
        return self._get("actions", indices, agent_ids, env_steps, neg_index_as_lookback, fill, return_list,
                         one_hot_discrete=one_hot_discrete)

    def get_rewards(self, indices=None, agent_ids=None, *, env_steps: bool = True,
                    neg_index_as_lookback: bool = False, fill=None, return_list: bool = False):
        return self._get("rewards", indices, agent_ids, env_steps, neg_index_as_lookback, fill, return_list)

    def get_extra_model_outputs(self, key: Optional[str] = None, indices=None, agent_ids=None, *,
                                env_steps: bool = True, neg_index_as_lookback: bool = False, fill=None,
                                return_list: bool = False):
        if key is None:
            keys = {k for e in self.agent_episodes.values() for k in e.extra_model_outputs}
            return {k: self.get_extra_model_outputs(k, indices, agent_ids, env_steps=env_steps,
                                                    neg_index_as_lookback=neg_index_as_lookback, fill=fill,
                                                    return_list=return_list) for k in sorted(keys)}
        return self._get("extra_model_outputs", indices, agent_ids, env_steps, neg_index_as_lookback, fill,
                         return_list, key=key)

    def get_terminateds(self) -> Dict[Any, bool]:
        out = {aid: e.is_terminated for aid, e in self.agent_episodes.items()}
        out["__all__"] = self.is_terminated
        return out

    def get_truncateds(self) -> Dict[Any, bool]:
        out = {aid: e.is_truncated for aid, e in self.agent_episodes.items()}
        out["__all__"] = self.is_truncated
        return out

    def _get(self, what: str, indices, agent_ids, env_steps: bool, neg_index_as_lookback: bool, fill,
             return_list: bool, **kwargs):
        """Per agent: with `env_steps=False` the agent episode's own getter; with env steps, the data of each
        env step the agent stepped in (agents that did not step are left out unless `fill` is given)."""
        agent_ids = self.agent_ids if agent_ids is None else (
            list(agent_ids) if isinstance(agent_ids, (list, tuple, set)) else [agent_ids])
        if not env_steps:
            if return_list:
                raise ValueError("return_list=True needs env_steps=True (one dict per env step).")
            return {aid: _agent_get(self.agent_episodes[aid], what, indices, neg_index_as_lookback, fill, **kwargs)
                    for aid in agent_ids if aid in self.agent_episodes}
        single = isinstance(indices, int)
        positions = self._env_positions(indices, what, neg_index_as_lookback)
        items = {aid: [self._agent_item(aid, what, p, fill, **kwargs) for p in positions]
                 for aid in agent_ids if aid in self.agent_episodes}
        if return_list:  # one dict per env step, holding the agents that stepped there
            return [{aid: values[i] for aid, values in items.items() if values[i] is not _MISSING}
                    for i in range(len(positions))]
        per_agent = {}
        for aid, values in items.items():
            if single:
                if values[0] is not _MISSING:
                    per_agent[aid] = values[0]
            else:
                kept = [item for item in values if item is not _MISSING]
                if kept or fill is not None:
                    per_agent[aid] = kept
        return per_agent

    def _env_positions(self, indices, what: str, neg_index_as_lookback: bool) -> List[int]:
        """Env-step positions (0 = the chunk's first observation) for `indices`; actions and rewards at env
        step i are those that led to observation i + 1."""
        n = len(self) + (1 if what in ("observations", "infos") else 0)
        if indices is None:
            return list(range(n))
        if isinstance(indices, slice):
            return list(range(*indices.indices(n)))
        items = [indices] if isinstance(indices, int) else list(indices)
        return [i if i >= 0 or neg_index_as_lookback else n + i for i in items]

    def _agent_item(self, agent_id, what: str, position: int, fill, **kwargs):
        mapping = self.env_t_to_agent_t[agent_id].data
        offset = 1 if what not in ("observations", "infos") else 0  # an action's step ends at the next observation
        index = position + offset
        agent_t = mapping[index] if 0 <= index < len(mapping) else SKIP_ENV_TS_TAG
        if agent_t == SKIP_ENV_TS_TAG or agent_t - offset < 0:
            if fill is None:
                return _MISSING
            return fill
        return _agent_get(self.agent_episodes[agent_id], what, agent_t - offset, False, fill, **kwargs)

    # ---- state -------------------------------------------------------------------------------------
    def get_state(self) -> Dict[str, Any]:
        return {
            "id_": self.id_,
            "agent_episodes": [[aid, e.get_state()] for aid, e in self.agent_episodes.items()],
            "env_t_to_agent_t": [[aid, list(b.data)] for aid, b in self.env_t_to_agent_t.items()],
            "agent_module_ids": [[aid, mid] for aid, mid in self._agent_to_module_mapping.items()],
            "env_t_started": self.env_t_started,
            "env_t": self.env_t,
            "is_terminated": self.is_terminated,
            "is_truncated": self.is_truncated,
            "last_agents": list(self._last_agents),
            "hanging_actions_end": [[aid, v] for aid, v in self._hanging_actions_end.items()],
            "hanging_extra_model_outputs_end": [[aid, v] for aid, v in self._hanging_extra_model_outputs_end.items()],
            "hanging_rewards_end": [[aid, v] for aid, v in self._hanging_rewards_end.items()],
            "hanging_rewards_begin": [[aid, v] for aid, v in self._hanging_rewards_begin.items()],
            "custom_data": copy.deepcopy(self._custom_data),
            "custom_metrics": dict(self._custom_metrics),
        }

    @staticmethod
    def from_state(state: Dict[str, Any], *, observation_space=None, action_space=None,
                   agent_to_module_mapping_fn: Optional[Callable] = None) -> "MultiAgentEpisode":
        """The episode `get_state()` described; spaces and the mapping function are the caller's (not data)."""
        episode = MultiAgentEpisode(state["id_"], observation_space=observation_space, action_space=action_space,
                                    env_t_started=state["env_t_started"],
                                    agent_to_module_mapping_fn=agent_to_module_mapping_fn)
        for aid, sa_state in state["agent_episodes"]:
            sa_state = dict(sa_state)
            sa_state.setdefault("observation_space", _sub_space(observation_space, aid))
            sa_state.setdefault("action_space", _sub_space(action_space, aid))
            if sa_state["observation_space"] is None:
                sa_state["observation_space"] = _sub_space(observation_space, aid)
            if sa_state["action_space"] is None:
                sa_state["action_space"] = _sub_space(action_space, aid)
            episode.agent_episodes[aid] = SingleAgentEpisode.from_state(sa_state)
        episode.env_t_to_agent_t = {aid: InfiniteLookbackBuffer(list(data)) for aid, data in state["env_t_to_agent_t"]}
        episode._agent_to_module_mapping = {aid: mid for aid, mid in state["agent_module_ids"]}
        episode.env_t = state["env_t"]
        episode.is_terminated, episode.is_truncated = state["is_terminated"], state["is_truncated"]
        episode._last_agents = list(state["last_agents"])
        episode._hanging_actions_end = {aid: v for aid, v in state["hanging_actions_end"]}
        episode._hanging_extra_model_outputs_end = {aid: v for aid, v in state["hanging_extra_model_outputs_end"]}
        episode._hanging_rewards_end = {aid: v for aid, v in state["hanging_rewards_end"]}
        episode._hanging_rewards_begin = {aid: v for aid, v in state["hanging_rewards_begin"]}
        episode._custom_data = copy.deepcopy(state.get("custom_data", {}))
        episode._custom_metrics = dict(state.get("custom_metrics", {}))
        return episode


def _sub_space(space, agent_id):
    if isinstance(space, gym.spaces.Dict):
        return space.spaces.get(agent_id)
    if isinstance(space, dict):
        return space.get(agent_id)
    return space


def _agent_get(episode: SingleAgentEpisode, what: str, indices, neg_index_as_lookback: bool, fill, **kwargs):
    if what == "extra_model_outputs":
        return episode.get_extra_model_outputs(kwargs["key"], indices, neg_index_as_lookback=neg_index_as_lookback,
                                               fill=fill)
    getter = getattr(episode, f"get_{what}")
    if what in ("observations", "actions"):
        return getter(indices, neg_index_as_lookback=neg_index_as_lookback, fill=fill,
                      one_hot_discrete=kwargs.get("one_hot_discrete", False))
    return getter(indices, neg_index_as_lookback=neg_index_as_lookback, fill=fill)


def _flags(value, last: bool) -> dict:
    if isinstance(value, dict):
        return value
    return {"__all__": bool(value) and last}


__all__ = ["MultiAgentEpisode", "MultiAgentEnvError", "SKIP_ENV_TS_TAG", "default_agent_to_module_mapping_fn"]
