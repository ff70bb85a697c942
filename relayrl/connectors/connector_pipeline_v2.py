"""`ConnectorPipelineV2`: an ordered, editable list of connector pieces, itself a piece."""
import time
from typing import Any, Dict, List, Optional, Union

import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.suggest import did_you_mean


class ConnectorPipelineV2(ConnectorV2):
    """Calls its pieces in order, each getting its predecessor's batch; chains the spaces through them."""

    def __init__(self, input_observation_space=None, input_action_space=None, *,
                 connectors: Optional[List[ConnectorV2]] = None, **kwargs):
        self.connectors: List[ConnectorV2] = list(connectors or [])
        self.timers: Dict[str, float] = {}
        self._active = None  # (rl_module, pieces as listed, pieces that do something for that module)
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self._fix_spaces()

    def __call__(self, *, rl_module, batch=None, episodes, explore=None, shared_data=None, metrics=None,
                 **kwargs) -> Any:
        batch = {} if batch is None else batch
        shared_data = {} if shared_data is None else shared_data
        for piece in self._active_pieces(rl_module):
            batch = piece(rl_module=rl_module, batch=batch, episodes=episodes, explore=explore,
                          shared_data=shared_data, metrics=metrics, **kwargs)
            if not isinstance(batch, dict):
                _raise_not_a_batch(piece, batch)
        return batch

    def _active_pieces(self, rl_module) -> List[ConnectorV2]:
        """The pieces without those that skip this module (see ConnectorV2.skips); remembered until
        the module or the list of pieces changes, since this runs on every env step."""
        active = self._active
        pieces = tuple(self.connectors)
        if active is None or active[0] is not rl_module or active[1] != pieces:
            active = self._active = (rl_module, pieces, [p for p in pieces if not _skips(p, rl_module)])
        return active[2]

    def reads_episodes(self, rl_module=None) -> bool:
        """Whether a piece that runs for `rl_module` (every piece, without one) reads the episodes' data."""
        pieces = self.connectors if rl_module is None else self._active_pieces(rl_module)
        return any(_reads(piece, rl_module) for piece in pieces)

    def timed_call(self, **kwargs) -> Any:
        """Like calling the pipeline, but accumulates seconds per piece in `self.timers` (profiling)."""
        batch = kwargs.pop("batch", None)
        batch = {} if batch is None else batch
        if kwargs.get("shared_data") is None:
            kwargs["shared_data"] = {}
        for piece in self.connectors:
            start = time.perf_counter()
            batch = piece(batch=batch, **kwargs)
            self.timers[piece.name] = self.timers.get(piece.name, 0.0) + time.perf_counter() - start
            if not isinstance(batch, dict):
                _raise_not_a_batch(piece, batch)
        return batch

    # -- spaces ------------------------------------------------------------------------------
    def _fix_spaces(self) -> None:
        """Feed each piece its predecessor's output spaces; the pipeline outputs the last piece's."""
        obs, act = self.input_observation_space, self.input_action_space
        for piece in self.connectors:
            # Set both inputs first, then recompute once: a piece's output observation space may
            # depend on the action space (and vice versa).
            if obs is not None or act is not None:
                if obs is not None:
                    piece._input_observation_space = obs
                if act is not None:
                    piece._input_action_space = act
                piece._recompute_spaces()
            obs = piece.observation_space if piece.observation_space is not None else obs
            act = piece.action_space if piece.action_space is not None else act
        self._observation_space, self._action_space = obs, act
        self._plan_fast_paths()

    def _plan_fast_paths(self) -> None:
        """Tell each piece whether it may emit whole arrays (every later piece accepts them) and whether
        the episodes it sees are as the EnvRunner wrote them (no earlier piece may have changed them).

        Default pieces then take vectorised paths; a custom piece switches on the general,
        per-episode path only where it sits. Both paths give the same batch.
        """
        pieces = self.connectors
        batched_safe = [_declared(p, "BATCHED_SAFE") for p in pieces]
        writes = [_declared(p, "WRITES_EPISODES") for p in pieces]
        for i, piece in enumerate(pieces):
            piece._downstream_batched_safe = all(batched_safe[i + 1:])
            piece._upstream_episodes_untouched = not any(writes[:i])
        self.BATCHED_SAFE = all(batched_safe)
        self.WRITES_EPISODES = any(writes)
        self._active = None  # the pieces' skips() may have changed

    def _recompute_spaces(self) -> None:
        if hasattr(self, "connectors"):
            self._fix_spaces()

    # -- editing -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.connectors)

    def __getitem__(self, key: Union[int, str, type]) -> Union[ConnectorV2, List[ConnectorV2]]:
        """By position -> the piece; by class or name -> the list of matching pieces."""
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            return self.connectors[int(key)]
        if isinstance(key, (str, type)):
            return [c for c in self.connectors if _matches(c, key)]
        raise TypeError(f"Index a pipeline by int, piece class or piece name, not {type(key).__name__}.")

    def _index_of(self, name_or_class) -> int:
        for i, piece in enumerate(self.connectors):
            if _matches(piece, name_or_class):
                return i
        name = name_or_class if isinstance(name_or_class, str) else name_or_class.__name__
        names = [c.name for c in self.connectors]
        raise ValueError(f"No piece `{name}` in the pipeline {names}.{did_you_mean(name, names)}")

    def append(self, connector: ConnectorV2) -> None:
        self.connectors.append(connector)
        self._fix_spaces()

    def prepend(self, connector: ConnectorV2) -> None:
        self.connectors.insert(0, connector)
        self._fix_spaces()

    def insert_before(self, name_or_class, connector: ConnectorV2) -> ConnectorV2:
        """Insert before the first matching piece; return that piece."""
        i = self._index_of(name_or_class)
        self.connectors.insert(i, connector)
        self._fix_spaces()
        return self.connectors[i + 1]

    def insert_after(self, name_or_class, connector: ConnectorV2) -> ConnectorV2:
        """Insert after the first matching piece; return that piece."""
        i = self._index_of(name_or_class)
        self.connectors.insert(i + 1, connector)
        self._fix_spaces()
        return self.connectors[i]

    def remove(self, name_or_class) -> None:
        """Remove the first piece matching a name or class (as RLlib: a single piece).

        A name or class that matches nothing raises ValueError with a did-you-mean hint.
        """
        del self.connectors[self._index_of(name_or_class)]
        self._fix_spaces()

    # -- state -----------------------------------------------------------------------------
    def _state_keys(self) -> List[str]:
        """State key per piece: its class name (as RLlib), `Name_1`, `Name_2`, ... for repeated classes."""
        seen: Dict[str, int] = {}
        keys = []
        for piece in self.connectors:
            n = seen.get(piece.name, 0)
            seen[piece.name] = n + 1
            keys.append(piece.name if n == 0 else f"{piece.name}_{n}")
        return keys

    def get_state(self, components=None, *, not_components=None, **kwargs) -> Dict[str, Any]:
        """Non-empty piece states keyed by piece class name (see `_state_keys`)."""
        components = [components] if isinstance(components, str) else components
        not_components = [not_components] if isinstance(not_components, str) else not_components
        state = {}
        for key, piece in zip(self._state_keys(), self.connectors):
            if components is not None and key not in components:
                continue
            if not_components is not None and key in not_components:
                continue
            piece_state = piece.get_state()
            if piece_state:
                state[key] = piece_state
        return state

    def set_state(self, state: Dict[str, Any]) -> None:
        for key, piece in zip(self._state_keys(), self.connectors):
            if key in state:
                piece.set_state(state[key])

    def check_state(self, state: Dict[str, Any], where) -> None:
        """Each stored piece state names a piece of this pipeline and fits it."""
        from relayrl.checkpoints.state_checks import check_mapping

        keys = self._state_keys()
        check_mapping(state, where, known=keys, owner=repr(self))
        for key, piece in zip(keys, self.connectors):
            if key in state:
                piece.check_state(state[key], where / key)

    def reset_state(self) -> None:
        for piece in self.connectors:
            piece.reset_state()

    def merge_states(self, states: List[Dict[str, Any]]) -> Dict[str, Any]:
        merged = {}
        for key, piece in zip(self._state_keys(), self.connectors):
            piece_states = [s[key] for s in states if key in s]
            if piece_states:
                merged[key] = piece.merge_states(piece_states)
        return merged

    def __str__(self, indentation: int = 0) -> str:
        lines = [" " * indentation + self.name]
        lines += [piece.__str__(indentation + 4) for piece in self.connectors]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"{self.name}({' -> '.join(c.name for c in self.connectors)})"


