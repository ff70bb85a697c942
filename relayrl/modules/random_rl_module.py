"""`RandomRLModule`: acts uniformly at random in its action space (RLlib's example class): an opponent or baseline
next to learned modules, left out of `policies_to_train`."""
import numpy as np

from relayrl.core.columns import Columns
from relayrl.core.tree import first_leaf
from relayrl.modules.rl_module import RLModule


class RandomRLModule(RLModule):
    """Outputs `actions` sampled from `action_space` (one per row of the observations); it has no parameters and
    cannot be trained: keep its module id out of `config.multi_agent(policies_to_train=...)`."""

    def _forward(self, batch, **kwargs):
        rows = len(first_leaf(batch[Columns.OBS]))
        actions = [self.action_space.sample() for _ in range(rows)]
        return {Columns.ACTIONS: np.stack(actions) if rows else np.zeros((0,) + self.action_space.shape)}

    def _forward_train(self, batch, **kwargs):
        raise NotImplementedError("RandomRLModule cannot be trained: leave its module id out of "
                                  "config.multi_agent(policies_to_train=[...]).")

    def compile(self, *args, **kwargs):
        """RLlib's TorchRLModule method, for code that calls it: nothing to compile."""
