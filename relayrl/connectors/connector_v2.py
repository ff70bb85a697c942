"""`ConnectorV2`: one piece of a connector pipeline (RLlib's API).

A piece is called with the episodes and the batch under construction and returns the batch.
During the "collect" phase a column holds per-episode lists: `batch[column][(eps_id,)] = [items]`
(or a plain list when no episode is given); `BatchIndividualItems` later turns those into arrays.
"""
import abc
import copy
import inspect
from typing import Any, Callable, Dict, List, Optional, Union

import gymnasium as gym
import numpy as np

from relayrl.core.tree import map_structure


class BatchedNdArray(np.ndarray):
    """Marks an array that already has a batch axis (added via `add_n_batch_items`)."""


def _episode_key(single_agent_episode) -> tuple:
    if single_agent_episode.agent_id is not None:
        return (single_agent_episode.multi_agent_episode_id, single_agent_episode.agent_id,
                single_agent_episode.module_id)
    return (single_agent_episode.id_,)


class ConnectorV2(abc.ABC):
    """Base class of all connector pieces and pipelines."""

    _checkpoint_kind = "connector"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)

    # Fast-path declarations, read by the pipeline (see ConnectorPipelineV2._plan_fast_paths).
    # BATCHED_SAFE: the piece also works when columns are already whole arrays (rows in episode
    # order), so earlier pieces may skip the per-episode layout. WRITES_EPISODES: the piece may
    # change episode data. Custom pieces are assumed to need per-episode data and to write episodes.
    BATCHED_SAFE = False
    WRITES_EPISODES = True
    # READS_EPISODES: the piece reads the episodes' data (ids aside). When no piece an EnvRunner calls
    # while sampling does, the runner may hand steps to its ongoing episodes in bulk (VectorStepLog).
    READS_EPISODES = True
    # Set by the enclosing pipeline.
    _downstream_batched_safe = False
    _upstream_episodes_untouched = False

    def __init__(self, input_observation_space: Optional[gym.Space] = None,
                 input_action_space: Optional[gym.Space] = None, **kwargs):
        self._input_observation_space = None
        self._input_action_space = None
        self._observation_space = None
        self._action_space = None
        self._ctor_kwargs = kwargs
        self.input_action_space = input_action_space
        self.input_observation_space = input_observation_space

    # -- spaces ------------------------------------------------------------------------------
    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        """Override if this piece changes the observation space (e.g. frame stacking)."""
        return input_observation_space

    def recompute_output_action_space(self, input_observation_space, input_action_space):
        return input_action_space

    def _recompute_spaces(self) -> None:
        obs, act = self._input_observation_space, self._input_action_space
        self._observation_space = self.recompute_output_observation_space(obs, act) if obs is not None else None
        self._action_space = self.recompute_output_action_space(obs, act) if act is not None else None

    def reads_episodes(self, rl_module=None) -> bool:
        """Whether this piece, placed where it is in its pipeline, reads the episodes' data."""
        return self.READS_EPISODES

    @property
    def input_observation_space(self):
        return self._input_observation_space

    @input_observation_space.setter
    def input_observation_space(self, value):
        self._input_observation_space = value
        if value is not None:
            self._recompute_spaces()

    @property
    def input_action_space(self):
        return self._input_action_space

    @input_action_space.setter
    def input_action_space(self, value):
        self._input_action_space = value
        if value is not None:
            self._recompute_spaces()

    @property
    def observation_space(self):
        return self._observation_space

    @property
    def action_space(self):
        return self._action_space

    # -- the call ----------------------------------------------------------------------------
    @abc.abstractmethod
    def __call__(self, *, rl_module, batch: Dict[str, Any], episodes: List[Any], explore: Optional[bool] = None,
                 shared_data: Optional[dict] = None, metrics=None, **kwargs) -> Any:
        """Read episodes and/or the batch, add to or change them, and return the batch."""

    def skips(self, rl_module) -> bool:
        """True if calling this piece with `rl_module` returns the batch unchanged whatever the batch and
        episodes (e.g. a recurrent-state piece and a stateless module): the pipeline then leaves it out.

        The answer may only depend on the module and on what the enclosing pipeline sets (the
        pipeline remembers it until the module or its list of pieces changes).
        """
        return False

    # -- helpers for writing pieces ----------------------------------------------------------
    @staticmethod
    def single_agent_episode_iterator(episodes, agents_that_stepped_only: bool = True,
                                      zip_with_batch_column=None):
        """Yield the single-agent episodes (multi-agent episodes are broken into their agents).

        With `zip_with_batch_column` (a column of the batch), yield `(episode, item)` pairs: from a
        per-episode column (`{(eps_id,): [items]}`) the episode's items in order (one per yield of
        that episode), from a plain list column (no episode keys) the list's items in episode order.
        """
        if zip_with_batch_column is not None and not isinstance(zip_with_batch_column, (dict, list, tuple)):
            raise TypeError(
                "zip_with_batch_column must be a batch column in the collect phase (a dict "
                f"{{(eps_id,): [items]}} or a list), got {type(zip_with_batch_column).__name__}; "
                "zip before BatchIndividualItems runs."
            )
        list_indices = {}
        position = 0
        for episode in episodes:
            if hasattr(episode, "agent_episodes"):  # multi-agent episode
                ids = episode.get_agents_that_stepped() if agents_that_stepped_only else episode.agent_ids
                sub_episodes = [episode.agent_episodes[aid] for aid in ids]
            else:
                sub_episodes = [episode]
            for sa_episode in sub_episodes:
                if zip_with_batch_column is None:
                    yield sa_episode
                    continue
                if not isinstance(zip_with_batch_column, dict):
                    if position >= len(zip_with_batch_column):
                        raise ValueError(
                            f"zip_with_batch_column has {len(zip_with_batch_column)} items, fewer than the "
                            "episodes iterated over."
                        )
                    item = zip_with_batch_column[position]
                    position += 1
                    yield sa_episode, item
                    continue
                key = _episode_key(sa_episode)
                if key not in zip_with_batch_column:
                    raise KeyError(f"zip_with_batch_column holds no items for episode {key}.")
                i = list_indices.get(key, 0)
                items = zip_with_batch_column[key]
                if i >= len(items):
                    raise ValueError(f"zip_with_batch_column holds only {len(items)} item(s) for episode {key}.")
                list_indices[key] = i + 1
                yield sa_episode, items[i]

    @staticmethod
    def add_batch_item(batch: Dict[str, Any], column: str, item_to_add: Any, single_agent_episode=None) -> None:
        """Append one item to `batch[column]` (under the episode's key when given)."""
        if single_agent_episode is None:
            items = batch.setdefault(column, [])
            if not isinstance(items, list):
                raise ValueError(
                    f"Column `{column}` of the batch holds {type(items).__name__}, not a list; items of one "
                    "column must all be added with an episode or all without one, before "
                    "BatchIndividualItems runs."
                )
            items.append(item_to_add)
            return
        by_episode = batch.setdefault(column, {})
        if not isinstance(by_episode, dict):
            raise ValueError(
                f"Column `{column}` of the batch holds {type(by_episode).__name__}, not per-episode lists: it "
                "is already batched, or its items were added without an episode. Add items before "
                "BatchIndividualItems runs (put your piece earlier in the pipeline) and either always or "
                "never pass `single_agent_episode`."
            )
        by_episode.setdefault(_episode_key(single_agent_episode), []).append(item_to_add)

    @staticmethod
    def add_n_batch_items(batch: Dict[str, Any], column: str, items_to_add: Any, num_items: int,
                          single_agent_episode=None) -> None:
        """Add `num_items` items at once.

        `items_to_add` is a list of single items, or an already batched structure: an array whose
        axis 0 has `num_items` rows, or a dict/tuple of such arrays (e.g. a Dict observation column).
        Batched data is stored as one `BatchedNdArray`-tagged item, which BatchIndividualItems
        concatenates (instead of stacking) with the other items of the column.
        """
        if isinstance(items_to_add, list):
            if len(items_to_add) != num_items:
                raise ValueError(f"add_n_batch_items: got {len(items_to_add)} items, expected {num_items}.")
            for item in items_to_add:
                ConnectorV2.add_batch_item(batch, column, item, single_agent_episode)
            return

        def tag(leaf):
            array = np.asarray(leaf)
            if array.shape[:1] != (num_items,):
                raise ValueError(
                    f"add_n_batch_items: array of shape {array.shape} in column `{column}` does not have "
                    f"{num_items} rows."
                )
            return array.view(BatchedNdArray)

        ConnectorV2.add_batch_item(batch, column, map_structure(tag, items_to_add), single_agent_episode)

    @staticmethod
    def foreach_batch_item_change_in_place(batch: Dict[str, Any], column: Union[str, List[str]],
                                           func: Callable) -> None:
        """Replace every item of `column` by `func(item, eps_id, agent_id, module_id)`.

        With a list of columns, `func` gets a tuple of the items and returns a tuple.
        """
        columns = [column] if isinstance(column, str) else list(column)
        data = [batch[c] for c in columns]
        if not isinstance(data[0], dict):
            for i in range(len(data[0])):
                out = func(data[0][i] if len(columns) == 1 else tuple(d[i] for d in data), None, None, None)
                _assign(data, columns, i, out)
            return
        for key in data[0]:
            eps_id = key[0]
            agent_id, module_id = (key[1], key[2]) if len(key) == 3 else (None, None)
            lists = [d[key] for d in data]
            for i in range(len(lists[0])):
                items = lists[0][i] if len(columns) == 1 else tuple(lst[i] for lst in lists)
                _assign(lists, columns, i, func(items, eps_id, agent_id, module_id))

    # -- state -------------------------------------------------------------------------------
    # Config options this piece holds as attributes of the same name; Learner.apply_hyperparameters (reset_config)
    # sets their new values (e.g. GeneralAdvantageEstimation: gamma, lambda_).
    CONFIG_OPTIONS: tuple = ()

    def get_state(self, components=None, *, not_components=None, **kwargs) -> Dict[str, Any]:
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        pass

    def check_state(self, state: Dict[str, Any], where) -> None:
        """Raise a CheckpointError naming `where` if set_state(state) would fail: tried on a copy of this piece
        (pieces with array state also compare shapes, e.g. MeanStdFilter)."""
        from relayrl.checkpoints.state_checks import check_by_trial

        if type(self).set_state is not ConnectorV2.set_state:
            check_by_trial(lambda: copy.deepcopy(self), state, where)

    def reset_state(self) -> None:
        pass

    def merge_states(self, states: List[Dict[str, Any]]) -> Dict[str, Any]:
        """Combine the states of this piece's copies on several EnvRunners (e.g. filter statistics)."""
        return states[0] if states else {}

    def get_ctor_args_and_kwargs(self):
        return (self._input_observation_space, self._input_action_space), dict(self._ctor_kwargs)

    @property
    def name(self) -> str:
        return type(self).__name__

    def __str__(self, indentation: int = 0) -> str:
        return " " * indentation + self.name



