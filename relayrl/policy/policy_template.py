"""`build_policy_class` / `build_torch_policy`: a policy class from functions (RLlib's policy templates).

One template for both frameworks: `framework="torch"` subclasses TorchPolicy, `"tf2"` (or `"tf"`) EagerTFPolicy
(build_tf_policy in tf_policy_template.py). The constructor runs the hooks in RLlib's order: validate_spaces ->
before_init -> make model (and dist class) -> the base policy's init -> before_loss_init -> after_init.
`Cls.with_updates(**kw)` builds the class again with some arguments replaced.
"""
import sys
from collections.abc import Callable

from relayrl.policy.models.catalog import MODEL_DEFAULTS, ModelCatalog
from relayrl.policy.policy_config_checks import check_policy_config, check_policy_spaces
from relayrl.policy.torch_policy import LEARNER_STATS_KEY, TorchPolicy

# The config every template policy starts from; get_default_config() and the algorithm's config go on top.
POLICY_DEFAULT_CONFIG = {
    "gamma": 0.99,
    "lr": 0.001,
    "lambda": 1.0,
    "use_gae": True,
    "use_critic": True,
    "grad_clip": None,
    "explore": True,
    "framework": "torch",
    "model": MODEL_DEFAULTS,
    "in_evaluation": False,  # (True in an algorithm's evaluation runners: no loss is built)
}

_ARGUMENTS = ("loss_fn", "get_default_config", "stats_fn", "postprocess_fn", "extra_action_out_fn",
              "extra_grad_process_fn", "extra_learn_fetches_fn", "optimizer_fn", "validate_spaces", "before_init",
              "before_loss_init", "after_init", "_after_loss_init", "action_sampler_fn", "action_distribution_fn",
              "make_model", "make_model_and_action_dist", "compute_gradients_fn", "apply_gradients_fn", "mixins",
              "get_batch_divisibility_req", "extra_action_fetches_fn", "gradients_fn")


def build_policy_class(name: str, framework: str, *, loss_fn: Callable | None = None,
                       get_default_config: Callable | None = None, stats_fn: Callable | None = None,
                       postprocess_fn: Callable | None = None, extra_action_out_fn: Callable | None = None,
                       extra_grad_process_fn: Callable | None = None,
                       extra_learn_fetches_fn: Callable | None = None, optimizer_fn: Callable | None = None,
                       validate_spaces: Callable | None = None, before_init: Callable | None = None,
                       before_loss_init: Callable | None = None, after_init: Callable | None = None,
                       _after_loss_init: Callable | None = None, action_sampler_fn: Callable | None = None,
                       action_distribution_fn: Callable | None = None, make_model: Callable | None = None,
                       make_model_and_action_dist: Callable | None = None,
                       compute_gradients_fn: Callable | None = None, apply_gradients_fn: Callable | None = None,
                       mixins: list[type] | None = None, get_batch_divisibility_req: Callable | None = None,
                       extra_action_fetches_fn: Callable | None = None, gradients_fn: Callable | None = None):
    """A Policy class named `name`; see the module docstring for the order of the hooks."""
    original_kwargs = {k: v for k, v in locals().items() if k in _ARGUMENTS}
    core = _base_policy(framework)
    tf = core is not TorchPolicy
    if make_model is not None and make_model_and_action_dist is not None:
        raise ValueError("build_policy_class: give make_model or make_model_and_action_dist, not both.")
    if tf and extra_grad_process_fn is not None:
        raise ValueError("build_tf_policy: extra_grad_process_fn is the torch template's; TF policies take "
                         "gradients_fn(policy, optimizer, loss) -> [(grad, var), ...].")
    # RLlib's older names for hooks: the torch template has always taken gradients_fn as extra_grad_process_fn;
    # the TF template's gradients_fn is its compute_gradients_fn.
    extra_action_out_fn = extra_action_out_fn or extra_action_fetches_fn
    if tf:
        compute_gradients_fn = compute_gradients_fn or gradients_fn
    else:
        extra_grad_process_fn = extra_grad_process_fn or gradients_fn
    base = _with_mixins(core, mixins or [])

    def __init__(self, obs_space, action_space, config):
        defaults = {**POLICY_DEFAULT_CONFIG, **(get_default_config() if get_default_config else {})}
        check_policy_spaces(name, obs_space, action_space)  # (policy_config_checks.py: named errors, not raw ones)
        check_policy_config(name, config or {}, defaults, declares_own_keys=get_default_config is not None)
        config = {**defaults, **(config or {})}
        config["model"] = {**MODEL_DEFAULTS, **(config.get("model") or {})}
        self.config = config
        core.prepare(config)
        if validate_spaces:
            validate_spaces(self, obs_space, action_space, config)
        if before_init:
            before_init(self, obs_space, action_space, config)
        dist_class = None
        if make_model_and_action_dist:
            model, dist_class = make_model_and_action_dist(self, obs_space, action_space, config)
        else:
            dist_class, logit_dim = ModelCatalog.get_action_dist(action_space, config["model"],
                                                                framework=core.framework_name)
            if make_model:
                model = make_model(self, obs_space, action_space, config)
            else:
                model = ModelCatalog.get_model_v2(obs_space, action_space, logit_dim, config["model"],
                                                  framework=core.framework_name)
        _check_model_framework(model, core.framework_name, name)
        core.__init__(self, obs_space, action_space, config, model=model,
                             loss=None if config.get("in_evaluation") else loss_fn,
                             action_distribution_class=dist_class, action_sampler_fn=action_sampler_fn,
                             action_distribution_fn=action_distribution_fn,
                             max_seq_len=config["model"].get("max_seq_len", 20),
                             get_batch_divisibility_req=get_batch_divisibility_req)
        if before_loss_init:
            before_loss_init(self, obs_space, action_space, config)
        if _after_loss_init:
            _after_loss_init(self, obs_space, action_space, config)
        if after_init:
            after_init(self, obs_space, action_space, config)
        self.global_timestep = 0

    def postprocess_trajectory(self, sample_batch, other_agent_batches=None, episode=None):
        sample_batch = base.postprocess_trajectory(self, sample_batch, other_agent_batches, episode)
        if postprocess_fn is None:
            return sample_batch
        with core.no_grad():
            return postprocess_fn(self, sample_batch, other_agent_batches, episode)

    members = {"__init__": __init__, "postprocess_trajectory": postprocess_trajectory,
               "_original_kwargs": original_kwargs, "_framework": framework}
    if optimizer_fn:
        members["optimizer"] = lambda self: optimizer_fn(self, self.config)
    if extra_action_out_fn:
        takes_policy_only = _num_params(extra_action_out_fn) == 1  # the TF template's fn(policy) (seed 001)

        def extra_action_out(self, input_dict, state_batches, model, action_dist):
            extra = base.extra_action_out(self, input_dict, state_batches, model, action_dist)
            if takes_policy_only:
                extra.update(extra_action_out_fn(self))
            else:
                extra.update(extra_action_out_fn(self, input_dict, state_batches, model, action_dist))
            return extra
        members["extra_action_out"] = extra_action_out
    if extra_grad_process_fn:
        members["extra_grad_process"] = lambda self, optimizer, loss: extra_grad_process_fn(self, optimizer, loss)
    if extra_learn_fetches_fn:
        members["extra_compute_grad_fetches"] = lambda self: {LEARNER_STATS_KEY: {}, **extra_learn_fetches_fn(self)}
    if stats_fn:
        members["stats_fn"] = lambda self, train_batch: stats_fn(self, train_batch)
    if compute_gradients_fn and tf:
        members["gradients"] = lambda self, optimizer, loss: compute_gradients_fn(self, optimizer, loss)
    elif compute_gradients_fn:
        members["compute_gradients"] = lambda self, batch: compute_gradients_fn(self, batch)
    if apply_gradients_fn and tf:
        members["apply_gradients_op"] = lambda self, optimizer, grads: apply_gradients_fn(self, optimizer, grads)
    elif apply_gradients_fn:
        members["apply_gradients"] = lambda self, gradients: apply_gradients_fn(self, gradients)

    cls = type(name, (base,), members)
    cls.__qualname__ = name
    cls.__module__ = _caller_module()
    cls.with_updates = classmethod(lambda c, **overrides: build_policy_class(**{**original_kwargs, "name": name,
                                                                                "framework": framework, **overrides}))
    return cls


