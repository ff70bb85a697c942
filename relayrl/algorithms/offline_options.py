"""`config.offline_data(...)`: where recorded experience goes (`output`) and where offline algorithms read it
from (`input_`), with RLlib's option names (docs/offline.md).

    config.offline_data(output="/data/cartpole", output_write_episodes=False)   # record while sampling
    BCConfig().offline_data(input_=["/data/cartpole"])                          # train from the files

Reading is embedded by default (pyarrow, streaming, no Ray); with remote Learners, or when asked for
(`input_reader="ray_data"`), through Ray Data, each Learner reading its own shard (relayrl/offline/, and
relayrl/distributed/offline_ray_data.py).
"""
import os
from typing import Any

from relayrl.algorithms.options import (
    BOOL,
    DICT,
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    Check,
    Option,
    either,
    one_of,
    only_default,
    optional,
)
from relayrl.core.columns import Columns


def _is_path(value: Any) -> bool:
    """A non-empty str, or a pathlib.Path (any os.PathLike naming a str path)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    return isinstance(value, str) and value != ""


def _is_input(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_is_path(v) for v in value)
    return _is_path(value)


def _normalize_input(value: Any) -> Any:
    """Paths as str (the config is stored as JSON); a tuple as a list."""
    if isinstance(value, (list, tuple)):
        return [os.fspath(v) for v in value]
    return os.fspath(value)


_INPUT = Check("'sampler' (sample from the env), a path, glob or URI of parquet (or old-stack JSON) files (str or "
               "pathlib.Path), or a non-empty list of them", _is_input, Any, _normalize_input)
def _absolute_local_path(value: Any) -> Any:
    """A relative local folder made absolute here, in the driver: remote EnvRunners may run in another folder."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str) and "://" not in value:
        return os.path.abspath(os.path.expanduser(value))
    return value


_OUTPUT = Check("None (record nothing), or a folder path (str or pathlib.Path) or URI the EnvRunners write their "
                "episodes to", lambda v: v is None or _is_path(v), Any, _absolute_local_path)
_COLUMNS = Check("a list of column names (str)",
                 lambda v: isinstance(v, (list, tuple)) and all(isinstance(c, str) for c in v), list, list)
_FILESYSTEM = Check("None (local paths and URIs pyarrow knows), 's3', 'gcs' or a pyarrow.fs.FileSystem",
                    lambda v: v is None or v in ("s3", "gcs") or type(v).__module__.startswith("pyarrow"), Any)
_READ_METHOD = Check("a ray.data read function's name (str, e.g. 'read_parquet') or a callable",
                     lambda v: (isinstance(v, str) and v.startswith("read_")) or callable(v), Any)
_CLASS_OR_NONE = Check("a class or None", lambda v: v is None or isinstance(v, type), Any)
_SHUFFLE = either(NON_NEGATIVE_INT, one_of("auto"))

