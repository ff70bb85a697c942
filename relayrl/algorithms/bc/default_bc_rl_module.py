"""BC's default RLModule: PPO's default module (an encoder, a policy head and a value head).

BC trains the policy only; the value head stays at its initialisation. Keeping it makes a BC-trained module's
weights PPO's as they are, so PPO fine-tunes them directly (`ppo.learner_group.set_weights(
bc.learner_group.get_weights())`, docs/offline.md), where RLlib's BC module (without a value head) needs a custom
PPO module to load into.
"""
from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule

DefaultBCTorchRLModule = DefaultPPOTorchRLModule

__all__ = ["DefaultBCTorchRLModule"]
