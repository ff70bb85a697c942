"""`relayrl train ALGO --restore CHECKPOINT_OR_RUN_FOLDER`: a run goes on from a checkpoint the CLI wrote (counters
included, so the stop criteria count from the first run's start); another algorithm's checkpoint is refused in one
line. `relayrl evaluate` carries a recurrent module's state from step to step."""
import json

from relayrl import Algorithm, IMPALAConfig
from relayrl.cli import main

FAST = ["--env", "CartPole-v1", "--train-batch-size-per-learner", "100", "--min-sample-timesteps-per-iteration",
        "100", "--min-time-s-per-iteration", "0", "--seed", "0", "--json"]


def _train(capsys, algorithm, run_dir, *flags):
    code = main(["train", algorithm, *FAST, "--logger-config", json.dumps({"type": "json", "logdir": str(run_dir)}),
                 *flags])
    captured = capsys.readouterr()
    summary = json.loads(captured.out.strip().splitlines()[-1]) if code != 2 else None
    return code, summary, captured.out + captured.err


def _checkpoints(run_dir):
    return sorted(p.name for p in run_dir.iterdir() if p.name.startswith("checkpoint_"))


def test_restore_continues_the_counters_up_to_the_stop_criterion(tmp_path, capsys):
    code, first, _ = _train(capsys, "IMPALA", tmp_path / "a", "--stop-iters", "2")
    assert code == 0 and first["training_iteration"] == 2
    code, resumed, err = _train(capsys, "IMPALA", tmp_path / "b", "--stop-iters", "4", "--restore", str(tmp_path / "a"))
    assert code == 0 and "resumed from" in err
    assert resumed["training_iteration"] == 4 and resumed["stopped_by"] == "stop_iters"
    assert resumed["num_env_steps_sampled_lifetime"] > first["num_env_steps_sampled_lifetime"]
    assert _checkpoints(tmp_path / "b") == ["checkpoint_000004"]
    speed = resumed["env_steps_per_s"]  # this run's steps over this run's time, not the restored ones too
    assert speed is not None and speed < 10 * first["env_steps_per_s"]
    # Already at the criterion: nothing is trained and no second copy of the checkpoint is written.
    code, again, _ = _train(capsys, "IMPALA", tmp_path / "c", "--stop-iters", "4", "--restore", str(tmp_path / "b"))
    assert code == 0 and again["training_iteration"] == 4 and again["stopped_by"] == "stop_iters"
    assert again["num_env_steps_sampled_lifetime"] == resumed["num_env_steps_sampled_lifetime"]
    assert again["env_steps_per_s"] is None  # nothing sampled (it showed 172,933,993 env steps/s)
    assert not (tmp_path / "c").exists() or _checkpoints(tmp_path / "c") == []


def test_restore_refuses_another_algorithms_checkpoint(tmp_path, capsys):
    code, _, _ = _train(capsys, "IMPALA", tmp_path / "a", "--stop-iters", "1")
    assert code == 0
    code, _, err = _train(capsys, "APPO", tmp_path / "b", "--stop-iters", "2", "--restore", str(tmp_path / "a"))
    assert code == 2  # APPO subclasses IMPALA: without the CLI's check this failed later on the module's weights
    assert "IMPALA's" in err and "not APPO's" in err and "relayrl train IMPALA" in err and "Traceback" not in err


def test_restore_names_a_missing_checkpoint(tmp_path, capsys):
    code, _, err = _train(capsys, "IMPALA", tmp_path / "a", "--stop-iters", "1", "--restore", str(tmp_path / "none"))
    assert code == 2 and "no checkpoint folder" in err and "relayrl train IMPALA" in err


def test_evaluate_carries_a_recurrent_modules_state(tmp_path, capsys, monkeypatch):
    algo = (IMPALAConfig().environment("CartPole-v1").rl_module(model_config={"use_lstm": True, "lstm_cell_size": 8})
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    path = algo.save_to_path(str(tmp_path / "ckpt"))
    algo.stop()
    states_in = []
    original = Algorithm.compute_single_action

    def spy(self, observation=None, state=None, **kwargs):
        states_in.append(state)
        return original(self, observation, state, **kwargs)

    monkeypatch.setattr(Algorithm, "compute_single_action", spy)
    assert main(["evaluate", path, "--episodes", "1"]) == 0
    assert len(states_in) > 2 and states_in[0] is None  # the initial state at the episode's start
    assert all(state is not None and len(state) > 0 for state in states_in[1:]), "the LSTM's memory was dropped"
