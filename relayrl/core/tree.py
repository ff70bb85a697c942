"""Nested data (dicts and tuples of arrays, e.g. Dict observations or recurrent states)."""


def map_structure(func, *structs):
    """`func` applied leaf-wise to one or more same-shaped dict/tuple structures."""
    first = structs[0]
    if isinstance(first, dict):
        return {k: map_structure(func, *(s[k] for s in structs)) for k in first}
    if isinstance(first, tuple):
        return tuple(map_structure(func, *(s[i] for s in structs)) for i in range(len(first)))
    return func(*structs)


def first_leaf(struct):
    """The first leaf of a dict/tuple structure (e.g. to read a nested batch's length)."""
    while isinstance(struct, (dict, tuple)):
        struct = next(iter(struct.values())) if isinstance(struct, dict) else struct[0]
    return struct
