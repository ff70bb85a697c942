"""Transition rows checked against the spaces before training: RLlib-compressed cells unpacked, observations and
actions of the right shape, dtype and range, rewards finite. The first bad row is reported with its file, row and
column, and the fix; values that pass are cast to the spaces' dtypes (what the module computes with)."""
from typing import Sequence

import gymnasium as gym
import numpy as np

from relayrl.core.columns import Columns
from relayrl.offline.compression import CompressedValueError, is_compressed, unpack
from relayrl.offline.reader import OfflineDataError, RowBatch


def _fail(rows: RowBatch, i: int, column: str, problem: str, fix: str = "") -> None:
    raise OfflineDataError(f"offline data: {rows.where(i)}, column {column!r}: {problem}.{(' ' + fix) if fix else ''}")


def decompress(rows: RowBatch, columns: Sequence[str]) -> None:
    """Unpack RLlib-compressed cells (strings or bytes) of `columns` in place; `obs` also means `new_obs`."""
    names = set(columns) | ({Columns.NEXT_OBS} if Columns.OBS in columns else set())
    for column in names & set(rows.columns):
        values = rows.columns[column]
        if values.dtype != object or not len(values) or not is_compressed(values[0]):
            continue
        arrays = []
        for i, cell in enumerate(values):
            try:
                arrays.append(unpack(cell) if is_compressed(cell) else np.asarray(cell))
            except CompressedValueError as error:
                _fail(rows, i, column, f"a compressed cell that cannot be read: {error}")
        try:
            rows.columns[column] = np.stack(arrays)
        except ValueError:
            shapes = sorted({a.shape for a in arrays})
            _fail(rows, 0, column, f"compressed values of different shapes {shapes[:3]}")


def conform_observations(rows: RowBatch, column: str, space) -> None:
    values = rows.columns[column]
    if isinstance(space, gym.spaces.Box):
        values = _stack_cells(rows, column, values, space.shape)
        _check_numeric(rows, column, values, "observations")
        if values.shape[1:] != space.shape:
            _fail(rows, 0, column, f"observations of shape {list(values.shape[1:])}, but the observation space "
                  f"{space} has shape {list(space.shape)}", "Record with the same env, or set config.environment("
                  "observation_space=...) to the data's space.")
        bad = np.isnan(values.reshape(len(values), -1)).any(axis=1) if values.dtype.kind == "f" else None
        if bad is not None and bad.any():
            _fail(rows, int(np.argmax(bad)), column, "a NaN observation")
        rows.columns[column] = values.astype(space.dtype, copy=False)
    elif isinstance(space, gym.spaces.Discrete):
        rows.columns[column] = _discrete(rows, column, values, space, "observation")
    else:
        raise OfflineDataError(f"offline data: transition rows with {type(space).__name__} observations are not "
                               "supported (Box and Discrete are); record episode rows (output_write_episodes=True) "
                               "and read them with input_read_episodes=True.")


def conform_actions(rows: RowBatch, space) -> None:
    column, values = Columns.ACTIONS, rows.columns[Columns.ACTIONS]
    if isinstance(space, gym.spaces.Discrete):
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        rows.columns[column] = _discrete(rows, column, values, space, "action")
    elif isinstance(space, gym.spaces.Box):
        _check_numeric(rows, column, values, "actions")
        if values.ndim == 1 and space.shape == (1,):
            values = values[:, None]
        if values.shape[1:] != space.shape:
            _fail(rows, 0, column, f"actions of shape {list(values.shape[1:])}, but the action space {space} has "
                  f"shape {list(space.shape)}")
        bad = ~np.isfinite(values.reshape(len(values), -1)).all(axis=1)
        if bad.any():
            _fail(rows, int(np.argmax(bad)), column, "a NaN or infinite action")
        rows.columns[column] = values.astype(space.dtype, copy=False)
    elif isinstance(space, gym.spaces.MultiDiscrete):
        _check_numeric(rows, column, values, "actions")
        if values.shape[1:] != space.shape:
            _fail(rows, 0, column, f"actions of shape {list(values.shape[1:])}, but the action space {space} has "
                  f"shape {list(space.shape)}")
        bad = ((values < 0) | (values >= space.nvec)).reshape(len(values), -1).any(axis=1)
        if bad.any():
            _fail(rows, int(np.argmax(bad)), column, f"action {values[int(np.argmax(bad))].tolist()} outside {space}")
        rows.columns[column] = values.astype(space.dtype, copy=False)
    else:
        raise OfflineDataError(f"offline data: {type(space).__name__} action spaces are not supported in transition "
                               "rows (Discrete, MultiDiscrete and Box are).")


