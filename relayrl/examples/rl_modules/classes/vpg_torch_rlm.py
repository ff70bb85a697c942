"""`VPGTorchRLModule`: the smallest useful custom TorchRLModule (RLlib's example class): one MLP from the
observations to the action logits, no value function. Write your own module the same way: build the layers in
`setup()`, return `action_dist_inputs` from `_forward()`."""
import torch

from relayrl.core.columns import Columns
from relayrl.modules.rl_module import TorchRLModule


class VPGTorchRLModule(TorchRLModule):
    """`model_config={"hidden_dim": 64}`: the width of its one hidden layer. Discrete actions."""

    def setup(self):
        # self.observation_space may differ from the env's: it is what the env-to-module pipeline outputs.
        hidden = self.model_config["hidden_dim"]
        self._policy_net = torch.nn.Sequential(
            torch.nn.Linear(self.observation_space.shape[0], hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, self.action_space.n),
        )

    def _forward(self, batch, **kwargs):
        # One forward for every phase (inference, exploration, train); the default action distribution for a
        # Discrete space (categorical) turns the logits into actions.
        return {Columns.ACTION_DIST_INPUTS: self._policy_net(batch[Columns.OBS])}
