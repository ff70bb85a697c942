"""`relayrl train` samples with ale-py's vector env for ALE/... ids where nothing in the run needs SYNC's separate
envs (the choice every build makes, relayrl/algorithms/resolved_defaults/vector_mode.py, tested in
tests/algorithms/test_resolved_defaults.py), shows the line that says so and reports the mode."""
import pytest

from tests.test_cli import SMALL, json_line, run_cli

PONG = ["--env", "ALE/Pong-v5", "--num-envs-per-env-runner", "2", "--train-batch-size", "64", "--minibatch-size",
        "32", "--num-epochs", "1", "--seed", "0", "--stop-iters", "1", "--json"]


def test_the_cli_run_shows_and_reports_the_mode_it_sampled_with(capsys):
    pytest.importorskip("ale_py.vector_env")
    code, out, err = run_cli(capsys, "train", "PPO", *PONG)
    assert code == 0
    assert "ALE/Pong-v5's own vector env" in out and "own vector env" not in err  # shown once, in the header
    summary = json_line(out)
    assert summary["gym_env_vectorize_mode"] == "VECTOR_ENTRY_POINT"
    assert summary["training_iteration"] == 1 and summary["num_env_steps_sampled_lifetime"] >= 64
    assert "vector env" in out and "VECTOR_ENTRY_POINT" in out.split("summary")[1]

    code, out, _ = run_cli(capsys, "train", "PPO", *PONG, "--gym-env-vectorize-mode", "SYNC")
    assert code == 0 and "own vector env" not in out
    assert json_line(out)["gym_env_vectorize_mode"] == "SYNC"


def test_cartpole_samples_with_sync(capsys):
    code, out, _ = run_cli(capsys, "train", "PPO", *SMALL, "--stop-iters", "1", "--json")
    assert code == 0 and "own vector env" not in out
    assert json_line(out)["gym_env_vectorize_mode"] == "SYNC"


def test_the_help_says_what_is_picked(capsys):
    code, out, _ = run_cli(capsys, "train", "PPO", "--help")
    flat = " ".join(out.split())
    assert code == 0 and "(default: 'SYNC', or 'VECTOR_ENTRY_POINT' for ALE/... ids" in flat
