"""SAC's default RLModule: a policy network, one or two Q networks and their target copies.

Box actions: a tanh-squashed Gaussian policy (actions in [-1, 1]; the module-to-env pipeline maps
them to the env's bounds when normalize_actions=True) and Q(s, a) networks on [obs, action].
Discrete actions: a categorical policy over logits and Q(s) networks with one output per action,
so the loss takes expectations over the policy's probabilities (Christodoulou 2019).

model_config: `fcnet_*` configure the encoders, `head_fcnet_*` the output heads; `twin_q`
(added by SACConfig) builds the second Q network.

Image observations (3-D Box, channels last, uint8 scaled inside): the actor and every Q network get their own
CNN (`conv_filters`, `conv_activation`; RLlib's default filters by image size), as RLlib's SAC builds separate
pi and qf encoders; the target networks copy them. Discrete actions: Q(s) = head(CNN(s)). Box actions: the
action joins the CNN's features, then an `fcnet_hiddens` MLP and the head: Q(s, a) = head(MLP([CNN(s), a])).
"""
from contextlib import nullcontext

import gymnasium as gym
import torch

from relayrl.core.columns import Columns
from relayrl.modules.default_model_config import DefaultModelConfig
from relayrl.modules.distributions import TorchCategorical
from relayrl.modules.encoders import is_image_space, make_encoder
from relayrl.modules.mlp import mlp, output_dim, run_layers
from relayrl.modules.numpy_forward import NumpyForwardAPI, NumpyMLP, overrides_any
from relayrl.modules.rl_module import RLModule
from relayrl.modules.space_checks import action_dim, flat_obs_dim
from relayrl.modules.squashed_gaussian import TanhSquashedGaussian
from relayrl.modules.target_network_api import TargetNetworkAPI, is_target_key, make_target_network

# forward_train outputs (RLlib's names where RLlib has them).
QF_PREDS = "qf_preds"  # Q(s, a) of the batch's actions
QF_TWIN_PREDS = "qf_twin_preds"
Q_CURR = "q_curr"  # Box: min_i Q_i(s, a~pi(s)) via detached Q weights; Discrete: min_i Q_i(s, .) (no gradient)
Q_TARGET_NEXT = "q_target_next"  # Box: min_i Q_target_i(s', a'~pi(s')); Discrete: per action (no gradient)
LOGP_RESAMPLED = "logp_resampled"  # Box: log pi(a|s) of the resampled action; Discrete: log pi(.|s)
LOGP_NEXT_RESAMPLED = "logp_next_resampled"  # the same at s' (no gradient)
ACTION_PROBS = "action_probs"  # Discrete: pi(.|s)
ACTION_PROBS_NEXT = "action_probs_next"  # Discrete: pi(.|s') (no gradient)

_POLICY_PREFIXES = ("pi_encoder.", "pi.")


