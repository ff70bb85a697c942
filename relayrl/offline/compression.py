"""RLlib's compressed columns (`output_compress_columns`): base64 text of an LZ4 frame of a pickled numpy array.

Reading unpickles through an unpickler that knows only numpy's array-rebuilding functions, so a data file can
hold arrays and nothing that runs code: anything else is refused with an error naming the file, row and column.
"""
import base64
import io
import pickle
from typing import Any

import numpy as np

from relayrl.offline.deps import require

# The globals a pickled ndarray (numpy 1.x or 2.x, pickle protocols 2-5) refers to.
_ARRAY_GLOBALS = {
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),
}


class CompressedValueError(ValueError):
    """A compressed cell that is not an LZ4-compressed pickled numpy array."""


class _ArraysOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in _ARRAY_GLOBALS:
            return super().find_class(module, name)
        raise CompressedValueError(f"the pickle refers to {module}.{name}, not only to numpy arrays (refused: "
                                   "unpickling it could run code)")


def is_compressed(value: Any) -> bool:
    return isinstance(value, (str, bytes))


def unpack(value) -> np.ndarray:
    """The array in one compressed cell (str or bytes)."""
    lz4_frame = require("lz4.frame", "reading RLlib-compressed columns")
    try:
        data = lz4_frame.decompress(base64.b64decode(value))
    except Exception as error:
        raise CompressedValueError(f"not base64 text of an LZ4 frame ({error})") from None
    try:
        return _ArraysOnly(io.BytesIO(data)).load()
    except CompressedValueError:
        raise
    except Exception as error:
        raise CompressedValueError(f"not a pickled numpy array ({error})") from None


def pack(array) -> str:
    """RLlib's compressed form of one array (what ray.rllib.utils.compression.unpack reads back)."""
    lz4_frame = require("lz4.frame", "writing compressed columns (output_compress_columns)")
    data = pickle.dumps(np.asarray(array), protocol=5)
    return base64.b64encode(lz4_frame.compress(data)).decode("ascii")


__all__ = ["pack", "unpack", "is_compressed", "CompressedValueError"]
