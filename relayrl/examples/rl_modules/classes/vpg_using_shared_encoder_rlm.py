"""Policies that share one encoder (RLlib's example classes): a MultiRLModule holding the encoder as a module of
its own (`SHARED_ENCODER_ID`) next to the policy heads, and running the encoder on each policy's batch before
that policy's head. Train them with one optimizer over all modules
(relayrl/examples/learners/classes/vpg_torch_learner_shared_optimizer.py).

`VPGPolicyNoSharedEncoder` is the same policy with an encoder of its own, to compare against.
"""
import torch

from relayrl.core.columns import Columns
from relayrl.modules.model_configs import ENCODER_OUT
from relayrl.modules.multi_rl_module import MultiRLModule
from relayrl.modules.rl_module import TorchRLModule

SHARED_ENCODER_ID = "shared_encoder"


class SharedEncoder(TorchRLModule):
    """One linear layer from the observations to `model_config["embedding_dim"]` features."""

    def setup(self):
        self._net = torch.nn.Linear(self.observation_space.shape[0], self.model_config["embedding_dim"])

    def _forward(self, batch, **kwargs):
        return {ENCODER_OUT: self._net(batch[Columns.OBS])}


def _policy_head(embedding_dim: int, hidden_dim: int, num_actions: int) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(embedding_dim, hidden_dim), torch.nn.ReLU(),
                               torch.nn.Linear(hidden_dim, num_actions))


class VPGPolicyAfterSharedEncoder(TorchRLModule):
    """A policy head over the shared encoder's features, which its MultiRLModule puts into the batch."""

    def setup(self):
        self._pi_head = _policy_head(self.model_config["embedding_dim"], self.model_config["hidden_dim"],
                                     self.action_space.n)

    def _forward(self, batch, **kwargs):
        return {Columns.ACTION_DIST_INPUTS: self._pi_head(batch[ENCODER_OUT])}


class VPGMultiRLModuleWithSharedEncoder(MultiRLModule):
    """Runs the shared encoder on each policy's batch, then that policy's module."""

    def setup(self):
        super().setup()
        if SHARED_ENCODER_ID not in self._rl_modules or len(self._rl_modules) < 2:
            raise ValueError(f"{type(self).__name__} needs a module `{SHARED_ENCODER_ID}` (the encoder) and at least "
                             "one policy module in its MultiRLModuleSpec.")
        self.encoder = self._rl_modules[SHARED_ENCODER_ID]

    def _forward_inference(self, batch, **kwargs):
        return self._through_encoder(batch, "forward_inference", **kwargs)

    def _forward_exploration(self, batch, **kwargs):
        return self._through_encoder(batch, "forward_exploration", **kwargs)

    def _forward_train(self, batch, **kwargs):
        return self._through_encoder(batch, "forward_train", **kwargs)

    def _through_encoder(self, batch, forward: str, **kwargs):
        outputs = {}
        for module_id, module_batch in batch.items():
            # A new dict: the caller's batch stays as it was (the Learner reuses it for the loss).
            features = self.encoder._forward(module_batch)[ENCODER_OUT]
            outputs[module_id] = getattr(self._rl_modules[module_id], forward)({**module_batch, ENCODER_OUT: features},
                                                                             **kwargs)
        return outputs


class VPGPolicyNoSharedEncoder(TorchRLModule):
    """The same policy with its own encoder."""

    def setup(self):
        embedding_dim = self.model_config["embedding_dim"]
        self.encoder = torch.nn.Linear(self.observation_space.shape[0], embedding_dim)
        self._pi_head = _policy_head(embedding_dim, self.model_config["hidden_dim"], self.action_space.n)

    def _forward(self, batch, **kwargs):
        features = batch[ENCODER_OUT] if ENCODER_OUT in batch else self.encoder(batch[Columns.OBS])
        return {Columns.ACTION_DIST_INPUTS: self._pi_head(features)}
