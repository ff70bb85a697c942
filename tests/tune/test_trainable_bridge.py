"""Algorithm is a ray.tune.Trainable exactly when ray.tune is loaded, whatever the import order;
the embedded path never imports ray. Each case runs in a fresh interpreter."""
import subprocess
import sys
import textwrap

import pytest


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout


def test_embedded_import_never_imports_ray():
    out = _run("""
        import sys
        import relayrl, relayrl.tune
        import relayrl.algorithms.ppo.ppo
        from relayrl import PPO
        print(sorted(m for m in sys.modules if m == "ray" or m.startswith("ray.")))
        print(PPO.__mro__[-2].__name__)
    """)
    assert out.split("\n")[:2] == ["[]", "_Rebasable"]


def test_relayrl_first_then_ray_tune(tmp_path):
    """Also: an algorithm built by the user (not by Tune) keeps relayrl's train/save/restore/stop."""
    out = _run(f"""
        from relayrl import PPO, PPOConfig
        from relayrl.testing.envs import CountingEnv
        # An algorithm built before ray.tune is loaded keeps working after the re-basing.
        algo = PPOConfig().environment(CountingEnv).training(train_batch_size=16, minibatch_size=8).build_algo()
        algo.train()
        from ray import tune
        from ray.tune.registry import register_trainable
        assert issubclass(PPO, tune.Trainable) and isinstance(algo, tune.Trainable)
        register_trainable("PPO", PPO)  # what Tuner(PPO) does: a TypeError before the re-basing
        result = algo.train()
        assert result["training_iteration"] == 2 and algo.iteration == 2 and "trial_id" not in result
        saved = algo.save({str(tmp_path / "ckpt")!r})
        algo.train()
        algo.restore(saved.checkpoint.path)
        assert algo.iteration == 2
        algo.stop()
        restored = PPO.from_checkpoint(saved.checkpoint.path, trusted=[CountingEnv])  # (relayrl.testing: passed)
        assert restored.iteration == 2
        restored.stop()
        print("ok")
    """)
    assert out.strip() == "ok"


def test_ray_without_tune_never_imports_ray_tune():
    """A program that imports ray (ray.init, ray.data, ...) but not Tune pays neither for importing ray.tune
    (seconds) nor needs its dependencies: relayrl waits for ray.tune instead of importing it."""
    out = _run("""
        import sys
        sys.modules["pydantic"] = None  # a machine with Ray but no pydantic: importing ray.tune fails there
        import ray
        import relayrl
        from relayrl import PPO, PPOConfig
        from relayrl.testing.envs import CountingEnv
        algo = PPOConfig().environment(CountingEnv).training(train_batch_size=16, minibatch_size=8).build_algo()
        assert algo.train()["training_iteration"] == 1
        algo.stop()
        print(sorted(m for m in sys.modules if m == "ray.tune" or m.startswith("ray.tune.")))
        print(PPO.__mro__[-2].__name__)
    """)
    assert out.split("\n")[:2] == ["[]", "_Rebasable"]


@pytest.mark.parametrize("first", ["import ray", pytest.param("import ray.tune", marks=pytest.mark.slow),
                                   pytest.param("from ray.tune import Tuner", marks=pytest.mark.slow)])
def test_ray_first_then_relayrl(first):
    out = _run(f"""
        import sys
        {first}
        tune_loaded_before = "ray.tune" in sys.modules
        from relayrl import PPO, PPOConfig
        from relayrl.testing.envs import CountingEnv
        assert ("ray.tune" in sys.modules) == tune_loaded_before  # relayrl never imports it
        algo = PPOConfig().environment(CountingEnv).training(train_batch_size=16, minibatch_size=8).build_algo()
        from ray.tune import Trainable
        from ray.tune.registry import register_trainable
        from ray.tune.tune import _Config
        assert issubclass(PPO, Trainable) and isinstance(algo, Trainable)
        register_trainable("PPO", PPO)  # what Tuner(PPO) does: a TypeError before the re-basing
        assert isinstance(PPOConfig(), _Config)  # Tuner(param_space=config) converts with to_dict()
        assert algo.train()["training_iteration"] == 1
        algo.stop()
        print("ok")
    """)
    assert out.strip() == "ok"


def test_default_resource_request(tiny_ppo_config):
    from relayrl import PPO
    from relayrl.tune.resources import resource_bundles

    assert resource_bundles(PPO, tiny_ppo_config) == [{"CPU": 1}]
    config = tiny_ppo_config.copy(copy_frozen=False).update_from_dict({"num_learners": 2, "num_cpus_per_learner": 2})
    assert resource_bundles(PPO, config) == [{"CPU": 1}, {"CPU": 2}, {"CPU": 2}]
    # Tune passes the trial's config dict, with its private entries.
    as_dict = {**tiny_ppo_config.to_dict(), "num_env_runners": 2, "__trial_info__": None}
    assert resource_bundles(PPO, as_dict) == [{"CPU": 1}, {"CPU": 1}, {"CPU": 1}]
    # No remote Learners: the algorithm's process trains with num_cpus_per_learner threads.
    as_dict.update(num_cpus_per_learner=2, num_cpus_per_env_runner=0.5, custom_resources_per_env_runner={"sim": 1})
    assert resource_bundles(PPO, as_dict) == [{"CPU": 2}, {"CPU": 0.5, "sim": 1}, {"CPU": 0.5, "sim": 1}]
    # A GPU Learner in the algorithm's process: its GPU in the first bundle; with Learner actors, in theirs.
    as_dict.update(num_env_runners=0, num_gpus_per_learner=1)
    assert resource_bundles(PPO, as_dict) == [{"CPU": 2, "GPU": 1}]
    as_dict.update(num_learners=1)
    assert resource_bundles(PPO, as_dict) == [{"CPU": 1}, {"CPU": 2, "GPU": 1}]
    # Remote evaluation EnvRunners (RLlib counts them too), only with evaluation on.
    as_dict.update(num_learners=0, num_gpus_per_learner=0, evaluation_num_env_runners=1)
    assert resource_bundles(PPO, as_dict) == [{"CPU": 2}]
    as_dict.update(evaluation_interval=1)
    assert resource_bundles(PPO, as_dict) == [{"CPU": 2}, {"CPU": 0.5, "sim": 1}]
    tune = pytest.importorskip("ray.tune")
    request = PPO.default_resource_request(tiny_ppo_config.copy(copy_frozen=False).env_runners(num_env_runners=1))
    assert isinstance(request, tune.PlacementGroupFactory)
    assert request.bundles == [{"CPU": 1}, {"CPU": 1}]


def test_algorithm_names_survive_a_ray_restart():
    """Tune keeps names registered while Ray is up in that session only: after ray.shutdown() and a new
    ray.init() in the same process, "PPO" must still be a known trainable."""
    out = _run("""
        import ray
        from ray.tune.registry import TRAINABLE_CLASS, _global_registry
        import relayrl  # noqa: F401
        from ray import tune  # relayrl registers its names with Tune here
        for _ in range(2):
            ray.init(address="local", num_cpus=1, include_dashboard=False)
            assert _global_registry.contains(TRAINABLE_CLASS, "PPO"), "PPO unknown after ray.init"
            ray.shutdown()
        print("ok")
    """)
    assert out.strip() == "ok"
