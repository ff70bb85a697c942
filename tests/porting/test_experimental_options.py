"""`config.experimental(...)`, RLlib's switches: the builder exists with RLlib's names; relayrl implements none of
them, so their defaults pass and anything else is an error saying why and what to do instead."""
import functools

import pytest
import torch

from relayrl import PPOConfig


def test_the_defaults_pass_and_are_kept():
    config = PPOConfig().experimental(_validate_config=True, _torch_lr_scheduler_classes=None,
                                      _torch_grad_scaler_class=None, _use_msgpack_checkpoints=False)
    assert config.to_dict()["_validate_config"] is True and config._use_msgpack_checkpoints is False


@pytest.mark.parametrize("kwargs, message", [
    ({"_torch_lr_scheduler_classes": [functools.partial(torch.optim.lr_scheduler.ExponentialLR, gamma=0.9)]},
     r"give lr as a schedule: training\(lr=\[\[0, 1e-3\]"),
    ({"_validate_config": False}, "always validates"),
    ({"_torch_grad_scaler_class": torch.amp.GradScaler}, "grad scaler is not supported"),
    ({"_use_msgpack_checkpoints": True}, "its own checkpoint format"),
])
def test_other_values_say_why_and_what_instead(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PPOConfig().experimental(**kwargs)
