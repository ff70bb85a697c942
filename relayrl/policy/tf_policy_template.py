"""`build_tf_policy`: RLlib's TensorFlow policy template (`pip install "relayrl[tf]"`).

The same template as the torch one (policy_template.py) on EagerTFPolicy: eager by default, the gradient
step traced with `tf.function` when the config has `eager_tracing=True`. The TF template's own hook names:
`gradients_fn` / `compute_gradients_fn(policy, optimizer, loss) -> [(grad, var), ...]`,
`apply_gradients_fn(policy, optimizer, grads_and_vars)`, `extra_action_out_fn(policy)` (or the torch
signature), `grad_stats_fn(policy, train_batch, grads)`.
"""
from relayrl.policy.policy_template import build_policy_class


def build_tf_policy(name: str, *, loss_fn=None, grad_stats_fn=None, **kwargs):
    """`build_policy_class(name, framework="tf2", ...)`, plus RLlib's TF-only `grad_stats_fn`."""
    cls = build_policy_class(name, "tf2", loss_fn=loss_fn, **kwargs)
    if grad_stats_fn is not None:
        cls.grad_stats = lambda self, train_batch, grads: grad_stats_fn(self, train_batch, grads)
    original = {**cls._original_kwargs, "loss_fn": loss_fn, "grad_stats_fn": grad_stats_fn}
    cls._original_kwargs = original
    cls.with_updates = classmethod(lambda c, **overrides: build_tf_policy(**{**original, "name": name, **overrides}))
    return cls


__all__ = ["build_tf_policy"]
