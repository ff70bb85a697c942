"""Action source for `sample(random_actions=True)`: a random action per sub-env from the action space."""
from typing import Any, Dict

from relayrl.core.columns import Columns
from relayrl.env.sampling.torch_actions import TorchModuleActions


class RandomActions(TorchModuleActions):
    """Samples the single env's action space; the env-to-module pipeline still runs after every step
    (its pieces, e.g. filters, see every observation, and the next call finds its batch)."""

    def __call__(self, timestep: int) -> Dict[str, Any]:
        space = self.runner._spaces["__env_single__"][1]
        return {Columns.ACTIONS: [space.sample() for _ in range(self.runner.num_envs)]}
