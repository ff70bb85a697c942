"""Two CartPole modules for tests of partial module states (RLlib's strict=False): `PolicyOnly` (a BC-like policy)
and `WithValueHead` (the same policy layer plus a value head, as PPO fine-tuning from BC adds). Importable by
name, so Ray's Learner actors can build them."""
from torch import nn

from relayrl.core.columns import Columns
from relayrl.modules.rl_module import TorchRLModule, ValueFunctionAPI


class PolicyOnly(TorchRLModule):
    def setup(self):
        self._pi = nn.Linear(4, 2)

    def _forward(self, batch, **kwargs):
        return {Columns.ACTION_DIST_INPUTS: self._pi(batch[Columns.OBS])}


class WithValueHead(PolicyOnly, ValueFunctionAPI):
    def setup(self):
        super().setup()
        self._vf = nn.Linear(4, 1)

    def compute_values(self, batch, embeddings=None):
        return self._vf(batch[Columns.OBS]).squeeze(-1)


__all__ = ["PolicyOnly", "WithValueHead"]
