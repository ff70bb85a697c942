"""One table of algorithms: each name is registered once, and the top-level names, the packages' lazy names,
`config.algo_class`, the CLI and Tune's names all come from it."""
import pathlib
import subprocess
import sys
import textwrap

import pytest

import relayrl
from relayrl.algorithms import registry
from relayrl.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_each_algorithm_is_registered_in_one_table():
    names = registry.algorithm_names()
    assert names == ["PPO", "DQN", "SAC", "IMPALA", "APPO", "BC", "MARWIL", "CQL", "IQL"]
    sources = [p for p in (ROOT / "relayrl").rglob("*.py")]
    for name in names:  # "module:Class" references to the algorithm classes exist in registry.py only
        holders = [p for p in sources if f'"{name}Config": ' in p.read_text() or f'"{name}": "' in p.read_text()]
        assert holders == [ROOT / "relayrl" / "algorithms" / "registry.py"], (name, holders)


def test_derived_names():
    from relayrl.algorithms.appo import APPOConfig as from_package
    from relayrl.algorithms.ppo import PPOConfig

    assert relayrl.APPOConfig is from_package and PPOConfig is relayrl.PPOConfig
    assert relayrl.IMPALAConfig().algo_class is relayrl.IMPALA
    assert registry.get_algorithm_class("appo") is relayrl.APPO
    with pytest.raises(ValueError, match="Did you mean `IMPALA`"):
        registry.get_config_class("IMPALLA")


def test_a_toy_algorithm_needs_one_entry_and_shows_in_the_cli_and_tune(tmp_path, capsys):
    """register_algorithm() is the one entry: the CLI trains it and Tune finds it by name."""
    module = tmp_path / "toy_algo.py"
    module.write_text(textwrap.dedent('''
        from relayrl import PPO, PPOConfig

        class Toy(PPO):
            @classmethod
            def get_default_config(cls):
                return ToyConfig()

        class ToyConfig(PPOConfig):
            pass
    '''))
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import ray
        ray.init(address="local", num_cpus=1, include_dashboard=False)
        from ray import tune
        from ray.tune.registry import get_trainable_cls
        from relayrl.algorithms.registry import register_algorithm
        from relayrl.cli import main

        register_algorithm("Toy", algorithm="toy_algo:Toy", config="toy_algo:ToyConfig")
        import toy_algo
        assert get_trainable_cls("Toy") is toy_algo.Toy, get_trainable_cls("Toy")
        assert toy_algo.ToyConfig().algo_class is toy_algo.Toy
        code = main(["train", "Toy", "--env", "CartPole-v1", "--train-batch-size", "128", "--minibatch-size",
                     "64", "--num-epochs", "1", "--stop-iters", "1"])
        print("EXIT", code)
        ray.shutdown()
    '''))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                            cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "EXIT 0" in result.stdout
    assert main(["--help"]) == 0
    assert "algorithms: PPO, DQN, SAC, IMPALA, APPO" in capsys.readouterr().out
