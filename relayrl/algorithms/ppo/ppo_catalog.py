"""`PPOCatalog` (RLlib's `ray.rllib.algorithms.ppo.ppo_catalog`): the networks of PPO's default module, built from
the spaces and a model config, for a custom RLModule that wants PPO's encoder and heads.

`RLModuleSpec(module_class=PPOTorchRLModule, catalog_class=PPOCatalog, ...)` is PPO's default module as it is:
it builds these same networks. relayrl's default modules build their networks themselves, so a catalog class
of your own is refused there: put your networks into an RLModule (`setup()`), e.g. a subclass of
DefaultPPOTorchRLModule.
"""
from relayrl.modules.default_model_config import DefaultModelConfig
from relayrl.modules.encoders import make_encoder
from relayrl.modules.mlp import mlp
from relayrl.modules.space_checks import action_dim, check_action_space


class PPOCatalog:
    def __init__(self, observation_space, action_space, model_config_dict=None):
        check_action_space(action_space, type(self).__name__)
        self.observation_space = observation_space
        self.action_space = action_space
        self.model_config = DefaultModelConfig.from_dict(dict(model_config_dict or {}))
        self._encoder_dim = None

    def build_encoder(self, framework: str = "torch"):
        """The observation encoder: an MLP of `fcnet_hiddens` (a CNN of `conv_filters` for images)."""
        _torch_only(framework)
        encoder, self._encoder_dim = make_encoder(self.observation_space, self.model_config, type(self).__name__)
        return encoder

    def build_pi_head(self, framework: str = "torch"):
        """The policy head (`head_fcnet_hiddens`), from the encoder's output to the action distribution inputs."""
        _torch_only(framework)
        n = action_dim(self.action_space)
        out = n if self.action_space.shape == () else 2 * n  # Discrete: logits; Box: mean and log-std
        return self._head(out)

    def build_vf_head(self, framework: str = "torch"):
        """The value head: from the encoder's output to one value."""
        _torch_only(framework)
        return self._head(1)

    def get_action_dist_cls(self, framework: str = "torch"):
        from relayrl.modules.distributions import TorchCategorical, TorchDiagGaussian

        _torch_only(framework)
        return TorchCategorical if self.action_space.shape == () else TorchDiagGaussian

    def _head(self, out_dim: int):
        if self._encoder_dim is None:
            self.build_encoder()  # its output size sizes the heads
        cfg = self.model_config
        return mlp(self._encoder_dim, cfg.head_fcnet_hiddens, cfg.head_fcnet_activation, out_dim)


def _torch_only(framework: str) -> None:
    if framework != "torch":
        raise ValueError(f"PPOCatalog builds torch networks only (framework={framework!r}); pass 'torch'.")


def check_catalog(module) -> None:
    """PPO's default module accepts PPOCatalog (the networks it builds anyway) and no other catalog."""
    catalog = module.catalog_class
    if catalog is not None and catalog is not PPOCatalog:
        raise ValueError(
            f"{type(module).__name__} got catalog_class={getattr(catalog, '__name__', catalog)!r}: relayrl's default "
            "modules build their networks from model_config and take no catalog of your own. Put your networks "
            "into an RLModule's setup() (e.g. a subclass of DefaultPPOTorchRLModule) and pass it as "
            "RLModuleSpec(module_class=...).")


__all__ = ["PPOCatalog"]
