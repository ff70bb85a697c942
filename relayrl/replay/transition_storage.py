"""Flat ring storage of single-step transitions, linked step-to-step within each episode.

One slot per timestep: action, reward, the row of its observation in an ObservationRing (the next
observation is the following row), the recurrent state before the step (stateful modules only,
recurrent_states.py), terminated/truncated (set at an episode's last step only) and
`next_index`, the slot of the same episode's next step (-1 at the episode's
end or while its continuation has not arrived). Slots are overwritten oldest first (FIFO). A step
is always written before its successor, so when a slot is overwritten its predecessor is already
gone: pointers never dangle. `slot_abs[slot]` is the lifetime number of the step held there; it is
the id handed out to callers (`indices`) and tells whether an old id still holds the same step.
"""
from collections import Counter
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from relayrl.replay import nested
from relayrl.replay.recurrent_states import check_all_or_none, states_before_steps
from relayrl.replay.observation_ring import ObservationRing, storage_dtype

# Open-episode entries are pruned (evicted ones dropped) once there are more than this many.
_MAX_OPEN_BEFORE_PRUNE = 1024


class TransitionStorage:
    """The data of a replay buffer; sampling strategy lives in the buffer classes."""

    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self.num_added = 0  # lifetime timesteps
        self.obs_spec: Any = None
        self.action_spec: Any = None
        self.specs_known = False
        # One extra observation row per chunk; room for chunks of 8+ steps on average before it grows.
        self.obs_ring = ObservationRing(self.capacity + self.capacity // 8 + 1)
        self.actions: List[np.ndarray] = []
        self.obs_row = np.zeros(0, np.int64)
        self.rewards = np.zeros(0, np.float32)
        self.terminated = np.zeros(0, bool)
        self.truncated = np.zeros(0, bool)
        self.next_index = np.zeros(0, np.int64)
        self.slot_abs = np.zeros(0, np.int64)
        self.episode_number = np.zeros(0, np.int64)
        # Stateful modules: the state before each step (one array per leaf of the state) and whether it is the
        # module's initial state (an episode's first step); empty for stateless modules.
        self.state_spec: Any = None
        self.states: List[np.ndarray] = []
        self.state_is_initial = np.zeros(0, bool)
        # id_ -> [episode number, lifetime number of its latest stored step, its env timestep t] for
        # unfinished episodes.
        self.open_episodes: Dict[str, List[int]] = {}
        self.next_episode_number = 0
        self.steps_per_episode: Dict[int, int] = {}  # stored steps of each episode with any stored
        self.num_episodes_evicted = 0  # episodes whose last stored step was overwritten

    # ---- sizes -----------------------------------------------------------------------------

    @property
    def num_stored(self) -> int:
        return min(self.num_added, self.capacity)

    @property
    def num_episodes(self) -> int:
        return len(self.steps_per_episode)

    # ---- adding ----------------------------------------------------------------------------

    def add(self, episodes: Sequence) -> Optional[np.ndarray]:
        """Store the steps of `episodes` (chunks); returns the slots written (None if nothing)."""
        self._check_continuations(episodes)
        chunks = [ep for ep in episodes if len(ep) > 0]
        for ep in episodes:
            if len(ep) == 0 and (ep.is_terminated or ep.is_truncated):
                self._end_without_steps(ep)
        if not chunks:
            return None
        lengths_list = [len(ep) for ep in chunks]
        lengths = np.array(lengths_list, np.int64)
        obs_rows, action_leaves = self._columns(chunks, lengths_list)
        state_leaves, state_initial = self._state_columns(chunks)
        rewards = np.concatenate([np.asarray(ep.get_rewards(), np.float32).reshape(-1) for ep in chunks])

        capacity = self.capacity
        total = int(lengths.sum())
        first_abs = self.num_added
        ends = np.cumsum(lengths) - 1  # batch positions of each chunk's last step
        starts = ends - lengths + 1
        numbers, links = self._link_chunks(chunks, starts, ends, first_abs)
        # step j of chunk i reads observation row (position + i): each chunk brings one extra row
        first_row = self.obs_ring.num_added
        step_rows = first_row + np.arange(total)
        if len(chunks) > 1:
            step_rows += np.repeat(np.arange(len(chunks)), lengths)

        self.num_added += total
        oldest_abs = max(0, self.num_added - capacity)
        keep_start = max(0, total - capacity)  # a batch larger than capacity keeps its tail
        keep = slice(keep_start, total)
        kept_abs = np.arange(first_abs + keep_start, first_abs + total, dtype=np.int64)
        slots = kept_abs % capacity
        first_slot, count = int(slots[0]), len(slots)
        # contiguous slots take slice assignments (cheaper than fancy indexing)
        where = slice(first_slot, first_slot + count) if first_slot + count <= capacity else slots
        self._ensure_allocated(obs_rows, action_leaves, state_leaves)
        self._forget_evicted(slots, kept_abs - capacity, first_abs)

        oldest_row = step_rows[oldest_abs - first_abs] if oldest_abs >= first_abs else \
            self.obs_row[oldest_abs % capacity]
        self.obs_ring.append(obs_rows, int(step_rows[keep_start]) - first_row, int(oldest_row))
        self.obs_row[where] = step_rows[keep]
        for store, new in zip(self.actions, action_leaves):
            store[where] = new[keep]
        if state_leaves is not None:
            for store, new in zip(self.states, state_leaves):
                store[where] = new[keep]
            self.state_is_initial[where] = state_initial[keep]
        self.rewards[where] = rewards[keep]
        self.slot_abs[where] = kept_abs
        self.episode_number[where] = numbers[0] if len(chunks) == 1 else np.repeat(numbers, lengths)[keep]
        self.next_index[where] = (slots + 1) % capacity
        self.terminated[where] = False
        self.truncated[where] = False
        for ep, end in zip(chunks, (first_abs + ends).tolist()):
            if end >= oldest_abs:
                slot = end % capacity
                self.next_index[slot] = -1
                self.terminated[slot] = bool(ep.is_terminated)
                self.truncated[slot] = bool(ep.is_truncated) and not ep.is_terminated
        for prev_abs, chunk_start_abs in links:
            if prev_abs >= oldest_abs:  # else the previous step was overwritten: nothing to link
                self.next_index[prev_abs % capacity] = chunk_start_abs % capacity

        kept_per_chunk = np.maximum(0, ends + 1 - np.maximum(starts, keep_start))
        for number, kept in zip(numbers.tolist(), kept_per_chunk.tolist()):
            if kept:
                self.steps_per_episode[number] = self.steps_per_episode.get(number, 0) + kept
        if len(self.open_episodes) > _MAX_OPEN_BEFORE_PRUNE:
            self.open_episodes = {k: v for k, v in self.open_episodes.items() if v[1] >= oldest_abs}
        return slots

    def _columns(self, chunks, lengths):
        """Per-leaf observation rows (L + 1 per chunk) and actions (L per chunk) of all chunks, concatenated."""
        obs_parts, action_parts = [], []
        for ep, length in zip(chunks, lengths):
            obs = self._leaves(ep.get_observations(), "obs_spec")
            actions = self._leaves(ep.get_actions(), "action_spec")
            self.specs_known = True
            if len(obs[0]) != length + 1:
                raise ValueError(f"Replay buffer: episode {ep.id_} has {len(obs[0])} observations for {length} steps; "
                                 f"expected {length + 1} (one more than actions).")
            obs_parts.append(obs)
            action_parts.append(actions)
        join = lambda parts: [np.concatenate(leaves) for leaves in zip(*parts)]  # noqa: E731
        return join(obs_parts), join(action_parts)

    def _state_columns(self, chunks):
        """Per-leaf states before every step of all chunks, concatenated, and the initial-state flags; (None,
        None) for a stateless module."""
        if not check_all_or_none(chunks):
            if self.states:
                raise ValueError("Replay buffer: these episodes carry no recurrent `state_out`, the stored ones do. "
                                 "Use one buffer per module.")
            return None, None
        if self.actions and not self.states:
            raise ValueError("Replay buffer: these episodes carry a recurrent `state_out`, the stored ones do not. "
                             "Use one buffer per module.")
        parts, flags = [], []
        for ep in chunks:
            states, initial = states_before_steps(ep)
            if self.state_spec is None:
                leaves, self.state_spec = nested.flatten(states)
            else:
                leaves = nested.flatten_like(states, self.state_spec)
            parts.append(leaves)
            flags.append(initial)
        return [np.concatenate(leaves) for leaves in zip(*parts)], np.concatenate(flags)

    def gather_states(self, slots: np.ndarray):
        """(nested states before the steps at `slots`, whether each is the initial state)."""
        return nested.unflatten(self.state_spec, [leaf[slots] for leaf in self.states]), self.state_is_initial[slots]

    def _leaves(self, struct, spec_attr: str) -> List[np.ndarray]:
        if not self.specs_known:
            leaves, spec = nested.flatten(struct)
            setattr(self, spec_attr, spec)
        else:
            leaves = nested.flatten_like(struct, getattr(self, spec_attr))
        return [np.asarray(leaf) for leaf in leaves]

    def _link_chunks(self, chunks, starts, ends, first_abs):
        """Episode numbers of the chunks, and (previous step, chunk start) lifetime numbers linking each
        continuing chunk to its episode's latest earlier step (stored before or earlier in this batch)."""
        numbers = np.empty(len(chunks), np.int64)
        links = []
        for i, (ep, start, end) in enumerate(zip(chunks, starts.tolist(), ends.tolist())):
            entry = self.open_episodes.pop(ep.id_, None)
            if entry is None:
                entry = [self.next_episode_number, -1, 0]
                self.next_episode_number += 1
            number, prev_abs = entry[0], entry[1]
            if prev_abs >= 0:
                links.append((prev_abs, first_abs + start))
            numbers[i] = number
            if not (ep.is_terminated or ep.is_truncated):
                self.open_episodes[ep.id_] = [number, first_abs + end, int(getattr(ep, "t", 0))]
        return numbers, links

    def _check_continuations(self, episodes) -> None:
        """A chunk continuing an unfinished episode must start where it stopped (checked before any change)."""
        expected_t = {}
        for ep in episodes:
            if ep.id_ in expected_t:
                expected = expected_t[ep.id_]
            else:
                entry = self.open_episodes.get(ep.id_)
                expected = entry[2] if entry is not None else None
            t_started = getattr(ep, "t_started", None)
            if expected is not None and t_started is not None and t_started != expected:
                raise ValueError(f"Replay buffer: chunk of episode {ep.id_!r} starts at t={t_started}, but the "
                                 f"stored part of that episode ends at t={expected}. Add an episode's chunks in "
                                 f"order, each starting where the previous one stopped (as EnvRunner.sample() "
                                 f"returns them), or give a new episode a new id_.")
            expected_t[ep.id_] = None if ep.is_terminated or ep.is_truncated else getattr(ep, "t", None)

    def _end_without_steps(self, ep) -> None:
        """A done chunk with no steps: its episode ended at the previous chunk's last step."""
        entry = self.open_episodes.pop(ep.id_, None)
        if entry is not None and entry[1] >= self.num_added - self.capacity:
            slot = entry[1] % self.capacity
            self.terminated[slot] = bool(ep.is_terminated)
            self.truncated[slot] = bool(ep.is_truncated) and not ep.is_terminated

    def _ensure_allocated(self, obs_rows, action_leaves, state_leaves=None) -> None:
        if state_leaves is not None and not self.states:
            self.states = [np.zeros((self.capacity,) + leaf.shape[1:], np.float32) for leaf in state_leaves]
            self.state_is_initial = np.zeros(self.capacity, bool)
        elif state_leaves is not None:
            self._check_shapes(self.states, state_leaves, "recurrent state")
        if self.actions:
            self.obs_ring.check_shapes(obs_rows)
            self._check_shapes(self.actions, action_leaves, "action")
            return
        alloc = lambda leaf: np.zeros((self.capacity,) + leaf.shape[1:], storage_dtype(leaf))  # noqa: E731
        self.actions = [alloc(leaf) for leaf in action_leaves]
        self.obs_row = np.full(self.capacity, -1, np.int64)
        self.rewards = np.zeros(self.capacity, np.float32)
        self.terminated = np.zeros(self.capacity, bool)
        self.truncated = np.zeros(self.capacity, bool)
        self.next_index = np.full(self.capacity, -1, np.int64)
        self.slot_abs = np.full(self.capacity, -1, np.int64)
        self.episode_number = np.full(self.capacity, -1, np.int64)

    @staticmethod
    def _check_shapes(stored: List[np.ndarray], new: List[np.ndarray], what: str) -> None:
        for s, n in zip(stored, new):
            if s.shape[1:] != n.shape[1:]:
                raise ValueError(f"Replay buffer: {what} shape {n.shape[1:]} differs from the stored {s.shape[1:]}. "
                                 f"Use one buffer per observation/action space.")

    def _forget_evicted(self, slots: np.ndarray, old_abs: np.ndarray, first_abs: int) -> None:
        """Drop episode counts of the steps about to be overwritten (stored before this add)."""
        evicted = (old_abs >= 0) & (old_abs < first_abs)
        if not evicted.any():
            return
        evicted_numbers = self.episode_number[slots[evicted]]
        if len(evicted_numbers) < 64:  # the usual small add: a Counter beats np.unique's sort
            counted = Counter(evicted_numbers.tolist()).items()
        else:
            counted = zip(*(part.tolist() for part in np.unique(evicted_numbers, return_counts=True)))
        for number, count in counted:
            left = self.steps_per_episode[number] - count
            if left:
                self.steps_per_episode[number] = left
            else:
                del self.steps_per_episode[number]
                self.num_episodes_evicted += 1

    # ---- reading ---------------------------------------------------------------------------

    def gather_obs(self, slots: np.ndarray, *, next_obs: bool = False):
        rows = self.obs_row[slots] + 1 if next_obs else self.obs_row[slots]
        return nested.unflatten(self.obs_spec, self.obs_ring.gather(rows))

    def gather_actions(self, slots: np.ndarray):
        return nested.unflatten(self.action_spec, [leaf[slots] for leaf in self.actions])

    # ---- state -------------------------------------------------------------------------------

    _ARRAYS = ("rewards", "terminated", "truncated", "next_index", "slot_abs", "episode_number", "obs_row")
    _LEAF_LISTS = ("actions",)

    def get_state(self) -> Dict[str, Any]:
        """Plain data: the stored part of every array, counters and the open-episode table."""
        n = self.num_stored if self.actions else 0
        state: Dict[str, Any] = {
            "capacity": self.capacity,
            "num_added": self.num_added,
            "obs_spec": self.obs_spec,
            "action_spec": self.action_spec,
            "open_episodes": {k: list(v) for k, v in self.open_episodes.items()},
            "next_episode_number": self.next_episode_number,
            "steps_per_episode": [[k, v] for k, v in self.steps_per_episode.items()],
            "num_episodes_evicted": self.num_episodes_evicted,
        }
        if self.states:  # stateful modules only: checkpoints of stateless buffers keep their earlier layout
            state["state_spec"] = self.state_spec
            state["states"] = [leaf[:n].copy() for leaf in self.states]
            state["state_is_initial"] = self.state_is_initial[:n].copy()
        for name in self._ARRAYS:
            state[name] = getattr(self, name)[:n].copy()
        for name in self._LEAF_LISTS:
            state[name] = [leaf[:n].copy() for leaf in getattr(self, name)]
        oldest_row = int(self.obs_row[(self.num_added - n) % self.capacity]) if n else 0
        state["observations"] = self.obs_ring.get_state(oldest_row)
        return state

    _RECURRENT_KEYS = ("state_spec", "states", "state_is_initial")
    _STATE_KEYS = ("capacity", "num_added", "obs_spec", "action_spec", "open_episodes", "next_episode_number",
                   "steps_per_episode", "num_episodes_evicted", "observations") + _ARRAYS + _LEAF_LISTS

    def check_state(self, state: Dict[str, Any], where) -> None:
        """Same capacity, and every stored array as long as the number of stored steps."""
        from relayrl.checkpoints.state_checks import check_int, check_mapping, require

        check_mapping(state, where, known=self._STATE_KEYS + self._RECURRENT_KEYS, required=self._STATE_KEYS,
                      owner="a replay buffer")
        require(state["capacity"] == self.capacity, where / "capacity",
                f"capacity {state['capacity']!r} in the checkpoint, {self.capacity} here: set replay_buffer_config's "
                "capacity as when it was saved.")
        check_int(state["num_added"], where / "num_added", low=0)
        stored = min(state["num_added"], self.capacity) if state["actions"] else 0
        for name in self._ARRAYS:
            value = state[name]
            require(isinstance(value, np.ndarray) and value.ndim == 1 and len(value) == stored, where / name,
                    f"expected {stored} stored steps, found {getattr(value, 'shape', type(value).__name__)}.")
        for i, leaf in enumerate(state.get("states", [])):
            require(isinstance(leaf, np.ndarray) and len(leaf) == stored, where / f"states[{i}]",
                    f"expected {stored} stored states, found {getattr(leaf, 'shape', type(leaf).__name__)}.")
        if "states" in state:
            flags = state.get("state_is_initial")
            require(isinstance(flags, np.ndarray) and flags.shape == (stored,), where / "state_is_initial",
                    f"expected {stored} flags, found {getattr(flags, 'shape', type(flags).__name__)}.")
        for i, leaf in enumerate(state["actions"]):
            require(isinstance(leaf, np.ndarray) and len(leaf) == stored, where / f"actions[{i}]",
                    f"expected {stored} stored actions, found {getattr(leaf, 'shape', type(leaf).__name__)}.")
        rows = check_mapping(state["observations"], where / "observations", owner="a replay buffer",
                             known=("capacity", "num_added", "first_row", "leaves"),
                             required=("capacity", "num_added", "first_row", "leaves"))
        for key in ("capacity", "num_added", "first_row"):
            check_int(rows[key], where / "observations" / key, low=0)
        count = rows["num_added"] - rows["first_row"]
        for i, leaf in enumerate(rows["leaves"] if stored else []):
            require(isinstance(leaf, np.ndarray) and len(leaf) == count and count <= rows["capacity"],
                    where / "observations" / f"leaves[{i}]",
                    f"expected {count} stored observation rows, found {getattr(leaf, 'shape', type(leaf).__name__)}.")

    def set_state(self, state: Dict[str, Any]) -> None:
        if int(state["capacity"]) != self.capacity:
            raise ValueError(f"Replay buffer state has capacity {state['capacity']}, this buffer {self.capacity}. "
                             f"Build the buffer with capacity={state['capacity']} before set_state().")
        self.num_added = int(state["num_added"])
        self.obs_spec, self.action_spec = state["obs_spec"], state["action_spec"]
        self.specs_known = self.num_added > 0
        self.obs_ring = ObservationRing(self.obs_ring.capacity)
        self.open_episodes = {str(k): [int(x) for x in v] for k, v in state["open_episodes"].items()}
        self.next_episode_number = int(state["next_episode_number"])
        self.steps_per_episode = {int(k): int(v) for k, v in state["steps_per_episode"]}
        self.num_episodes_evicted = int(state["num_episodes_evicted"])
        if not state["actions"]:  # nothing was ever added
            self.actions, self.states, self.state_spec = [], [], None
            return
        self.obs_ring.set_state(state["observations"])
        n = len(state["rewards"])

        def full(part, fill):
            part = np.asarray(part)
            array = np.full((self.capacity,) + part.shape[1:], fill, part.dtype)
            array[:n] = part
            return array

        for name in self._ARRAYS:
            setattr(self, name, full(state[name], -1 if name in ("next_index", "slot_abs", "episode_number",
                                                                 "obs_row") else 0))
        for name in self._LEAF_LISTS:
            setattr(self, name, [full(leaf, 0) for leaf in state[name]])
        self.state_spec = state.get("state_spec")
        self.states = [full(leaf, 0) for leaf in state.get("states", [])]
        self.state_is_initial = full(state["state_is_initial"], False) if "states" in state else np.zeros(0, bool)