def _assign(containers, columns, i, out):
    if len(columns) == 1:
        containers[0][i] = out
    else:
        for container, value in zip(containers, out):
            container[i] = value


def is_module_keyed(batch, rl_module) -> bool:
    """Whether `batch` is a multi-agent batch keyed by module id ({module_id: {column: ...}}) of the
    MultiRLModule `rl_module` (a single-agent runner's module has no `keys`)."""
    keys = getattr(rl_module, "keys", None)
    if keys is None or not batch:
        return False
    ids = keys()
    return all(key in ids and isinstance(value, dict) for key, value in batch.items())


def call_user_factory(factory: Callable, *args) -> List[ConnectorV2]:
    """Call a user's connector factory with as many of `args` as it accepts; return a list of pieces."""
    try:
        params = inspect.signature(factory).parameters.values()
        if any(p.kind == p.VAR_POSITIONAL for p in params):
            n = len(args)
        else:
            n = sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    except (TypeError, ValueError):
        n = len(args)
    pieces = factory(*args[:n])
    pieces = list(pieces) if isinstance(pieces, (list, tuple)) else [pieces]
    for piece in pieces:
        if not isinstance(piece, ConnectorV2):
            raise TypeError(
                f"The connector factory {getattr(factory, '__name__', factory)} returned {piece!r}; "
                "it must return a ConnectorV2 piece or a list of them."
            )
    return pieces


__all__ = ["ConnectorV2", "BatchedNdArray", "call_user_factory"]
