"""APPO's default RLModule: PPO's actor-critic with a target copy of the policy (encoder and pi head).

APPO's loss compares the current policy with the target one (`forward_target`); the Learner moves
the target towards the current weights every `target_network_update_freq` (tau: Polyak factor).
"""
from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
from relayrl.core.columns import Columns
from relayrl.modules.mlp import run_layers
from relayrl.modules.target_network_api import TargetNetworkAPI, is_target_key, make_target_network

TARGET_NETWORK_ACTION_DIST_INPUTS = "target_network_action_dist_inputs"


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

    def _state_to_load(self, state):
        state = super()._state_to_load(state)
        if not any(is_target_key(k) for k in self.state_dict()):  # no targets here (EnvRunner copies)
            state = {k: v for k, v in state.items() if not is_target_key(k)}
        return state


__all__ = ["DefaultAPPOTorchRLModule", "TARGET_NETWORK_ACTION_DIST_INPUTS"]
