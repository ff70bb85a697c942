"""The old stack's policy mixins for TF policies (RLlib's `policy/tf_mixins.py`): the torch mixins' rules
(torch_mixins.py), with what a traced step reads kept in `tf.Variable`s, so `eager_tracing=True` sees each
new learning rate, entropy coefficient and KL coefficient. Initialise them in `before_loss_init`, as the
seed's setup_mixins."""
import numpy as np
import tensorflow as tf

from relayrl.policy import torch_mixins
from relayrl.policy.sample_batch import SampleBatch


class LearningRateSchedule(torch_mixins.LearningRateSchedule):
    """`cur_lr` (a tf.Variable) follows `lr_schedule` ([[timestep, lr], ...]); the optimizers follow it."""

    def __init__(self, lr, lr_schedule=None):
        super().__init__(lr, lr_schedule)
        self.cur_lr = tf.Variable(float(lr), trainable=False, dtype=tf.float32, name="lr")

    def _set_lr(self, lr: float) -> None:
        self.cur_lr.assign(lr)
        for optimizer in getattr(self, "_optimizers", []):
            optimizer.learning_rate = lr  # a Keras optimizer keeps it in a variable: traced steps see it


class EntropyCoeffSchedule(torch_mixins.EntropyCoeffSchedule):
    """`entropy_coeff` is a tf.Variable (losses read it, traced steps see each new value)."""

    def _set_entropy_coeff(self, value: float) -> None:
        if isinstance(getattr(self, "entropy_coeff", None), tf.Variable):
            self.entropy_coeff.assign(float(value))
        else:
            self.entropy_coeff = tf.Variable(float(value), trainable=False, dtype=tf.float32, name="entropy_coeff")


class KLCoeffMixin(torch_mixins.KLCoeffMixin):
    """`kl_coeff` is a tf.Variable (losses read it); `kl_coeff_val` is its float."""

    def __init__(self, config):
        super().__init__(config)
        self.kl_coeff_val = float(self.kl_coeff)
        self.kl_coeff = tf.Variable(self.kl_coeff_val, trainable=False, dtype=tf.float32, name="kl_coeff")

    def update_kl(self, sampled_kl):
        if sampled_kl is not None:
            if sampled_kl > 2.0 * self.kl_target:
                self.kl_coeff_val *= 1.5
            elif sampled_kl < 0.5 * self.kl_target:
                self.kl_coeff_val *= 0.5
            self.kl_coeff.assign(self.kl_coeff_val)
        return self.kl_coeff_val

    def get_state(self):
        state = super(torch_mixins.KLCoeffMixin, self).get_state()
        state["current_kl_coeff"] = self.kl_coeff_val
        return state

    def set_state(self, state):
        self.kl_coeff_val = float(state.pop("current_kl_coeff", self.kl_coeff_val))
        self.kl_coeff.assign(self.kl_coeff_val)
        super(torch_mixins.KLCoeffMixin, self).set_state(state)


class ValueNetworkMixin(torch_mixins.ValueNetworkMixin):
    """`_value(**input_dict)` through the TF model (GAE's bootstrap value); `vf_preds` as an extra output."""

    def _value(self, **input_dict):
        if not self._use_critic:
            return 0.0
        self.model({k: np.asarray(v) for k, v in input_dict.items() if k != SampleBatch.INFOS})
        return float(self.model.value_function()[0])


__all__ = ["EntropyCoeffSchedule", "KLCoeffMixin", "LearningRateSchedule", "ValueNetworkMixin"]
