"""EpisodeReplayBuffer: stores episodes (chunks) as transitions, samples n-step transition batches, or (stateful
modules, `batch_length_T` > 1) sequences with their stored recurrent state (sequence_batch.py)."""
from typing import Any, Dict, Iterable, Optional, Tuple, Union

import numpy as np

from relayrl.core.columns import Columns
from relayrl.core.suggest import did_you_mean
from relayrl.ops.n_step import n_step_lookahead
from relayrl.replay.sequence_batch import build_sequence_batch
from relayrl.replay.transition_storage import TransitionStorage

NStep = Union[int, Tuple[int, int]]

# RLlib keyword arguments accepted (and without effect here) by the constructor and by sample().
_IGNORED_INIT_KWARGS = ("metrics_num_episodes_for_smoothing", "storage_unit", "replay_sequence_length",
                        "replay_burn_in", "replay_zero_init_states", "num_shards")
_IGNORED_SAMPLE_KWARGS = ("include_infos", "include_extra_model_outputs", "finalize", "to_numpy", "lookback",
                          "min_batch_length_T", "sample_episodes")
_SAMPLE_ARGS = ("num_items", "batch_size_B", "batch_length_T", "n_step", "gamma", "beta")

STATE_VERSION = 1


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"`{name}` must be an int >= {minimum}, got {value!r}.")
    return int(value)


def check_unknown_kwargs(kwargs: Dict[str, Any], accepted: Iterable[str], where: str) -> None:
    accepted = list(accepted)
    for key in kwargs:
        if key not in accepted:
            raise TypeError(f"{where} got an unknown argument `{key}`.{did_you_mean(key, accepted)} "
                            f"Accepted: {sorted(accepted)}.")


