"""The shared example-script helpers: RLlib's flags and stop rules."""
import math

from relayrl import PPOConfig
from relayrl.testing.example_script import (
    add_rllib_example_script_args,
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
    args = add_rllib_example_script_args().parse_args(["--stop-iters", "2"])
    config = PPOConfig().environment("CartPole-v1").training(train_batch_size=128, minibatch_size=64, num_epochs=1)
    built = []
    result = run_rllib_example_script_experiment(config, args, on_algorithm_built=built.append)
    assert result["training_iteration"] == 2 and result["num_env_steps_sampled_lifetime"] == 256
    assert built and built[0].env_runner_group is not None


def test_success_metric_replaces_the_training_return_criterion(capsys):
    args = add_rllib_example_script_args(default_reward=-1e9).parse_args(["--stop-iters", "3"])
    config = (PPOConfig().environment("CartPole-v1").training(train_batch_size=128, minibatch_size=64, num_epochs=1)
              .evaluation(evaluation_interval=2, evaluation_duration=1))
    # The training return passes -1e9 at once, but only the evaluation return counts: it first exists at iter 2.
    result = run_rllib_example_script_experiment(
        config, args, success_metric={"evaluation/env_runners/episode_return_mean": args.stop_reward})
    assert result["training_iteration"] == 2
    assert "eval_return=" in capsys.readouterr().out
