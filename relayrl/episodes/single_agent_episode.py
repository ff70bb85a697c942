"""SingleAgentEpisode: the trajectory (chunk) of one agent in one environment.

Layout (per chunk): observations and infos hold one more item than actions,
rewards and extra model outputs, since the reset observation has no action:

    obs:     o0  o1  o2  ...  oT
    actions:   a0  a1  ...  a(T-1)      (a_i taken after seeing o_i)
    rewards:   r0  r1  ...  r(T-1)      (r_i received together with o_(i+1))

Each column is an `InfiniteLookbackBuffer` whose first `lookback` items come
from before this chunk's ts=0 (e.g. data kept by `cut(len_lookback_buffer=n)`).
"""
from __future__ import annotations

import copy
import os
import time
from typing import Any, Dict, Optional

import gymnasium as gym
import numpy as np

from relayrl.core.columns import Columns
from relayrl.core.tree import map_structure
from relayrl.episodes.infinite_lookback_buffer import InfiniteLookbackBuffer, _batch_len, struct_equal, unbatch_items

# Rewards are scalars; the space gives `fill` values the right dtype.
_REWARD_SPACE = gym.spaces.Box(float("-inf"), float("inf"), (), np.float32)


def _raw_len(data) -> int:
    """Number of items incl. lookback of a list, array or buffer."""
    if data is None:
        return 0
    if isinstance(data, InfiniteLookbackBuffer):
        return data.len_incl_lookback()
    return len(data)


def _as_buffer(data, lookback: int, space=None) -> InfiniteLookbackBuffer:
    if isinstance(data, InfiniteLookbackBuffer):
        if space is not None:
            data.space = space
        return data
    return InfiniteLookbackBuffer(data=data, lookback=lookback, space=space)


