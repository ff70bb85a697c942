"""Reading throughput (rows/s) of relayrl's embedded offline reader against a plain pyarrow loop over the same files.

    .venv/bin/python benchmarks/offline_read_throughput.py [--rows 400000] [--rows-per-file 10000] [--rounds 5]

The files: `--rows` CartPole-shaped transition rows (obs and new_obs as Ray Data tensor columns, actions, rewards,
flags, action logits and log-probs, eps_id strings), written the way relayrl's recorder writes them, in files of
`--rows-per-file` rows. The plain loop is the least a script does to get numpy batches out of them: open each file
with pyarrow, iterate its record batches, turn every column into a numpy array (tensor columns flattened and
reshaped). relayrl's reader does that and more: it checks each file's columns up front, keeps each row's origin
(file and row, for error messages) and streams the rows through its shuffle pool into 256-row batches, in order
(`shuffle 0`) and shuffled (its default, 'auto': a 4096-row pool, files in a new order each pass). The shuffled
reads are also compared with the plain loop doing the same shuffle (files in a random order, a 4096-row pool
topped up at half and permuted with numpy, 256-row batches). Rounds alternate (plain, plain shuffled, relayrl in
order, relayrl shuffled) in one process; each reads every row once, and rates are rows per second of the
process's CPU time (`--clock wall` for wall-clock time; on a shared, loaded machine CPU time swings much less).
One RESULT line with the median rows/s of each and the ratios: relayrl in order against the plain loop,
relayrl shuffled against the plain shuffled loop (goal >= 0.8 each) and against the plain in-order loop.
"""
import argparse
import json
import pathlib
import statistics
import tempfile
import time

import numpy as np


def write_files(folder: pathlib.Path, rows: int, rows_per_file: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from relayrl.offline.arrow_columns import numpy_to_column

    rng = np.random.default_rng(0)
    for start in range(0, rows, rows_per_file):
        n = min(rows_per_file, rows - start)
        obs = rng.standard_normal((n + 1, 4)).astype(np.float32)
        columns = {"eps_id": np.array([f"{(start + i) // 200:032x}" for i in range(n)], dtype=object),
                   "obs": obs[:-1], "actions": rng.integers(0, 2, n), "rewards": np.ones(n), "new_obs": obs[1:],
                   "terminateds": np.arange(n) % 200 == 199, "truncateds": np.zeros(n, bool),
                   "action_dist_inputs": rng.standard_normal((n, 2)).astype(np.float32),
                   "action_logp": rng.standard_normal(n).astype(np.float32)}
        arrays, fields = [], []
        for name, values in columns.items():
            array, metadata = numpy_to_column(values)
            arrays.append(array)
            fields.append(pa.field(name, array.type, metadata=metadata))
        pq.write_table(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), folder / f"part-{start:09d}.parquet")


def _numpy_batches(files):
    """The plain loop's reads: each file's record batches, every column as a numpy array."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for path in files:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=4096):
            columns = {}
            for name, column in zip(batch.schema.names, batch.columns):
                if pa.types.is_large_list(column.type):
                    columns[name] = column.flatten().to_numpy().reshape(len(column), -1)
                else:
                    columns[name] = column.to_numpy(zero_copy_only=False)
            yield columns, batch.num_rows


def plain_pyarrow(files) -> int:
    return sum(rows for _, rows in _numpy_batches(files))


def plain_pyarrow_shuffled(files, pool_rows: int = 4096, batch_rows: int = 256) -> int:
    """The same shuffled reads as relayrl's default, written plainly: files in a random order, a pool topped up
    with the next record batch whenever it falls below half of `pool_rows` and permuted, 256-row batches out."""
    rng = np.random.default_rng(0)
    pool, start, size, rows = {}, 0, 0, 0
    for columns, n in _numpy_batches([files[i] for i in rng.permutation(len(files))]):
        perm = rng.permutation(size - start + n)
        pool = {k: np.concatenate([pool[k][start:], v])[perm] if pool else v[perm] for k, v in columns.items()}
        start, size = 0, len(perm)
        while size - start >= max(pool_rows // 2, batch_rows):
            out = {k: v[start:start + batch_rows] for k, v in pool.items()}
            start, rows = start + batch_rows, rows + len(out["obs"])
    return rows + size - start


def relayrl_reader(folder, total: int, shuffle_rows) -> int:
    from relayrl.offline.files import input_files
    from relayrl.offline.reader import ParquetFiles, RowStream

    fs, files = input_files(str(folder))
    stream = RowStream(ParquetFiles(fs, files), shuffle_rows=shuffle_rows, seed=0)
    rows = 0
    while rows < total:
        rows += len(stream.next_batch(256))
    return rows


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--rows-per-file", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args(argv)
    folder = pathlib.Path(tempfile.mkdtemp(prefix="relayrl_read_"))
    write_files(folder, args.rows, args.rows_per_file)
    files = sorted(str(p) for p in folder.glob("*.parquet"))
    readers = {"plain_pyarrow": lambda: plain_pyarrow(files),
               "plain_pyarrow_shuffled": lambda: plain_pyarrow_shuffled(files),
               "relayrl_in_order": lambda: relayrl_reader(folder, args.rows, 0),
               "relayrl_shuffled": lambda: relayrl_reader(folder, args.rows, 4096)}
    rates = {name: [] for name in readers}
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    for _ in range(args.rounds):
        for name, read in readers.items():
            start = clock()
            rows = read()
            rates[name].append(rows / (clock() - start))
    medians = {name: statistics.median(values) for name, values in rates.items()}
    result = {f"{name}_rows_per_s": round(value) for name, value in medians.items()}
    result.update({"relayrl_in_order_vs_plain": round(medians["relayrl_in_order"] / medians["plain_pyarrow"], 2),
                   "relayrl_shuffled_vs_plain_shuffled": round(
                       medians["relayrl_shuffled"] / medians["plain_pyarrow_shuffled"], 2),
                   "relayrl_shuffled_vs_plain": round(medians["relayrl_shuffled"] / medians["plain_pyarrow"], 2)})
    result.update({"rows": args.rows, "rows_per_file": args.rows_per_file, "rounds": args.rounds,
                   "clock": args.clock})
    print("RESULT " + json.dumps(result))
    return result


if __name__ == "__main__":
    main()
