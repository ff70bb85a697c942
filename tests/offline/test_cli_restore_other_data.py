"""`relayrl train BC --restore RUN` onto other offline data: the refusal names the CLI flag that starts the data
pass over (`--input-restore-position false`), not only the Python option, and that flag resumes the run."""
import json
import pathlib

import pytest

from relayrl.cli import main

pq = pytest.importorskip("pyarrow.parquet")


def _train(capsys, data, run_dir, *flags):
    code = main(["train", "BC", "--env", "CartPole-v1", "--input", str(data), "--train-batch-size", "32",
                 "--min-time-s-per-iteration", "0", "--seed", "0", "--json",
                 "--logger-config", json.dumps({"type": "json", "logdir": str(run_dir)}), *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.out + captured.err


def test_restore_onto_other_files_names_the_cli_flag(cartpole_rows, tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    table = pq.read_table(sorted(str(p) for p in pathlib.Path(cartpole_rows).rglob("*.parquet")))
    for i in range(3):
        pq.write_table(table.slice(i * 100, 100), str(data / f"part-{i}.parquet"))
    code, _, out = _train(capsys, data, tmp_path / "a", "--stop-iters", "1", "--checkpoint-at-end")
    assert code == 0, out
    (data / "part-2.parquet").unlink()  # another file list
    code, _, err = _train(capsys, data, tmp_path / "b", "--stop-iters", "2", "--restore", str(tmp_path / "a"))
    assert code == 2 and "--input-restore-position false" in err and "Traceback" not in err, err
    code, out, both = _train(capsys, data, tmp_path / "c", "--stop-iters", "2", "--restore", str(tmp_path / "a"),
                       "--input-restore-position", "false")
    assert code == 0, both
    assert json.loads(out.strip().splitlines()[-1])["training_iteration"] == 2