class SingleAgentEpisode:
    """One agent's episode (chunk), matching RLlib's `SingleAgentEpisode` API."""

    def __init__(self, id_: Optional[str] = None, *, observations=None, observation_space=None,
                 infos=None, actions=None, action_space=None, rewards=None,
                 terminated: bool = False, truncated: bool = False, extra_model_outputs=None,
                 t_started: Optional[int] = None, len_lookback_buffer="auto", agent_id=None,
                 module_id=None, multi_agent_episode_id=None):
        self._init_attributes(id_, observation_space, action_space, agent_id, module_id, multi_agent_episode_id)
        has_data = (observations is not None or infos is not None or actions is not None or rewards is not None
                    or bool(extra_model_outputs))
        if has_data or not (isinstance(len_lookback_buffer, str) and len_lookback_buffer == "auto"):
            self._columns_from(observations, infos, actions, rewards, extra_model_outputs, len_lookback_buffer)
        else:  # a new, empty episode (the EnvRunner builds one per episode): empty columns, nothing to check
            self.observations = InfiniteLookbackBuffer(space=observation_space)
            self.infos = InfiniteLookbackBuffer()
            self.actions = InfiniteLookbackBuffer(space=action_space)
            self.rewards = InfiniteLookbackBuffer(space=_REWARD_SPACE)
            self.extra_model_outputs: Dict[str, InfiniteLookbackBuffer] = {}
        self.is_terminated = bool(terminated)
        self.is_truncated = bool(truncated)
        # Global timestep of this chunk's ts=0, and of its latest observation.
        self.t_started = t_started or 0
        self.t = self.t_started + len(self.rewards)
        if has_data:  # an episode built without data is consistent by construction
            self.validate()

    def _init_attributes(self, id_, observation_space, action_space, agent_id=None, module_id=None,
                         multi_agent_episode_id=None) -> None:
        """Everything but the columns, the done flags and the timesteps."""
        # 32 random hex digits, as RLlib's uuid4().hex, without building a UUID object (one per episode).
        self.id_ = os.urandom(16).hex() if id_ is None else id_
        self.agent_id = agent_id
        self.module_id = module_id
        self.multi_agent_episode_id = multi_agent_episode_id
        self._observation_space = observation_space
        self._action_space = action_space
        self._custom_data: Dict[str, Any] = {}
        self._custom_metrics: Dict[str, float] = {}
        self._start_time = time.perf_counter()
        self._last_step_time: Optional[float] = None

    @classmethod
    def _from_buffers(cls, observations, infos, actions, rewards, extra_model_outputs, *, t_started: int = 0,
                      terminated: bool = False, truncated: bool = False, id_=None, observation_space=None,
                      action_space=None, agent_id=None, module_id=None,
                      multi_agent_episode_id=None) -> "SingleAgentEpisode":
        """An episode holding these `InfiniteLookbackBuffer`s, which the caller built consistent (not
        validated): what the constructor gives, without building empty columns first (cut(), the EnvRunner)."""
        episode = cls.__new__(cls)
        episode._init_attributes(id_, observation_space, action_space, agent_id, module_id, multi_agent_episode_id)
        episode.observations, episode.infos, episode.actions, episode.rewards = observations, infos, actions, rewards
        episode.extra_model_outputs = extra_model_outputs
        episode.is_terminated, episode.is_truncated = bool(terminated), bool(truncated)
        episode.t_started = t_started
        episode.t = t_started + len(rewards)
        return episode

    def _columns_from(self, observations, infos, actions, rewards, extra_model_outputs, len_lookback_buffer) -> None:
        # "auto": all passed data is lookback (len == 0). An int n: the first n
        # steps are lookback (capped at the number of passed steps).
        len_rewards = _raw_len(rewards)
        if len_lookback_buffer == "auto":
            lookback = len_rewards
        elif isinstance(len_lookback_buffer, (int, np.integer)) and len_lookback_buffer >= 0:
            lookback = min(int(len_lookback_buffer), len_rewards)
        else:
            raise ValueError(f"`len_lookback_buffer` must be 'auto' or an int >= 0, got {len_lookback_buffer!r}.")
        if infos is None:
            infos = [{} for _ in range(_raw_len(observations))]
        self.observations = _as_buffer(observations, lookback, self._observation_space)
        self.infos = _as_buffer(infos, lookback)
        self.actions = _as_buffer(actions, lookback, self._action_space)
        self.rewards = _as_buffer(rewards, lookback, _REWARD_SPACE)
        self.extra_model_outputs = {k: _as_buffer(v, lookback) for k, v in (extra_model_outputs or {}).items()}

    # ---- properties -------------------------------------------------------------

    @property
    def observation_space(self) -> Optional[gym.Space]:
        return self._observation_space

    @observation_space.setter
    def observation_space(self, value: Optional[gym.Space]) -> None:
        self._observation_space = self.observations.space = value

    @property
    def action_space(self) -> Optional[gym.Space]:
        return self._action_space

    @action_space.setter
    def action_space(self, value: Optional[gym.Space]) -> None:
        self._action_space = self.actions.space = value

    @property
    def custom_data(self) -> Dict[str, Any]:
        """Free-form user data (e.g. from callbacks); merged by concat, deep-copied by cut."""
        return self._custom_data

    @property
    def user_data(self) -> Dict[str, Any]:
        """The seeds' older name for `custom_data`."""
        return self._custom_data

    @property
    def custom_metrics(self) -> Dict[str, float]:
        """The seeds' older custom-metrics style: scalars set here (e.g. in on_episode_end) are reported
        per finished episode as `result["env_runners"]["custom_metrics"]["<name>_mean/_min/_max"]`."""
        return self._custom_metrics

    @property
    def is_reset(self) -> bool:
        return len(self.observations) > 0

    @property
    def is_numpy(self) -> bool:
        return self.observations.finalized

    @property
    def is_done(self) -> bool:
        return self.is_terminated or self.is_truncated

    def __len__(self) -> int:
        return self.t - self.t_started

    def env_steps(self) -> int:
        return len(self)

    def agent_steps(self) -> int:
        return len(self)

    def get_return(self) -> float:
        """Sum of this chunk's rewards (lookback excluded)."""
        if not len(self):
            return 0.0
        rewards = self.rewards  # scalars: a list while collecting, an array once numpy'd
        data = rewards.data[rewards.lookback:]
        # ndarray.sum: np.sum's result (same pairwise summation) without its dispatch overhead.
        return float(data.sum() if isinstance(data, np.ndarray) else np.sum(data))

    def get_duration_s(self) -> float:
        """Seconds since construction/reset; frozen at the final step once done."""
        end = self._last_step_time if (self.is_done and self._last_step_time is not None) else time.perf_counter()
        return end - self._start_time

    def __repr__(self) -> str:
        return f"SAEps(len={len(self)} done={self.is_done} R={self.get_return()} id_={self.id_})"

    # ---- collecting ---------------------------------------------------------------

    def add_env_reset(self, observation, infos: Optional[dict] = None) -> None:
        observations = self.observations
        if len(observations) or self.is_terminated or self.is_truncated or observations.finalized:
            self._raise_cannot_reset()
        # No validate(): an episode without observations has no actions or rewards (checked when built),
        # so one observation and one info leave it consistent.
        observations.data.append(observation)
        self.infos.data.append({} if infos is None else infos)
        self._start_time = time.perf_counter()

    def _raise_cannot_reset(self):
        if self.is_reset:
            raise AssertionError(f"Episode {self.id_} has already been reset.")
        if self.is_done:
            raise AssertionError(f"Episode {self.id_} is already done.")
        raise AssertionError(f"Episode {self.id_} is numpy'ized (to_numpy()); it cannot be reset.")

    def add_env_step(self, observation, action, reward, infos: Optional[dict] = None, *,
                     terminated: bool = False, truncated: bool = False,
                     extra_model_outputs: Optional[Dict[str, Any]] = None) -> None:
        # Hot path (once per env step): plain list appends, cheap checks only.
        # All checks run before any append so a failed call leaves no partial step.
        obs_buf = self.observations
        if obs_buf.finalized or self.is_terminated or self.is_truncated:
            self._raise_cannot_step()
        emo = self.extra_model_outputs
        if extra_model_outputs is None:
            if emo:
                self._check_extra_keys({})
        elif emo.keys() != extra_model_outputs.keys():
            self._check_extra_keys(extra_model_outputs)
        obs_buf.data.append(observation)
        self.actions.data.append(action)
        self.rewards.data.append(reward)
        self.infos.data.append({} if infos is None else infos)
        if extra_model_outputs is not None:
            for k, v in extra_model_outputs.items():
                emo[k].data.append(v)
        self.t += 1
        self.is_terminated = terminated
        self.is_truncated = truncated
        self._last_step_time = time.perf_counter()

    def add_env_steps(self, observations, actions, rewards, infos=None, *, terminated: bool = False,
                      truncated: bool = False, extra_model_outputs: Optional[Dict[str, Any]] = None,
                      to_numpy: bool = False) -> None:
        """`add_env_step` for n steps at once. Each column is a list of n items or an array whose
        rows are the items; `terminated`/`truncated` describe the last step.

        With `to_numpy=True` the episode is numpy'd afterwards, and array columns are joined to
        the stored items in one concatenation (the same data as n `add_env_step` calls followed
        by `to_numpy()`). The EnvRunner hands over steps it kept as columns this way.
        """
        if self.observations.finalized or self.is_terminated or self.is_truncated:
            self._raise_cannot_step()
        extra = {} if extra_model_outputs is None else extra_model_outputs
        n = len(actions)
        if (n == 0 or len(observations) != n or len(rewards) != n or (infos is not None and len(infos) != n)
                or any(_batch_len(v) != n for v in extra.values())):
            self._raise_step_counts(observations, actions, rewards, infos, extra)
        emo = self.extra_model_outputs
        if emo.keys() != extra.keys():
            self._check_extra_keys(extra)
        columns = [(self.observations, observations), (self.actions, actions), (self.rewards, rewards)]
        columns += [(emo[k], v) for k, v in extra.items()]
        all_arrays = to_numpy
        for buffer, items in columns:
            if to_numpy and isinstance(items, (np.ndarray, dict)):  # (dict: a nested column of arrays, as a state)
                buffer.extend_finalized(items)
            elif isinstance(items, dict):
                buffer.data.extend(unbatch_items(items))
                all_arrays = False
            else:
                buffer.data.extend(items)
                all_arrays = False
        self.infos.data.extend([{} for _ in range(n)] if infos is None else infos)
        self.t += n
        self.is_terminated = terminated
        self.is_truncated = truncated
        self._last_step_time = time.perf_counter()
        if to_numpy and not all_arrays:  # (array columns are numpy'd already)
            self.to_numpy()

    @staticmethod
    def _raise_step_counts(observations, actions, rewards, infos, extra) -> None:
        counts = {"observations": len(observations), "actions": len(actions), "rewards": len(rewards),
                  **({} if infos is None else {"infos": len(infos)}),
                  **{f"extra_model_outputs[{k!r}]": _batch_len(v) for k, v in extra.items()}}
        raise ValueError(f"add_env_steps() needs the same number (>= 1) of steps in every column; got {counts}.")

    def _raise_cannot_step(self):
        if self.observations.finalized:
            raise AssertionError(f"Episode {self.id_} is numpy'ized (to_numpy() was called): "
                                 "no more add_env_step() calls are allowed.")
        raise AssertionError(f"Episode {self.id_} is already done (terminated={self.is_terminated}, "
                             f"truncated={self.is_truncated}): no data can be added.")

    def _check_extra_keys(self, new_outputs: Dict[str, Any]) -> None:
        """Step's keys differ from the episode's: only new keys at a chunk's first step are OK."""
        if not self.extra_model_outputs and len(self.actions) == 0:  # the usual case: a new episode
            for k in new_outputs:
                self.extra_model_outputs[k] = InfiniteLookbackBuffer()
            return
        missing = sorted(set(self.extra_model_outputs) - set(new_outputs))
        added = sorted(set(new_outputs) - set(self.extra_model_outputs))
        if missing:
            raise ValueError(f"extra_model_outputs keys {missing} are missing from this step; every step "
                             "must provide the same keys.")
        if added and len(self.actions) > 0:
            raise ValueError(f"extra_model_outputs keys {added} first appeared at step {len(self.actions) + 1} "
                             "of this chunk; every key must be provided from the chunk's first step on.")
        for k in added:
            self.extra_model_outputs[k] = InfiniteLookbackBuffer()

    def validate(self) -> None:
        """Raise AssertionError if the columns are inconsistent."""
        n_obs, n_act, n_rew = len(self.observations), len(self.actions), len(self.rewards)
        if n_obs != len(self.infos):
            raise AssertionError(f"len(observations)={n_obs} != len(infos)={len(self.infos)}.")
        expected = max(n_obs - 1, 0)
        if n_act != expected or n_rew != expected:
            raise AssertionError(
                f"Need len(observations) == len(actions) + 1 == len(rewards) + 1 (or all 0); got "
                f"observations={n_obs}, actions={n_act}, rewards={n_rew}.")
        lookback = self.observations.lookback
        if not self.infos.lookback == self.actions.lookback == self.rewards.lookback == lookback:
            lookbacks = {b: getattr(self, b).lookback for b in ("observations", "infos", "actions", "rewards")}
            raise AssertionError(f"All columns must have the same lookback length, got {lookbacks}.")
        for k, v in self.extra_model_outputs.items():
            if len(v) != n_act:
                raise AssertionError(f"extra_model_outputs[{k!r}] has {len(v)} items, actions has {n_act}.")
        if self.t - self.t_started != n_rew:
            raise AssertionError(f"t - t_started = {self.t - self.t_started} != len(rewards) = {n_rew}.")

    def to_numpy(self) -> "SingleAgentEpisode":
        """Stack obs, actions, rewards and extra model outputs into numpy (infos stay lists)."""
        self.observations.finalize()
        self.actions.finalize()
        self.rewards.finalize()
        for buf in self.extra_model_outputs.values():
            buf.finalize()
        return self

    # ---- chunking -----------------------------------------------------------------------

    def concat_episode(self, other: "SingleAgentEpisode") -> None:
        """Append the successor chunk `other` (e.g. from `cut()`) to this chunk in place."""
        if other.id_ != self.id_:
            raise AssertionError(f"Cannot concat episodes with different ids ({self.id_} vs {other.id_}).")
        if self.is_done:
            raise AssertionError(f"Cannot concat onto episode {self.id_}: it is already done.")
        if self.t != other.t_started:
            raise AssertionError(f"Cannot concat: self.t={self.t} != other.t_started={other.t_started}.")
        if not self.is_reset or not other.is_reset:
            raise AssertionError("Cannot concat: both episodes must hold at least one observation.")
        other.validate()
        if not struct_equal(other.get_observations(0), self.get_observations(-1)):
            raise AssertionError("Cannot concat: other's first observation differs from self's last one.")
        mine, theirs = set(self.extra_model_outputs), set(other.extra_model_outputs)
        if mine != theirs and not (len(self) == 0 or len(other) == 0):
            raise AssertionError(f"Cannot concat: extra_model_outputs keys differ ({sorted(mine)} vs {sorted(theirs)}).")

        # Our last obs/info equal other's first ones (ts=0), which come back via extend.
        self.observations.pop()
        self.infos.pop()
        self.observations.extend(other.observations._items())
        self.infos.extend(other.infos._items())
        self.actions.extend(other.actions._items())
        self.rewards.extend(other.rewards._items())
        for k, buf in other.extra_model_outputs.items():
            if k not in self.extra_model_outputs:
                self.extra_model_outputs[k] = InfiniteLookbackBuffer()
            self.extra_model_outputs[k].extend(buf._items())
        self.t = other.t
        if other.is_terminated:
            self.is_terminated = True
        elif other.is_truncated:
            self.is_truncated = True
        if other._last_step_time is not None:
            self._last_step_time = other._last_step_time
        self._custom_data.update(other.custom_data)
        self._custom_metrics.update(other.custom_metrics)
        self.validate()

    def cut(self, len_lookback_buffer: int = 0) -> "SingleAgentEpisode":
        """Successor chunk starting at `self.t`, for continuing collection.

        Its lookback holds the last observation/info plus `len_lookback_buffer`
        earlier steps. The chunk is list-based (steppable) even if self is numpy.
        """
        if self.is_done:
            raise AssertionError(f"Cannot cut episode {self.id_}: it is already done.")
        if len_lookback_buffer < 0:
            raise ValueError(f"`len_lookback_buffer` must be >= 0, got {len_lookback_buffer}.")
        k = len_lookback_buffer
        # The last k steps (fewer if the chunk and its lookback hold fewer) become the successor's lookback;
        # the observation after them is its ts=0. Built column by column: consistent by construction.
        rewards = _last_items(self.rewards, k)
        if self.rewards.finalized:  # Python floats, as a running episode's rewards are
            rewards = [float(reward) for reward in rewards]
        m = len(rewards)
        successor = SingleAgentEpisode._from_buffers(
            InfiniteLookbackBuffer(_last_items(self.observations, m + 1), m, self.observation_space),
            InfiniteLookbackBuffer(_last_items(self.infos, m + 1), m),
            InfiniteLookbackBuffer(_last_items(self.actions, m), m, self.action_space),
            InfiniteLookbackBuffer(rewards, m, _REWARD_SPACE),
            {key: InfiniteLookbackBuffer(_last_items(buffer, m), m) for key, buffer in self.extra_model_outputs.items()},
            t_started=self.t, id_=self.id_, observation_space=self.observation_space, action_space=self.action_space,
            agent_id=self.agent_id, module_id=self.module_id, multi_agent_episode_id=self.multi_agent_episode_id)
        if self._custom_data:
            successor._custom_data = copy.deepcopy(self._custom_data)
        if self._custom_metrics:
            successor._custom_metrics = dict(self._custom_metrics)
        return successor

    def slice(self, slice_: slice, *, len_lookback_buffer: Optional[int] = None) -> "SingleAgentEpisode":
        """New episode with steps `slice_` (step 1 only) of this chunk.

        The lookback is filled from earlier data (default: this episode's own
        lookback length, capped by what is stored). Done flags are kept only if
        the slice reaches the end. Data is copied; custom_data is not carried.
        """
        if slice_.step not in (None, 1):
            raise ValueError(f"Episode slices must have step 1, got {slice_.step}.")
        start, stop, _ = slice_.indices(len(self))
        stop = max(stop, start)
        lb = self.observations.lookback if len_lookback_buffer is None else int(len_lookback_buffer)
        lb = max(0, min(lb, self.observations.lookback + start))
        keep_done = stop == len(self)

        def take(buf, extra):
            part = buf.get(slice(start - lb, stop + extra), neg_index_as_lookback=True)
            return _copy_batch(part) if buf.finalized else part

        return SingleAgentEpisode(
            self.id_,
            observations=take(self.observations, 1),
            observation_space=self.observation_space,
            infos=take(self.infos, 1),
            actions=take(self.actions, 0),
            action_space=self.action_space,
            rewards=take(self.rewards, 0),
            extra_model_outputs={k: take(v, 0) for k, v in self.extra_model_outputs.items()},
            terminated=self.is_terminated and keep_done,
            truncated=self.is_truncated and keep_done,
            t_started=self.t_started + start,
            len_lookback_buffer=lb,
            agent_id=self.agent_id,
            module_id=self.module_id,
            multi_agent_episode_id=self.multi_agent_episode_id,
        )

    def __getitem__(self, item) -> "SingleAgentEpisode":
        if isinstance(item, slice):
            return self.slice(item)
        raise TypeError(f"SingleAgentEpisode only supports slicing (`episode[a:b]`), got {type(item).__name__} "
                        f"{item!r}. Use get_observations()/get_actions()/... for single items.")

    # ---- getters / setters ------------------------------------------------------------------

    def get_observations(self, indices=None, *, neg_index_as_lookback: bool = False, fill=None,
                         one_hot_discrete: bool = False):
        return self.observations.get(indices, neg_index_as_lookback=neg_index_as_lookback, fill=fill,
                                     one_hot_discrete=one_hot_discrete)

    def get_infos(self, indices=None, *, neg_index_as_lookback: bool = False, fill=None):
        return self.infos.get(indices, neg_index_as_lookback=neg_index_as_lookback, fill=fill)

    def get_actions(self, indices=None, *, neg_index_as_lookback: bool = False, fill=None,
                    one_hot_discrete: bool = False):
        return self.actions.get(indices, neg_index_as_lookback=neg_index_as_lookback, fill=fill,
                                one_hot_discrete=one_hot_discrete)

    def get_rewards(self, indices=None, *, neg_index_as_lookback: bool = False, fill=None):
        return self.rewards.get(indices, neg_index_as_lookback=neg_index_as_lookback, fill=fill)

    def get_extra_model_outputs(self, key: str, indices=None, *, neg_index_as_lookback: bool = False,
                                fill=None):
        return self._extra_buffer(key).get(indices, neg_index_as_lookback=neg_index_as_lookback, fill=fill)

    def _extra_buffer(self, key: str) -> InfiniteLookbackBuffer:
        try:
            return self.extra_model_outputs[key]
        except KeyError:
            raise KeyError(f"No extra_model_outputs key {key!r} in episode {self.id_}; "
                           f"available: {sorted(self.extra_model_outputs)}.") from None

    def set_observations(self, *, new_data, at_indices=None, neg_index_as_lookback: bool = False) -> None:
        self.observations.set(new_data, at_indices=at_indices, neg_index_as_lookback=neg_index_as_lookback)

    def set_actions(self, *, new_data, at_indices=None, neg_index_as_lookback: bool = False) -> None:
        self.actions.set(new_data, at_indices=at_indices, neg_index_as_lookback=neg_index_as_lookback)

    def set_rewards(self, *, new_data, at_indices=None, neg_index_as_lookback: bool = False) -> None:
        self.rewards.set(new_data, at_indices=at_indices, neg_index_as_lookback=neg_index_as_lookback)

    def set_extra_model_outputs(self, *, key: str, new_data, at_indices=None,
                                neg_index_as_lookback: bool = False) -> None:
        self._extra_buffer(key).set(new_data, at_indices=at_indices, neg_index_as_lookback=neg_index_as_lookback)

    # ---- export / state ------------------------------------------------------------------

    def get_data_dict(self) -> Dict[str, Any]:
        """Per-step columns of this chunk (obs without the final observation)."""
        n = len(self)
        terminateds = np.zeros(n, dtype=bool)
        truncateds = np.zeros(n, dtype=bool)
        if n:
            terminateds[-1] = self.is_terminated
            truncateds[-1] = self.is_truncated
        data = {
            Columns.OBS: self.get_observations(slice(None, -1)),
            Columns.INFOS: self.get_infos(slice(None, -1)),
            Columns.ACTIONS: self.get_actions(),
            Columns.REWARDS: self.get_rewards(),
            Columns.TERMINATEDS: terminateds,
            Columns.TRUNCATEDS: truncateds,
            Columns.T: np.arange(self.t_started, self.t),
            Columns.EPS_ID: [self.id_] * n,
        }
        for k in self.extra_model_outputs:
            data[k] = self.get_extra_model_outputs(k)
        return data

    def get_state(self) -> Dict[str, Any]:
        return {
            "id_": self.id_,
            "agent_id": self.agent_id,
            "module_id": self.module_id,
            "multi_agent_episode_id": self.multi_agent_episode_id,
            "observations": self.observations.get_state(),
            "infos": self.infos.get_state(),
            "actions": self.actions.get_state(),
            "rewards": self.rewards.get_state(),
            "extra_model_outputs": {k: v.get_state() for k, v in self.extra_model_outputs.items()},
            "is_terminated": self.is_terminated,
            "is_truncated": self.is_truncated,
            "t_started": self.t_started,
            "t": self.t,
            "observation_space": self._observation_space,
            "action_space": self._action_space,
            "custom_data": copy.deepcopy(self._custom_data),
            "custom_metrics": dict(self._custom_metrics),
            "start_time": self._start_time,
            "last_step_time": self._last_step_time,
        }

    @staticmethod
    def from_state(state: Dict[str, Any]) -> "SingleAgentEpisode":
        eps = SingleAgentEpisode(
            state["id_"],
            observations=InfiniteLookbackBuffer.from_state(state["observations"]),
            observation_space=state["observation_space"],
            infos=InfiniteLookbackBuffer.from_state(state["infos"]),
            actions=InfiniteLookbackBuffer.from_state(state["actions"]),
            action_space=state["action_space"],
            rewards=InfiniteLookbackBuffer.from_state(state["rewards"]),
            extra_model_outputs={k: InfiniteLookbackBuffer.from_state(v)
                                 for k, v in state["extra_model_outputs"].items()},
            terminated=state["is_terminated"],
            truncated=state["is_truncated"],
            t_started=state["t_started"],
            agent_id=state["agent_id"],
            module_id=state["module_id"],
            multi_agent_episode_id=state["multi_agent_episode_id"],
        )
        eps._custom_data = copy.deepcopy(state.get("custom_data", {}))
        eps._custom_metrics = dict(state.get("custom_metrics", {}))
        eps._start_time = state.get("start_time", eps._start_time)
        eps._last_step_time = state.get("last_step_time")
        return eps


def _last_items(buf: InfiniteLookbackBuffer, n: int) -> list:
    """The last `n` items (lookback included, fewer if it holds fewer) as a fresh list (rows if numpy)."""
    if n <= 0:
        return []
    data = buf.data
    if isinstance(data, list):
        return data[-n:]
    return unbatch_items(map_structure(lambda column: column[-n:], data)) if isinstance(data, (dict, tuple)) \
        else list(data[-n:])


def _copy_batch(part):
    if isinstance(part, dict):
        return {k: _copy_batch(v) for k, v in part.items()}
    if isinstance(part, tuple):
        return tuple(_copy_batch(v) for v in part)
    return np.array(part, copy=True)
