"""The old API stack's observation preprocessors: what the Policy API's runners do to an env's observations
before a Policy sees them, as RLlib's `ModelCatalog.get_preprocessor` does.

- Discrete observations become one-hot vectors, MultiDiscrete ones the concatenation of one one-hot per part;
- Dict and Tuple observations are flattened into one vector, each part as its own space would be (a Discrete
  part one-hot, a Box part flattened), in the order of gymnasium's `spaces.flatten`;
- everything else (Box observations of any shape: images stay images, MultiBinary) is left as it is.

The Policy is built for the preprocessed space: a float32 Box whose `original_space` is the env's space
(`policy.observation_space_struct`), and the batches it learns on hold the preprocessed observations, so the
numpy, torch and TF paths all see the same flat vectors. `Algorithm.compute_single_action` preprocesses the
raw observation it is given the same way.
"""
from typing import Optional

import gymnasium as gym
import numpy as np

_ONE_HOT = (gym.spaces.Discrete, gym.spaces.MultiDiscrete)
_FLATTENED = (gym.spaces.Dict, gym.spaces.Tuple)


class Preprocessor:
    """Turns observations of `original_space` into vectors of `observation_space` (see the module docstring)."""

    def __init__(self, original_space: gym.Space):
        self.original_space = original_space
        flat = gym.spaces.flatten_space(original_space)
        self.observation_space = gym.spaces.Box(flat.low.astype(np.float32), flat.high.astype(np.float32),
                                                flat.shape, np.float32)
        self.observation_space.original_space = original_space
        self.shape = self.observation_space.shape

    def transform(self, observation) -> np.ndarray:
        """One observation -> its vector."""
        return np.asarray(gym.spaces.flatten(self.original_space, observation), dtype=np.float32)

    def transform_batch(self, observations) -> np.ndarray:
        """Observations batched as a vector env returns them (an array, or a dict / tuple of arrays for Dict /
        Tuple spaces), or a list of single observations -> [n, size]."""
        if isinstance(observations, list):
            return np.stack([self.transform(o) for o in observations]) if observations else \
                np.zeros((0,) + self.shape, np.float32)
        return _flatten_batch(self.original_space, observations)

    def __repr__(self) -> str:
        return f"Preprocessor({self.original_space} -> {self.observation_space})"


def get_preprocessor(space: gym.Space) -> Optional[Preprocessor]:
    """The preprocessor of observations of `space`, or None where they go to the policy as they are."""
    return Preprocessor(space) if isinstance(space, _ONE_HOT + _FLATTENED) else None


def _flatten_batch(space: gym.Space, batch) -> np.ndarray:
    """A vector env's batch of observations of `space` -> [n, flat size] float32, part by part."""
    if isinstance(space, gym.spaces.Discrete):
        batch = np.asarray(batch).reshape(-1)
        return np.eye(int(space.n), dtype=np.float32)[batch - int(space.start)]
    if isinstance(space, gym.spaces.MultiDiscrete):
        batch = np.asarray(batch).reshape(len(batch), -1) - np.asarray(space.start).reshape(-1)
        return np.concatenate([np.eye(int(n), dtype=np.float32)[batch[:, i]]
                               for i, n in enumerate(np.asarray(space.nvec).reshape(-1))], axis=1)
    if isinstance(space, gym.spaces.Dict):
        return np.concatenate([_flatten_batch(sub, batch[key]) for key, sub in space.spaces.items()], axis=1)
    if isinstance(space, gym.spaces.Tuple):
        return np.concatenate([_flatten_batch(sub, part) for sub, part in zip(space.spaces, batch)], axis=1)
    batch = np.asarray(batch)
    return batch.reshape(len(batch), -1).astype(np.float32, copy=False)


def restore_original_dimensions(obs, obs_space: gym.Space, reshape=None):
    """Flat observations `[..., size]` of a preprocessed Dict / Tuple space -> that structure of parts
    (`obs_space.original_space`, or `obs_space` itself), each `[..., *part shape]` (a Discrete part stays
    one-hot), as RLlib's `restore_original_dimensions` hands `input_dict["obs"]` to a custom model; other
    observations, and ones already in parts, are returned as they are. `reshape(x, shape)` defaults to
    `x.reshape(shape)` (give `tf.reshape` for TF tensors)."""
    space = getattr(obs_space, "original_space", obs_space)
    if not isinstance(space, _FLATTENED) or isinstance(obs, (dict, list, tuple)):
        return obs
    return _unpack(obs, space, reshape or (lambda x, shape: x.reshape(shape)))


def _unpack(flat, space: gym.Space, reshape):
    batch_dims = [-1 if d is None else int(d) for d in flat.shape[:-1]]  # (None: a traced TF batch dimension)
    parts = space.spaces.items() if isinstance(space, gym.spaces.Dict) else enumerate(space.spaces)
    unpacked, offset = {}, 0
    for key, sub in parts:
        size = int(gym.spaces.flatdim(sub))
        piece = flat[..., offset:offset + size]
        offset += size
        if isinstance(sub, _FLATTENED):
            unpacked[key] = _unpack(piece, sub, reshape)
        else:
            shape = (size,) if isinstance(sub, _ONE_HOT) else tuple(sub.shape)
            unpacked[key] = reshape(piece, batch_dims + list(shape))
    return unpacked if isinstance(space, gym.spaces.Dict) else tuple(unpacked.values())


__all__ = ["Preprocessor", "get_preprocessor", "restore_original_dimensions"]
