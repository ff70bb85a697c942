"""PrioritizedEpisodeReplayBuffer: proportional prioritized replay (Schaul et al., 2016).

P(i) = p_i^alpha / sum_k p_k^alpha. New transitions get the largest priority seen so far, so each
is likely to be replayed at least once. Importance weights w_i = (N P(i))^-beta / max_k (N P(k))^-beta,
the max taken over all stored transitions (the one with the smallest priority), as RLlib does;
so weights lie in (0, 1] and do not depend on which other rows were drawn.
"""
from typing import Any, Dict, Optional, Tuple

import numpy as np

from relayrl.replay.episode_replay_buffer import EpisodeReplayBuffer
from relayrl.replay.lazy_leaf_min import LazyLeafMin
from relayrl.replay.segment_tree import SumTree

# Added to |td error| so that no transition gets probability 0.
PRIORITY_EPSILON = 1e-6


def _check_float(name: str, value, minimum: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or value < minimum:
        raise ValueError(f"`{name}` must be a number >= {minimum}, got {value!r}.")
    return float(value)


class PrioritizedEpisodeReplayBuffer(EpisodeReplayBuffer):
    """Like EpisodeReplayBuffer, but samples transitions in proportion to priority^alpha.

    The other arguments are EpisodeReplayBuffer's.

    Args:
        alpha: how strongly priorities count (0: uniform, 1: fully proportional).
        beta: default importance-weight exponent for `sample()` (0: all weights 1, 1: full correction).
    """

    _INIT_ARGS = EpisodeReplayBuffer._INIT_ARGS + ("alpha", "beta")

    def __init__(self, capacity: int = 10000, *, alpha: float = 1.0, beta: float = 0.4, batch_size_B: int = 16,
                 batch_length_T: int = 1, seed: Optional[int] = None, **kwargs):
        super().__init__(capacity, batch_size_B=batch_size_B, batch_length_T=batch_length_T, seed=seed, **kwargs)
        self.alpha = _check_float("alpha", alpha, 0.0)
        self.beta = _check_float("beta", beta, 0.0)
        self._sum_tree = SumTree(self.capacity)
        self._min_priority = LazyLeafMin(self._sum_tree.leaves())  # the weights' normaliser (lazy_leaf_min.py)
        self._max_priority = 1.0

    def _on_written(self, slots: np.ndarray) -> None:
        # Storage writes one contiguous run of slots, wrapping around the end at most once.
        value = self._max_priority ** self.alpha
        first, count = int(slots[0]), len(slots)
        runs = [(first, first + count)] if first + count <= self.capacity else \
            [(first, self.capacity), (0, first + count - self.capacity)]
        for start, stop in runs:
            self._min_priority.before_write(slice(start, stop))
            self._sum_tree.set_range(start, stop, value)
            self._min_priority.after_write(slice(start, stop))

    def _draw_slots(self, size: int, beta: Optional[float]) -> Tuple[np.ndarray, np.ndarray]:
        beta = self.beta if beta is None else _check_float("beta", beta, 0.0)
        total = self._sum_tree.root
        targets = self._rng.random(size) * total
        # Rounding in the tree's partial sums may push a target past the last stored slot.
        slots = np.minimum(self._sum_tree.find_prefix_sum(targets), self._storage.num_stored - 1)
        if beta == 0.0:
            return slots, np.ones(size, np.float32)
        priorities = self._sum_tree.levels[-1][slots]
        # (N P(i))^-beta / (N P_min)^-beta == (p_i / p_min)^-beta
        weights = (priorities / self._min_priority.value(self._storage.num_stored)) ** -beta
        return slots, weights.astype(np.float32)

    def update_priorities(self, priorities, indices) -> None:
        """Set priorities |priorities| + 1e-6 (e.g. TD errors) of the sampled rows `indices` (the batch's
        "indices" column). Rows whose transition was overwritten since sampling are skipped."""
        priorities = np.abs(np.asarray(priorities, np.float64).reshape(-1)) + PRIORITY_EPSILON
        indices = np.asarray(indices, np.int64).reshape(-1)
        if priorities.shape != indices.shape:
            raise ValueError(f"update_priorities(): got {priorities.size} priorities for {indices.size} indices.")
        if not np.all(np.isfinite(priorities)):
            raise ValueError("update_priorities(): priorities contain NaN or inf (check the TD errors / loss).")
        slots = indices % self.capacity
        current = self._storage.slot_abs[slots] == indices
        if not current.all():
            slots, priorities = slots[current], priorities[current]
        if len(slots) == 0:
            return
        values = priorities ** self.alpha
        self._min_priority.before_write(slots)
        self._sum_tree.set(slots, values)
        self._min_priority.after_write(slots)
        self._max_priority = max(self._max_priority, float(priorities.max()))

    def get_priorities(self, indices) -> np.ndarray:
        """Current priorities p_i (before ^alpha) of stored rows `indices`."""
        slots = np.asarray(indices, np.int64) % self.capacity
        values = self._sum_tree.levels[-1][slots]
        return values ** (1.0 / self.alpha) if self.alpha > 0 else values

    # ---- state -------------------------------------------------------------------------------

    def get_state(self) -> Dict[str, Any]:
        state = super().get_state()
        n = self._storage.num_stored
        state.update(alpha=self.alpha, beta=self.beta, max_priority=self._max_priority,
                     priorities_alpha=self._sum_tree.leaves()[:n].copy())
        return state

    _STATE_KEYS = EpisodeReplayBuffer._STATE_KEYS + ("alpha", "beta", "max_priority", "priorities_alpha")

    def check_state(self, state: Dict[str, Any], where) -> None:
        from relayrl.checkpoints.state_checks import check_real, require

        super().check_state(state, where)
        for key in ("alpha", "beta", "max_priority"):
            check_real(state[key], where / key)
        priorities = state["priorities_alpha"]
        stored = min(int(state["storage"]["num_added"]), self.capacity)
        require(isinstance(priorities, np.ndarray) and priorities.shape == (stored,), where / "priorities_alpha",
                f"expected {stored} priorities, found {getattr(priorities, 'shape', priorities)!r}.")

    def set_state(self, state: Dict[str, Any]) -> None:
        super().set_state(state)
        self.alpha, self.beta = float(state["alpha"]), float(state["beta"])
        self._max_priority = float(state["max_priority"])
        values = np.asarray(state["priorities_alpha"], np.float64)
        self._sum_tree.load_leaves(values)
        self._min_priority.forget()