OFFLINE_OPTIONS = (
    # -- reading (BC, MARWIL, CQL, IQL) ---------------------------------------------------------
    Option("input_", "sampler", "Where training data comes from: 'sampler' (the env), or parquet files: a path, "
           "glob, folder (read recursively) or URI, or a list of them; 'minari://<dataset id>' reads a Minari "
           "dataset.", "offline_data", _INPUT, key="input"),
    Option("input_reader", "auto", "How offline data is read: 'embedded' (pyarrow, streaming, in the Learner's "
           "process), 'ray_data' (Ray Data, each Learner reading its own shard), 'auto' (Ray Data with remote "
           "Learners or a read method other than read_parquet, else embedded).", "offline_data",
           one_of("auto", "embedded", "ray_data")),
    Option("input_read_method", "read_parquet", "Ray Data's read function (its name, or a callable) for "
           "input_reader='ray_data'; the embedded reader reads parquet, and RLlib's old-stack SampleBatch JSON "
           "with 'read_json' (or *.json files).", "offline_data", _READ_METHOD),
    Option("input_read_method_kwargs", {}, "Keyword arguments for the Ray Data read function (e.g. "
           "override_num_blocks); the embedded reader takes `columns`.", "offline_data", DICT),
    Option("input_read_schema", {}, "Column renames {RLlib column: your column}, e.g. {'obs': 'o_t'}; columns "
           "neither renamed nor RLlib's become extra model outputs.", "offline_data", DICT),
    Option("input_read_episodes", False, "Rows are whole episodes (RLlib's output_write_episodes=True "
           "format) instead of single transitions.", "offline_data", BOOL),
    Option("input_read_sample_batches", False, "The files are RLlib's old-stack SampleBatch JSON lines (what its "
           "old API stack's `output` wrote); *.json files are read so anyway.", "offline_data", BOOL),
    Option("input_read_batch_size", None, "Rows pulled from the files per train batch when a row holds several "
           "timesteps (episodes); None: the train batch size.", "offline_data", optional(POSITIVE_INT)),
    Option("input_filesystem", None, "Filesystem of the input paths: None (local paths and URIs pyarrow knows), "
           "'s3', 'gcs' or a pyarrow.fs.FileSystem.", "offline_data", _FILESYSTEM, cli=False),
    Option("input_filesystem_kwargs", {}, "Keyword arguments for input_filesystem.", "offline_data", DICT),
    Option("input_compress_columns", [Columns.OBS, Columns.NEXT_OBS], "Columns that may hold RLlib's "
           "LZ4-compressed values (decompressed where they are strings).", "offline_data", _COLUMNS),
    Option("materialize_data", False, "Read all rows into memory once (faster epochs, needs the memory); False "
           "streams them.", "offline_data", BOOL),
    Option("materialize_mapped_data", True, "Ray Data: materialize the mapped (decoded) rows.", "offline_data",
           BOOL),
    Option("map_batches_kwargs", {}, "Keyword arguments for Ray Data's map_batches (e.g. concurrency) on the "
           "Ray Data path.", "offline_data", DICT),
    Option("iter_batches_kwargs", {}, "Keyword arguments for Ray Data's iter_batches (e.g. prefetch_batches); "
           "local_shuffle_buffer_size also sets the embedded reader's shuffle buffer.", "offline_data", DICT),
    Option("ignore_final_observation", False, "Use zeros instead of the recorded next observations (for BC, "
           "which does not need them).", "offline_data", BOOL),
    Option("prelearner_class", None, "An OfflinePreLearner subclass turning rows into what the Learner "
           "connector pipeline gets.", "offline_data", _CLASS_OR_NONE, cli=False),
    Option("prelearner_buffer_class", None, "RLlib's episode buffer for episode rows; relayrl streams episodes "
           "through its shuffle buffer instead (only None).", "offline_data",
           only_default(None, "episode rows stream through the shuffle buffer (shuffle_buffer_size)"), cli=False),
    Option("prelearner_buffer_kwargs", {}, "Keyword arguments for prelearner_buffer_class (unused).",
           "offline_data", DICT),
    Option("prelearner_module_synch_period", 10, "Ray Data: batches between weight syncs of a pre-learner's "
           "module (relayrl's Learners run the pipeline themselves, always in sync).", "offline_data",
           POSITIVE_INT),
    Option("prelearner_use_recorded_module_states", False, "Keep recorded recurrent states in episode rows as "
           "the sequences' initial states.", "offline_data", BOOL),
    Option("dataset_num_iters_per_learner", None, "Learner updates per train() call; None: 1 with the local "
           "Learner, one pass over its shard with remote Learners (RLlib's).", "offline_data",
           optional(POSITIVE_INT)),
    Option("shuffle_buffer_size", "auto", "Rows the embedded reader shuffles among (files are also read in a "
           "new order each pass); 0: read in file order; 'auto': max(16 x the train batch, 4096).", "offline_data",
           _SHUFFLE),
    Option("input_restore_position", True, "Restoring a checkpoint continues the embedded reader's pass over "
           "the data where it stopped (file order, file, row, shuffle pool); False starts the pass over (needed "
           "when the input files changed since the checkpoint).", "offline_data", BOOL),
    # -- recording (any algorithm that samples) -------------------------------------------------------------
    Option("output", None, "Folder or URI the EnvRunners write their sampled episodes to (parquet in RLlib's "
           "layout: <output>/<env class>/run-<runner>-<n>/*.parquet); 'minari://<dataset id>' writes a Minari "
           "dataset.", "offline_data", _OUTPUT),
    Option("output_write_episodes", True, "Write whole episodes (one row each, RLlib's msgpack'd episode state) "
           "instead of one row per timestep.", "offline_data", BOOL),
    Option("output_compress_columns", [], "Columns written RLlib-compressed (LZ4 of a pickle, base64); relayrl "
           "writes plain columns by default (RLlib: [obs, new_obs]); both read either way.", "offline_data",
           _COLUMNS),
    Option("output_max_rows_per_file", 10_000, "Rows per file: rows are buffered until a file is full (a crash "
           "loses at most that many); None: every sample() call writes a file (RLlib's default, thousands of small "
           "files for algorithms that sample a few steps at a time).", "offline_data", optional(POSITIVE_INT)),
    Option("output_max_file_size", 64 * 1024 * 1024, "Bytes per file (estimated from the buffered arrays) before "
           "rolling over to a new file.", "offline_data", POSITIVE_INT),
    Option("output_write_remaining_data", True, "Write the last, partly filled file when the EnvRunner stops "
           "(RLlib's default False drops it).", "offline_data", BOOL),
    Option("output_write_method", "write_parquet", "How files are written: parquet only.", "offline_data",
           only_default("write_parquet", "relayrl writes parquet")),
    Option("output_write_method_kwargs", {}, "Keyword arguments for pyarrow.parquet.write_table (e.g. "
           "compression='zstd').", "offline_data", DICT),
    Option("output_filesystem", None, "Filesystem of `output`: None (local paths and URIs pyarrow knows), 's3', "
           "'gcs' or a pyarrow.fs.FileSystem.", "offline_data", _FILESYSTEM, cli=False),
    Option("output_filesystem_kwargs", {}, "Keyword arguments for output_filesystem.", "offline_data", DICT),
    Option("offline_sampling", False, "RLlib's EnvRunner flag for sampling from offline data; relayrl's "
           "offline algorithms read through their Learners (only False).", "offline_data",
           only_default(False, "relayrl's offline algorithms read their data in the Learners")),
    Option("offline_data_class", None, "RLlib's OfflineData subclass; relayrl customises reading through "
           "prelearner_class and Learner connector pieces (only None).", "offline_data",
           only_default(None, "subclass OfflinePreLearner (prelearner_class) or add Learner connector pieces"),
           cli=False),
)

OFFLINE_GROUP_HELP = {
    "offline_data": "Sets offline data: recording the EnvRunners' episodes to files (`output`) and reading "
                    "them for offline training (`input_`), in RLlib's parquet layout (docs/offline.md).",
}


def is_offline_input(value: Any) -> bool:
    """Whether `input_` names files (an offline algorithm reads them) rather than 'sampler'."""
    return value != "sampler"


def check_offline_values(config) -> None:
    """Combinations a single option's check cannot see."""
    if config.input_read_episodes and config.input_read_sample_batches:
        raise ValueError("input_read_episodes and input_read_sample_batches cannot both be True.")
    schema = config.input_read_schema
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in schema.items()):
        raise ValueError(f"input_read_schema must map RLlib column names to your column names (str -> str), "
                         f"got {schema!r}.")


__all__ = ["OFFLINE_OPTIONS", "OFFLINE_GROUP_HELP", "is_offline_input", "check_offline_values"]
