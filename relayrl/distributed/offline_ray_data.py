"""Offline data through Ray Data: `config.offline_data(input_reader="ray_data")`, or any offline algorithm with
remote Learners (num_learners > 0).

The files are read with Ray Data's `input_read_method` (read_parquet; `input_read_method_kwargs`; RLlib's old-stack
SampleBatch JSON with read_text, parsed into transition rows in the read tasks), the dataset is
split with `streaming_split(num_learners, equal=True)`, and each Learner (in its actor) pulls its own shard's
batches (`iter_batches_kwargs`), checks them and runs them through the same row handling and Learner connector
pipeline as the embedded reader (relayrl/offline/offline_data.py). The Learners train data-parallel (DDP): each
update, every Learner takes one batch of its shard, and the gradients are averaged.

`dataset_num_iters_per_learner`: updates per Learner per train(); None runs one pass over each shard (RLlib's).
"""
from typing import Any, Dict, List, Optional

import numpy as np

from relayrl.offline.offline_data import RowHandler, reader_renames, reads_sample_batch_json, required_columns
from relayrl.offline.reader import OfflineDataError, RowBatch, concatenate


PATH_COLUMN = "path"  # read_parquet(include_paths=True): the file each row came from (named in errors)


class RayDataOfflineData:
    """The Ray Data reader of an offline algorithm: one shard per Learner (the local one, or each actor)."""

    def __init__(self, config, spaces, learner_group):
        from relayrl.distributed.ray_setup import ensure_ray_initialized

        ray = ensure_ray_initialized()
        require_a_free_cpu(ray, config)
        self.config = config
        self.dataset, self.num_rows = read_dataset(ray, config)
        if self.num_rows == 0:
            raise ValueError(f"the offline dataset {config.input_!r} is empty (Ray Data read no rows).")
        self._remote = learner_group.is_remote
        if self._remote:
            shards = self.dataset.streaming_split(learner_group.num_learners, equal=True)
            actors = learner_group._remote.actors
            ray.get([actor.apply.remote(attach_shard, shard, config, spaces) for actor, shard in zip(actors, shards)])
            self._actors = actors
        else:
            attach_shard(learner_group._learner, self.dataset.iterator(), config, spaces)
            self._learner = learner_group._learner

    def close(self) -> None:
        """Drop the shards' iterators (before the Learners and Ray go)."""
        if self._remote:
            import ray

            ray.get([actor.apply.remote(detach_shard) for actor in self._actors])
        else:
            detach_shard(self._learner)

    def update_learners(self, learner_group, *, num_iters: Optional[int], timesteps, on_update) -> int:
        """Each Learner trains on `num_iters` batches of its shard (None: one pass); returns the timesteps trained."""
        now = timesteps()
        if self._remote:
            import ray

            steps = sum(ray.get([actor.apply.remote(train_on_shard, num_iters, now) for actor in self._actors]))
        else:
            steps = train_on_shard(self._learner, num_iters, now)
        on_update(steps)
        return steps


def require_a_free_cpu(ray, config) -> None:
    """Raise where the run's actors leave Ray Data's read tasks (1 CPU each) no CPU: training would wait forever.

    Called once the Learner and evaluation EnvRunner actors hold their CPUs; the offline evaluation runners, made
    after the reader, are counted in."""
    later = config.num_offline_eval_runners * config.num_cpus_per_offline_eval_runner
    free = ray.available_resources().get("CPU", 0.0) - later
    if free >= 1:
        return
    total = ray.cluster_resources().get("CPU", 0.0)
    learners = f"{config.num_learners} remote Learner(s)" if config.num_learners else "the run's actors"
    raise ValueError(
        f"Ray Data would read the offline data, but {learners} and the other actors of this run leave "
        f"{max(free, 0):g} of this Ray cluster's {total:g} CPUs free, and Ray Data's read tasks need at least one "
        "(without it, training waits forever). Start Ray with more CPUs (ray.init(num_cpus=...)), use fewer "
        "Learners, or set config.offline_data(input_reader='embedded'): this process then reads and splits each "
        "batch among the Learners.")


