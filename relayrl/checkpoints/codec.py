"""State trees <-> JSON + tensors + numpy arrays, with no pickling in either direction.

A state tree holds dicts, lists, tuples, str, bool, int, float, None, numpy arrays and scalars,
torch tensors and numpy Generators. Tensors go into one flat {name: tensor} dict (torch.save,
loaded with weights_only=True), numpy arrays into `.npy` files (allow_pickle=False), the rest
into JSON. Anything else raises a CheckpointError naming where in the state it sits.
"""
from typing import Any, Callable, Dict, List

import numpy as np
import torch

from relayrl.checkpoints.errors import CheckpointError

# JSON markers; a dict whose only key is one of these is a coded value.
TENSOR, ARRAY, ARRAY_LIST, TUPLE, ITEMS, SCALAR, GENERATOR = (
    "__tensor__", "__ndarray__", "__ndarray_list__", "__tuple__", "__items__", "__np_scalar__", "__np_generator__")
_MARKERS = {TENSOR, ARRAY, ARRAY_LIST, TUPLE, ITEMS, SCALAR, GENERATOR}


class Encoder:
    """Collects tensors and arrays while turning a state tree into JSON-able data."""

    def __init__(self):
        self.tensors: Dict[str, torch.Tensor] = {}
        self.arrays: List[np.ndarray] = []

    def encode(self, value: Any, where: str = "state") -> Any:
        if value is None or isinstance(value, (bool, str, float)):
            return value
        if isinstance(value, int):
            return value
        if isinstance(value, torch.Tensor):
            name = f"t{len(self.tensors)}"
            self.tensors[name] = _own_storage(value.detach().cpu())
            return {TENSOR: name}
        if isinstance(value, np.ndarray):
            return {ARRAY: self._add_array(value, where)}
        if isinstance(value, np.generic):
            if value.dtype == object:
                raise _unstorable(value, where)
            return {SCALAR: [value.dtype.str, value.item()]}
        if isinstance(value, np.random.Generator):
            return {GENERATOR: self.encode(value.bit_generator.state, where)}
        if isinstance(value, dict):
            if all(isinstance(k, str) for k in value) and not (len(value) == 1 and next(iter(value)) in _MARKERS):
                return {k: self.encode(v, f"{where}.{k}") for k, v in value.items()}
            return {ITEMS: [[self.encode(k, where), self.encode(v, f"{where}[{k!r}]")] for k, v in value.items()]}
        if isinstance(value, (list, tuple)):
            if isinstance(value, list) and _stackable(value):  # e.g. an ongoing episode's observations: one file, not one per step
                return {ARRAY_LIST: self._add_array(np.stack(value), where)}
            items = [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
            return {TUPLE: items} if isinstance(value, tuple) else items
        raise _unstorable(value, where)

    def _add_array(self, array: np.ndarray, where: str) -> str:
        if array.dtype.hasobject:
            raise CheckpointError(f"Cannot store `{where}`: a numpy array of Python objects (dtype=object) "
                                  "needs pickling; store numeric arrays or plain lists instead.")
        self.arrays.append(array)
        return f"{len(self.arrays) - 1}.npy"


def decode(value: Any, tensor: Callable[[str], torch.Tensor], array: Callable[[str], np.ndarray]) -> Any:
    """Inverse of `Encoder.encode`; `tensor(name)` and `array(file)` fetch the stored data."""
    if isinstance(value, list):
        return [decode(v, tensor, array) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (key, inner), = value.items()
        if key == TENSOR:
            return tensor(inner)
        if key == ARRAY:
            return array(inner)
        if key == ARRAY_LIST:
            return list(array(inner))
        if key == TUPLE:
            return tuple(decode(v, tensor, array) for v in inner)
        if key == ITEMS:
            return {_hashable(decode(k, tensor, array)): decode(v, tensor, array) for k, v in inner}
        if key == SCALAR:
            return np.dtype(inner[0]).type(inner[1])
        if key == GENERATOR:
            return make_generator(decode(inner, tensor, array))
    return {k: decode(v, tensor, array) for k, v in value.items()}


def make_generator(state: dict) -> np.random.Generator:
    """A numpy Generator in the given `bit_generator.state` (only numpy's own bit generators)."""
    name = state.get("bit_generator")
    bit_generator_cls = getattr(np.random, str(name), None)
    if not (isinstance(bit_generator_cls, type) and issubclass(bit_generator_cls, np.random.BitGenerator)):
        raise CheckpointError(f"Unknown numpy bit generator {name!r} in the checkpoint.")
    bit_generator = bit_generator_cls()
    bit_generator.state = state
    return np.random.Generator(bit_generator)


def _own_storage(tensor: torch.Tensor) -> torch.Tensor:
    # torch.save writes a view's whole storage: copy views so a slice does not drag its base along.
    if tensor.untyped_storage().nbytes() != tensor.numel() * tensor.element_size() or not tensor.is_contiguous():
        return tensor.clone(memory_format=torch.contiguous_format)
    return tensor


def _stackable(items) -> bool:
    if len(items) < 2 or not all(type(v) is np.ndarray for v in items):
        return False
    first = items[0]
    return not first.dtype.hasobject and all(v.shape == first.shape and v.dtype == first.dtype for v in items)


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, (list, tuple)) else key


def _unstorable(value, where: str) -> CheckpointError:
    return CheckpointError(
        f"Cannot store `{where}` ({type(value).__module__}.{type(value).__qualname__}) in a checkpoint: "
        "checkpoints hold only numbers, strings, lists, dicts, numpy arrays and torch tensors (never pickles). "
        "Return plain data from the get_state() that produced it.")