class DefaultSACTorchRLModule(RLModule, TargetNetworkAPI, NumpyForwardAPI):
    """SAC's actor and twin critics for 1-D Box or image observations and Discrete or 1-D Box actions."""

    # The methods that decide what the acting forward passes compute; a subclass overriding any of them
    # computes something else, and numpy_forward() leaves it to torch.
    _ACTING_FORWARD_METHODS = ("forward_exploration", "forward_inference", "_forward_exploration",
                               "_forward_inference", "_forward")

    # model_config keys the algorithm's config adds for the module (RLlib's auto-includes), not DefaultModelConfig's.
    _ALGORITHM_KEYS = ("twin_q",)

    def setup(self) -> None:
        model_config = dict(self.model_config)
        self.twin_q = bool(model_config.get("twin_q", True))
        for key in self._ALGORITHM_KEYS:
            model_config.pop(key, None)
        cfg = DefaultModelConfig.from_dict(model_config)
        name = type(self).__name__
        if cfg.use_lstm:
            raise ValueError(f"{name} has no LSTM: set use_lstm=False, or give your own RLModule via "
                             "config.rl_module(rl_module_spec=RLModuleSpec(module_class=...)).")
        self._images = is_image_space(self.observation_space)
        obs_dim = None if self._images else flat_obs_dim(self.observation_space, name)
        check_sac_action_space(self.action_space)
        self._discrete = isinstance(self.action_space, gym.spaces.Discrete)
        self.action_dist_cls = TorchCategorical if self._discrete else TanhSquashedGaussian
        n_act = action_dim(self.action_space)
        self._cfg, self._name = cfg, name
        self._encoder_args = (cfg.fcnet_hiddens, cfg.fcnet_activation)
        self._encoder_init = dict(kernel_initializer=cfg.fcnet_kernel_initializer,
                                  kernel_initializer_kwargs=cfg.fcnet_kernel_initializer_kwargs,
                                  bias_initializer=cfg.fcnet_bias_initializer,
                                  bias_initializer_kwargs=cfg.fcnet_bias_initializer_kwargs)
        self._head_args = (cfg.head_fcnet_hiddens, cfg.head_fcnet_activation)
        self._head_init = dict(kernel_initializer=cfg.head_fcnet_kernel_initializer,
                               kernel_initializer_kwargs=cfg.head_fcnet_kernel_initializer_kwargs,
                               bias_initializer=cfg.head_fcnet_bias_initializer,
                               bias_initializer_kwargs=cfg.head_fcnet_bias_initializer_kwargs)
        self.pi_encoder, self.pi = self._encoder_and_head(obs_dim, n_act if self._discrete else 2 * n_act)
        if self.inference_only:
            return
        q_in, q_out = (obs_dim, n_act) if self._discrete else (None if self._images else obs_dim + n_act, 1)
        fuse = 0 if self._discrete else n_act
        self.qf_encoder, self.qf = self._encoder_and_head(q_in, q_out, fuse)
        if self.twin_q:
            self.qf_twin_encoder, self.qf_twin = self._encoder_and_head(q_in, q_out, fuse)

    def _encoder_and_head(self, in_dim, out_dim: int, fuse_dim: int = 0):
        """An encoder (MLP of `in_dim` inputs, or a CNN for images) and its head.

        Images with Box actions (`fuse_dim` action inputs): the head is an fcnet MLP over [CNN features, action]
        and then the output layers, so Q stays nonlinear in the action (a linear head alone would not be).
        """
        if self._images:
            encoder, embed_dim = make_encoder(self.observation_space, self._cfg, self._name)
        else:
            encoder, embed_dim = mlp(in_dim, *self._encoder_args, **self._encoder_init), output_dim(
                self._encoder_args[0], in_dim)
        if self._images and fuse_dim:
            fusion = mlp(embed_dim + fuse_dim, *self._encoder_args, **self._encoder_init)
            head = mlp(output_dim(self._encoder_args[0], embed_dim + fuse_dim), *self._head_args, out_dim,
                       **self._head_init)
            return encoder, torch.nn.Sequential(*fusion, *head)
        return encoder, mlp(embed_dim, *self._head_args, out_dim, **self._head_init)

    # -- target networks (TargetNetworkAPI) --------------------------------------------------------
    def make_target_networks(self) -> None:
        """Frozen copies of the Q networks (the Learner calls this once; EnvRunners never need them)."""
        if hasattr(self, "_target_qf"):
            return
        self._target_qf_encoder = make_target_network(self.qf_encoder)
        self._target_qf = make_target_network(self.qf)
        if self.twin_q:
            self._target_qf_twin_encoder = make_target_network(self.qf_twin_encoder)
            self._target_qf_twin = make_target_network(self.qf_twin)

    def get_target_network_pairs(self):
        pairs = [(self.qf_encoder, self._target_qf_encoder), (self.qf, self._target_qf)]
        if self.twin_q:
            pairs += [(self.qf_twin_encoder, self._target_qf_twin_encoder), (self.qf_twin, self._target_qf_twin)]
        return pairs

    def forward_target(self, batch, **kwargs):
        """min_i Q_target_i for batch["obs"] (and, for Box actions, batch["actions"])."""
        with torch.no_grad():
            return {QF_PREDS: self._min_q(batch[Columns.OBS], batch.get(Columns.ACTIONS), target=True)}

    # -- Q networks ---------------------------------------------------------------------------------
    def _q_nets(self, target: bool):
        prefix = "_target_" if target else ""
        nets = [(getattr(self, prefix + "qf_encoder"), getattr(self, prefix + "qf"))]
        if self.twin_q:
            nets.append((getattr(self, prefix + "qf_twin_encoder"), getattr(self, prefix + "qf_twin")))
        return nets

    def _q_values(self, obs, actions=None, *, target: bool = False, frozen: bool = False):
        """Each Q network's values: [B] for Box actions, [B, num_actions] for Discrete.

        frozen=True uses detached weights: gradients reach the inputs (the actor's actions) but never
        the Q networks, so the actor loss cannot train the critics.
        """
        run = _run_frozen if frozen else run_layers
        if self._discrete:
            return [run(obs, encoder, head) for encoder, head in self._q_nets(target)]
        if self._images:  # the action joins after the CNN; frozen: the actor's gradient needs none of the CNN
            values = []
            for encoder, head in self._q_nets(target):
                with torch.no_grad() if frozen else nullcontext():
                    features = run_layers(obs, encoder)
                values.append(run(torch.cat([features, actions.to(features.dtype)], dim=-1), head))
        else:
            x = torch.cat([obs, actions.to(obs.dtype)], dim=-1)
            values = [run(x, encoder, head) for encoder, head in self._q_nets(target)]
        return [v.squeeze(-1) for v in values]

    def _min_q(self, obs, actions=None, *, target: bool = False):
        values = self._q_values(obs, actions, target=target)
        return values[0] if len(values) == 1 else torch.min(values[0], values[1])

    def compute_q_values(self, batch):
        """RLlib's QNetAPI: min_i Q_i(s, a) (Box) or min_i Q_i(s, .) (Discrete)."""
        return {QF_PREDS: self._min_q(batch[Columns.OBS], batch.get(Columns.ACTIONS))}

    # -- forward passes -------------------------------------------------------------------------------
    def _forward(self, batch, **kwargs):
        return {Columns.ACTION_DIST_INPUTS: run_layers(batch[Columns.OBS], self.pi_encoder, self.pi)}

    def numpy_forward(self):
        """Box actions: the squashed Gaussian's inputs are pi_encoder -> pi, plain Linear layers (NumpyForwardAPI;
        None for images, Discrete actions, or a subclass with its own acting forward)."""
        if self._discrete or overrides_any(type(self), DefaultSACTorchRLModule, self._ACTING_FORWARD_METHODS):
            return None
        return NumpyMLP.from_sequentials(self.pi_encoder, self.pi)

    def _forward_train(self, batch, **kwargs):
        """Everything SAC's loss needs; the policy at s' and the targets run without autograd."""
        obs, next_obs = batch[Columns.OBS], batch[Columns.NEXT_OBS]
        pi_out = run_layers(obs, self.pi_encoder, self.pi)
        with torch.no_grad():
            pi_next_out = run_layers(next_obs, self.pi_encoder, self.pi)
        out = {Columns.ACTION_DIST_INPUTS: pi_out}
        if self._discrete:
            return self._forward_train_discrete(batch, pi_out, pi_next_out, out)
        actions, logp = TanhSquashedGaussian(pi_out).rsample_with_logp()
        q_batch = self._q_values(obs, batch[Columns.ACTIONS])  # the critics' loss
        out[QF_PREDS] = q_batch[0]
        if self.twin_q:
            out[QF_TWIN_PREDS] = q_batch[1]
        # The actor's loss: its gradient reaches the policy through a~pi(s) and leaves the Q nets alone.
        q_resampled = self._q_values(obs, actions, frozen=True)
        out[Q_CURR] = q_resampled[0] if not self.twin_q else torch.min(q_resampled[0], q_resampled[1])
        out[LOGP_RESAMPLED] = logp
        with torch.no_grad():
            next_actions, out[LOGP_NEXT_RESAMPLED] = TanhSquashedGaussian(pi_next_out).rsample_with_logp()
            out[Q_TARGET_NEXT] = self._min_q(next_obs, next_actions, target=True)
        return out

    def _forward_train_discrete(self, batch, pi_out, pi_next_out, out):
        log_probs = torch.log_softmax(pi_out, dim=-1)
        out[LOGP_RESAMPLED], out[ACTION_PROBS] = log_probs, log_probs.exp()
        q_all = self._q_values(batch[Columns.OBS])
        actions = batch[Columns.ACTIONS].long().unsqueeze(-1)
        out[QF_PREDS] = q_all[0].gather(-1, actions).squeeze(-1)
        if self.twin_q:
            out[QF_TWIN_PREDS] = q_all[1].gather(-1, actions).squeeze(-1)
        with torch.no_grad():
            out[Q_CURR] = q_all[0] if not self.twin_q else torch.min(q_all[0], q_all[1])
            out[LOGP_NEXT_RESAMPLED] = torch.log_softmax(pi_next_out, dim=-1)
            out[ACTION_PROBS_NEXT] = out[LOGP_NEXT_RESAMPLED].exp()
            out[Q_TARGET_NEXT] = self._min_q(batch[Columns.NEXT_OBS], target=True)
        return out

    # -- state ------------------------------------------------------------------------------------
    def get_state(self, components=None, *, not_components=None, inference_only: bool = False, **kwargs):
        if inference_only:  # EnvRunners only need the policy: walk only its submodules (a third of the cost)
            return {key: value.detach().cpu().numpy().copy() for prefix in _POLICY_PREFIXES
                    for key, value in getattr(self, prefix[:-1]).state_dict(prefix=prefix).items()}
        return super().get_state()

    def _state_to_load(self, state):
        own = self.state_dict()
        if self.inference_only:
            state = {k: v for k, v in state.items() if k in own}
        elif not any(map(is_target_key, state)):
            # State saved before make_target_networks(): keep our (freshly copied) targets.
            state = {**{k: v for k, v in own.items() if is_target_key(k)}, **state}
        return state


def _run_frozen(x, *sequentials):
    """Like run_layers, with detached weights (gradients flow to `x` only)."""
    return run_layers(x, *sequentials, frozen=True)


def check_sac_action_space(space) -> None:
    """SAC's default module handles Discrete and 1-D Box actions; anything else gets the fix named."""
    if isinstance(space, gym.spaces.Discrete):
        return
    if isinstance(space, gym.spaces.Box) and len(space.shape) == 1:
        return
    raise ValueError(
        f"SAC's default RLModule cannot handle the action space {space}: it supports Discrete and 1-D Box "
        "actions. Fix: wrap the env (gymnasium.ActionWrapper) to expose a Discrete or 1-D Box action space "
        "(e.g. flatten a MultiDiscrete into one Discrete), or give your own RLModule via "
        "config.rl_module(rl_module_spec=RLModuleSpec(module_class=...)).")


__all__ = ["DefaultSACTorchRLModule", "check_sac_action_space"]
