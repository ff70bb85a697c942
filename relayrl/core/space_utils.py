"""RLlib's space helpers (`ray.rllib.utils.spaces.space_utils`), for modules and connector pieces ported by changing
imports: nested (dict / tuple) structures of spaces, actions and batches. Dict keys keep the space's order
(gymnasium sorts a Dict space's keys when it is built from a dict)."""
from typing import Any, List

import gymnasium as gym
import numpy as np

from relayrl.connectors.module_to_env.normalize_and_clip_actions import clip_action as _clip_box
from relayrl.connectors.module_to_env.normalize_and_clip_actions import unsquash_action as _unsquash_box
from relayrl.core.tree import map_structure


def _leaves(struct) -> list:
    if isinstance(struct, dict):
        return [leaf for value in struct.values() for leaf in _leaves(value)]
    if isinstance(struct, (tuple, list)):
        return [leaf for value in struct for leaf in _leaves(value)]
    return [struct]


def _unflatten_as(struct, leaves):
    """`leaves` (in `_leaves` order) put back into the shape of `struct`."""
    it = iter(leaves)

    def build(s):
        if isinstance(s, dict):
            return {k: build(v) for k, v in s.items()}
        if isinstance(s, (tuple, list)):
            return type(s)(build(v) for v in s)
        return next(it)

    return build(struct)


def get_original_space(space: gym.Space) -> gym.Space:
    """The space a preprocessor flattened (`space.original_space`, followed to the end), else the space itself."""
    while hasattr(space, "original_space"):
        space = space.original_space
    return space


def is_composite_space(space: gym.Space) -> bool:
    """Whether the space holds other spaces (gymnasium's Dict, Tuple, Sequence, Graph)."""
    return type(space) in (gym.spaces.Dict, gym.spaces.Tuple, gym.spaces.Sequence, gym.spaces.Graph)


def flatten_space(space: gym.Space) -> List[gym.Space]:
    """The primitive (non Dict / Tuple) spaces inside `space`, depth first, Dict keys sorted."""
    if isinstance(space, gym.spaces.Tuple):
        return [leaf for sub in space for leaf in flatten_space(sub)]
    if isinstance(space, gym.spaces.Dict):
        return [leaf for key in sorted(space.spaces) for leaf in flatten_space(space[key])]
    return [space]


def get_base_struct_from_space(space: gym.Space):
    """A Dict / Tuple space as a python dict / tuple of its primitive spaces (same nesting)."""
    if isinstance(space, gym.spaces.Tuple):
        return tuple(get_base_struct_from_space(sub) for sub in space)
    if isinstance(space, gym.spaces.Dict):
        return {key: get_base_struct_from_space(sub) for key, sub in space.spaces.items()}
    return space


def flatten_to_single_ndarray(input_) -> np.ndarray:
    """A (nested) list / tuple / dict of arrays as one 1-D array (each leaf flattened, then concatenated); an array
    is returned as it is."""
    if isinstance(input_, (list, tuple, dict)):
        return np.concatenate([np.reshape(leaf, [-1]) for leaf in _leaves(input_)], axis=0)
    return input_


def batch(list_of_structs: List[Any], *, individual_items_already_have_batch_dim: bool = False):
    """A list of (nested) items -> one (nested) struct of batches: leaves stacked along a new axis 0 (concatenated
    when the items already have a batch axis)."""
    if not list_of_structs:
        raise ValueError("batch() got an empty list: give at least one item to batch.")
    join = np.concatenate if individual_items_already_have_batch_dim else np.stack
    return map_structure(lambda *leaves: join([np.asarray(leaf) for leaf in leaves], axis=0), *list_of_structs)


def unbatch(batches_struct) -> list:
    """A (nested) struct of batches -> a list of (nested) items, one per row."""
    leaves = _leaves(batches_struct)
    return [_unflatten_as(batches_struct, [leaf[i] for leaf in leaves]) for i in range(len(leaves[0]))]


def clip_action(action, action_space):
    """Every Box component of `action` clipped to its bounds (`action_space` a space or its base struct)."""
    spaces = get_base_struct_from_space(action_space) if isinstance(action_space, gym.Space) else action_space
    return map_structure(lambda a, s: _clip_box(a, s) if isinstance(s, gym.spaces.Box) else a, action, spaces)


def unsquash_action(action, action_space_struct):
    """Every bounded float Box component mapped from [-1, 1] to its bounds (then clipped)."""
    spaces = get_base_struct_from_space(action_space_struct) if isinstance(action_space_struct, gym.Space) \
        else action_space_struct

    def unsquash(a, s):
        if isinstance(s, gym.spaces.Box) and np.issubdtype(s.dtype, np.floating):
            return _unsquash_box(a, s)
        return a

    return map_structure(unsquash, action, spaces)


def normalize_action(action, action_space_struct):
    """The inverse of unsquash_action: every bounded float Box component mapped from its bounds to [-1, 1]."""
    spaces = get_base_struct_from_space(action_space_struct) if isinstance(action_space_struct, gym.Space) \
        else action_space_struct

    def normalize(a, s):
        if isinstance(s, gym.spaces.Box) and np.issubdtype(s.dtype, np.floating):
            bounded = np.isfinite(s.low) & np.isfinite(s.high)
            low, high = np.where(bounded, s.low, -1.0), np.where(bounded, s.high, 1.0)
            return np.where(bounded, (np.asarray(a) - low) * 2.0 / (high - low) - 1.0, a).astype(s.dtype)
        return a

    return map_structure(normalize, action, spaces)


__all__ = ["get_original_space", "is_composite_space", "flatten_space", "get_base_struct_from_space",
           "flatten_to_single_ndarray", "batch", "unbatch", "clip_action", "unsquash_action", "normalize_action"]
