"""MultiAgentEpisodeReplayBuffer: one single-agent replay buffer per module, fed from MultiAgentEpisodes.

RLlib's multi-agent buffers on the new stack replay each module independently (`replay_mode="independent"`,
the only mode they implement): every agent's steps go to the buffer of the module it maps to
(`episode.module_for(agent_id)`), and `sample()` draws `batch_size_B` transitions for each module on its own,
returning `{module_id: batch}`, the layout the Learner trains on. Chunks of one agent's episode continue each
other across `sample()` calls (the agent episode keeps its id when the multi-agent episode is cut).

Each module's buffer holds up to `capacity` of that module's transitions. Single-agent episodes go to the
module they name (`default_policy` unless set), so the buffer also serves single-agent runs.
"""
import zlib
from typing import Any, Dict, Iterable, List, Optional

from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.replay.episode_replay_buffer import (
    _IGNORED_SAMPLE_KWARGS,
    _SAMPLE_ARGS,
    EpisodeReplayBuffer,
    check_unknown_kwargs,
)
from relayrl.replay.prioritized_episode_replay_buffer import PrioritizedEpisodeReplayBuffer

STATE_VERSION = 1
REPLAY_MODES = ("independent",)


class MultiAgentEpisodeReplayBuffer:
    """Independent replay per module: `add()` takes MultiAgentEpisodes, `sample()` returns `{module_id: batch}`.

    Args:
        capacity: transitions kept per module (the oldest dropped first).
        batch_size_B: rows per module per `sample()` when no size is given.
        replay_mode: "independent" (each module samples its own transitions); RLlib's "lockstep" is not
            implemented on its new API stack either.
        seed: seed of the sampling RNGs (each module's buffer gets one derived from it and its id).
        other keyword arguments: passed to each module's buffer (`MODULE_BUFFER_CLASS`).
    """

    _checkpoint_kind = "replay buffer"
    MODULE_BUFFER_CLASS = EpisodeReplayBuffer
    _INIT_ARGS = EpisodeReplayBuffer._INIT_ARGS + ("replay_mode",)

    def __init__(self, capacity: int = 10000, *, batch_size_B: int = 16, replay_mode: str = "independent",
                 seed: Optional[int] = None, **kwargs):
        if replay_mode not in REPLAY_MODES:
            raise ValueError(f"replay_mode={replay_mode!r} is not supported: multi-agent buffers replay each module "
                             f"independently; use replay_mode='independent' (RLlib's new stack has no other mode).")
        self.replay_mode = replay_mode
        self.seed = seed
        self._module_kwargs = {"capacity": capacity, "batch_size_B": batch_size_B, **kwargs}
        self._template = self._new_module_buffer(None)  # checks the arguments now, not at the first add()
        self.capacity, self.batch_size_B = self._template.capacity, self._template.batch_size_B
        self._buffers: Dict[str, EpisodeReplayBuffer] = {}

    def _new_module_buffer(self, module_id: Optional[str]) -> EpisodeReplayBuffer:
        seed = self.seed
        if seed is not None and module_id is not None:  # a stable, distinct stream per module
            seed = [int(seed), zlib.crc32(str(module_id).encode())]
        return self.MODULE_BUFFER_CLASS(**self._module_kwargs, seed=seed)

    def module_buffer(self, module_id: str) -> EpisodeReplayBuffer:
        """The buffer of `module_id` (created on first use)."""
        buffer = self._buffers.get(module_id)
        if buffer is None:
            buffer = self._buffers[module_id] = self._new_module_buffer(module_id)
        return buffer

    @property
    def module_ids(self) -> List[str]:
        return list(self._buffers)

    def drop_module(self, module_id: str) -> None:
        """Forget `module_id`'s transitions (Algorithm.remove_module)."""
        self._buffers.pop(module_id, None)

    # ---- adding ----------------------------------------------------------------------------

    def add(self, episodes) -> None:
        """Store MultiAgentEpisodes (each agent's steps under the module it maps to) or SingleAgentEpisodes
        (under their `module_id`, default `default_policy`)."""
        if not isinstance(episodes, (list, tuple)):
            episodes = [episodes]
        by_module: Dict[str, list] = {}
        for episode in episodes:
            for module_id, agent_episode in _agent_episodes(episode):
                if len(agent_episode) > 0:
                    by_module.setdefault(module_id, []).append(agent_episode)
        for module_id, agent_episodes in by_module.items():
            self.module_buffer(module_id).add(agent_episodes)

    # ---- sampling ----------------------------------------------------------------------------

    def sample(self, num_items: Optional[int] = None, *, batch_size_B: Optional[int] = None, n_step=1,
               gamma: float = 0.99, beta: Optional[float] = None, modules_to_sample: Optional[Iterable[str]] = None,
               replay_mode: Optional[str] = None, **kwargs) -> Dict[str, Dict[str, Any]]:
        """`{module_id: batch}`: `batch_size_B` n-step transitions for each module in `modules_to_sample`
        (default: every module with stored steps), drawn independently."""
        check_unknown_kwargs(kwargs, _SAMPLE_ARGS + _IGNORED_SAMPLE_KWARGS, f"{type(self).__name__}.sample()")
        if replay_mode not in (None,) + REPLAY_MODES:
            raise ValueError(f"sample(replay_mode={replay_mode!r}): only 'independent' is supported.")
        module_ids = self.module_ids if modules_to_sample is None else list(modules_to_sample)
        module_ids = [m for m in module_ids if m in self._buffers and len(self._buffers[m])]
        if not module_ids:
            raise ValueError(f"{type(self).__name__}.sample(): no module has stored transitions "
                             f"(stored: {self.module_ids}); add() episodes first.")
        return {module_id: self._buffers[module_id].sample(num_items, batch_size_B=batch_size_B, n_step=n_step,
                                                           gamma=gamma, beta=beta, **kwargs)
                for module_id in module_ids}

    @property
    def is_prioritized(self) -> bool:
        return issubclass(self.MODULE_BUFFER_CLASS, PrioritizedEpisodeReplayBuffer)

    def update_priorities(self, priorities, indices, module_id: str = DEFAULT_MODULE_ID) -> None:
        """New priorities for rows `indices` (as sampled) of `module_id`'s buffer."""
        if module_id in self._buffers:
            self._buffers[module_id].update_priorities(priorities, indices)

    # ---- sizes -------------------------------------------------------------------------------

    def _total(self, what: str) -> int:
        return sum(getattr(buffer, what)() for buffer in self._buffers.values())

    def get_num_timesteps(self) -> int:
        """Agent timesteps stored now, summed over the modules."""
        return self._total("get_num_timesteps")

    def get_added_timesteps(self) -> int:
        return self._total("get_added_timesteps")

    def get_num_episodes(self) -> int:
        """Agent episodes with a stored step, summed over the modules."""
        return self._total("get_num_episodes")

    def get_sampled_timesteps(self) -> int:
        return self._total("get_sampled_timesteps")

    def get_num_episodes_evicted(self) -> int:
        return self._total("get_num_episodes_evicted")

    def get_metrics(self) -> Dict[str, Any]:
        return {module_id: buffer.get_metrics() for module_id, buffer in self._buffers.items()}

    def __len__(self) -> int:
        return self.get_num_timesteps()

    def __repr__(self) -> str:
        sizes = {module_id: len(buffer) for module_id, buffer in self._buffers.items()}
        return f"{type(self).__name__}(capacity={self.capacity} per module, timesteps={sizes})"

    # ---- state -------------------------------------------------------------------------------

    def get_state(self) -> Dict[str, Any]:
        return {"type": type(self).__name__, "version": STATE_VERSION,
                "modules": {module_id: buffer.get_state() for module_id, buffer in self._buffers.items()}}

    def check_state(self, state: Dict[str, Any], where) -> None:
        from relayrl.checkpoints.state_checks import check_mapping, require

        keys = ("type", "version", "modules")
        check_mapping(state, where, known=keys, required=keys, owner=type(self).__name__)
        require(state["type"] == type(self).__name__, where / "type",
                f"the checkpoint holds a {state['type']}, this algorithm uses a {type(self).__name__}.")
        require(state["version"] == STATE_VERSION, where / "version",
                f"replay buffer state version {state['version']!r} is not supported (expected {STATE_VERSION}).")
        for module_id, module_state in check_mapping(state["modules"], where / "modules",
                                                     owner=type(self).__name__).items():
            buffer = self._buffers.get(module_id) or self._new_module_buffer(module_id)
            buffer.check_state(module_state, where / "modules" / module_id)

    def set_state(self, state: Dict[str, Any]) -> None:
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"Replay buffer state version {state.get('version')!r} is not supported "
                             f"(expected {STATE_VERSION}).")
        self._buffers = {}
        for module_id, module_state in state["modules"].items():
            self.module_buffer(module_id).set_state(module_state)


