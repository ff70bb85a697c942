"""TorchScript export (loads with plain torch, no relayrl) and RLModule checkpoints."""
import json
import os
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import PPOConfig, RLModule
from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
from relayrl.checkpoints import read_manifest
from relayrl.core.columns import Columns

_LOAD_WITHOUT_RELAYRL = r"""
import json, sys
sys.modules["relayrl"] = None  # any `import relayrl` now fails
import torch
model = torch.jit.load(sys.argv[1])
obs = torch.tensor(json.loads(sys.argv[2]), dtype=torch.float32)
with torch.no_grad():
    print(json.dumps(model(obs).argmax(-1).tolist()))
"""


def _actions_in_plain_torch(model_file, obs):
    proc = subprocess.run([sys.executable, "-c", _LOAD_WITHOUT_RELAYRL, str(model_file), json.dumps(obs.tolist())],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _torchscript_actions(model_file, obs):
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch prefers torch.export; TorchScript still loads
        return torch.jit.load(model_file)(torch.as_tensor(obs)).argmax(-1).tolist()


def _module_actions(module, obs):
    with torch.no_grad():
        out = module.forward_inference({Columns.OBS: torch.as_tensor(obs)})
    return out[Columns.ACTION_DIST_INPUTS].argmax(-1).tolist()


def _algo(**checkpointing):
    return (PPOConfig().environment("CartPole-v1").training(train_batch_size=128, minibatch_size=64, num_epochs=1)
            .checkpointing(**checkpointing).debugging(seed=0, logger_config={"type": "none"}).build_algo())


def _observations(n=64):
    # Spread wide: a policy trained for one iteration prefers one action over most of CartPole's range.
    return np.random.default_rng(0).normal(scale=5.0, size=(n, 4)).astype(np.float32)


def test_export_policy_model_gives_the_same_actions_without_relayrl(tmp_path):
    algo = _algo()
    algo.train()
    model_file = algo.export_policy_model(str(tmp_path / "export"))
    assert model_file == str(tmp_path / "export" / "model.pt")
    obs = _observations()
    expected = _module_actions(algo.get_module(), obs)
    assert len(set(expected)) > 1  # the observations exercise both actions
    assert _actions_in_plain_torch(model_file, obs) == expected
    with pytest.raises(ValueError, match="No module `defualt_policy`.*default_policy"):
        algo.export_policy_model(str(tmp_path / "x"), policy_id="defualt_policy")
    algo.stop()


def test_export_native_model_files_puts_torchscript_into_checkpoints(tmp_path):
    algo = _algo(export_native_model_files=True)
    algo.train()
    path = algo.save(str(tmp_path / "ckpt")).checkpoint.path
    name = "native_models/default_policy/model.pt"
    assert name in read_manifest(path)["files"]  # hashed and verified like every other file
    obs = _observations()
    assert _torchscript_actions(os.path.join(path, name), obs) == _module_actions(algo.get_module(), obs)
    plain = _algo()
    assert not os.path.exists(os.path.join(plain.save_to_path(tmp_path / "plain"), "native_models"))
    algo.stop()
    plain.stop()


def test_rl_module_save_and_from_checkpoint(tmp_path):
    module = DefaultPPOTorchRLModule(observation_space=gym.spaces.Box(-1.0, 1.0, (4,), np.float32),
                                     action_space=gym.spaces.Discrete(2),
                                     model_config={"fcnet_hiddens": [16], "vf_share_layers": False})
    with torch.no_grad():
        for p in module.parameters():
            p.add_(1.0)
    path = module.save_to_path(tmp_path / "module")
    loaded = RLModule.from_checkpoint(path)
    assert type(loaded) is DefaultPPOTorchRLModule and loaded.model_config["fcnet_hiddens"] == [16]
    own, other = module.state_dict(), loaded.state_dict()
    assert set(own) == set(other) and all(torch.equal(own[k], other[k]) for k in own)
    obs = _observations(8)
    assert _module_actions(loaded, obs) == _module_actions(module, obs)
    script = module.export_torchscript(str(tmp_path / "m.pt"))
    assert _torchscript_actions(script, obs) == _module_actions(module, obs)
