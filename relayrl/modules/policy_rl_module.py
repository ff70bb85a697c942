"""`PolicyRLModule`: an old-stack Policy (`PolicySpec(policy_class=...)`) acting among the RLModules of a
multi-agent config, e.g. RLlib's `RandomPolicy` as the opponent the trained module is evaluated against (RLlib
2.60's `pretrain_bc_single_agent_evaluate_as_multi_agent.py`). Its `compute_actions()` gives the actions; it has
no parameters and is never trained (relayrl runs configs made only of Policy classes on its Policy API instead)."""
import numpy as np
import torch

from relayrl.core.columns import Columns
from relayrl.core.tree import map_structure
from relayrl.modules.rl_module import RLModule

POLICY_CLASS, POLICY_CONFIG = "policy_class", "policy_config"  # its model_config keys


class PolicyRLModule(RLModule):
    """model_config: {"policy_class": the Policy subclass, "policy_config": its config dict (PolicySpec.config)}."""

    def setup(self) -> None:
        policy_class = self.model_config[POLICY_CLASS]
        self.policy = policy_class(self.observation_space, self.action_space,
                                   dict(self.model_config.get(POLICY_CONFIG) or {}))

    def _act(self, batch, explore: bool):
        obs = map_structure(lambda x: x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x),
                            batch[Columns.OBS])
        return {Columns.ACTIONS: np.asarray(self.policy.compute_actions(obs, explore=explore)[0])}

    def _forward(self, batch, **kwargs):
        return self._act(batch, explore=False)

    def _forward_exploration(self, batch, **kwargs):
        return self._act(batch, explore=True)

    def _forward_train(self, batch, **kwargs):
        raise NotImplementedError(f"{type(self.policy).__name__} (an old-stack Policy in config.multi_agent("
                                  "policies=...)) is not trained here: leave its id out of policies_to_train.")


__all__ = ["PolicyRLModule", "POLICY_CLASS", "POLICY_CONFIG"]
