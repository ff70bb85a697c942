"""Minari (Farama's offline-RL dataset format) in and out.

- Reading: `config.offline_data(input_="minari://<dataset id>")` (a dataset in the local Minari store, see
  `minari.list_local_datasets()`, or "minari://<path to a dataset folder>"): its episodes become transition rows,
  read like parquet rows (shuffled, checked against the spaces).
- Recording: `config.offline_data(output="minari://<dataset id>")`: the EnvRunner's finished episodes go into a
  new Minari dataset (created on the first write, extended on later ones). Minari writes one dataset from one
  process, so this records with in-process EnvRunners only (num_env_runners=0, evaluation_num_env_runners=0).
- Actions: a Minari dataset holds the actions the env got (its convention, which other tools read). Box actions
  are written as the env got them (with normalize_actions, the module's [-1, 1] actions mapped to the space's
  bounds) and read back into the module's range (`env_actions` / `module_actions`).
"""
import functools
import os
import warnings
from typing import Any, List, Optional, Sequence

import numpy as np

from relayrl.core.columns import Columns
from relayrl.offline.deps import require
from relayrl.offline.reader import OfflineDataError, RowBatch

MINARI_PREFIX = "minari://"


def minari_dataset_ids(inputs: Any) -> List[str]:
    """The Minari datasets `input_` names (all its entries must then be Minari datasets)."""
    inputs = [inputs] if isinstance(inputs, str) else list(inputs)
    ids = [i[len(MINARI_PREFIX):] for i in inputs if isinstance(i, str) and i.startswith(MINARI_PREFIX)]
    if ids and len(ids) != len(inputs):
        raise ValueError(f"input_ mixes Minari datasets and files ({inputs}); read one kind at a time.")
    return ids


def load_minari_dataset(dataset_id: str):
    minari = require("minari", "reading Minari datasets")
    if os.path.isdir(dataset_id):
        return minari.MinariDataset(os.path.join(dataset_id, "data") if os.path.isdir(
            os.path.join(dataset_id, "data")) else dataset_id)
    try:
        return minari.load_dataset(dataset_id)
    except Exception as error:
        raise ValueError(f"input_ 'minari://{dataset_id}': no such local Minari dataset ({error}). Local ones: "
                         f"{sorted(minari.list_local_datasets())}; download with `minari download {dataset_id}`.") \
            from None


class MinariEpisodes:
    """The row source (see reader.RowStream) of Minari datasets: each episode's steps as transition rows. Its units
    are the episodes (read one at a time, in a new order each pass when shuffling); `files` names them."""

    def __init__(self, dataset_ids: Sequence[str], *, normalize_actions: bool = False):
        self._names = [MINARI_PREFIX + d for d in dataset_ids]
        self._datasets = [load_minari_dataset(d) for d in dataset_ids]
        self._normalize_actions = normalize_actions  # the env's Box actions -> the module's [-1, 1]
        self._episodes = [(k, int(i)) for k, ds in enumerate(self._datasets) for i in ds.episode_indices]
        self.files = [f"{self._names[k]}, episode {i}" for k, i in self._episodes]  # RowBatch labels, per episode
        self.num_rows = sum(int(ds.total_steps) for ds in self._datasets)
        if not self._episodes or self.num_rows == 0:
            raise OfflineDataError(f"the Minari dataset(s) {dataset_ids} hold no steps.")

    @property
    def num_units(self) -> int:
        return len(self._episodes)

    def unit_chunks(self, unit: int):
        dataset, index = self._episodes[unit]
        episode = next(iter(self._datasets[dataset].iterate_episodes([index])))
        yield self._rows(unit, dataset, episode)

    def units_of(self, file_index: np.ndarray) -> np.ndarray:
        return np.asarray(file_index)

    def fingerprint(self) -> List[list]:
        """[dataset (its episode count), None, steps] per dataset (a Minari dataset is not one file)."""
        return [[f"{name} ({int(ds.total_episodes)} episodes)", None, int(ds.total_steps)]
                for name, ds in zip(self._names, self._datasets)]

    def _rows(self, unit: int, dataset: int, episode) -> RowBatch:
        observations = episode.observations
        if isinstance(observations, (dict, tuple)):
            raise OfflineDataError(f"{self._names[dataset]}: episode {episode.id} has Dict/Tuple observations; "
                                   "relayrl reads Minari datasets with Box or Discrete observations.")
        n = len(episode.rewards)
        columns = {
            Columns.EPS_ID: np.full(n, f"{self._names[dataset]}#{episode.id}", dtype=object),
            Columns.OBS: np.asarray(observations[:-1]),
            Columns.NEXT_OBS: np.asarray(observations[1:]),
            Columns.ACTIONS: module_actions(np.asarray(episode.actions), self._datasets[dataset].action_space,
                                            self._normalize_actions),
            Columns.REWARDS: np.asarray(episode.rewards),
            Columns.TERMINATEDS: np.asarray(episode.terminations, dtype=bool),
            Columns.TRUNCATEDS: np.asarray(episode.truncations, dtype=bool),
        }
        return RowBatch(columns, np.full(n, unit, dtype=np.int32), np.arange(n, dtype=np.int64), self.files)


