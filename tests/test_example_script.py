"""The shared example-script helpers: RLlib's flags and stop rules, in this process (--no-tune) or through Tune."""
import math
import os
import subprocess
import sys
import textwrap

import pytest

from relayrl import PPOConfig
from relayrl.testing.example_script import (
    add_rllib_example_script_args,
    check_learning_achieved,
    run_rllib_example_script_experiment,
    should_stop,
)


def test_flags_and_defaults():
    args = add_rllib_example_script_args(default_reward=450.0, default_iters=7).parse_args(["--seed", "3"])
    assert (args.stop_reward, args.stop_iters, args.stop_timesteps, args.seed) == (450.0, 7, 100_000, 3)


def test_any_criterion_stops_and_nan_never_does():
    stop = {"env_runners/episode_return_mean": 450.0, "training_iteration": 10}
    assert should_stop(stop, {"env_runners": {"episode_return_mean": 451.0}, "training_iteration": 1})
    assert should_stop(stop, {"env_runners": {"episode_return_mean": 3.0}, "training_iteration": 10})
    assert not should_stop(stop, {"env_runners": {"episode_return_mean": math.nan}, "training_iteration": 9})
    assert not should_stop(stop, {"training_iteration": 9})


def test_runs_until_the_iteration_budget():
    args = add_rllib_example_script_args().parse_args(["--stop-iters", "2", "--no-tune"])
    config = PPOConfig().environment("CartPole-v1").training(train_batch_size=128, minibatch_size=64, num_epochs=1)
    built = []
    result = run_rllib_example_script_experiment(config, args, on_algorithm_built=built.append)
    assert result["training_iteration"] == 2 and result["num_env_steps_sampled_lifetime"] >= 256
    assert built and built[0].env_runner_group is not None


def test_success_metric_replaces_the_training_return_criterion(capsys):
    args = add_rllib_example_script_args(default_reward=-1e9).parse_args(["--stop-iters", "3", "--no-tune"])
    config = (PPOConfig().environment("CartPole-v1").training(train_batch_size=128, minibatch_size=64, num_epochs=1)
              .evaluation(evaluation_interval=2, evaluation_duration=1))
    # The training return passes -1e9 at once, but only the evaluation return counts: it first exists at iter 2.
    result = run_rllib_example_script_experiment(
        config, args, success_metric={"evaluation/env_runners/episode_return_mean": args.stop_reward})
    assert result["training_iteration"] == 2
    assert "eval_return=" in capsys.readouterr().out


def tiny_cartpole():
    return PPOConfig().environment("CartPole-v1").training(train_batch_size=128, minibatch_size=64, num_epochs=1)


def test_rllibs_flags_parse_with_rllibs_defaults():
    args = add_rllib_example_script_args().parse_args([])
    assert (args.algo, args.framework, args.env, args.num_env_runners, args.num_agents, args.no_tune, args.as_test,
            args.checkpoint_freq, args.checkpoint_at_end, args.num_learners, args.evaluation_interval,
            args.stop_reward, args.stop_iters, args.stop_timesteps) == (
        "PPO", "torch", None, None, 0, False, False, 0, False, None, 0, 100.0, 200, 100_000)
    args = add_rllib_example_script_args().parse_args(
        ["--algo", "DQN", "--num-env-runners", "2", "--num-learners", "0", "--no-tune", "--as-test",
         "--checkpoint-freq", "3", "--checkpoint-at-end", "--evaluation-duration", "auto", "--num-agents", "2"])
    assert (args.algo, args.num_env_runners, args.no_tune, args.as_test, args.checkpoint_freq,
            args.checkpoint_at_end, args.evaluation_duration, args.num_agents) == (
        "DQN", 2, True, True, 3, True, "auto", 2)


def test_flags_change_the_config():
    args = add_rllib_example_script_args().parse_args(
        ["--no-tune", "--stop-iters", "1", "--num-envs-per-env-runner", "3", "--evaluation-interval", "1",
         "--evaluation-duration", "2", "--env", "CartPole-v1"])
    config = PPOConfig().training(train_batch_size=126, minibatch_size=63, num_epochs=1)
    result = run_rllib_example_script_experiment(config, args)
    assert config.num_envs_per_env_runner == 3 and config.env == "CartPole-v1" and config.evaluation_interval == 1
    assert result["evaluation"]["env_runners"]["num_episodes"] == 2
    kept = PPOConfig().environment("CartPole-v1").training(train_batch_size=128, minibatch_size=64, num_epochs=1)
    run_rllib_example_script_experiment(kept, args, keep_config=True)
    assert kept.num_envs_per_env_runner == 8 and kept.evaluation_interval is None