def _skips(piece: ConnectorV2, rl_module) -> bool:
    # A subclass that overrides __call__ but not skips() may do something where its parent did nothing.
    return _defined_in(type(piece), "skips") is _defined_in(type(piece), "__call__") and piece.skips(rl_module)


def _reads(piece: ConnectorV2, rl_module) -> bool:
    # As for skips(): a subclass that overrides __call__ but not the declaration may read episodes where its
    # parent did not, so its parent's READS_EPISODES / reads_episodes() is not taken for it.
    declared = _states(piece, "READS_EPISODES") or _states(piece, "reads_episodes")
    return not declared or piece.reads_episodes(rl_module)


def _declared(piece: ConnectorV2, name: str) -> bool:
    """The piece's fast-path declaration `name` (BATCHED_SAFE, WRITES_EPISODES), or ConnectorV2's cautious
    default when the piece's class overrides __call__ without restating it (as for `_reads`)."""
    return getattr(piece if _states(piece, name) else ConnectorV2, name)


def _states(piece: ConnectorV2, name: str) -> bool:
    """Whether `name` is set on the piece itself (a nested pipeline's plan) or by the class that defines
    its __call__ (or a subclass of it), so it speaks for the code that runs."""
    cls = type(piece)
    return name in vars(piece) or issubclass(_defined_in(cls, name), _defined_in(cls, "__call__"))


def _defined_in(cls: type, name: str) -> type:
    return next(c for c in cls.__mro__ if name in vars(c))


def _raise_not_a_batch(piece: ConnectorV2, batch) -> None:
    raise ValueError(
        f"Connector piece {piece.name} returned {type(batch).__name__}, not the batch dict; "
        "a ConnectorV2.__call__ must `return batch`."
    )


def _matches(piece: ConnectorV2, name_or_class) -> bool:
    if isinstance(name_or_class, str):
        return piece.name == name_or_class
    return isinstance(piece, name_or_class)


class EnvToModulePipeline(ConnectorPipelineV2):
    """Episodes -> batch for the RLModule's forward pass that computes actions."""


class ModuleToEnvPipeline(ConnectorPipelineV2):
    """RLModule output -> actions for the (vector) env's step()."""


class LearnerConnectorPipeline(ConnectorPipelineV2):
    """Episodes -> train batch for the Learner's update."""