class MinariWriter:
    """Writes finished single-agent episodes into a Minari dataset (created on the first write)."""

    def __init__(self, dataset_id: str, *, env_spec=None, observation_space=None, action_space=None,
                 normalize_actions: bool = False, clip_actions: bool = False):
        self.dataset_id = dataset_id
        self._to_env = (normalize_actions, clip_actions)  # the module-to-env mapping of Box actions
        self._env_spec = env_spec
        self._spaces = (observation_space, action_space)
        self._dataset = None
        self._ongoing = {}  # episode id -> its chunks so far (truncate_episodes mode hands out chunks)

    def _finished(self, episodes) -> list:
        """The chunks of each episode that ended (chunks of ongoing ones wait; the episodes are not changed)."""
        done = []
        for chunk in episodes:
            if not len(chunk):
                continue
            chunks = self._ongoing.pop(chunk.id_, []) + [chunk]
            if chunk.is_terminated or chunk.is_truncated:
                done.append(chunks)
            else:
                self._ongoing[chunk.id_] = chunks
        return done

    def write(self, episodes) -> int:
        """Add the episodes that ended; returns how many steps were written."""
        minari = require("minari", "recording into a Minari dataset")
        from minari.data_collector import EpisodeBuffer

        actions = functools.partial(env_actions, space=self._spaces[1], normalize_actions=self._to_env[0],
                                    clip_actions=self._to_env[1])
        buffers = [_buffer(e, EpisodeBuffer, actions) for e in self._finished(episodes)]
        if not buffers:
            return 0
        if self._dataset is None:
            obs_space, act_space = self._spaces
            try:
                with warnings.catch_warnings():  # Minari's reminders to fill in author, permalink, ... metadata
                    warnings.simplefilter("ignore", UserWarning)
                    self._dataset = minari.create_dataset_from_buffers(
                        self.dataset_id, buffers, env=self._env_spec, algorithm_name="relayrl",
                        observation_space=obs_space, action_space=act_space,
                        description="Episodes recorded by relayrl's EnvRunners (config.offline_data(output=...)).")
            except ValueError as error:
                raise ValueError(f"output 'minari://{self.dataset_id}': {error} (pick a new dataset id, or delete "
                                 f"the old one: minari.delete_dataset({self.dataset_id!r})).") from None
        else:
            self._dataset.update_dataset_from_buffer(buffers)
        return sum(len(b.rewards) for b in buffers)

    def close(self) -> None:
        """Episodes still going when the EnvRunner stops are not written (Minari holds whole episodes)."""
        self._ongoing = {}


def env_actions(actions: np.ndarray, space, normalize_actions: bool, clip_actions: bool) -> np.ndarray:
    """The module's Box actions as the env got them (NormalizeAndClipActions' mapping); others as they are."""
    import gymnasium as gym

    from relayrl.connectors.module_to_env.normalize_and_clip_actions import clip_action, unsquash_action

    if not isinstance(space, gym.spaces.Box) or not (normalize_actions or clip_actions):
        return actions
    return unsquash_action(actions, space) if normalize_actions else clip_action(actions, space)


def module_actions(actions: np.ndarray, space, normalize_actions: bool) -> np.ndarray:
    """The env's Box actions of a Minari dataset in the module's range: bounded dimensions mapped to [-1, 1] (the
    inverse of env_actions), when the config normalizes actions."""
    import gymnasium as gym

    if not normalize_actions or not isinstance(space, gym.spaces.Box) or actions.shape[1:] != space.shape:
        return actions  # (another shape is left for the row checks to name)
    bounded = np.isfinite(space.low) & np.isfinite(space.high)
    low, high = np.where(bounded, space.low, -1.0), np.where(bounded, space.high, 1.0)
    scaled = (actions - low) * 2.0 / np.where(high > low, high - low, 1.0) - 1.0
    return np.where(bounded, scaled, actions).astype(space.dtype)


def _buffer(chunks, buffer_class, actions=lambda a: a):
    """One Minari episode from an episode's chunks (each chunk's last observation is the next one's first)."""
    observations = np.concatenate([np.asarray(c.get_observations())[:-1] for c in chunks]
                                  + [np.asarray(chunks[-1].get_observations())[-1:]])
    n, last = len(observations) - 1, chunks[-1]
    return buffer_class(observations=observations,
                        actions=actions(np.concatenate([np.asarray(c.get_actions()) for c in chunks])),
                        rewards=[float(r) for c in chunks for r in c.get_rewards()],
                        terminations=[False] * (n - 1) + [bool(last.is_terminated)],
                        truncations=[False] * (n - 1) + [bool(last.is_truncated)])


def minari_output_id(output: Optional[str]) -> Optional[str]:
    if isinstance(output, str) and output.startswith(MINARI_PREFIX):
        return output[len(MINARI_PREFIX):]
    return None


__all__ = ["MINARI_PREFIX", "MinariEpisodes", "MinariWriter", "minari_dataset_ids", "minari_output_id",
           "load_minari_dataset", "env_actions", "module_actions"]