class MultiAgentPrioritizedEpisodeReplayBuffer(MultiAgentEpisodeReplayBuffer):
    """Independent prioritized replay per module (`alpha`, `beta` as PrioritizedEpisodeReplayBuffer's)."""

    MODULE_BUFFER_CLASS = PrioritizedEpisodeReplayBuffer
    _INIT_ARGS = PrioritizedEpisodeReplayBuffer._INIT_ARGS + ("replay_mode",)


def multi_agent_buffer_class(module_buffer_class):
    """The multi-agent buffer that keeps one `module_buffer_class` per module (a user's buffer class too)."""
    if issubclass(module_buffer_class, MultiAgentEpisodeReplayBuffer):
        return module_buffer_class
    for cls in (MultiAgentPrioritizedEpisodeReplayBuffer, MultiAgentEpisodeReplayBuffer):
        if cls.MODULE_BUFFER_CLASS is module_buffer_class:
            return cls
    return type(f"MultiAgent{module_buffer_class.__name__}", (MultiAgentEpisodeReplayBuffer,),
                {"MODULE_BUFFER_CLASS": module_buffer_class,
                 "_INIT_ARGS": tuple(getattr(module_buffer_class, "_INIT_ARGS", ())) + ("replay_mode",)})


def _agent_episodes(episode):
    """(module id, single-agent episode) pairs of a MultiAgentEpisode, or of one SingleAgentEpisode."""
    agent_episodes = getattr(episode, "agent_episodes", None)
    if agent_episodes is None:
        if not hasattr(episode, "get_observations"):
            raise TypeError(f"MultiAgentEpisodeReplayBuffer.add() takes MultiAgentEpisode or SingleAgentEpisode "
                            f"objects, got {type(episode).__name__}.")
        return [(getattr(episode, "module_id", None) or DEFAULT_MODULE_ID, episode)]
    return [(agent_episode.module_id or episode.module_for(agent_id), agent_episode)
            for agent_id, agent_episode in agent_episodes.items()]


__all__ = ["MultiAgentEpisodeReplayBuffer", "MultiAgentPrioritizedEpisodeReplayBuffer", "multi_agent_buffer_class"]
