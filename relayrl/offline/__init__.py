"""Offline data: recording the EnvRunners' episodes to parquet files and reading them back for BC, MARWIL and
CQL, in RLlib's layout and columns (docs/offline.md).

Nothing here is imported by `import relayrl`; pyarrow loads when a reader or writer is built.

- writer.py: the recorder an EnvRunner hands its sampled episodes to (`config.offline_data(output=...)`).
- reader.py, files.py, arrow_columns.py, row_checks.py: the embedded reader (pyarrow, streaming,
  shuffled) and the checks of rows against the spaces.
- prelearner.py, transition_columns.py: rows -> what the Learner connector pipeline gets.
- offline_data.py: what an offline algorithm's training_step calls (relayrl/algorithms/offline_algorithm.py); the
  Ray Data path is relayrl/distributed/offline_ray_data.py.
- episode_rows.py, compression.py: RLlib's episode rows (msgpack) and LZ4-compressed columns, read safely.
- minari_bridge.py: reading and writing Minari datasets.
- split_by_module.py: a multi-agent recording as one single-agent dataset per module.
"""
