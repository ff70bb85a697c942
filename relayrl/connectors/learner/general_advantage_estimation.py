"""PPO's Learner piece: value targets and standardised advantages from the module's value function."""
import numpy as np
import torch

from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns
from relayrl.modules.rl_module import ValueFunctionAPI
from relayrl.ops.gae import compute_gae


class GeneralAdvantageEstimation(ConnectorV2):
    """Runs after NumpyToTensor; writes `advantages` and `value_targets` into each module's batch."""

    def __init__(self, input_observation_space=None, input_action_space=None, *, gamma: float, lambda_: float,
                 **kwargs):
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self.gamma = gamma
        self.lambda_ = lambda_

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        for module_id, module_batch in batch.items():
            module = rl_module[module_id]
            if not isinstance(module, ValueFunctionAPI):
                continue
            for column in (Columns.REWARDS, Columns.TERMINATEDS, Columns.LOSS_MASK):
                if column not in module_batch:
                    raise KeyError(
                        f"GeneralAdvantageEstimation needs `{column}` in the train batch; keep the default "
                        "Learner pieces (AddOneTsToEpisodesAndTruncate, AddColumnsFromEpisodesToTrainBatch)."
                    )
            with torch.no_grad():
                values = module.compute_values(module_batch).cpu().numpy()
            advantages, value_targets = compute_gae(
                values,
                module_batch[Columns.REWARDS].cpu().numpy(),
                module_batch[Columns.TERMINATEDS].cpu().numpy(),
                module_batch[Columns.LOSS_MASK].cpu().numpy(),
                gamma=self.gamma,
                lambda_=self.lambda_,
            )
            mask = module_batch[Columns.LOSS_MASK].cpu().numpy().astype(bool)
            real = advantages[mask]
            advantages = np.where(mask, (advantages - real.mean()) / max(1e-4, real.std()), 0.0).astype(np.float32)
            device = module_batch[Columns.REWARDS].device
            module_batch[Columns.ADVANTAGES] = torch.from_numpy(advantages).to(device)
            module_batch[Columns.VALUE_TARGETS] = torch.from_numpy(value_targets).to(device)
        return batch