def read_dataset(ray, config):
    """(The ray.data.Dataset of config.input_, its rows): files resolved as the embedded reader does, columns
    renamed; parquet rows counted from the files' footers."""
    from relayrl.offline.files import input_files
    from relayrl.offline.reader import ParquetFiles

    read = config.input_read_method
    read = getattr(ray.data, read) if isinstance(read, str) else read
    kwargs = dict(config.input_read_method_kwargs or {})
    filesystem, files = input_files(config.input_, filesystem=config.input_filesystem,
                                    filesystem_kwargs=config.input_filesystem_kwargs)
    if reads_sample_batch_json(config, files):
        dataset = read_sample_batch_json(ray, config, files, kwargs)
        dataset = dataset.materialize() if config.materialize_data else dataset
        return dataset, dataset.count()
    parquet = read is ray.data.read_parquet
    if parquet:
        kwargs.setdefault("include_paths", True)
    dataset = read(files, **kwargs)
    renames = reader_renames(config)
    if renames:
        dataset = dataset.rename_columns({k: v for k, v in renames.items() if k in dataset.schema().names})
    dataset = dataset.materialize() if config.materialize_data else dataset
    return dataset, ParquetFiles(filesystem, files).num_rows if parquet else dataset.count()


def read_sample_batch_json(ray, config, files, read_kwargs):
    """RLlib's old-stack SampleBatch JSON through Ray Data: `read_text` reads the lines (with their file), and the
    read tasks parse each into its transition rows with the embedded reader's LineParser (same checks, and errors
    naming the file and column; Ray Data keeps no line numbers). read_json would infer one arrow type per key
    over the lines, which old-stack batches (compressed strings, info dicts) do not always fit."""
    from relayrl.offline.sample_batch_json import LineParser

    parser = LineParser(required=required_columns(config), rename=reader_renames(config))

    def transition_rows(line: Dict[str, Any]) -> List[Dict[str, Any]]:
        where = f"file {line[PATH_COLUMN]}"
        arrays = parser.arrays(parser.raw_columns(line["text"], where), where)
        n = len(next(iter(arrays.values()))) if arrays else 0
        return [{**{name: values[i] for name, values in arrays.items()}, PATH_COLUMN: line[PATH_COLUMN]}
                for i in range(n)]

    return ray.data.read_text(files, include_paths=True, **read_kwargs).flat_map(transition_rows)


class ShardRows:
    """A Learner's shard as row batches of any size (Ray Data's numpy batches, queued)."""

    def __init__(self, iterator, config):
        self._iterator = iterator
        self._config = config
        self._kwargs = {k: v for k, v in (config.iter_batches_kwargs or {}).items() if k != "batch_size"}
        self._batch_rows = config.train_batch_size_per_learner
        self._queue: List[RowBatch] = []
        self._batches = None
        self.pass_ended = False

    def _next_ray_batch(self) -> RowBatch:
        if self._batches is None:
            self._batches = iter(self._iterator.iter_batches(batch_size=self._batch_rows, batch_format="numpy",
                                                             **self._kwargs))
        try:
            columns = next(self._batches)
        except StopIteration:
            self._batches = None  # the next call starts a new pass
            self.pass_ended = True
            raise
        except Exception as error:  # Ray Data's block merge names no file: name the files' differing columns
            raise_mixed_columns(self._config, error)
            raise
        return _row_batch(columns)

    def close(self) -> None:
        """End the pass's iteration now, while Ray is up: a generator left open is closed at garbage collection,
        where Ray Data's cleanup reports to its stats actor and prints tracebacks once Ray has shut down."""
        close = getattr(self._batches, "close", None)  # Ray Data's iterators are generators
        if close is not None:
            close()
        self._batches = None
        self._queue = []

    def next_rows(self, num_rows: int) -> RowBatch:
        have = sum(len(b) for b in self._queue)
        while have < num_rows:
            try:
                batch = self._next_ray_batch()
            except StopIteration:
                if have:
                    break  # the pass's last, partial batch
                batch = self._next_ray_batch()
            self._queue.append(batch)
            have += len(batch)
        rows = concatenate(self._queue)
        take = min(num_rows, len(rows))
        self._queue = [rows.take(slice(take, None))] if take < len(rows) else []
        return rows.take(slice(0, take))