def conform_rewards_and_flags(rows: RowBatch) -> None:
    rewards = rows.columns[Columns.REWARDS]
    _check_numeric(rows, Columns.REWARDS, rewards, "rewards")
    if rewards.ndim != 1:
        _fail(rows, 0, Columns.REWARDS, f"rewards of shape {list(rewards.shape[1:])} per row, not one number")
    bad = ~np.isfinite(rewards)
    if bad.any():
        _fail(rows, int(np.argmax(bad)), Columns.REWARDS, f"a reward of {rewards[int(np.argmax(bad))]}")
    for column in (Columns.TERMINATEDS, Columns.TRUNCATEDS):
        flags = rows.columns[column]
        if flags.dtype != bool:
            _check_numeric(rows, column, flags, "done flags")
            bad = (flags != 0) & (flags != 1)
            if bad.any():
                _fail(rows, int(np.argmax(bad)), column, f"{flags[int(np.argmax(bad))]} is not a bool (True/False)")
            rows.columns[column] = flags.astype(bool)


def check_episode(rows: RowBatch, i: int, episode, obs_space, act_space) -> None:
    """An episode row's observations and actions against the spaces (Box shapes, Discrete ranges) and its rewards
    finite: what the transition checks ensure, named by the row (before, a wrong shape failed the Learner
    pipeline's batching with numpy's concatenate error)."""
    def fail(problem: str) -> None:
        raise OfflineDataError(f"offline data: {rows.where(i)}, column 'item': the episode's {problem}. Record "
                               "with the same env, or remove the file.")

    for what, values, space in (("observations", episode.get_observations(), obs_space),
                                ("actions", episode.get_actions(), act_space)):
        values = np.asarray(values)
        if not len(values) or values.dtype == object:
            continue
        if isinstance(space, gym.spaces.Box) and values.shape[1:] != space.shape:
            fail(f"{what} have shape {list(values.shape[1:])}, but the space {space} has {list(space.shape)}")
        if isinstance(space, gym.spaces.Discrete):
            start = int(getattr(space, "start", 0))
            bad = (values.ndim != 1) or bool(((values < start) | (values >= start + int(space.n))).any())
            if bad:
                fail(f"{what} {values.ravel()[:5].tolist()}... are not all in the space {space}")
    rewards = np.asarray(episode.get_rewards(), dtype=np.float64) if len(episode) else np.zeros(0)
    if not np.isfinite(rewards).all():
        fail(f"rewards hold {rewards[~np.isfinite(rewards)][0]}")


def _stack_cells(rows: RowBatch, column: str, values: np.ndarray, shape) -> np.ndarray:
    """Rows held as one array per cell (Ray Data hands over files of different row shapes so) stacked, or the first
    row whose shape is not the space's named with its file."""
    if values.dtype != object or not len(values) or not isinstance(values[0], np.ndarray):
        return values
    for i, cell in enumerate(values):
        if not isinstance(cell, np.ndarray) or cell.shape != tuple(shape):
            _fail(rows, i, column, f"observations of shape {list(np.shape(cell))}, but the observation space has "
                  f"shape {list(shape)}", "Record with the same env, or remove the file.")
    return np.stack(values)


def _check_numeric(rows: RowBatch, column: str, values: np.ndarray, what: str) -> None:
    if values.dtype.kind not in "biuf":
        _fail(rows, 0, column, f"{what} of dtype {values.dtype} ({type(values[0]).__name__} values), not numbers",
              "If they are RLlib-compressed, list the column in config.offline_data(input_compress_columns=[...]).")


def _discrete(rows: RowBatch, column: str, values: np.ndarray, space, what: str) -> np.ndarray:
    _check_numeric(rows, column, values, f"{what}s")
    if values.ndim != 1:
        _fail(rows, 0, column, f"{what}s of shape {list(values.shape[1:])} per row, but {space} takes one integer")
    start, n = int(getattr(space, "start", 0)), int(space.n)
    bad = (values < start) | (values >= start + n) | (values != np.floor(values))
    if bad.any():
        i = int(np.argmax(bad))
        _fail(rows, i, column, f"{what} {values[i].item()} is outside the space {space}")
    return values.astype(space.dtype, copy=False)


__all__ = ["decompress", "conform_observations", "conform_actions", "conform_rewards_and_flags", "check_episode"]
