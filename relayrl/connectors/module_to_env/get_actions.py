"""Default module-to-env piece: sample actions (and their log-probs) from the module's distribution inputs."""
from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import Columns


class GetActions(ConnectorV2):
    """If the module did not output `actions`, sample them from `action_dist_inputs`.

    explore=True samples from the exploration distribution; explore=False takes the inference
    distribution's deterministic action (argmax / mean).
    """

    BATCHED_SAFE = True
    WRITES_EPISODES = False

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if Columns.ACTIONS in batch or Columns.ACTION_DIST_INPUTS not in batch:
            return batch
        if explore:
            dist = rl_module.get_exploration_action_dist_cls().from_logits(batch[Columns.ACTION_DIST_INPUTS])
        else:
            dist = rl_module.get_inference_action_dist_cls().from_logits(batch[Columns.ACTION_DIST_INPUTS])
            dist = dist.to_deterministic()
        actions = dist.sample()
        batch[Columns.ACTIONS] = actions
        if Columns.ACTION_LOGP not in batch:
            batch[Columns.ACTION_LOGP] = dist.logp(actions)
        return batch
