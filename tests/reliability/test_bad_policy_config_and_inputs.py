"""Bad input to the Policy API, env classes, checkpoint files and `relayrl evaluate` gets one clear error naming the
problem and the fix, never a raw AttributeError / TypeError / MemoryError or a traceback:

- an old-stack policy config with a typo (`clip_parm`, directly or through the algorithm's policy_config), a
  value of the wrong type (lr="x", fcnet_hiddens="64") or no observation space;
- a malformed policy_spec in a Policy checkpoint;
- an env that is a wrapper class or an abstract base class;
- an .npy file whose header declares a huge array;
- `relayrl evaluate --video-dir` on a folder that cannot be written;
- DefaultModelConfig(max_seq_len=10**6).
"""
import pathlib
import shutil

import gymnasium as gym
import numpy as np
import pytest
import torch
from checkpoint_tampering import edit_json, rehash

from relayrl import PPOConfig
from relayrl.algorithms.algorithm import Algorithm
from relayrl.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
from relayrl.checkpoints import CheckpointError
from relayrl.cli import main
from relayrl.modules.default_model_config import DefaultModelConfig
from relayrl.policy.policy import Policy
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.policy.policy_template import build_policy_class

OBS, ACT = gym.spaces.Box(-1.0, 1.0, (4,), np.float32), gym.spaces.Discrete(2)
SMALL = {"model": {"fcnet_hiddens": [8]}}


def _loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    return -torch.mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["rewards"])


OwnSettingPolicy = build_policy_class("OwnSettingPolicy", "torch", loss_fn=_loss)  # declares no settings of its own


class PPOPolicyAlgorithm(Algorithm):
    @classmethod
    def get_default_policy_class(cls, config):
        return PPOTorchPolicy


class OwnSettingAlgorithm(Algorithm):
    @classmethod
    def get_default_policy_class(cls, config):
        return OwnSettingPolicy


@pytest.mark.parametrize("config, error, match", [
    ({"clip_parm": 0.2}, ValueError, r"PPOTorchPolicy: unknown config key `clip_parm`\. Did you mean `clip_param`\?"),
    ({"lr": "x"}, ValueError, r"PPOTorchPolicy: config\['lr'\]: lr must be a .*got 'x'"),
    ({"model": {"fcnet_hiddens": "64"}}, ValueError,
     r"model\['fcnet_hiddens'\] must be a list of positive ints.*a string, not a list: write \[64\]"),
    ({"model": {"fcnet_hidens": [8]}}, ValueError, r"unknown model key `fcnet_hidens`\. Did you mean `fcnet_hiddens`"),
])
def test_a_bad_policy_config_is_named(config, error, match):
    with pytest.raises(error, match=match):
        PPOTorchPolicy(OBS, ACT, config)


def test_a_policy_without_an_observation_space_is_named():
    with pytest.raises(TypeError, match=r"PPOTorchPolicy\(observation_space=None, \.\.\.\): a policy needs the env's "
                                        r"observation space"):
        PPOTorchPolicy(None, ACT, SMALL)


def _policy_algorithm_config(algo_class, policy_config):
    return (PolicyAlgorithmConfig(algo_class=algo_class).environment("CartPole-v1")
            .training(train_batch_size=32, model=SMALL["model"], policy_config=policy_config)
            .debugging(seed=0, logger_config={"type": "none"}))


def test_a_policy_config_typo_through_the_algorithm_is_named_and_own_settings_pass():
    with pytest.raises(ValueError, match=r"unknown config key `clip_parm`\. Did you mean `clip_param`\?"):
        _policy_algorithm_config(PPOPolicyAlgorithm, {"clip_parm": 0.2}).build_algo()
    algo = _policy_algorithm_config(OwnSettingAlgorithm, {"raw_rewards": True}).build_algo()  # its own setting
    try:
        assert algo.get_policy().config["raw_rewards"] is True
    finally:
        algo.stop()


