"""Flat leaf lists for nested (Dict / Tuple) observations and actions.

The replay storage keeps one ring array per leaf; a small JSON-able `spec` records how to rebuild
the nesting: None for a plain array, {"dict": [[key, spec], ...]} or {"tuple": [spec, ...]}.
"""
from typing import Any, List, Tuple


def flatten(struct) -> Tuple[List[Any], Any]:
    """(leaves, spec) of a dict/tuple structure of arrays; a plain array is one leaf with spec None."""
    if isinstance(struct, dict):
        leaves, items = [], []
        for key, value in struct.items():
            sub_leaves, sub_spec = flatten(value)
            leaves.extend(sub_leaves)
            items.append([key, sub_spec])
        return leaves, {"dict": items}
    if isinstance(struct, tuple):
        leaves, specs = [], []
        for value in struct:
            sub_leaves, sub_spec = flatten(value)
            leaves.extend(sub_leaves)
            specs.append(sub_spec)
        return leaves, {"tuple": specs}
    return [struct], None


def flatten_like(struct, spec) -> List[Any]:
    """Leaves of `struct` in the order `spec` gives (raises if the nesting differs)."""
    if spec is None:
        if isinstance(struct, (dict, tuple)):
            raise ValueError("Replay buffer: got a nested (Dict/Tuple) value where earlier episodes had a plain array.")
        return [struct]
    if "dict" in spec:
        if not isinstance(struct, dict) or set(struct) != {key for key, _ in spec["dict"]}:
            keys = [key for key, _ in spec["dict"]]
            raise ValueError(f"Replay buffer: expected a dict with keys {keys} (as in earlier episodes), got "
                             f"{list(struct) if isinstance(struct, dict) else type(struct).__name__}.")
        return [leaf for key, sub in spec["dict"] for leaf in flatten_like(struct[key], sub)]
    if not isinstance(struct, tuple) or len(struct) != len(spec["tuple"]):
        raise ValueError(f"Replay buffer: expected a tuple of {len(spec['tuple'])} items (as in earlier episodes).")
    return [leaf for value, sub in zip(struct, spec["tuple"]) for leaf in flatten_like(value, sub)]


def unflatten(spec, leaves: List[Any]):
    """Inverse of `flatten`: rebuild the nesting from leaves (consumed in order)."""
    it = iter(leaves)

    def build(sub):
        if sub is None:
            return next(it)
        if "dict" in sub:
            return {key: build(s) for key, s in sub["dict"]}
        return tuple(build(s) for s in sub["tuple"])

    return build(spec)


def num_leaves(spec) -> int:
    if spec is None:
        return 1
    if "dict" in spec:
        return sum(num_leaves(s) for _, s in spec["dict"])
    return sum(num_leaves(s) for s in spec["tuple"])
