"""APPO's default RLModule: PPO's actor-critic with a target copy of the policy (encoder and pi head).

APPO's loss compares the current policy with the target one (`forward_target`); the Learner moves
the target towards the current weights every `target_network_update_freq` (tau: Polyak factor).
"""
from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
from relayrl.core.columns import Columns
from relayrl.modules.mlp import run_layers
from relayrl.modules.target_network_api import (
    TARGET_NETWORK_ACTION_DIST_INPUTS,
    TargetNetworkAPI,
    is_target_key,
    make_target_network,
)


class DefaultAPPOTorchRLModule(DefaultPPOTorchRLModule, TargetNetworkAPI):
    def make_target_networks(self) -> None:
        self._target_encoder = make_target_network(self.encoder)
        self._target_pi = make_target_network(self.pi)

    def get_target_network_pairs(self):
        return [(self.encoder, self._target_encoder), (self.pi, self._target_pi)]

    def forward_target(self, batch, **kwargs):
        if self._recurrent:  # the target LSTM starts each sequence from the actor's sampled state
            state_in = self._state_in(batch)
            features, _ = self._target_encoder(batch[Columns.OBS], state_in if self.vf_share_layers else state_in["actor"])
            logits = run_layers(features, self._target_pi)
            return {TARGET_NETWORK_ACTION_DIST_INPUTS: self._dist_inputs(None, logits)}
        logits = run_layers(batch[Columns.OBS], self._target_encoder, self._target_pi)
        return {TARGET_NETWORK_ACTION_DIST_INPUTS: self._dist_inputs(None, logits)}

    def _not_for_inference(self, key: str) -> bool:
        return is_target_key(key) or super()._not_for_inference(key)  # EnvRunners need no target networks


__all__ = ["DefaultAPPOTorchRLModule", "TARGET_NETWORK_ACTION_DIST_INPUTS"]
