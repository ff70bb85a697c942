"""CQL's default RLModule: SAC's actor and twin critics (Box actions), whose training pass adds what the
conservative term needs: each critic's Q(s, a) for `num_actions` actions per state drawn uniformly from [-1, 1]
and from the policy at s and at s' (all rated at s, as the CQL paper and d3rlpy do), with their log-probs.

The policy's samples carry no gradient (the conservative term trains the critics only); the policy runs once per
state and its distribution is sampled `num_actions` times (not once per repeated state). The three kinds of actions
go through each critic in one forward pass, run in cache-sized row chunks on the CPU
(relayrl/modules/chunked_relu_mlp.py).
"""
import gymnasium as gym
import torch

from relayrl.algorithms.sac.default_sac_rl_module import DefaultSACTorchRLModule
from relayrl.core.columns import Columns
from relayrl.modules.chunked_relu_mlp import run_layers_chunked
from relayrl.modules.mlp import run_layers
from relayrl.modules.squashed_gaussian import TanhSquashedGaussian

# forward_train outputs (RLlib's names): [batch, num_actions] each
Q_RAND_REPEAT, Q_CURR_REPEAT, Q_NEXT_REPEAT = "q_rand_repeat", "q_curr_repeat", "q_next_repeat"
LOGPS_CURR_REPEAT, LOGPS_NEXT_REPEAT = "logps_curr_repeat", "logps_next_repeat"
TWIN = "_twin"  # the twin critic's keys: "q_twin_rand_repeat", ... (RLlib's)


def twin_key(key: str) -> str:
    return key.replace("q_", "q" + TWIN + "_", 1)


class DefaultCQLTorchRLModule(DefaultSACTorchRLModule):
    _ALGORITHM_KEYS = ("twin_q", "num_actions")

    def setup(self) -> None:
        if not isinstance(self.action_space, gym.spaces.Box):
            raise ValueError(f"CQL's default module needs Box actions, got {self.action_space}; for discrete "
                             "actions use BC or MARWIL, or give your own RLModule.")
        super().setup()
        self.num_actions = int(self.model_config.get("num_actions", 10))

    def _forward_train(self, batch, **kwargs):
        out = super()._forward_train(batch, **kwargs)
        obs, next_obs = batch[Columns.OBS], batch[Columns.NEXT_OBS]
        n, k = obs.shape[0], self.num_actions
        obs_repeat = obs.repeat_interleave(k, dim=0)
        with torch.no_grad():
            pi_inputs = out[Columns.ACTION_DIST_INPUTS].detach().repeat_interleave(k, dim=0)
            curr_actions, curr_logp = TanhSquashedGaussian(pi_inputs).rsample_with_logp()
            next_inputs = run_layers(next_obs, self.pi_encoder, self.pi).repeat_interleave(k, dim=0)
            next_actions, next_logp = TanhSquashedGaussian(next_inputs).rsample_with_logp()
            random_actions = torch.rand_like(curr_actions) * 2.0 - 1.0
        actions = torch.cat([random_actions, curr_actions, next_actions])
        q_values = self._sampled_q_values(obs_repeat.repeat(3, *([1] * (obs.dim() - 1))), actions)
        for net, values in enumerate(q_values):
            rand, curr, nxt = values.view(3, n, k).unbind(0)
            for key, value in ((Q_RAND_REPEAT, rand), (Q_CURR_REPEAT, curr), (Q_NEXT_REPEAT, nxt)):
                out[key if net == 0 else twin_key(key)] = value
        out[LOGPS_CURR_REPEAT], out[LOGPS_NEXT_REPEAT] = curr_logp.view(n, k), next_logp.view(n, k)
        return out

    def _sampled_q_values(self, obs, actions):
        """Each critic's Q(s, a) over the sampled actions' many rows (`_q_values`' values and gradients)."""
        if self._images:
            return self._q_values(obs, actions)
        x = torch.cat([obs, actions.to(obs.dtype)], dim=-1)
        return [run_layers_chunked(x, encoder, head).squeeze(-1) for encoder, head in self._q_nets(False)]


__all__ = ["DefaultCQLTorchRLModule", "twin_key", "Q_RAND_REPEAT", "Q_CURR_REPEAT", "Q_NEXT_REPEAT",
           "LOGPS_CURR_REPEAT", "LOGPS_NEXT_REPEAT"]
