"""The `relayrl` command line: help generated from the option table, flag parsing, user errors
(exit 2, no traceback), training with stop criteria, the summary and the --json line."""
import io
import json
import subprocess
import sys

import pytest

from relayrl.algorithms.options import POSITIVE_INT, Option
from relayrl.algorithms.ppo.ppo_config import PPOConfig
from relayrl.cli import main
from relayrl.cli.flags import build_train_parser, parse_train_args

SMALL = ["--env", "CartPole-v1", "--train-batch-size", "256", "--minibatch-size", "64",
         "--num-epochs", "1", "--seed", "0"]


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def json_line(out: str) -> dict:
    last = out.strip().splitlines()[-1]
    return json.loads(last)


@pytest.fixture
def spy_algos(monkeypatch):
    """Record the algorithms the CLI builds and whether stop() was called on them."""
    built = []
    original_build = PPOConfig.build_algo

    def build_algo(self, *args, **kwargs):
        algo = original_build(self, *args, **kwargs)
        algo.stopped = False
        original_stop = algo.stop

        def stop():
            algo.stopped = True
            original_stop()

        algo.stop = stop
        built.append(algo)
        return algo

    monkeypatch.setattr(PPOConfig, "build_algo", build_algo)
    return built


# -- help -------------------------------------------------------------------------------------

def test_top_level_help_lists_commands_and_algorithms(capsys):
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0
    assert "train" in out and "PPO" in out


def test_train_help_lists_every_cli_option_with_help_and_default(capsys):
    code, out, _ = run_cli(capsys, "train", "PPO", "--help")
    assert code == 0
    flat = "".join(out.split())  # argparse wraps help text (also at hyphens)
    for option in PPOConfig.options():
        if option.cli:
            assert f"--{option.name}" in out, option.name
            assert "".join(option.help.split()) in flat, option.name
        else:
            assert f"--{option.name} " not in out, option.name
    assert "Learningrate" in flat and "(default:0.0003)" in flat  # PPO's default for --lr
    for group in ("environment", "env_runners", "learners", "training", "rl_module", "reporting",
                  "debugging"):
        assert f"{group}() options" in out
    assert "--stop-reward" in out and "--json" in out


def test_train_help_without_algorithm_shows_the_first_algorithms_options(capsys):
    code, out, _ = run_cli(capsys, "train", "--help")
    assert code == 0 and "--lr" in out and "relayrl train PPO" in out


def test_a_new_option_becomes_a_flag_without_touching_the_cli():
    class MyPPOConfig(PPOConfig):
        _OPTIONS = (Option("my_new_knob", 3, "A knob added by a subclass.", "training",
                           POSITIVE_INT),)

    parser = build_train_parser("PPO", MyPPOConfig)
    assert "A knob added by a subclass." in parser.format_help()
    assert any("--my-new-knob" in action.option_strings for action in parser._actions)