@pytest.mark.parametrize("flags, message", [
    (["--framework", "tf2"], "torch-only"), (["--num-agents", "2"], "multi-agent"),
    (["--old-api-stack"], "new API stack"), (["--num-gpus", "1"], "num-gpus-per-learner")])
def test_unsupported_flags_fail_with_a_message(flags, message):
    args = add_rllib_example_script_args().parse_args(["--no-tune", *flags])
    with pytest.raises(ValueError, match=message):
        run_rllib_example_script_experiment(tiny_cartpole(), args)


def test_output_records_the_sampled_episodes(tmp_path):
    """RLlib's --output: config.offline_data(output=...), the episodes of the run written as parquet files."""
    args = add_rllib_example_script_args().parse_args(["--no-tune", "--stop-iters", "1", "--output", str(tmp_path)])
    run_rllib_example_script_experiment(tiny_cartpole(), args)
    assert list(tmp_path.rglob("*.parquet"))


def test_as_test_fails_unless_the_success_metric_was_reached():
    args = add_rllib_example_script_args(default_reward=1e9).parse_args(["--no-tune", "--stop-iters", "1",
                                                                         "--as-test"])
    with pytest.raises(ValueError, match="episode_return_mean` of 1000000000.0 not reached"):
        run_rllib_example_script_experiment(tiny_cartpole(), args)
    args = add_rllib_example_script_args(default_reward=1.0).parse_args(["--no-tune", "--as-test"])
    assert run_rllib_example_script_experiment(tiny_cartpole(), args)["training_iteration"] == 1


def test_checkpoint_flags_save_in_process(tmp_path, capsys):
    args = add_rllib_example_script_args().parse_args(["--no-tune", "--stop-iters", "3", "--checkpoint-freq", "2",
                                                       "--checkpoint-at-end"])
    run_rllib_example_script_experiment(tiny_cartpole().debugging(logger_config={"logdir": str(tmp_path)}), args)
    saved = sorted(p for p in os.listdir(tmp_path) if p.startswith("checkpoint_"))
    assert saved == ["checkpoint_000002", "checkpoint_000003"]
    assert "checkpoint saved" in capsys.readouterr().out


def test_check_learning_achieved_on_result_dicts():
    check_learning_achieved({"env_runners": {"episode_return_mean": 5.0}}, 5.0)
    check_learning_achieved({"env_runners": {"episode_return_mean": 1.0},
                             "evaluation": {"env_runners": {"episode_return_mean": 9.0}}}, 9.0)
    with pytest.raises(ValueError, match="not reached"):
        check_learning_achieved({"env_runners": {"episode_return_mean": 1.0},
                                 "evaluation": {"env_runners": {"episode_return_mean": 9.0}}}, 5.0, evaluation=False)


SCRIPT = textwrap.dedent("""
    from relayrl.utils.test_utils import add_rllib_example_script_args, run_rllib_example_script_experiment
    from relayrl.algorithms.ppo import PPOConfig
    parser = add_rllib_example_script_args(default_reward=15.0, default_iters=3)
    args = parser.parse_args()
    config = (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=1)
              .training(train_batch_size=64, minibatch_size=32, num_epochs=1))
    results = run_rllib_example_script_experiment(config, args)
    print("RESULT", type(results).__name__, results[0].metrics["training_iteration"], len(results[0].best_checkpoints))
""")


def test_through_tune_returns_tunes_result_grid(tmp_path):
    """Without --no-tune the experiment runs as a Tune trial (Ray started and stopped by the helper)."""
    env = {**os.environ, "RELAYRL_RESULTS_DIR": str(tmp_path), "RAY_ADDRESS": "local"}  # never join a running Ray
    proc = subprocess.run([sys.executable, "-c", SCRIPT, "--stop-reward", "1e9", "--num-cpus", "2",
                           "--checkpoint-at-end", "--verbose", "0"], capture_output=True, text=True, timeout=300,
                          env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "RESULT ResultGrid 3 1" in proc.stdout
