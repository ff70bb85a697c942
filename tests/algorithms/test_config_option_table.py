"""The option table behind every config class: CLI records and parsing, subclasses adding options,
declaration checks, and a config import that pulls no heavy dependency."""
import inspect
import math
import subprocess
import sys

import pytest

from relayrl.algorithms.algorithm_config import AlgorithmConfig
from relayrl.algorithms.options import POSITIVE_INT, Option
from relayrl.algorithms.ppo.ppo_config import PPOConfig


def test_options_records_for_cli():
    base = AlgorithmConfig.options()
    ppo = PPOConfig.options()
    assert [o.name for o in ppo[: len(base)]] == [o.name for o in base]
    assert [o.name for o in ppo[len(base):]] == ["lambda_", "clip_param", "vf_clip_param",
                                                   "vf_loss_coeff", "entropy_coeff", "use_kl_loss",
                                                   "kl_coeff", "kl_target", "use_critic", "use_gae"]
    by_name = {o.name: o for o in ppo}
    assert by_name["lr"].default == 3e-4 and {o.name: o for o in base}["lr"].default == 0.001
    assert by_name["lambda_"].dict_key == "lambda" and by_name["lambda_"].group == "training"
    assert by_name["num_env_runners"].aliases == ("num_rollout_workers", "num_workers")
    assert not by_name["env_to_module_connector"].cli and by_name["lr"].cli
    assert all(o.help and "\n" not in o.help for o in ppo)


@pytest.mark.parametrize("name,text,value", [
    ("lr", "0.001", 0.001), ("lr", "[[0, 1e-3], [100, 1e-4]]", [[0, 1e-3], [100, 1e-4]]),
    ("rollout_fragment_length", "auto", "auto"), ("rollout_fragment_length", "50", 50),
    ("train_batch_size_per_learner", "None", None), ("use_gae", "false", False),
    ("vf_clip_param", "inf", math.inf), ("env", "CartPole-v1", "CartPole-v1"), ("env", "1", "1"),
    ("env_config", '{"size": 3}', {"size": 3}), ("gym_env_vectorize_mode", "async", "ASYNC"),
])
def test_option_parse_for_command_lines(name, text, value):
    option = {o.name: o for o in PPOConfig.options()}[name]
    assert option.parse(text) == value


def test_option_parse_rejects_bad_values():
    option = {o.name: o for o in PPOConfig.options()}["num_epochs"]
    with pytest.raises(ValueError, match="num_epochs must be a positive int, got 'many'"):
        option.parse("many")


def test_subclass_adds_options_and_overrides_defaults():
    class MyPPOConfig(PPOConfig):
        _OPTIONS = (Option("bonus_coeff", 1, "Weight of my bonus.", "training", POSITIVE_INT),)
        _DEFAULTS = {"gamma": 0.95, "lambda_": 0.9}

    config = MyPPOConfig().training(bonus_coeff=2, clip_param=0.1, lr=1e-4)
    assert (config.bonus_coeff, config.clip_param, config.gamma, config.lambda_) == (2, 0.1, 0.95, 0.9)
    assert "bonus_coeff" in inspect.signature(MyPPOConfig.training).parameters
    assert "bonus_coeff" not in inspect.signature(PPOConfig.training).parameters
    assert PPOConfig().gamma == 0.99
    with pytest.raises(ValueError, match="bonus_coeff must be a positive int"):
        config.training(bonus_coeff=0)


def test_bad_table_declarations_fail_at_class_creation():
    with pytest.raises(ValueError, match="defined twice"):
        class Twice(PPOConfig):
            _OPTIONS = (Option("lr", 0.1, "again", "training"),)
    with pytest.raises(ValueError, match="unknown option `lamda`"):
        class Typo(PPOConfig):
            _DEFAULTS = {"lamda": 0.5}
    with pytest.raises(ValueError, match="gamma must be"):
        class BadDefault(PPOConfig):
            _DEFAULTS = {"gamma": 5}


def test_import_does_not_pull_heavy_dependencies():
    code = ("import sys, relayrl.algorithms.ppo.ppo_config; "
            "print([m for m in ('torch', 'ray', 'tensorboard', 'tensorboardX') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