def build_torch_policy(name: str, *, loss_fn: Callable | None = None, **kwargs):
    """`build_policy_class(name, framework="torch", ...)` (the name RLlib's docs use)."""
    return build_policy_class(name, "torch", loss_fn=loss_fn, **kwargs)


def _base_policy(framework: str) -> type:
    """TorchPolicy for "torch", EagerTFPolicy for "tf2" / "tf" (imported only then: TensorFlow is an extra)."""
    if framework in ("torch", "jax"):
        return TorchPolicy
    if framework not in ("tf", "tf2", "tfe"):
        raise ValueError(f"build_policy_class(framework={framework!r}): use 'torch' or 'tf2' (TensorFlow, eager; "
                         "'tf' runs as 'tf2').")
    try:
        from relayrl.policy.eager_tf_policy import EagerTFPolicy
    except ImportError as error:
        if "tensorflow" not in str(error).lower():
            raise
        raise ImportError(f"build_policy_class(framework={framework!r}) needs TensorFlow: pip install "
                          "'relayrl[tf]' (tensorflow-cpu), or write the functions with torch and use "
                          "framework='torch'.") from None
    return EagerTFPolicy


def _check_model_framework(model, framework: str, name: str) -> None:
    """A torch model in a TF policy (or the reverse) fails deep inside the first forward pass: say it here."""
    from relayrl.policy.models.catalog import is_tf

    model_framework = getattr(model, "framework", None)
    if model_framework is not None and is_tf(model_framework) != is_tf(framework):
        kind = "TFModelV2 (build_tf_policy)" if is_tf(model_framework) else "TorchModelV2 (build_torch_policy)"
        raise TypeError(f"{name}: the model {type(model).__name__} is a {kind}, but this policy is "
                        f"{framework!r}; use a model of the policy's framework (ModelCatalog.register_custom_model).")


def _num_params(fn) -> int:
    import inspect

    try:
        return len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return -1


def _with_mixins(base: type, mixins: list[type]) -> type:
    """A class whose MRO puts the mixins before `base`, so their methods take precedence."""
    if not mixins:
        return base
    return type(base.__name__, (*mixins, base), {})


def _caller_module() -> str:
    """The module that called the template (two frames up), so the class can be named in checkpoints."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("relayrl.policy."):
        frame = frame.f_back
    return frame.f_globals.get("__name__", "__main__") if frame is not None else "__main__"


__all__ = ["POLICY_DEFAULT_CONFIG", "build_policy_class", "build_torch_policy"]
