"""`VectorStepLog`: a vector env's steps kept as columns until its episodes take them over."""
from typing import List, Optional

import numpy as np

# Column positions; the extra model outputs follow, in their keys' order.
_OBS, _ACTIONS, _REWARDS, _FIRST_EXTRA = 0, 1, 2, 3


class VectorStepLog:
    """The steps of a vector env's ongoing episodes as columns, one row per vector step.

    Writing a step costs one array copy per column, where recording it in the episodes costs one
    `add_env_step` per sub-env; an episode takes its rows in one `add_env_steps` call when it
    ends (numpy'd, by concatenation) or when sampling stops (as items, so it can go on). The
    EnvRunner uses a log only while nothing reads its ongoing episodes between steps: until
    they are handed over, their latest steps are here.

    Steps whose module outputs are not plain arrays with a row per sub-env (dict or tuple
    outputs, lists) do not fit; `write` then returns False and the runner records per episode.
    Use a new log per sampling run: handed-over items may be views of its arrays.
    """

    def __init__(self, num_envs: int, capacity: int):
        self.num_envs = num_envs
        self._capacity = max(int(capacity), 1)
        # obs row r: the observation after step r (for a sub-env whose episode ended there, its final one).
        self._columns: Optional[List[np.ndarray]] = None
        self._signature: list = []  # (dtype, shape) of each column's rows
        self._extra_keys: tuple = ()
        # Per extra key: None (an array) or the paths of its leaves (a nested dict); None if no key nests.
        self._nested_extras: Optional[list] = None
        self._infos: List[Optional[list]] = []  # per row: None (all infos empty) or one dict per sub-env
        self._any_infos = False
        self.rows = 0
        self._first_row = [0] * num_envs  # per sub-env: the first row of its current episode

    def write(self, observations, actions, rewards, extra_model_outputs: dict, infos: Optional[list]) -> bool:
        """Append one vector step: arrays with a leading sub-env axis, `infos` one dict per sub-env
        (None where all are empty). Returns False, writing nothing, if the step does not fit.

        An extra output that is a (nested) dict of such arrays (a recurrent state) takes one column per leaf."""
        extras = extra_model_outputs.values()
        if self._nested_extras is not None:
            try:
                extras = _leaves(extra_model_outputs, self._nested_extras)
            except (KeyError, TypeError, IndexError):
                return False
        values = (observations, actions, rewards, *extras)
        try:  # one comparison checks every value's dtype and shape (lists, dicts, tuples have no dtype)
            signature = [(value.dtype, value.shape) for value in values]
        except AttributeError:
            if self._columns is not None or self._nested_extras is not None or not self._nests(extra_model_outputs):
                return False
            return self.write(observations, actions, rewards, extra_model_outputs, infos)
        if self._columns is None:
            if not self._starts_columns(values, signature, tuple(extra_model_outputs)):
                return False
        elif signature != self._signature or tuple(extra_model_outputs) != self._extra_keys:
            return False
        if self.rows == self._capacity:
            self._grow()
        row = self.rows
        for column, value in zip(self._columns, values):
            column[row] = value
        self._infos.append(infos)
        if infos is not None:
            self._any_infos = True
        self.rows = row + 1
        return True

    def _nests(self, extra_model_outputs: dict) -> bool:
        """Before the first row: lay out dict-valued extras as leaf columns (False: some value is neither)."""
        layout = [_leaf_paths(value) if isinstance(value, dict) else None for value in extra_model_outputs.values()]
        if not any(paths for paths in layout) or any(paths == [] for paths in layout):
            return False
        self._nested_extras = layout
        return True

    def _starts_columns(self, values: tuple, signature: list, extra_keys: tuple) -> bool:
        if not all(type(value) is np.ndarray and value.shape[:1] == (self.num_envs,) for value in values):
            return False
        if values[_REWARDS].dtype != np.float64:  # per-step recording stores Python floats (float64 once numpy'd)
            return False
        self._columns = [np.empty((self._capacity,) + value.shape, value.dtype) for value in values]
        self._signature, self._extra_keys = signature, extra_keys
        return True

    def _grow(self) -> None:
        # A new, larger array per column: items already handed over keep viewing the old ones.
        self._capacity *= 2
        for index, column in enumerate(self._columns):
            grown = np.empty((self._capacity,) + column.shape[1:], column.dtype)
            grown[:self.rows] = column[:self.rows]
            self._columns[index] = grown

    def hand_over(self, env_index: int, episode, *, final_observation=None, final_info: Optional[dict] = None,
                  terminated: bool = False, truncated: bool = False, to_numpy: bool = False,
                  rows: Optional[slice] = None) -> None:
        """Give sub-env `env_index`'s rows since its episode began to `episode`; its next episode
        starts at the next row.

        An ended episode (`terminated` or `truncated`, with the env's final observation and info
        of the last step) is numpy'd; an ongoing one takes its steps as items and can go on, or, with
        `to_numpy` (a chunk about to be cut off), is numpy'd too. `rows`: these rows instead (a slice).
        """
        i, first, end = env_index, self._first_row[env_index], self.rows
        if rows is not None:
            first, end = rows.start, rows.stop
        self._first_row[i] = end
        if end == first:
            return
        columns, ended = self._columns, terminated or truncated
        observations = columns[_OBS][first:end, i]
        if ended:
            if _fits_row(final_observation, columns[_OBS]):
                columns[_OBS][end - 1, i] = final_observation
            else:  # e.g. another dtype: per-step recording would have stacked it with the rest as an item
                observations = list(observations[:-1]) + [final_observation]
        rewards, numpy = columns[_REWARDS][first:end, i], ended or to_numpy
        episode.add_env_steps(
            observations,
            columns[_ACTIONS][first:end, i],
            rewards if numpy else rewards.tolist(),  # items as per-step recording gives them: Python floats
            self._infos_of(i, first, end, final_info if ended else None),
            terminated=terminated,
            truncated=truncated,
            extra_model_outputs=self._extras_of(i, first, end),
            to_numpy=numpy,
        )

    @property
    def extra_keys(self) -> tuple:
        """The extra model outputs' keys, in column order (after the step that started the columns)."""
        return self._extra_keys

    @property
    def flat(self) -> bool:
        """Whether every column is one array per row (no extra output nests dicts: `gather` covers all)."""
        return self._columns is not None and self._nested_extras is None

    def gather(self, env_indices: np.ndarray, first_rows: np.ndarray, end_rows: np.ndarray,
               columns: slice = slice(None)) -> List[np.ndarray]:
        """Rows first..end-1 of many spans (sub-env `env_indices[k]`, `first_rows[k]`, `end_rows[k]`), span
        after span, of the columns `columns` selects (observations, actions, rewards, extras, in that order):
        one fancy-index gather per column (a fresh array) instead of a slice and a copy per span."""
        lengths = end_rows - first_rows
        offsets = np.cumsum(lengths) - lengths
        rows = np.arange(int(lengths.sum())) + np.repeat(first_rows - offsets, lengths)
        envs = np.repeat(env_indices, lengths)
        return [column[rows, envs] for column in self._columns[columns]]

    def row_of(self, env_index: int, row: int):
        """Sub-env `env_index`'s observation at `row` (a view of the log)."""
        return self._columns[_OBS][row, env_index]

    def infos_of(self, env_index: int, first: int, end: int, final_info: Optional[dict] = None) -> list:
        """Sub-env `env_index`'s infos of rows first..end-1 (fresh dicts where the env gave none); with
        `final_info`, that is the last one."""
        return self._infos_of(env_index, first, end, final_info)

    def _extras_of(self, i: int, first: int, end: int) -> dict:
        columns = [column[first:end, i] for column in self._columns[_FIRST_EXTRA:]]
        if self._nested_extras is None:
            return dict(zip(self._extra_keys, columns))
        extras, position = {}, 0
        for key, paths in zip(self._extra_keys, self._nested_extras):
            if paths is None:
                extras[key], position = columns[position], position + 1
                continue
            nested = extras[key] = {}
            for path in paths:
                node = nested
                for name in path[:-1]:
                    node = node.setdefault(name, {})
                node[path[-1]], position = columns[position], position + 1
        return extras

    def _infos_of(self, i: int, first: int, end: int, final_info: Optional[dict]) -> list:
        if self._any_infos:
            infos = [{} if row_infos is None else row_infos[i] for row_infos in self._infos[first:end]]
        else:
            infos = [{} for _ in range(end - first)]
        if final_info is not None:
            infos[-1] = final_info
        return infos

    def skip_row(self, env_index: int) -> None:
        """Sub-env `env_index`'s latest row is no step of its episodes (a NEXT_STEP auto-reset): its
        next episode starts after it."""
        self._first_row[env_index] = self.rows

    def drop_pending(self) -> None:
        """Forget the rows not handed over (their episodes were dropped, e.g. by a reset)."""
        self._first_row = [self.rows] * self.num_envs


def _fits_row(value, column: np.ndarray) -> bool:
    return type(value) is np.ndarray and value.dtype == column.dtype and value.shape == column.shape[2:]


def _leaf_paths(nested: dict, prefix: tuple = ()) -> list:
    """The key paths of a nested dict's leaves, in its order; [] if a leaf is not an array."""
    paths = []
    for key, value in nested.items():
        if isinstance(value, dict):
            sub = _leaf_paths(value, prefix + (key,))
            if not sub:
                return []
            paths += sub
        elif type(value) is np.ndarray:
            paths.append(prefix + (key,))
        else:
            return []
    return paths


def _leaves(extra_model_outputs: dict, layout: list) -> list:
    """The extras' arrays in column order (a nested one's leaves by `layout`'s paths)."""
    leaves = []
    for value, paths in zip(extra_model_outputs.values(), layout):
        if paths is None:
            leaves.append(value)
            continue
        for path in paths:
            leaf = value
            for name in path:
                leaf = leaf[name]
            leaves.append(leaf)
    return leaves