@pytest.mark.parametrize("edit, match", [
    (lambda s: s.__setitem__("policy_spec", [1, 2]), r"policy_spec`: expected a stored PolicySpec, found list"),
    (lambda s: s["policy_spec"]["fields"].__setitem__("config", "x"), r"the stored policy config is a str"),
    (lambda s: s["policy_spec"]["fields"].__setitem__("policy_class", 3), r"the stored policy class 3 is not a Policy"),
])
def test_a_malformed_policy_spec_in_a_policy_checkpoint_is_named(tmp_path, edit, match):
    PPOTorchPolicy(OBS, ACT, SMALL).export_checkpoint(str(tmp_path / "policy"))
    edit_json(tmp_path / "policy", "state.json", edit)
    with pytest.raises(CheckpointError, match=match):
        Policy.from_checkpoint(str(tmp_path / "policy"))


@pytest.mark.parametrize("env, match", [
    (gym.wrappers.RecordVideo, r"gymnasium\.wrappers\..*RecordVideo is a wrapper: it needs the env it wraps"),
    ("gymnasium.wrappers:RecordVideo", r"RecordVideo is a wrapper: it needs the env it wraps"),
    (gym.Env, r"gymnasium\.core\.Env is an abstract base class"),
])
def test_an_env_class_that_cannot_be_built_is_named(env, match):
    with pytest.raises(ValueError, match=match):
        PPOConfig().environment(env).build_algo()


class WrapsItsOwnEnv(gym.Wrapper):
    """A user's wrapper that makes the env it wraps from env_config: an env class like any other."""

    def __init__(self, env_config):
        super().__init__(gym.make("CartPole-v1"))


class TakesTheEnvToWrap(gym.Wrapper):
    def __init__(self, env, scale=1.0):
        super().__init__(env)


def test_a_wrapper_that_makes_its_own_env_builds_and_one_that_needs_it_is_named():
    algo = (PPOConfig().environment(WrapsItsOwnEnv).training(train_batch_size=32, minibatch_size=16, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(logger_config={"type": "none"}).build_algo())
    try:
        assert algo.train()["num_env_steps_sampled_lifetime"] >= 32
    finally:
        algo.stop()
    with pytest.raises(ValueError, match=r"TakesTheEnvToWrap is a wrapper: it needs the env it wraps"):
        PPOConfig().environment(TakesTheEnvToWrap).build_algo()


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    algo = (PPOConfig().environment("CartPole-v1").training(train_batch_size=32, minibatch_size=16, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, logger_config={"type": "none"})
            .build_algo())
    algo.train()
    path = pathlib.Path(algo.save(str(tmp_path_factory.mktemp("ckpt") / "ppo")).checkpoint.path)
    algo.stop()
    return path


def test_an_npy_header_declaring_a_huge_array_is_refused_before_reading(checkpoint, tmp_path):
    root = pathlib.Path(shutil.copytree(checkpoint, tmp_path / "ckpt"))
    name = next(str(p.relative_to(root)) for p in root.rglob("*.npy"))
    data = np.load(root / name)
    with open(root / name, "wb") as f:  # a valid header declaring 80 billion values, then the few real bytes
        np.lib.format.write_array_header_1_0(f, {"descr": np.lib.format.dtype_to_descr(data.dtype),
                                                 "fortran_order": False, "shape": (80_000_000_000,)})
        f.write(data.tobytes())
    rehash(root, name)
    with pytest.raises(CheckpointError, match=r"header declares \(80000000000,\).*bytes of data"):
        Algorithm.from_checkpoint(root)


def test_evaluate_names_an_unwritable_video_dir_in_one_line(checkpoint, tmp_path, capsys):
    (tmp_path / "a_file").write_text("")
    assert main(["evaluate", str(checkpoint), "--episodes", "1", "--video-dir", str(tmp_path / "a_file" / "v")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--video-dir" in err[0] and "cannot write videos there" in err[0], err


def test_a_huge_max_seq_len_is_refused():
    with pytest.raises(ValueError, match=r"max_seq_len'\] must be a positive int up to 10000"):
        DefaultModelConfig(max_seq_len=10 ** 6)
    with pytest.raises(ValueError, match=r"max_seq_len'\] must be a positive int up to 10000"):
        PPOConfig().environment("CartPole-v1").rl_module(model_config={"use_lstm": True,
                                                                      "max_seq_len": 10 ** 6}).build_algo()
