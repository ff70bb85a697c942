"""`split_by_module(input_, output)`: a multi-agent recording as one single-agent dataset per module.

Multi-agent recordings (each row naming its agent and module) are not read into multi-agent modules yet; the
readers refuse them and name this function. Each module's dataset holds its agents' rows with the agent left
out, as single-agent recordings are written, so BC, MARWIL, CQL and IQL read it with a single-agent config:

- transition rows: the module's rows, `agent_id` all null; `eps_id` becomes `<episode>/<agent>`, so that two
  agents of one module never share an episode (the importance-sampling estimators group rows by `eps_id`).
- episode rows: each agent's episode (chunk) of the module, its `agent_id`, `module_id` and multi-agent episode
  id cleared; its steps, extra model outputs and id are kept.

Files keep their relative paths under `<output>/<module id>/`, and their schema (Ray Data's tensor metadata).
"""
import os
from typing import Dict, Sequence, Union

from relayrl.offline.deps import require
from relayrl.offline.episode_rows import ITEM_COLUMN, decode_episode_state
from relayrl.offline.files import input_files

_AGENT_ID, _MODULE_ID, _EPS_ID = "agent_id", "module_id", "eps_id"


def split_by_module(input_: Union[str, Sequence[str]], output: str) -> Dict[str, str]:
    """Write `<output>/<module id>/...` for every module of the parquet recording(s) `input_` (local paths);
    returns {module id: its folder}, to pass as `config.offline_data(input_=...)`."""
    pq = require("pyarrow.parquet", "splitting a multi-agent recording")
    _, files = input_files(input_)
    root = os.path.commonpath([os.path.dirname(path) for path in files])
    folders: Dict[str, str] = {}
    for path in files:
        table = pq.read_table(path)
        for module_id, part in _parts_by_module(table, path).items():
            folder = folders.setdefault(module_id, os.path.join(output, str(module_id)))
            target = os.path.join(folder, os.path.relpath(path, root))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            pq.write_table(part, target)
    if not folders:
        raise ValueError(f"split_by_module: {input_!r} holds no multi-agent rows (no row names an agent): read it "
                         "as it is.")
    return folders


def _parts_by_module(table, path: str) -> dict:
    if ITEM_COLUMN in table.column_names:
        return _episode_parts(table)
    if _AGENT_ID not in table.column_names or _MODULE_ID not in table.column_names:
        raise ValueError(f"split_by_module: file {path} has no 'agent_id' and 'module_id' columns: it is not a "
                         "multi-agent recording of transition rows.")
    return _transition_parts(table)


def _transition_parts(table) -> dict:
    pa, pc = require("pyarrow", "splitting"), require("pyarrow.compute", "splitting")
    if table.column(_AGENT_ID).null_count == table.num_rows:  # single-agent rows (a split's output, say)
        return {}
    parts = {}
    for module_id in table.column(_MODULE_ID).unique().to_pylist():
        if module_id is None:
            continue
        part = table.filter(pc.equal(table.column(_MODULE_ID), module_id))
        episode = pc.binary_join_element_wise(pc.cast(part.column(_EPS_ID), pa.string()),
                                              pc.cast(part.column(_AGENT_ID), pa.string()), "/")
        part = part.set_column(part.schema.get_field_index(_EPS_ID), part.schema.field(_EPS_ID).with_type(
            pa.string()), episode)
        index = part.schema.get_field_index(_AGENT_ID)
        parts[module_id] = part.set_column(index, pa.field(_AGENT_ID, pa.null()), pa.nulls(part.num_rows))
    return parts


def _episode_parts(table) -> dict:
    pa = require("pyarrow", "splitting")
    msgpack, mnp = require("msgpack", "splitting"), require("msgpack_numpy", "splitting")
    rows: Dict[str, list] = {}
    for blob in table.column(ITEM_COLUMN).to_pylist():
        state = decode_episode_state(blob)
        if state.get("agent_id") is None:
            continue
        module_id = state.get("module_id")
        state.update(agent_id=None, module_id=None, multi_agent_episode_id=None)
        rows.setdefault(module_id, []).append(msgpack.packb(state, default=mnp.encode))
    field = table.schema.field(ITEM_COLUMN)
    return {module_id: pa.table({ITEM_COLUMN: pa.array(items, type=field.type)}) for module_id, items in rows.items()}


__all__ = ["split_by_module"]
