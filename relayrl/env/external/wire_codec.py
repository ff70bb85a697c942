"""RLlink's message bodies: msgpack, with numpy arrays in msgpack-numpy's layout, and never pickle.

RLlib packs bodies with msgpack patched by msgpack-numpy, which writes an array as the map
`{b"nd": True, b"type": dtype.str, b"kind": b"", b"shape": [...], b"data": raw bytes}` (a numpy
scalar: `{b"nd": False, b"type": ..., b"data": ...}`). relayrl reads and writes that same layout, so
a simulator using RLlib's client code or msgpack-numpy talks to it unchanged. What it does not take
is msgpack-numpy's object arrays (`b"kind": b"O"`, which msgpack-numpy decodes with `pickle.loads`)
and structured ones (`b"V"`): a peer's message never runs code here, whatever bytes it holds.
"""
import itertools
import math
from typing import Any, Optional

import msgpack
import numpy as np

# Array dtypes the wire carries: bool, ints, floats, complex, bytes and unicode strings. Object ('O'),
# structured ('V') and time ('M', 'm') arrays are refused.
_WIRE_KINDS = frozenset("biufcSU")
_MAX_NDIM = 32


class WireFormatError(ValueError):
    """A message body that is not RLlink's msgpack (or holds what RLlink does not carry)."""


def pack(message: Any) -> bytes:
    """msgpack bytes of `message` (dicts, lists, numbers, str, bytes, numpy arrays and scalars, torch tensors)."""
    return msgpack.packb(message, default=_encode, use_bin_type=True)


def unpack(body: bytes, *, max_containers: Optional[int] = None) -> Any:
    """The value `body` holds; a WireFormatError names what is wrong with it.

    `max_containers` bounds the maps and lists it may hold: a few bytes of msgpack can become a Python
    object of ~60 bytes, so the byte limit alone does not bound the memory a hostile body takes.
    """
    object_hook, list_hook = _decode, None
    if max_containers is not None:
        count = itertools.count(1)

        def counted(value):
            if next(count) > max_containers:
                raise WireFormatError(f"the body holds more than {max_containers} maps and lists, this receiver's "
                                      "limit: send fewer episodes per message, or columns as numpy arrays.")
            return value

        object_hook, list_hook = (lambda obj: _decode(counted(obj))), counted
    try:
        return msgpack.unpackb(body, raw=False, object_hook=object_hook, list_hook=list_hook, ext_hook=_refuse_ext,
                               strict_map_key=True)
    except WireFormatError:
        raise
    except msgpack.exceptions.StackError:
        raise WireFormatError("the body is nested too deeply to be a message.") from None
    except msgpack.exceptions.ExtraData:
        raise WireFormatError("the body holds bytes after its msgpack value (a length header too long?).") from None
    except msgpack.exceptions.FormatError:
        raise WireFormatError("the body is not msgpack (it holds a byte msgpack never writes).") from None
    except (ValueError, TypeError, UnicodeDecodeError) as error:
        raise WireFormatError(f"the body is not valid msgpack: {error or type(error).__name__}.") from None


def _encode(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in _WIRE_KINDS:
            raise TypeError(f"RLlink carries no numpy arrays of dtype {obj.dtype} (only numbers, bools and strings).")
        array = np.ascontiguousarray(obj)
        return {b"nd": True, b"type": array.dtype.str, b"kind": b"", b"shape": list(array.shape),
                b"data": array.tobytes()}
    if isinstance(obj, np.generic) and obj.dtype.kind in _WIRE_KINDS:
        return {b"nd": False, b"type": obj.dtype.str, b"data": obj.tobytes()}
    if type(obj).__module__ == "torch" and hasattr(obj, "detach"):  # a tensor (torch is not imported here)
        return _encode(obj.detach().cpu().numpy())
    raise TypeError(f"RLlink cannot carry a {type(obj).__module__}.{type(obj).__qualname__} (in the episodes' "
                    "infos or custom data?): send plain data (numbers, str, bytes, lists, dicts, numpy arrays).")


def _decode(obj: dict) -> Any:
    """msgpack's hook for every map: msgpack-numpy's array / scalar maps become numpy values."""
    if b"nd" not in obj:
        return obj
    dtype = _wire_dtype(obj)
    data = obj.get(b"data")
    if not isinstance(data, bytes):
        raise WireFormatError("a numpy map's b'data' is not bytes.")
    if obj[b"nd"] is False:
        if len(data) != dtype.itemsize:
            raise WireFormatError(f"a numpy scalar of dtype {dtype} holds {len(data)} bytes, not {dtype.itemsize}.")
        return np.frombuffer(data, dtype)[0]
    if obj[b"nd"] is not True:
        raise WireFormatError("a numpy map's b'nd' is neither True nor False.")
    kind = obj.get(b"kind", b"")
    if kind not in (b"", ""):
        raise WireFormatError(f"numpy arrays of kind {kind!r} are refused: msgpack-numpy writes object arrays as "
                              "pickles, and relayrl never unpickles what a peer sends.")
    shape = obj.get(b"shape")
    if not (isinstance(shape, list) and len(shape) <= _MAX_NDIM
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)):
        raise WireFormatError(f"a numpy map's b'shape' is not a list of at most {_MAX_NDIM} sizes >= 0.")
    if math.prod(shape) * dtype.itemsize != len(data):
        raise WireFormatError(f"a numpy array of shape {tuple(shape)} and dtype {dtype} needs "
                              f"{math.prod(shape) * dtype.itemsize} bytes; the message holds {len(data)}.")
    return np.frombuffer(data, dtype).reshape(shape).copy()  # (a copy: frombuffer's view is read-only)


def _wire_dtype(obj: dict) -> np.dtype:
    name = obj.get(b"type")
    if not isinstance(name, str):
        raise WireFormatError("a numpy map's b'type' is not a dtype string such as '<f4'.")
    try:
        dtype = np.dtype(name)
    except (TypeError, ValueError):
        raise WireFormatError(f"a numpy map names an unknown dtype {name[:40]!r}.") from None
    if dtype.kind not in _WIRE_KINDS or dtype.itemsize == 0:
        raise WireFormatError(f"numpy dtype {dtype} is refused (RLlink carries numbers, bools and strings).")
    return dtype


def _refuse_ext(code: int, data: bytes) -> Any:
    raise WireFormatError(f"the body holds a msgpack extension type ({code}), which RLlink does not use.")