def raise_mixed_columns(config, error: Exception) -> None:
    """An OfflineDataError naming the columns the input files store as different types, where some do (Ray Data
    merges a Ray tensor column and a plain list column of other files with a ValueError that names neither)."""
    from relayrl.offline.files import input_files
    from relayrl.offline.mixed_columns import mixed_columns

    if not isinstance(error, (ValueError, TypeError)):  # (Ray's task errors are also their cause's class)
        return
    try:
        filesystem, files = input_files(config.input_, filesystem=config.input_filesystem,
                                        filesystem_kwargs=config.input_filesystem_kwargs)
    except Exception:  # noqa: BLE001 (the caller re-raises Ray Data's error)
        return
    mixed = mixed_columns(filesystem, files) if len(files) > 1 else ""
    if mixed:
        raise OfflineDataError(
            f"Ray Data could not combine rows of the offline input files ({_last_error_line(error)}); their "
            f"columns differ in type: {mixed}. Write each column the "
            "same way in every file (e.g. rewrite the odd files with the others' writer), or read them with "
            "config.offline_data(input_reader='embedded'), which reads both kinds (with remote Learners, this "
            "process then reads and splits each batch among them).") from error


def _last_error_line(error: Exception) -> str:
    """The innermost 'XError: ...' line of a Ray task error's text (which ends in retry advice), shortened."""
    lines = [line.strip() for line in str(error).splitlines() if "Error:" in line] or [type(error).__name__]
    return lines[-1][:160]


def _row_batch(columns: Dict[str, Any]) -> RowBatch:
    """A Ray Data numpy batch as a RowBatch; its `path` column names each row's file (no row numbers). Read-only
    arrays (Ray's zero-copy views of its object store) are copied: tensors made from them could not be written."""
    columns = {k: _stacked(v.copy() if isinstance(v, np.ndarray) and not v.flags.writeable else v)
               for k, v in columns.items()}
    n = len(next(iter(columns.values())))
    paths = columns.pop(PATH_COLUMN, None)
    if paths is None:
        return RowBatch(columns, np.zeros(n, np.int32), np.full(n, -1, np.int64), ["(a Ray Data block)"])
    files, index = np.unique(np.asarray(paths, dtype=object).astype(str), return_inverse=True)
    return RowBatch(columns, index.astype(np.int32), np.full(n, -1, np.int64), list(files))


def _stacked(values: Any) -> Any:
    """Ray Data hands a parquet list column (e.g. `list<float>` observations, which the embedded reader reads as
    rows of numbers) as an object array of per-row arrays: one array when they are numbers of one shape; anything
    else is left for the row checks to name."""
    if not (isinstance(values, np.ndarray) and values.dtype == object and len(values)
            and all(isinstance(v, np.ndarray) and v.dtype != object for v in values)):
        return values
    try:
        return np.stack(values)
    except ValueError:  # ragged rows
        return values


def attach_shard(learner, iterator, config, spaces) -> None:
    """Runs where the Learner lives: keep its shard and the row handling (its pipeline decides the fast path)."""
    learner._offline_shard = (ShardRows(iterator, config), RowHandler(config, spaces, learner))


def detach_shard(learner) -> None:
    shard = getattr(learner, "_offline_shard", None)
    if shard is not None:
        shard[0].close()
    learner._offline_shard = None


def train_on_shard(learner, num_iters: Optional[int], timesteps: Dict[str, Any]) -> int:
    """Runs where the Learner lives: `num_iters` updates on its shard's batches (None: until the pass ends)."""
    shard, rows = learner._offline_shard
    batch_rows = learner.config.train_batch_size_per_learner
    shard.pass_ended, steps, done = False, 0, 0
    while (done < num_iters) if num_iters else not shard.pass_ended:
        update_input = rows.update_input(batch_rows, shard.next_rows)
        n = _timesteps(update_input)
        if n == 0:
            break
        learner.update(**update_input, timesteps=timesteps, num_epochs=1, minibatch_size=n,
                       shuffle_batch_per_epoch=False, reduce_metrics=False)
        steps, done = steps + n, done + 1
        if num_iters is None and n < batch_rows:
            break
    return steps


def _timesteps(update_input: Dict[str, Any]) -> int:
    if "episodes" in update_input:
        return sum(len(e) for e in update_input["episodes"])
    batch = next(iter(update_input["batch"].values()))
    mask = batch.get("loss_mask")
    return int(mask.sum()) if mask is not None else len(next(iter(batch.values())))


__all__ = ["RayDataOfflineData", "read_dataset", "attach_shard", "train_on_shard"]