def test_module_entry_point_and_light_import():
    code = ("import sys; from relayrl.cli import main; assert main(['train', 'PPO', '--help']) == 0; "
            "heavy = [m for m in ('torch', 'gymnasium') if m in sys.modules]; "
            "assert not heavy, heavy")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([sys.executable, "-m", "relayrl", "--help"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "PPO" in done.stdout, done.stderr


# -- parsing --------------------------------------------------------------------------------

def test_dashed_and_underscored_flags_are_the_same():
    dashed = parse_train_args(["PPO", "--env", "CartPole-v1", "--num-env-runners", "0",
                               "--train-batch-size", "512", "--use-gae", "false", "--explore"])
    underscored = parse_train_args(["ppo", "--env", "CartPole-v1", "--num_env_runners", "0",
                                    "--train_batch_size", "512", "--use_gae", "False",
                                    "--explore", "true"])
    assert dashed.overrides == underscored.overrides == {
        "env": "CartPole-v1", "num_env_runners": 0, "train_batch_size": 512, "use_gae": False,
        "explore": True}


def test_values_are_parsed_by_the_options():
    args = parse_train_args(["PPO", "--env", "CartPole-v1", "--lr", "[[0, 1e-3], [1000, 1e-4]]",
                             "--lambda", "0.95", "--model-config", '{"fcnet_hiddens": [32]}',
                             "--stop-timesteps", "3e5", "--stop-reward", "-200"])
    assert args.overrides["lr"] == [[0, 1e-3], [1000, 1e-4]]
    assert args.overrides["lambda_"] == 0.95
    assert args.overrides["model_config"] == {"fcnet_hiddens": [32]}
    assert (args.stop_timesteps, args.stop_reward) == (300000, -200.0)


def test_deprecated_alias_works_with_a_note():
    args = parse_train_args(["PPO", "--env", "CartPole-v1", "--num_sgd_iter", "3"])
    assert args.overrides["num_epochs"] == 3
    assert "--num_epochs" in args.notes[0]


# -- user errors: exit 2, one line, no traceback -----------------------------------------------

@pytest.mark.parametrize("argv, expected", [
    (["train", "PPO", "--env", "CartPole-v1", "--lamda", "0.9"], "Did you mean `--lambda`?"),
    (["train", "PPO", "--env", "CartPole-v1", "--train-batch-size", "-5"],
     "train_batch_size must be a positive int, got -5"),
    (["train", "PPO", "--env", "CartPole-v1", "--lr", "fast"], "lr must be"),
    (["train", "PPP", "--env", "CartPole-v1"], "Did you mean `PPO`?"),
    (["train", "PPO", "--lr", "1e-3"], "--env is required"),
    (["train", "--env", "CartPole-v1"], "name the algorithm first"),
    (["trian"], "Did you mean `train`?"),
    (["train", "APPO", "--env", "CartPole-v1", "--use-lstm", "true"],
     "`use_lstm` is a model setting: --model_config '{\"use_lstm\": VALUE}'"),
])
def test_command_line_mistakes_exit_2(capsys, argv, expected):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    assert expected in err
    assert "Traceback" not in err


@pytest.mark.parametrize("extra, expected", [
    (["--env", "CartPol-v1"], "Did you mean `CartPole-v1`?"),
    (["--env", "CartPole-v1", "--minibatch-size", "8000"], "minibatch_size (8000) must be <="),
    (["--env", "CartPole-v1", "--model-config", '{"fcnet_hidens": [32]}'],
     "Did you mean `fcnet_hiddens`?"),
])
def test_config_errors_found_while_building_exit_2(capsys, extra, expected):
    code, _, err = run_cli(capsys, "train", "PPO", *extra)
    assert code == 2
    assert expected in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# -- training ---------------------------------------------------------------------------------

def test_train_stops_at_iterations_and_prints_json(capsys, spy_algos):
    # (SYNC named: with CartPole's own vector env, whose reset steps are no env steps, an iteration can
    # take up to 7 more)
    code, out, _ = run_cli(capsys, "train", "PPO", *SMALL, "--stop-iters", "2",
                           "--model-config", '{"fcnet_hiddens": [32]}', "--json",
                           "--gym-env-vectorize-mode", "SYNC")
    assert code == 0  # no stop reward given
    summary = json_line(out)
    assert summary["training_iteration"] == 2
    assert summary["num_env_steps_sampled_lifetime"] == 512
    assert summary["stopped_by"] == "stop_iters" and summary["stop_reward_reached"] is None
    assert summary["config"]["model_config"] == {"fcnet_hiddens": [32]}
    assert {"total_loss", "policy_loss", "vf_loss", "entropy"} <= set(
        summary["learners"]["default_policy"])
    assert summary["build_time_s"] > 0 and summary["train_time_s"] > 0
    # plain output when stdout is not a terminal: one line per iteration, a summary, no ANSI
    assert "\x1b" not in out
    assert [line.split(" |")[0] for line in out.splitlines() if line.startswith("iter ")] == [
        "iter 1/2", "iter 2/2"]
    assert "summary" in out and "total_loss" in out
    # the flags reached the algorithm
    (algo,) = spy_algos
    assert algo.stopped
    assert algo.config.num_epochs == 1 and algo.config.minibatch_size == 64
    assert algo.config.model_config["fcnet_hiddens"] == [32]
    import torch

    linears = [m for m in algo.get_module().modules() if isinstance(m, torch.nn.Linear)]
    assert linears[0].out_features == 32


def test_exit_code_says_whether_the_stop_reward_was_reached(capsys):
    code, out, _ = run_cli(capsys, "train", "PPO", *SMALL, "--stop-reward", "1", "--json")
    summary = json_line(out)
    assert code == 0 and summary["stopped_by"] == "stop_reward"
    assert summary["stop_reward_reached"] is True and summary["training_iteration"] == 1

    code, out, _ = run_cli(capsys, "train", "PPO", *SMALL, "--stop-reward", "10000",
                           "--stop-timesteps", "256", "--json")
    summary = json_line(out)
    assert code == 1 and summary["stopped_by"] == "stop_timesteps"
    assert summary["stop_reward_reached"] is False


def test_ctrl_c_stops_cleanly_with_a_summary(capsys, spy_algos, monkeypatch):
    from relayrl.algorithms.algorithm import Algorithm

    original_train, calls = Algorithm.train, []

    def train(self):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original_train(self)

    monkeypatch.setattr(Algorithm, "train", train)
    code, out, err = run_cli(capsys, "train", "PPO", *SMALL, "--json")
    assert code == 130
    summary = json_line(out)
    assert summary["stopped_by"] == "interrupted" and summary["training_iteration"] == 1
    assert spy_algos[0].stopped
    assert "Traceback" not in err


def test_terminal_display_is_one_live_line_and_a_table():
    from rich.console import Console

    from relayrl.cli.display import Display
    from relayrl.cli.train import Run

    buffer = io.StringIO()
    display = Display(Console(file=buffer, force_terminal=True, width=200))
    assert display.is_live
    run = Run("PPO", "CartPole-v1", stop_reward=450.0, stop_timesteps=1000)
    with display.live(run):
        run.start()
        run.record({"training_iteration": 1, "num_env_steps_sampled_lifetime": 500,
                    "env_runners": {"episode_return_mean": 21.5},
                    "learners": {"default_policy": {"total_loss": 1.5, "num_module_steps_trained": 9}}})
        display.iteration(run)
    run.finish()
    display.summary(run)
    text = buffer.getvalue()
    assert "50% of 1,000" in text and "21.50" in text
    assert "total_loss" in text and "num_module_steps_trained" not in text
    assert run.exit_code == 1 and run.stopped_by is None


def test_train_runs_a_multi_agent_env_with_one_shared_policy(capsys, spy_algos):
    env = "relayrl.examples.envs.classes.multi_agent.MultiAgentCartPole"
    code, out, _ = run_cli(capsys, "train", "PPO", "--env", env,
                           "--env-config", '{"num_agents": 2}', "--train-batch-size", "256", "--minibatch-size", "64",
                           "--num-epochs", "1", "--seed", "0", "--stop-iters", "1", "--json")
    assert code == 0
    summary = json_line(out)
    assert summary["num_env_steps_sampled_lifetime"] == 256 and "policy_loss" in summary["learners"]["default_policy"]
    (algo,) = spy_algos
    assert algo.config.is_multi_agent and type(algo.env_runner).__name__ == "MultiAgentEnvRunner"
