"""Default module-to-env piece: sample actions (and their log-probs) from the module's distribution inputs."""
from relayrl.connectors.connector_v2 import ConnectorV2, is_module_keyed
from relayrl.core.columns import Columns

# shared_data keys the EnvRunner sets when an Exploration object (not the default sampling) picks actions.
EXPLORATION = "exploration"
TIMESTEP = "timestep"


class GetActions(ConnectorV2):
    """If the module did not output `actions`, pick them from `action_dist_inputs`.

    Without an Exploration object in `shared_data` (the default, StochasticSampling semantics):
    explore=True samples from the exploration distribution; explore=False takes the inference
    distribution's deterministic action (argmax / mean). With one, its `get_exploration_action`
    gets the distribution, `shared_data["timestep"]` (the runner's lifetime env steps) and `explore`.
    """

    BATCHED_SAFE = True
    WRITES_EPISODES = False
    READS_EPISODES = False

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        if is_module_keyed(batch, rl_module):  # multi-agent: each module's outputs with its own distribution
            explorations = (shared_data or {}).get(EXPLORATION) or {}
            for module_id, module_batch in batch.items():
                module_shared = dict(shared_data or {}, **{EXPLORATION: explorations.get(module_id)})
                batch[module_id] = self(rl_module=rl_module[module_id], batch=module_batch, episodes=episodes,
                                        explore=explore, shared_data=module_shared)
            return batch
        if Columns.ACTIONS in batch or Columns.ACTION_DIST_INPUTS not in batch:
            return batch
        exploration = shared_data.get(EXPLORATION) if shared_data else None
        if exploration is not None:
            return self._explore_with(exploration, rl_module, batch, bool(explore), shared_data.get(TIMESTEP))
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

    @staticmethod
    def _explore_with(exploration, rl_module, batch, explore, timestep):
        from relayrl.exploration.exploration import make_action_distribution

        inputs = batch[Columns.ACTION_DIST_INPUTS]
        dist_cls = rl_module.get_exploration_action_dist_cls() if explore else rl_module.get_inference_action_dist_cls()
        distribution = make_action_distribution(dist_cls, inputs)
        actions, logp = exploration.get_exploration_action(action_distribution=distribution, timestep=timestep,
                                                           explore=explore)
        batch[Columns.ACTIONS] = actions
        if Columns.ACTION_LOGP not in batch:
            import torch

            batch[Columns.ACTION_LOGP] = logp if logp is not None else torch.zeros(inputs.shape[:-1])
        return batch
