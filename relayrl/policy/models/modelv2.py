"""`ModelV2` / `TorchModelV2`: the old API stack's model interface (RLlib's `models/modelv2.py`).

A model maps an input dict (`obs`, `obs_flat`, `state_in_*`, ...) and RNN state to the action distribution's
inputs: `forward(input_dict, state, seq_lens) -> (outputs, state_out)`; `value_function()` gives the value of
the last forward pass's inputs.
"""

import gymnasium as gym
import numpy as np

from relayrl.policy.preprocessors import restore_original_dimensions


# the columns from_batch hands to forward() (besides state_in_*): what the default models may read
_FROM_BATCH = ("obs", "prev_actions", "prev_rewards")


class ModelV2:
    """Framework-neutral base. Subclasses implement `forward` (and `value_function` for critics)."""

    # True: the policy trains it on max_seq_len sequences (seq_lens, one state_in per sequence, rows unpadded;
    # rnn_sequencing.add_seq_lens), as the use_lstm models. False: on rows, each with its recorded state_in.
    trains_on_sequences = False

    def __init__(self, obs_space: gym.Space, action_space: gym.Space, num_outputs: int, model_config: dict,
                 name: str, framework: str = "torch"):
        self.obs_space = obs_space
        self.action_space = action_space
        self.num_outputs = num_outputs
        self.model_config = model_config or {}
        self.name = name
        self.framework = framework
        self.time_major = self.model_config.get("_time_major", False)
        self._last_output = None
        self.view_requirements = {}

    def get_initial_state(self) -> list:
        return []

    def forward(self, input_dict: dict, state: list, seq_lens):
        raise NotImplementedError(f"{type(self).__name__} must implement forward(input_dict, state, seq_lens) "
                                  "-> (outputs, state_out).")

    def value_function(self):
        raise NotImplementedError(f"{type(self).__name__} has no value_function(); a policy that needs values "
                                  "(vf_preds, GAE) needs a model that implements it.")

    def custom_loss(self, policy_loss, loss_inputs):
        return policy_loss

    def metrics(self) -> dict:
        return {}

    def last_output(self):
        return self._last_output

    def is_time_major(self) -> bool:
        return self.time_major

    def __call__(self, input_dict, state: list | None = None, seq_lens=None):
        """forward() on `input_dict` with `obs_flat` added; the state defaults to its `state_in_*` entries."""
        restored = dict(input_dict)
        obs = restored["obs"]
        restored["obs_flat"] = self._flatten_obs(obs)
        # as RLlib: a custom model reads a Dict / Tuple observation's parts from `obs` (the runners flattened it)
        restored["obs"] = restore_original_dimensions(restored["obs_flat"], self.obs_space, self._reshape)
        if state is None:
            state = [input_dict[k] for k in _state_keys(input_dict, "state_in_")]
        if seq_lens is None and hasattr(input_dict, "get"):
            seq_lens = input_dict.get("seq_lens")
        outputs, state_out = self.forward(restored, state, seq_lens)
        if not isinstance(state_out, (list, tuple)):
            raise TypeError(f"{type(self).__name__}.forward() must return (outputs, state_list); the state part "
                            f"is a {type(state_out).__name__}.")
        self._last_output = outputs
        return outputs, list(state_out)

    def from_batch(self, train_batch, is_training: bool = True):
        """__call__ on a train batch: its `obs`, `prev_actions`, `prev_rewards` and `state_in_*` columns (and
        `seq_lens` for a batch of sequences)."""
        input_dict = {k: v for k, v in train_batch.items() if k in _FROM_BATCH or k.startswith("state_in_")}
        input_dict["is_training"] = is_training
        return self.__call__(input_dict, None, train_batch.get("seq_lens") if hasattr(train_batch, "get") else None)

    def _flatten_obs(self, obs):
        return obs  # the torch model flattens

    def _reshape(self, value, shape):
        if self.framework in ("tf", "tf2"):
            import tensorflow as tf

            return tf.reshape(value, shape)
        return value.reshape(shape)


def _state_keys(input_dict, prefix: str) -> list[str]:
    keys = [k for k in input_dict.keys() if isinstance(k, str) and k.startswith(prefix)]
    return sorted(keys, key=lambda k: int(k[len(prefix):]))


class TorchModelV2(ModelV2):
    """Torch models subclass this and `torch.nn.Module` (`class M(TorchModelV2, nn.Module)`)."""

    def __init__(self, obs_space, action_space, num_outputs, model_config, name):
        from torch import nn

        if isinstance(self, nn.Module) and "_parameters" not in self.__dict__:
            nn.Module.__init__(self)  # so attributes can be set before the subclass's nn.Module.__init__
        ModelV2.__init__(self, obs_space, action_space, num_outputs, model_config, name, framework="torch")

    def _flatten_obs(self, obs):
        import torch

        obs = torch.as_tensor(obs)
        if isinstance(self.obs_space, gym.spaces.Discrete):
            return torch.nn.functional.one_hot(obs.long(), int(self.obs_space.n)).float()
        return obs.reshape(obs.shape[0], -1).float()

    def variables(self, as_dict: bool = False):
        return dict(self.state_dict()) if as_dict else list(self.state_dict().values())

    def trainable_variables(self, as_dict: bool = False):
        if as_dict:
            return {k: v for k, v in self.named_parameters() if v.requires_grad}
        return [v for v in self.parameters() if v.requires_grad]


def flat_obs_size(space: gym.Space) -> int:
    if isinstance(space, gym.spaces.Discrete):
        return int(space.n)
    return int(np.prod(space.shape))


__all__ = ["ModelV2", "TorchModelV2", "flat_obs_size"]
