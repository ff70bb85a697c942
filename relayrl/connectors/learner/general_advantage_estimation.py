"""PPO's Learner piece: value targets and standardised advantages from the module's value function."""
import numpy as np
import torch

from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns
from relayrl.modules.rl_module import ValueFunctionAPI
from relayrl.ops.gae import compute_gae


class GeneralAdvantageEstimation(ConnectorV2):
    """Runs after NumpyToTensor; writes `advantages` and `value_targets` into each module's batch."""

    BATCHED_SAFE = True
    WRITES_EPISODES = False

    CONFIG_OPTIONS = ("gamma", "lambda_")  # reset_config pushes new values of these options into the piece

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
                values = module.compute_values(module_batch).detach().cpu().numpy()
            rewards = module_batch[Columns.REWARDS].cpu().numpy()
            if values.size != rewards.size:
                raise ValueError(
                    f"The train batch of module `{module_id}` has {values.size} value rows (from `obs`) but "
                    f"{rewards.size} rewards: a Learner connector piece before GeneralAdvantageEstimation added "
                    "`obs` for some timesteps only. A Learner piece must add one item per timestep of each "
                    "episode (an env-to-module piece adds only the newest one).")
            mask = module_batch[Columns.LOSS_MASK].cpu().numpy().astype(bool)
            # Recurrent batches are (sequences, max_seq_len): flattened row-major, each episode's
            # steps are contiguous with its artificial step right after the last real one and the
            # zero padding (loss_mask False) behind it, so the flat recursion applies unchanged.
            shape = rewards.shape
            advantages, value_targets = compute_gae(
                values.reshape(-1),
                rewards.reshape(-1),
                module_batch[Columns.TERMINATEDS].cpu().numpy().reshape(-1),
                mask.reshape(-1),
                gamma=self.gamma,
                lambda_=self.lambda_,
            )
            flat_mask = mask.reshape(-1)
            real = advantages[flat_mask]
            if real.size:
                advantages = np.where(flat_mask, (advantages - real.mean()) / max(1e-4, float(real.std())), 0.0)
            advantages = advantages.astype(np.float32).reshape(shape)
            value_targets = value_targets.astype(np.float32).reshape(shape)
            device = module_batch[Columns.REWARDS].device
            module_batch[Columns.ADVANTAGES] = torch.from_numpy(advantages).to(device)
            module_batch[Columns.VALUE_TARGETS] = torch.from_numpy(value_targets).to(device)
        return batch
