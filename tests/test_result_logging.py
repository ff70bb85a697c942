"""Per-iteration result logging (result.json, TensorBoard scalars) and `relayrl plot`."""
import json
import math
import os
import sys

import pytest

from relayrl import PPOConfig
from relayrl.algorithms.result_logger import RESULTS_DIR_ENV, to_jsonable
from relayrl.callbacks import RLlibCallback
from relayrl.cli import main
from relayrl.testing import CountingEnv
from relayrl.testing.tensorboard_events import tensorboard_events


class EpisodeLenCallback(RLlibCallback):
    def on_episode_end(self, *, episode, metrics_logger=None, **kwargs):
        metrics_logger.log_value("my_custom_len", float(len(episode)))


def small_config(logger_config=None, callbacks=None):
    config = (
        PPOConfig()
        .environment(CountingEnv, env_config={"episode_len": 3})
        .env_runners(num_envs_per_env_runner=1, rollout_fragment_length=8)
        .training(train_batch_size=16, minibatch_size=8, num_epochs=1)
        .debugging(seed=0, logger_config=logger_config)
    )
    if callbacks is not None:
        config = config.callbacks(callbacks)
    return config


def read_lines(logdir):
    with open(os.path.join(logdir, "result.json"), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def read_scalars(logdir):
    """{tag: [(step, value), ...]} from the run's TensorBoard event files."""
    scalars = {}
    for event in tensorboard_events(logdir):
        for value in event.summary.value:
            scalars.setdefault(value.tag, []).append((event.step, value.simple_value))
    return scalars


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("run")
    algo = small_config({"logdir": str(logdir)}, EpisodeLenCallback).build_algo()
    try:
        results = [algo.train(), algo.train()]
        assert algo.logdir == str(logdir)
    finally:
        algo.stop()
    return str(logdir), results


def same(logged, returned):
    if isinstance(returned, float) and math.isnan(returned):
        return logged is None
    return logged == pytest.approx(returned)


def test_result_json_has_one_line_per_train_call(trained_run):
    logdir, results = trained_run
    lines = read_lines(logdir)
    assert len(lines) == 2
    for line, result in zip(lines, results):
        assert line["training_iteration"] == result["training_iteration"]
        assert line["num_env_steps_sampled_lifetime"] == result["num_env_steps_sampled_lifetime"]
        assert same(line["env_runners"]["episode_return_mean"], result["env_runners"]["episode_return_mean"])
        assert same(line["env_runners"]["my_custom_len"], result["env_runners"]["my_custom_len"])
    assert [line["training_iteration"] for line in lines] == [1, 2]
    assert 0 < lines[0]["env_runners"]["my_custom_len"] <= 3.0


def test_tensorboard_scalars_at_env_steps(trained_run):
    pytest.importorskip("tensorboardX")
    logdir, results = trained_run
    scalars = read_scalars(logdir)
    steps = [r["num_env_steps_sampled_lifetime"] for r in results]
    assert [s for s, _ in scalars["env_runners/my_custom_len"]] == steps
    for (_, value), result in zip(scalars["env_runners/my_custom_len"], results):
        assert value == pytest.approx(result["env_runners"]["my_custom_len"], rel=1e-6)
    assert [s for s, _ in scalars["training_iteration"]] == steps
    assert "done" not in scalars  # bools are not scalars


def test_tensorboard_tags_cleaned_as_tensorboardx_cleans_them(tmp_path):
    pytest.importorskip("tensorboardX")
    from relayrl.algorithms.result_logger import ResultLogger

    logger = ResultLogger(str(tmp_path))
    logger.on_result({"num_env_steps_sampled_lifetime": 7, "env_runners": {"my metric (%)": 1.5}, "/lead": 2.0})
    logger.close()
    scalars = read_scalars(str(tmp_path))
    assert scalars["env_runners/my_metric____"] == [(7, 1.5)]
    assert scalars["lead"] == [(7, 2.0)]


def test_json_safe_values():
    assert to_jsonable({"a": float("nan"), "b": float("inf"), "c": -float("inf"), "d": object}) == {
        "a": None, "b": "inf", "c": "-inf", "d": str(object)}
    import numpy as np

    assert to_jsonable({"x": np.float32(1.5), "y": np.arange(3), 1: (np.int64(2),)}) == {
        "x": 1.5, "y": [0, 1, 2], "1": [2]}


def test_type_none_writes_nothing(tmp_path):
    algo = small_config({"logdir": str(tmp_path / "run"), "type": "none"}).build_algo()
    try:
        algo.train()
        assert algo.logdir is None
    finally:
        algo.stop()
    assert not (tmp_path / "run").exists()


def test_type_json_writes_no_event_files(tmp_path):
    algo = small_config({"logdir": str(tmp_path), "type": "json"}).build_algo()
    try:
        algo.train()
    finally:
        algo.stop()
    assert os.listdir(tmp_path) == ["result.json"]


def test_default_logdir_under_results_dir_env(tmp_path, monkeypatch):
    monkeypatch.setenv(RESULTS_DIR_ENV, str(tmp_path))
    algo = small_config().build_algo()
    try:
        name = os.path.basename(algo.logdir)
        assert os.path.dirname(algo.logdir) == str(tmp_path)
        assert name.startswith("PPO_CountingEnv_")
        algo.train()
    finally:
        algo.stop()
    assert os.path.isfile(os.path.join(algo.logdir, "result.json"))


def test_unknown_logger_config_key_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown logger_config key `logdri`.*Did you mean `logdir`"):
        small_config({"logdri": str(tmp_path)}).build_algo()
    with pytest.raises(ValueError, match="logger_config\\['type'\\]"):
        small_config({"type": "csv"}).build_algo()


def test_logger_creator_is_used(tmp_path):
    seen = []

    class MyLogger:
        logdir = str(tmp_path)

        def on_result(self, result):
            seen.append(result["training_iteration"])

    algo = small_config().build_algo(logger_creator=lambda config: MyLogger())
    try:
        algo.train()
        assert algo.logdir == str(tmp_path)
    finally:
        algo.stop()
    assert seen == [1] and os.listdir(tmp_path) == []


# -- relayrl plot ---------------------------------------------------------------------------------

def test_plot_writes_png(trained_run, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    logdir, _ = trained_run
    out = tmp_path / "curves.png"
    assert main(["plot", logdir, "--metrics", "env_runners/my_custom_len,training_iteration",
                 "--out", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 1000
    assert main(["plot", logdir]) == 0
    assert (open(os.path.join(logdir, "progress.png"), "rb").read(8)) == b"\x89PNG\r\n\x1a\n"


def test_plot_errors(trained_run, tmp_path, capsys):
    logdir, _ = trained_run
    assert main(["plot", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("relayrl plot: error: no such run folder") and err.count("\n") == 1
    assert main(["plot", str(tmp_path)]) == 2
    assert "no result.json" in capsys.readouterr().err
    assert main(["plot", logdir, "--metrics", "env_runners/my_custom_lne"]) == 2
    err = capsys.readouterr().err
    assert "unknown metric `env_runners/my_custom_lne`. Did you mean `env_runners/my_custom_len`?" in err
    assert err.count("\n") == 1


def test_plot_without_matplotlib(trained_run, monkeypatch, capsys):
    logdir, _ = trained_run
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["plot", logdir]) == 2
    assert 'pip install "relayrl[plot]"' in capsys.readouterr().err


def test_import_relayrl_does_not_import_tensorboardx():
    import subprocess

    code = ("import sys, relayrl, relayrl.cli; from relayrl import PPOConfig; "
            "bad = [m for m in ('tensorboardX', 'matplotlib') if m in sys.modules]; assert not bad, bad")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_tensorboard_extra_installs_the_tensorboard_command():
    # docs/results.md tells users to run `tensorboard --logdir ...`: the extra must bring the `tensorboard` package
    # (its wheel's console script is that command), not only tensorboardX (which writes the files).
    import re
    import tomllib

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        extras = tomllib.load(f)["project"]["optional-dependencies"]
    names = {re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].lower() for req in extras["tensorboard"]}
    assert {"tensorboard", "tensorboardx"} <= names, extras["tensorboard"]
