"""PPO's default RLModule: an MLP (or CNN) encoder, a policy head and a value head (optionally shared encoder);
with `use_lstm=True` the encoder is an LSTM on top of that (modules/recurrent_actor_critic.py)."""
import gymnasium as gym
import torch
from torch import nn

from relayrl.algorithms.ppo.ppo_catalog import check_catalog
from relayrl.core.columns import Columns
from relayrl.modules.default_model_config import DefaultModelConfig
from relayrl.modules.distributions import TorchCategorical, TorchDiagGaussian, TorchMultiCategorical
from relayrl.modules.encoders import make_encoder
from relayrl.modules.mlp import mlp, run_layers
from relayrl.modules.numpy_forward import NumpyForwardAPI, NumpyMLP, overrides_any
from relayrl.modules.numpy_gaussian_forward import NumpyGaussianInputs
from relayrl.modules.numpy_recurrent_forward import NumpyRecurrentForward
from relayrl.modules.recurrent_actor_critic import RecurrentActorCritic
from relayrl.modules.rl_module import RLModule, ValueFunctionAPI
from relayrl.modules.space_checks import action_dim, check_action_space, multi_discrete_sizes


class DefaultPPOTorchRLModule(RecurrentActorCritic, RLModule, ValueFunctionAPI, NumpyForwardAPI):
    """Actor-critic for 1-D Box or image observations and Discrete, 1-D Box, MultiDiscrete or Tuple-of-Discrete
    actions; stateful with use_lstm."""

    # The methods that decide what the acting forward passes compute; a subclass overriding any of them
    # computes something else, and numpy_forward() leaves it to torch.
    _ACTING_FORWARD_METHODS = ("forward_exploration", "forward_inference", "_forward_exploration",
                               "_forward_inference", "_forward", "_dist_inputs")

    def setup(self) -> None:
        check_catalog(self)
        cfg = DefaultModelConfig.from_dict(self.model_config)
        name = type(self).__name__
        check_action_space(self.action_space, name, allow_multi_discrete=True)
        self._discrete = isinstance(self.action_space, gym.spaces.Discrete)
        self._multi_discrete = multi_discrete_sizes(self.action_space)  # MultiDiscrete / Tuple of Discrete: sizes
        self._box = not self._discrete and self._multi_discrete is None
        self._free_log_std = cfg.free_log_std and self._box
        self._log_std_clip = cfg.log_std_clip_param
        if self._box:
            self.action_dist_cls = TorchDiagGaussian
        elif self._discrete:
            self.action_dist_cls = TorchCategorical
        else:
            self.action_dist_cls = TorchMultiCategorical.for_sizes(self._multi_discrete)
        self.vf_share_layers = cfg.vf_share_layers
        self._recurrent = cfg.use_lstm

        if self._recurrent:  # the LSTM encoder(s), actor's and critic's (modules/recurrent_actor_critic.py)
            embed_dim = self.setup_recurrent(cfg, name)
        else:
            self.encoder, embed_dim = make_encoder(self.observation_space, cfg, name)  # MLP, or CNN for images
        n_act = action_dim(self.action_space)
        n_out = 2 * n_act if self._box and not self._free_log_std else n_act
        head_init = dict(kernel_initializer=cfg.head_fcnet_kernel_initializer,
                         kernel_initializer_kwargs=cfg.head_fcnet_kernel_initializer_kwargs,
                         bias_initializer=cfg.head_fcnet_bias_initializer,
                         bias_initializer_kwargs=cfg.head_fcnet_bias_initializer_kwargs)
        self.pi = mlp(embed_dim, cfg.head_fcnet_hiddens, cfg.head_fcnet_activation, n_out, **head_init)
        if cfg.head_fcnet_kernel_initializer is None:
            # A small final policy layer starts training from a near-uniform policy (faster, steadier PPO).
            nn.init.orthogonal_(self.pi[-1].weight, gain=0.01)
        if cfg.head_fcnet_bias_initializer is None:
            nn.init.zeros_(self.pi[-1].bias)
        if self._free_log_std:
            self.log_std = nn.Parameter(torch.zeros(n_act))
        if self.inference_only:
            return
        if not self.vf_share_layers and not self._recurrent:
            self.vf_encoder, _ = make_encoder(self.observation_space, cfg, name)
        self.vf = mlp(embed_dim, cfg.head_fcnet_hiddens, cfg.head_fcnet_activation, 1, **head_init)

    def _dist_inputs(self, embeddings, logits=None):
        logits = self.pi(embeddings) if logits is None else logits
        if not self._box:
            return logits
        if self._free_log_std:
            mean, log_std = logits, self.log_std.expand_as(logits)
        else:
            mean, log_std = torch.chunk(logits, 2, dim=-1)
        # model_config log_std_clip_param bounds the log-std the distribution sees (RLlib clips in the pi head).
        clip = self._log_std_clip
        if clip is not None and clip != float("inf"):
            log_std = log_std.clamp(-clip, clip)
        return torch.cat([mean, log_std], dim=-1)

    # The layers run as plain torch calls (run_layers): nn.Module's per-call dispatch dominates a small
    # MLP's cost, both per env step and per minibatch. Gradients flow as through the modules.
    def _forward(self, batch, **kwargs):
        if self._recurrent:
            return self.recurrent_forward(batch, train=False)
        logits = run_layers(batch[Columns.OBS], self.encoder, self.pi)
        return {Columns.ACTION_DIST_INPUTS: self._dist_inputs(None, logits)}

    def _forward_train(self, batch, **kwargs):
        if self._recurrent:
            return self.recurrent_forward(batch, train=True)
        embeddings = run_layers(batch[Columns.OBS], self.encoder)
        logits = run_layers(embeddings, self.pi)
        return {Columns.ACTION_DIST_INPUTS: self._dist_inputs(None, logits), Columns.EMBEDDINGS: embeddings}

    def numpy_forward(self):
        """The distribution inputs from encoder -> pi, plain Linear layers (NumpyForwardAPI): Discrete actions'
        logits, or Box actions' [mean, log_std] as _dist_inputs lays them out (free_log_std included)."""
        if self._recurrent or overrides_any(type(self), DefaultPPOTorchRLModule, self._ACTING_FORWARD_METHODS):
            return None
        if self._multi_discrete is not None:  # the numpy samplers draw one categorical per step
            return None
        mlp = NumpyMLP.from_sequentials(self.encoder, self.pi)
        if self._discrete:
            return mlp
        return NumpyGaussianInputs.build(mlp, self.log_std if self._free_log_std else None, self._log_std_clip)

    def numpy_recurrent_forward(self):
        """use_lstm with Discrete actions: LSTM encoder(s) -> pi (NumpyForwardAPI); the critic's LSTM steps too."""
        if not self._recurrent or not self._discrete or overrides_any(type(self), DefaultPPOTorchRLModule,
                                                                       self._ACTING_FORWARD_METHODS):
            return None
        return NumpyRecurrentForward.build(self.encoder, self.pi, None if self.vf_share_layers else self.vf_encoder)

    def compute_values(self, batch, embeddings=None):
        if self._recurrent:
            return self.recurrent_values(batch, embeddings)
        if embeddings is None or not self.vf_share_layers:
            encoder = self.encoder if self.vf_share_layers else self.vf_encoder
            embeddings = run_layers(batch[Columns.OBS], encoder)
        return run_layers(embeddings, self.vf).squeeze(-1)

    def get_state(self, components=None, *, not_components=None, inference_only: bool = False, **kwargs):
        return self._numpy_state(skip=self._not_for_inference if inference_only else None)

    def _not_for_inference(self, key: str) -> bool:
        """Parameters an EnvRunner's copy does without: the value function (a recurrent module keeps all)."""
        return not self._recurrent and key.startswith(("vf.", "vf_encoder."))

    def _state_to_load(self, state):
        state = super()._state_to_load(state)
        if self.inference_only:  # a full module's state: keep the policy part
            own = self.state_dict()
            state = {k: v for k, v in state.items() if k in own}
        return state


PPOTorchRLModule = DefaultPPOTorchRLModule  # RLlib's older name (ppo_torch_rl_module.py)
