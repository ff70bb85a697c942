"""Arrow columns <-> numpy arrays, in the form Ray Data (and so RLlib) writes and reads them.

A multi-dimensional column (observations, action logits) is Ray Data's tensor column: a `large_list` of the
flattened values per row, with the row shape in the field's metadata (`ARROW:extension:name` =
"ray.data.arrow_tensor_v2", `ARROW:extension:metadata` = the shape as JSON). pyarrow alone reads it as that list;
Ray Data rebuilds its tensor type from the metadata. Scalars per row are plain columns; strings and binary
(compressed cells, episode rows) are object arrays.
"""
import functools
import json
from typing import Any, Optional, Tuple

import numpy as np

from relayrl.offline.deps import require

TENSOR_EXTENSION = b"ray.data.arrow_tensor_v2"
_EXT_NAME, _EXT_META = b"ARROW:extension:name", b"ARROW:extension:metadata"


class ColumnTypeError(TypeError):
    """A column whose arrow type relayrl cannot turn into an array (message without the file; the reader adds it)."""


def tensor_shape(field) -> Optional[Tuple[int, ...]]:
    """The row shape stored in a Ray Data tensor column's metadata (None if it has none or it is not JSON)."""
    metadata = field.metadata or {}
    if metadata.get(_EXT_NAME, b"").startswith(b"ray.data.arrow_tensor") and _EXT_META in metadata:
        return _shape_from_json(metadata[_EXT_META])
    return None


@functools.lru_cache(maxsize=256)
def _shape_from_json(text: bytes) -> Optional[Tuple[int, ...]]:
    try:
        shape = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape):
        return tuple(shape)
    return None


def column_to_numpy(column, field, num_rows: int) -> np.ndarray:
    """One arrow column (Array or ChunkedArray) of `num_rows` rows as a numpy array with the rows first."""
    pa = require("pyarrow", "reading offline data")
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    shape = tensor_shape(field)
    if isinstance(column.type, pa.ExtensionType):  # Ray's tensor type, where ray.data is imported in this process
        shape = shape or _extension_shape(column.type)
        column = column.storage
    kind = column.type
    if pa.types.is_null(kind):
        return np.full(num_rows, None, dtype=object)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _lists_to_numpy(column, shape, num_rows)
    if (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind)
            or pa.types.is_large_binary(kind)):
        return column.to_numpy(zero_copy_only=False)
    if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
        if column.null_count:
            raise ColumnTypeError(f"has {column.null_count} missing (null) values")
        return column.to_numpy(zero_copy_only=False)
    raise ColumnTypeError(f"has arrow type {kind}, which relayrl does not read (numbers, bools, strings and "
                          "tensor lists are read)")


def _extension_shape(kind) -> Optional[Tuple[int, ...]]:
    """The row shape of Ray Data's tensor type (pyarrow builds it from the field metadata when ray.data is loaded)."""
    shape = getattr(kind, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(d, int) and d >= 0 for d in shape):
        return shape
    return None


def _lists_to_numpy(column, shape: Optional[Tuple[int, ...]], num_rows: int) -> np.ndarray:
    pa = require("pyarrow", "reading offline data")
    if column.null_count:
        raise ColumnTypeError(f"has {column.null_count} missing (null) rows")
    values = column.flatten()
    inner_shape: Tuple[int, ...] = ()
    while pa.types.is_list(values.type) or pa.types.is_large_list(values.type) or \
            pa.types.is_fixed_size_list(values.type):  # nested lists (e.g. pandas' 2-D arrays): one more axis
        inner = len(values.flatten()) // max(len(values), 1)
        inner_shape = inner_shape + (inner,)
        values = values.flatten()
    if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)
            or pa.types.is_boolean(values.type)):
        raise ColumnTypeError(f"holds lists of {values.type}, not of numbers")
    flat = values.to_numpy(zero_copy_only=False)
    if shape is None:
        if num_rows and flat.size % num_rows:
            raise ColumnTypeError("holds lists of different lengths (relayrl reads fixed-shape tensors)")
        per_row = flat.size // num_rows if num_rows else 0
        shape = (per_row // max(int(np.prod(inner_shape)), 1),) + inner_shape if inner_shape else (per_row,)
    if flat.size != num_rows * int(np.prod(shape)):
        raise ColumnTypeError(f"holds {flat.size} values for {num_rows} rows of shape {list(shape)}")
    return flat.reshape((num_rows,) + tuple(shape))


def numpy_to_column(values: Any):
    """(arrow array, field metadata or None) for a column of rows: numbers -> a plain column, arrays of any
    shape -> Ray Data's tensor column, anything else (str, bytes, None) -> as pyarrow infers it."""
    pa = require("pyarrow", "writing offline data")
    array = values if isinstance(values, np.ndarray) else None
    if array is None:
        try:
            array = np.asarray(values)
        except ValueError:  # ragged rows
            array = None
    if array is not None and array.dtype != object and array.ndim > 1:
        array = np.ascontiguousarray(array)
        n = array.shape[0]
        per_row = int(np.prod(array.shape[1:]))
        offsets = np.arange(0, n * per_row + 1, per_row, dtype=np.int64)
        flat = pa.array(array.reshape(-1))
        column = pa.LargeListArray.from_arrays(pa.array(offsets), flat)
        return column, {_EXT_NAME: TENSOR_EXTENSION, _EXT_META: json.dumps(list(array.shape[1:])).encode()}
    if array is not None and array.dtype != object:
        return pa.array(array), None
    return pa.array(list(values)), None


__all__ = ["column_to_numpy", "numpy_to_column", "tensor_shape", "ColumnTypeError", "TENSOR_EXTENSION"]
