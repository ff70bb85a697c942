"""The speed suite (benchmarks/run.py) runs and reports; no assertion here depends on how fast anything is."""
import json
import pathlib
import subprocess
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import run as suite  # noqa: E402  (benchmarks/ is a folder of scripts, not a package)

PPO_ROWS = ("PPO CartPole-v1 to return 450", "EnvRunner sampling", "numpy_inference=False",
            "custom env-to-module piece", "bare loop of numpy calls", "bare loop of torch calls", "Start-up",
            "PPO learner", "Raw: gymnasium")


def test_quick_run_without_peers_prints_the_table_and_writes_the_json(tmp_path):
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "run.py"), "--quick", "--no-peers", "--runs", "1",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(out.read_text())
    assert figures["quick"] is True and "peers" not in figures
    raw = figures["raw"]
    assert min(raw["single_env_sps"], raw["vec8_sps"], raw["mlp_fwd_per_s"]) > 0
    samplers = ("sampler_sps", "sampler_torch_path_sps", "sampler_general_path_sps", "sampler_floor_sps",
                "sampler_numpy_floor_sps")
    assert min(figures[name] for name in samplers) > 0
    assert figures["startup_s"] > 0
    assert figures["learner"]["relayrl_updates_per_s"] > 0 and figures["learner"]["plain_torch_updates_per_s"] > 0
    solve = figures["solve_cartpole"]
    assert solve["solved"] and solve["return"] >= 450
    assert 0 < solve["sampling_s"] + solve["learning_s"] < solve["wall_s"]
    table = figures["table_markdown"]
    for row in PPO_ROWS:
        assert row in table and row in proc.stdout
    assert "error" not in table and "too rough to quote" in proc.stdout

    again = subprocess.run([sys.executable, str(BENCHMARKS / "run.py"), "--table-from", str(out)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]
    assert table in again.stdout


def _figures(peers: dict) -> dict:
    solve = {"solved": True, "steps": 61440, "wall_s": 3.2, "sampling_s": 0.9, "learning_s": 1.4}
    return {"machine": "test", "suite": "ppo", "solve_cartpole": solve, "solve_cartpole_runs": [solve],
            "raw": {"single_env_sps": 200_000.0, "vec8_sps": 150_000.0, "mlp_fwd_per_s": 45_000.0},
            "sampler_sps": 75_000.0, "sampler_torch_path_sps": 48_000.0, "sampler_general_path_sps": 36_000.0,
            "sampler_floor_sps": 80_000.0, "sampler_numpy_floor_sps": 100_000.0,
            "startup_s": 1.2, "learner": {"relayrl_updates_per_s": 1200.0, "plain_torch_updates_per_s": 1000.0},
            "peers": peers}


def test_table_ratios_come_from_the_median_runs_and_a_failed_peer_shows_as_error():
    sb3 = {"solved": True, "steps": 65000, "train_s": 12.0, "wall_s": 12.8}
    figures = _figures({"sb3_ppo": sb3, "sb3_ppo_runs": [sb3], "rllib_ppo": {"error": "ImportError: ray"}})
    rows = {row[0]: row for row in suite.table_rows(figures)}
    ppo = next(row for work, row in rows.items() if work.startswith("PPO CartPole-v1"))
    assert ppo[1].startswith("3.2 s (61,440)") and ppo[2] == "12.8 s (65,000)" and ppo[3] == "error"
    assert ppo[5] == "4.0x faster than SB3"  # 12.8 / 3.2; no RLlib ratio without an RLlib result
    sampler = next(row for work, row in rows.items() if work.startswith("EnvRunner sampling"))
    assert sampler[5] == "50% of raw"
    torch_path = next(row for work, row in rows.items() if "numpy_inference=False" in work)
    assert torch_path[5] == "32% of raw; numpy inference 1.56x faster"
    general = next(row for work, row in rows.items() if "custom env-to-module piece" in work)
    assert general[5] == "2.08x slower than the fast path"
    floors = [row[5] for work, row in rows.items() if "bare loop" in work]
    assert floors == ["floor 67% of raw; relayrl 75% of the floor",
                      "floor 53% of raw; relayrl with torch inference 60% of the floor"]


@pytest.mark.parametrize("times, expected", [([3.0, 5.0, 4.0], 4.0), ([3.0, 4.0], 3.0), ([9.0, None, 2.0], 9.0)])
def test_median_run_counts_unsolved_runs_as_slowest(times, expected):
    runs = [{"solved": t is not None, "wall_s": t if t is not None else 0.1} for t in times]
    assert suite.median_run(runs, lambda r: r["wall_s"])["wall_s"] == expected


def test_offpolicy_rows_show_relayrl_with_rllibs_settings_and_with_its_defaults():
    runs = {"relayrl": {"solved": True, "steps": 81000, "wall_s": 60.0},
            "relayrl_defaults": {"solved": True, "steps": 72000, "wall_s": 40.0},
            "sb3": {"solved": False, "steps": 200000, "train_s": 190.0, "build_s": 10.0},
            "rllib": {"solved": True, "steps": 37000, "train_s": 110.0, "build_s": 10.0}}
    rows = suite.offpolicy_rows({"offpolicy": {"dqn_cartpole": runs}})
    tuned, defaults = [row for row in rows if row[0].startswith("DQN")]
    assert "RLlib's tuned settings" in tuned[0] and "relayrl's defaults" in defaults[0]
    assert defaults[1] == "40.0 s (72,000)" and tuned[1] == "60.0 s (81,000)"
    assert defaults[5] == "> 5.0x faster than SB3 (SB3 did not reach the bar), 3.0x faster than RLlib"


def test_multi_agent_rows_compare_each_relayrl_setting_with_rllib():
    runs = {"relayrl_tuned": {"solved": True, "steps": 75776, "wall_s": 10.0, "env_steps_per_s": 9000.0},
            "relayrl_rllib": {"solved": False, "steps": 400000, "wall_s": 300.0, "env_steps_per_s": 1400.0},
            "rllib": {"solved": True, "steps": 112000, "train_s": 90.0, "build_s": 10.0, "sps": 1200.0}}
    rows = suite.multi_agent_rows({"multi_agent": runs})
    assert len(rows) == 2  # the settings that ran
    tuned, rllib_settings = rows
    assert "tuned CartPole example" in tuned[0] and tuned[1] == "10.0 s (75,776)" and tuned[3] == "100.0 s (112,000)"
    assert tuned[5] == "10.0x faster than RLlib, 7.5x its env steps/s (9,000 vs 1,200)"
    assert rllib_settings[1].endswith("NOT SOLVED") and rllib_settings[5] == "-"


def test_multi_agent_benchmark_reports_a_result_line(capsys):
    import multi_agent_cartpole

    result = multi_agent_cartpole.main(["--settings", "tuned", "--stop-timesteps", "2000"])
    assert result["task"] == "multi_agent_cartpole" and result["steps"] >= 2000 and not result["solved"]
    assert "RESULT " in capsys.readouterr().out


def test_vector_env_modes_benchmark_runs_both_modes_side_by_side(capsys):
    import vector_env_modes

    result = vector_env_modes.main(["--envs", "8", "--fragment", "8", "--windows", "2", "--seconds", "0.4",
                                    "--trained-iters", "1", "--ppo-iters", "1"])
    for key in ("sample", "sample_trained", "raw_step", "ppo"):
        assert result[f"{key}_SYNC"] > 0 and result[f"{key}_VECTOR_ENTRY_POINT"] > 0
        assert result[f"{key}_ratio"] > 0
    assert "RESULT " in capsys.readouterr().out


def test_lstm_stateless_reads_relayrl_and_peer_results_and_bounds_an_unreached_peer():
    import lstm_stateless

    relayrl = lstm_stateless.outcome('{"name": "relayrl-defaults", "solved": true, "steps": 191488, "best": 351.2}',
                                     [])
    assert relayrl == {"solved": True, "steps": 191488, "best": 351.2}
    zoo = lstm_stateless.outcome("sb3_recurrent_ppo solved=True steps=66824 train_s=130.1 build_s=2.0 sps=513",
                                 ["steps=10240 ret=22.0 t=20.0s", "steps=20480 ret=nan t=40.0s",
                                  "steps=61440 ret=301.5 t=120.0s"])
    assert zoo == {"solved": True, "steps": 66824, "best": 301.5}
    defaults = lstm_stateless.outcome("sb3_recurrent_ppo_defaults solved=False steps=66000 best=48.3 train_s=600.0",
                                      ["steps=61440 ret=60.0 t=590.0s"])
    assert defaults == {"solved": False, "steps": 66000, "best": 48.3}  # its own best= wins over the progress lines
    results = [{"name": "relayrl-defaults", "wall_s": 100.0, "outcome": relayrl},
               {"name": "sb3-contrib RecurrentPPO", "wall_s": 150.0, "outcome": zoo},
               {"name": "sb3-defaults", "wall_s": 603.0, "outcome": defaults},
               {"name": "RLlib 2.60 LSTM PPO", "wall_s": 3.0, "error": "ImportError: ray"}]
    rows = lstm_stateless.summary_table(results).splitlines()[2:]
    assert rows[0] == "| relayrl-defaults | 191,488 | 100.0 | - |"
    assert rows[1] == "| sb3-contrib RecurrentPPO | 66,824 | 150.0 | 1.50x |"
    assert rows[2] == "| sb3-defaults | not reached, best 48.3 in 66,000 | 603.0 | > 6.03x |"
    assert rows[3].startswith("| RLlib 2.60 LSTM PPO | error: ") and "ImportError: ray" in rows[3]


def test_lstm_stateless_contestants_and_flags():
    import lstm_stateless

    args = lstm_stateless.parse_args(["--peers", "/peers/python", "--peer-max-s", "90", "--budget", "1000",
                                      "--skip", "relayrl-mlp, RLlib 2.60 LSTM PPO"])
    assert args.max_s == 90.0  # --peer-max-s is the old spelling of --max-s
    commands = dict(lstm_stateless.contestants(args))
    assert list(commands) == ["relayrl-defaults", "relayrl-lstm", "sb3-contrib RecurrentPPO", "sb3-defaults"]
    assert commands["relayrl-defaults"][2:] == ["--run", "relayrl-defaults", "--budget", "1000", "--seed", "0",
                                                "--max-s", "90.0"]
    assert commands["sb3-defaults"][0] == "/peers/python"
    assert commands["sb3-defaults"][1].endswith("peer_sb3_recurrent_defaults.py")
    assert list(dict(lstm_stateless.contestants(lstm_stateless.parse_args(["--peers", ""])))) == \
        ["relayrl-defaults", "relayrl-lstm", "relayrl-mlp"]
    config = lstm_stateless.defaults_ppo_config(seed=3)  # only use_lstm=True and the seed: PPO's stateful defaults
    assert config._values["model_config"] == {"use_lstm": True} and config.seed == 3
    assert not any(config.is_given(name) for name in ("lr", "train_batch_size", "minibatch_size", "num_epochs"))
