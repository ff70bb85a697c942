"""`build_tf_policy`: RLlib's TensorFlow policy template.

relayrl's policies run on torch; TensorFlow policies (the `relayrl[tf]` extra) are not built yet, so this
raises with what to do instead rather than failing later with a less clear error.
"""


def build_tf_policy(name: str, *, loss_fn=None, **kwargs):
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        raise ImportError(f"build_tf_policy({name!r}) needs TensorFlow (pip install 'relayrl[tf]'); the same "
                          "functions written with torch go to relayrl.policy.policy_template.build_policy_class("
                          "name, 'torch', loss_fn=...).") from None
    raise NotImplementedError(f"build_tf_policy({name!r}): TensorFlow policies are not implemented in relayrl yet; "
                              "write the loss with torch and use build_policy_class(name, 'torch', ...) "
                              "(docs/policy_api.md).")


__all__ = ["build_tf_policy"]
