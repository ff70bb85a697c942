"""Which columns the input parquet files store as different arrow types (read from the footers), for the error of
a reader that cannot combine them: Ray Data fails on a Ray tensor column in some files and a plain list column in
others inside its block merge, naming neither the file nor the column."""
from typing import Dict, List, Sequence

from relayrl.offline.arrow_columns import _extension_shape, tensor_shape

_MAX_FILES_READ = 1000  # an error path: footers beyond these are not read
_MAX_NAMED = 2  # files named per kind of a column


def column_kind(field) -> str:
    """A column's arrow type as the reader sees it: Ray Data's tensor type (with its row shape) or the plain type."""
    import pyarrow as pa

    shape = tensor_shape(field)
    if shape is None and isinstance(field.type, pa.ExtensionType):
        shape = _extension_shape(field.type)
    if shape is not None or isinstance(field.type, pa.ExtensionType):
        return f"a Ray Data tensor column (row shape {list(shape) if shape is not None else '?'})"
    return f"a plain {field.type} column"


def mixed_columns(filesystem, files: Sequence[str]) -> str:
    """'column 'obs': a Ray Data tensor column (row shape [4]) in a.parquet, a plain list<...> column in b.parquet'
    for each column whose kind differs between files; "" when all agree or the footers cannot be read."""
    import pyarrow.parquet as pq

    kinds: Dict[str, Dict[str, List[str]]] = {}
    try:
        for path in list(files)[:_MAX_FILES_READ]:
            with filesystem.open_input_file(path) as handle:
                schema = pq.read_schema(handle)
            for field in schema:
                kinds.setdefault(field.name, {}).setdefault(column_kind(field), []).append(path)
    except Exception:  # noqa: BLE001 (a diagnosis only: the caller's error stands without it)
        return ""
    parts = []
    for name, by_kind in kinds.items():
        if len(by_kind) > 1:
            described = (f"{kind} in {_named(paths)}" for kind, paths in by_kind.items())
            parts.append(f"column {name!r}: " + ", ".join(described))
    return "; ".join(parts)


def _named(paths: List[str]) -> str:
    names = ", ".join(paths[:_MAX_NAMED])
    return names + (f" (and {len(paths) - _MAX_NAMED} more)" if len(paths) > _MAX_NAMED else "")
