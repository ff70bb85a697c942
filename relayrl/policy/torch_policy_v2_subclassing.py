"""`TorchPolicyV2`: RLlib's subclassing form of the torch policy (the class form of `build_policy_class`).

RLlib users write `class MyPolicy(TorchPolicyV2)` with `__init__(obs_space, action_space, config)` calling
`TorchPolicyV2.__init__(self, obs_space, action_space, config, max_seq_len=...)` and override methods instead of
passing functions: `make_model()` or `make_model_and_action_dist()`, `loss(model, dist_class, train_batch)`,
`postprocess_trajectory`, `optimizer`, `stats_fn`, `extra_action_out`, `extra_grad_process`,
`action_distribution_fn` / `action_sampler_fn`, `get_batch_divisibility_req`. TorchPolicy (torch_policy.py) takes
the model as an argument; this class builds it from those methods first, as RLlib's `_init_model_and_dist_class`.
"""
from relayrl.policy.models.catalog import MODEL_DEFAULTS, ModelCatalog
from relayrl.policy.policy import Policy
from relayrl.policy.torch_policy import TorchPolicy


class TorchPolicyV2(TorchPolicy):
    """Override `make_model` (or `make_model_and_action_dist`) and `loss`; the rest has TorchPolicy's defaults."""

    def __init__(self, observation_space, action_space, config, *, max_seq_len: int = 20, **template_kwargs):
        if "model" in template_kwargs:  # TorchPolicy's own form (relayrl's TorchPolicyV2 was its alias)
            TorchPolicy.__init__(self, observation_space, action_space, config, max_seq_len=max_seq_len,
                                 **template_kwargs)
            return
        if template_kwargs:
            raise TypeError(f"{type(self).__name__}: TorchPolicyV2.__init__ takes (observation_space, action_space, "
                            f"config, *, max_seq_len), not {sorted(template_kwargs)}: override make_model(), loss(), "
                            "... instead of passing them.")
        config = dict(config or {})
        config["model"] = {**MODEL_DEFAULTS, **(config.get("model") or {})}
        config["framework"] = "torch"
        # make_model() reads self.observation_space, self.action_space and self.config, as in RLlib
        Policy.__init__(self, observation_space, action_space, config)
        model, dist_class = self._init_model_and_dist_class()
        TorchPolicy.__init__(self, observation_space, action_space, self.config, model=model,
                             action_distribution_class=dist_class,
                             action_sampler_fn=_method_if_overridden(self, "action_sampler_fn"),
                             action_distribution_fn=_method_if_overridden(self, "action_distribution_fn"),
                             max_seq_len=max_seq_len,
                             get_batch_divisibility_req=lambda policy: policy.get_batch_divisibility_req())

    def _init_model_and_dist_class(self):
        own_model = _overrides(self, "make_model")
        own_model_and_dist = _overrides(self, "make_model_and_action_dist")
        if own_model and own_model_and_dist:
            raise ValueError(f"{type(self).__name__}: override only one of make_model and "
                             "make_model_and_action_dist (as RLlib).")
        if own_model_and_dist:
            return self.make_model_and_action_dist()
        dist_class, logit_dim = ModelCatalog.get_action_dist(self.action_space, self.config["model"],
                                                            framework="torch")
        if own_model:
            model = self.make_model()
        else:
            model = ModelCatalog.get_model_v2(self.observation_space, self.action_space, logit_dim,
                                              self.config["model"], framework="torch")
        return model, dist_class

    # -- the methods a subclass overrides (RLlib's defaults) ---------------------------------------------------
    def make_model(self):
        return None

    def make_model_and_action_dist(self):
        return None, None

    def get_batch_divisibility_req(self) -> int:
        return 1

    def loss(self, model, dist_class, train_batch):
        raise NotImplementedError(f"{type(self).__name__}: override loss(self, model, dist_class, train_batch).")

    def _initialize_loss_from_dummy_batch(self, *args, **kwargs) -> None:
        """RLlib runs a dummy batch through the loss here to learn the view requirements; relayrl's runners
        collect every column anyway, so there is nothing to do (RLlib's TorchPolicyV2 subclasses call it)."""


def _overrides(policy, name: str) -> bool:
    return getattr(type(policy), name) is not getattr(TorchPolicyV2, name)


def _method_if_overridden(policy, name: str):
    """A subclass's `action_sampler_fn(model, *, obs_batch, state_batches, **kw)` /
    `action_distribution_fn(model, *, obs_batch, state_batches, **kw)` as the template's hook, else None."""
    method = getattr(type(policy), name, None)
    if method is None:
        return None

    def hook(policy, model, input_dict=None, state_batches=None, **kwargs):
        kwargs.pop("obs_batch", None)
        return method(policy, model, obs_batch=input_dict, state_batches=state_batches, **kwargs)

    return hook


__all__ = ["TorchPolicyV2"]
