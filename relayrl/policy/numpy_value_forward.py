"""The numpy fast path for torch policies whose one extra action output is ValueNetworkMixin's `vf_preds`
(PPOTorchPolicy and its with_updates variants): numpy_forward.py's logits MLP plus the default model's
separate value MLP, in numpy.

Acting with PPOTorchPolicy through torch costs ~0.6 ms per env step on the 2-core machine, most of a CartPole
iteration; the numpy pass costs a few microseconds. It applies where NumpyCategoricalMLP would (the default
FullyConnectedNetwork, TorchCategorical, no state, no action_sampler_fn / action_distribution_fn), and:
- no class of the policy overrides `extra_action_out` but ValueNetworkMixin (no extra_action_out_fn);
- the critic is used (`use_critic` / `use_gae`) and the model has its own value layers (vf_share_layers False).
`vf_preds` are the value MLP's float32 output, the torch model's values up to float rounding (tested at 1e-5);
the weights are re-read when any parameter of either MLP changed.
"""
from typing import Optional

import numpy as np

from relayrl.policy.model_policy import ModelPolicy
from relayrl.policy.numpy_forward import (NumpyCategoricalMLP, _compile, layer_reader, mlp_applies, modules_fit,
                                          versions_of)
from relayrl.policy.sample_batch import SampleBatch


class NumpyCategoricalMLPWithValues(NumpyCategoricalMLP):
    extra_columns = (SampleBatch.VF_PREDS,)

    @classmethod
    def plan(cls, policy) -> Optional["NumpyCategoricalMLPWithValues"]:
        from relayrl.policy.torch_mixins import ValueNetworkMixin

        model = policy.model
        if not (_only_value_extra_output(type(policy), ValueNetworkMixin) and getattr(policy, "_use_critic", False)
                and mlp_applies(policy) and model._value_hidden is not None and modules_fit(model._value_hidden)):
            return None
        import torch

        modules = list(model._hidden) + [model._logits]
        value_modules = list(model._value_hidden) + [model._value_head]
        fast = cls(layer_reader(modules), versions_of(policy, modules + value_modules),
                   seed=int(torch.randint(2 ** 31 - 1, (1,)).item()))
        fast._read_value_layers = layer_reader(value_modules)
        fast._value_layers = []
        return fast

    def _reload(self) -> None:
        super()._reload()
        self._value_layers = _compile(self._read_value_layers())

    def compute(self, obs, explore: bool):
        actions, extra = super().compute(obs, explore)
        extra[SampleBatch.VF_PREDS] = self._values(np.asarray(obs, dtype=np.float32).reshape(len(obs), -1))[:, 0]
        return actions, extra  # vf_preds last, as ValueNetworkMixin.extra_action_out adds it after the others

    def extra_row(self, x) -> tuple:
        """(vf_preds,) for one flat observation (the one-env step's row)."""
        return (self._values(x)[0],)

    def _values(self, x):
        """The value MLP on [B, n] (-> [B, 1]) or one flat row [n] (-> [1]), float32 as the torch model."""
        for weights, bias, activation, _ in self._value_layers:
            x = x @ weights
            x += bias
            if activation is not None:
                activation(x, out=x)
        return x


def _only_value_extra_output(kind: type, value_mixin: type) -> bool:
    """ValueNetworkMixin's extra_action_out is the only one above ModelPolicy's (which returns {})."""
    owners = {klass for klass in kind.__mro__ if "extra_action_out" in vars(klass)}
    return owners == {value_mixin, ModelPolicy}


__all__ = ["NumpyCategoricalMLPWithValues"]