class EpisodeReplayBuffer:
    """Uniform replay over single-step transitions of the added episodes.

    Args:
        capacity: number of timesteps (transitions) kept; the oldest are dropped first.
        batch_size_B: rows per `sample()` when no size is given.
        batch_length_T: steps per sampled row: 1 (single transitions, the default) or the sequence length for
            stateful modules (then a row is a sequence; see sample()).
        seed: seed of the sampling RNG.
    """

    _checkpoint_kind = "replay buffer"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)

    _INIT_ARGS = ("capacity", "batch_size_B", "batch_length_T", "seed")

    def __init__(self, capacity: int = 10000, *, batch_size_B: int = 16, batch_length_T: int = 1,
                 seed: Optional[int] = None, **kwargs):
        check_unknown_kwargs(kwargs, self._INIT_ARGS + _IGNORED_INIT_KWARGS, type(self).__name__)
        self.capacity = _check_int("capacity", capacity, 1)
        self.batch_size_B = _check_int("batch_size_B", batch_size_B, 1)
        self.batch_length_T = _check_int("batch_length_T", batch_length_T, 1)
        self._storage = TransitionStorage(self.capacity)
        self._rng = np.random.default_rng(seed)
        self._num_sampled = 0  # rows handed out (lifetime)

    # ---- adding ----------------------------------------------------------------------------

    def add(self, episodes) -> None:
        """Store a list of SingleAgentEpisode (as EnvRunner.sample() returns them); a chunk whose `id_`
        matches an earlier, unfinished one continues it."""
        if not isinstance(episodes, (list, tuple)):
            episodes = [episodes]
        for ep in episodes:
            if hasattr(ep, "agent_episodes"):
                raise TypeError(f"{type(self).__name__}.add() takes single-agent episodes; for a MultiAgentEpisode "
                                f"add the agent episodes of the module you train (episode.agent_episodes.values()).")
            if not hasattr(ep, "get_observations"):
                raise TypeError(f"{type(self).__name__}.add() takes SingleAgentEpisode objects, got "
                                f"{type(ep).__name__}. For a MultiAgentEpisode add its agents' episodes.")
        slots = self._storage.add(episodes)
        if slots is not None:
            self._on_written(slots)

    def _on_written(self, slots: np.ndarray) -> None:
        """Hook for subclasses: `slots` now hold new transitions."""

    # ---- sampling ----------------------------------------------------------------------------

    def sample(self, num_items: Optional[int] = None, *, batch_size_B: Optional[int] = None,
               batch_length_T: Optional[int] = None, n_step: NStep = 1, gamma: float = 0.99,
               beta: Optional[float] = None, **kwargs) -> Dict[str, np.ndarray]:
        """A batch of n-step transitions (see docs/replay.md for the columns).

        `batch_length_T` > 1 (stateful modules): `num_items` rows, each a sequence of that many steps from one
        episode with the recurrent state before its first step (sequence_batch.py; docs/stateful_modules.md);
        priorities and importance weights are per sequence."""
        check_unknown_kwargs(kwargs, _SAMPLE_ARGS + _IGNORED_SAMPLE_KWARGS, f"{type(self).__name__}.sample()")
        if kwargs.get("sample_episodes"):
            raise ValueError("sample(sample_episodes=True) is not supported: the buffer returns a dict of "
                             "transition columns (obs, actions, rewards, new_obs, ...).")
        size = self._batch_size(num_items, batch_size_B)
        seq_len = self.batch_length_T if batch_length_T is None else _check_int("batch_length_T", batch_length_T, 1)
        if self._storage.num_stored == 0:
            raise ValueError(f"{type(self).__name__}.sample(): the buffer is empty; add() episodes first.")
        if seq_len > 1:
            n = self._draw_n(n_step, size * seq_len)
            n = n if np.isscalar(n) else n.reshape(size, seq_len)
            slots, weights = self._draw_slots(size, beta)
            self._num_sampled += size * seq_len
            return build_sequence_batch(self._storage, slots, seq_len, n, gamma, weights)
        n = self._draw_n(n_step, size)
        slots, weights = self._draw_slots(size, beta)
        self._num_sampled += size
        return self._build_batch(slots, n, gamma, weights)

    def _batch_size(self, num_items, batch_size_B) -> int:
        if num_items is not None and batch_size_B is not None and num_items != batch_size_B:
            raise ValueError(f"sample(): got num_items={num_items} and batch_size_B={batch_size_B}; pass one.")
        size = batch_size_B if batch_size_B is not None else num_items
        return self.batch_size_B if size is None else _check_int("num_items", size, 1)

    def _draw_n(self, n_step: NStep, size: int):
        if isinstance(n_step, (tuple, list)):
            if len(n_step) != 2:
                raise ValueError(f"`n_step` as a range must be (low, high), got {n_step!r}.")
            low, high = _check_int("n_step[0]", n_step[0], 1), _check_int("n_step[1]", n_step[1], 1)
            if low > high:
                raise ValueError(f"`n_step` range {n_step!r} has low > high.")
            if low == high:
                return low
            # floor(u * k) is uniform over 0..k-1 and cheaper than Generator.integers for small batches
            return (self._rng.random(size) * (high - low + 1)).astype(np.int64) + low
        return _check_int("n_step", n_step, 1)

    def _draw_slots(self, size: int, beta: Optional[float]) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """Slots to sample and their importance weights (None: all ones)."""
        return (self._rng.random(size) * self._storage.num_stored).astype(np.int64), None

    def _build_batch(self, slots, n, gamma, weights) -> Dict[str, np.ndarray]:
        storage = self._storage
        last, returns, steps = n_step_lookahead(slots, n, storage.next_index, storage.rewards, gamma)
        return {
            Columns.OBS: storage.gather_obs(slots),
            Columns.ACTIONS: storage.gather_actions(slots),
            Columns.REWARDS: returns,
            Columns.NEXT_OBS: storage.gather_obs(last, next_obs=True),
            Columns.TERMINATEDS: storage.terminated[last],
            Columns.TRUNCATEDS: storage.truncated[last],
            "n_step": steps,
            "weights": np.ones(len(slots), np.float32) if weights is None else weights,
            "indices": storage.slot_abs[slots],
        }

    def update_priorities(self, priorities, indices) -> None:
        """No-op for uniform sampling (kept so algorithms can call it on any buffer)."""

    # ---- sizes -------------------------------------------------------------------------------

    def get_num_timesteps(self) -> int:
        """Timesteps stored now."""
        return self._storage.num_stored

    def get_added_timesteps(self) -> int:
        """Timesteps ever added (lifetime)."""
        return self._storage.num_added

    def get_num_episodes(self) -> int:
        """Episodes with at least one stored step (chunks of one episode count once)."""
        return self._storage.num_episodes

    def get_sampled_timesteps(self) -> int:
        """Rows ever sampled (lifetime)."""
        return self._num_sampled

    def get_num_episodes_evicted(self) -> int:
        """Episodes dropped entirely to make room (lifetime)."""
        return self._storage.num_episodes_evicted

    def get_metrics(self) -> Dict[str, int]:
        """Counters for result dicts (e.g. under "replay_buffer/")."""
        return {
            "num_env_steps_stored": self.get_num_timesteps(),
            "num_env_steps_added_lifetime": self.get_added_timesteps(),
            "num_env_steps_sampled_lifetime": self.get_sampled_timesteps(),
            "num_episodes_stored": self.get_num_episodes(),
            "num_episodes_evicted_lifetime": self.get_num_episodes_evicted(),
            "capacity": self.capacity,
        }

    def __len__(self) -> int:
        return self._storage.num_stored

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(capacity={self.capacity}, timesteps={len(self)}, "
                f"episodes={self.get_num_episodes()})")

    # ---- state -------------------------------------------------------------------------------

    def get_state(self) -> Dict[str, Any]:
        """Plain data only (numpy arrays, ints, floats, strings, lists, dicts): no pickle needed."""
        return {
            "type": type(self).__name__,
            "version": STATE_VERSION,
            "batch_size_B": self.batch_size_B,
            "num_sampled": self._num_sampled,
            "storage": self._storage.get_state(),
            "rng": self._rng.bit_generator.state,
        }

    _STATE_KEYS = ("type", "version", "batch_size_B", "num_sampled", "storage", "rng")

    def check_state(self, state: Dict[str, Any], where) -> None:
        """Raise a CheckpointError if `state` is not this buffer type's, or its arrays disagree; change nothing."""
        from relayrl.checkpoints.state_checks import check_generator_state, check_int, check_mapping, require

        check_mapping(state, where, known=self._STATE_KEYS, required=self._STATE_KEYS, owner=type(self).__name__)
        require(state["type"] == type(self).__name__, where / "type",
                f"the checkpoint holds a {state['type']}, this algorithm uses a {type(self).__name__}.")
        require(state["version"] == STATE_VERSION, where / "version",
                f"replay buffer state version {state['version']!r} is not supported (expected {STATE_VERSION}).")
        check_int(state["batch_size_B"], where / "batch_size_B", low=1)
        check_int(state["num_sampled"], where / "num_sampled", low=0)
        check_generator_state(state["rng"], where / "rng")
        self._storage.check_state(state["storage"], where / "storage")

    def set_state(self, state: Dict[str, Any]) -> None:
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"Replay buffer state version {state.get('version')!r} is not supported "
                             f"(expected {STATE_VERSION}).")
        self.batch_size_B = int(state["batch_size_B"])
        self._num_sampled = int(state["num_sampled"])
        self._storage.set_state(state["storage"])
        rng_state = state["rng"]
        self._rng = np.random.Generator(getattr(np.random, rng_state["bit_generator"])())
        self._rng.bit_generator.state = rng_state
