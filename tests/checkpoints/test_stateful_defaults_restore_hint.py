"""A module's weights restored into an algorithm whose stateful-module defaults resolved model_config fields (PPO's
head_fcnet_hiddens=[64] with use_lstm=True) that the checkpoint's algorithm did not have (BC's, given the same
model_config): the shape error names those fields and the fix; before, it said only 'another model (e.g. other
fcnet_hiddens)', which the user had not changed."""
import pytest

from relayrl import PPOConfig
from relayrl.checkpoints import CheckpointError

MODEL = {"use_lstm": True, "lstm_cell_size": 16, "fcnet_hiddens": [16], "max_seq_len": 8}


def _ppo(model):
    return (PPOConfig().environment("CartPole-v1").rl_module(model_config=model).env_runners(num_env_runners=0)
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())


def test_the_shape_error_names_the_fields_the_defaults_resolved(tmp_path):
    source = _ppo({**MODEL, "head_fcnet_hiddens": []})  # as BC's module with this model_config: no head layers
    path = source.save_to_path(tmp_path / "ckpt")
    source.stop()
    target = _ppo(MODEL)  # the defaults resolve head_fcnet_hiddens=[64]
    try:
        with pytest.raises(CheckpointError, match=r"another model.*head_fcnet_hiddens=\[64\].*defaults for stateful "
                                                  r"modules.*set these fields in both configs' model_config"):
            target.restore_from_path(path, component="learner_group/learner/rl_module")
    finally:
        target.stop()
    same = _ppo({**MODEL, "head_fcnet_hiddens": []})  # the fix named: the field set alike in both configs
    try:
        same.restore_from_path(path, component="learner_group/learner/rl_module")
    finally:
        same.stop()


def test_no_note_where_nothing_was_resolved(tmp_path):
    source = _ppo({**MODEL, "head_fcnet_hiddens": [32]})
    path = source.save_to_path(tmp_path / "ckpt")
    source.stop()
    target = _ppo({**MODEL, "head_fcnet_hiddens": [64]})  # the user's value: no defaults to name
    try:
        with pytest.raises(CheckpointError, match="another model") as info:
            target.restore_from_path(path, component="learner_group/learner/rl_module")
        assert "defaults for stateful modules" not in str(info.value)
    finally:
        target.stop()
