"""`EagerTFPolicy`: a Policy around a TFModelV2, a dist class, a loss and Keras optimizers, run eagerly.

`build_tf_policy` (tf_policy_template.py) subclasses it. What the torch policy shares is in model_policy.py;
here: tensors in and out, the gradient step on a `tf.GradientTape`, weights and optimizer state as numpy.
With `eager_tracing=True` the gradient step and the update run as `tf.function`s (tf_tracing.py); the
model's forward pass for acting stays eager. RLlib's graph-mode `framework="tf"` runs the same way: relayrl
has no TF1 sessions.
"""
import contextlib
import os
from typing import Any

import numpy as np
import tensorflow as tf

from relayrl.policy.model_policy import LEARNER_STATS_KEY, ModelPolicy, as_list
from relayrl.policy.sample_batch import SampleBatch
from relayrl.policy.tf_tracing import StepFunctions


class EagerTFPolicy(ModelPolicy):
    """Acts with `model` + `dist_class` and learns by `loss(model, dist_class, train_batch)` (one step per call)."""

    framework_name = "tf2"
    no_grad = staticmethod(contextlib.nullcontext)  # eager TF records gradients only on a tape

    def __init__(self, observation_space, action_space, config, *, model, loss=None,
                 action_distribution_class=None, action_sampler_fn=None, action_distribution_fn=None,
                 max_seq_len: int = 20, get_batch_divisibility_req=None):
        ModelPolicy.__init__(self, observation_space, action_space, config, model=model, loss=loss,
                             action_distribution_class=action_distribution_class,
                             action_sampler_fn=action_sampler_fn, action_distribution_fn=action_distribution_fn,
                             max_seq_len=max_seq_len, get_batch_divisibility_req=get_batch_divisibility_req)
        self.framework = "tf2"
        self.cur_lr = self.config.get("lr")
        self._optimizers = as_list(self.optimizer())
        self._weights_version = 0  # bumped by every update of the weights through the policy (numpy fast path)
        self._steps = StepFunctions(self, traced=bool(self.config.get("eager_tracing")))

    @staticmethod
    def prepare(config: dict) -> None:
        """Before the model exists: TF's threads (fixed once TF runs its first op)."""
        limit_tf_threads(config)

    # -- hooks the templates replace -----------------------------------------------------------------------
    def optimizer(self):
        if self.model is None or not self.model.trainable_variables():
            return []
        return tf.keras.optimizers.Adam(learning_rate=self.config.get("lr", 1e-3))

    def gradients(self, optimizer, loss):
        """[(grad, variable), ...] for one loss; `optimizer.compute_gradients(loss, var_list)` uses the tape.
        The default clips by global norm at `grad_clip` (the template's gradients_fn replaces all of it)."""
        grads_and_vars = optimizer.compute_gradients(loss, self.model.trainable_variables())
        grad_clip = self.config.get("grad_clip")
        if grad_clip is None:
            return grads_and_vars
        grads, variables = zip(*grads_and_vars)
        clipped, norm = tf.clip_by_global_norm(list(grads), grad_clip)
        self._grad_info = {"grad_gnorm": norm}
        return list(zip(clipped, variables))

    def apply_gradients_op(self, optimizer, grads_and_vars) -> None:
        optimizer.apply_gradients([(g, v) for g, v in grads_and_vars if g is not None])

    def grad_stats(self, train_batch, grads) -> dict[str, Any]:
        return {}

    # -- acting ------------------------------------------------------------------------------------------
    def get_initial_state(self) -> list:
        return [np.asarray(_numpy(s)) for s in self._state_inputs]

    def _plan_numpy_forward(self):
        from relayrl.policy.tf_numpy_forward import plan_tf_numpy_forward

        return plan_tf_numpy_forward(self)

    def _to_tensor(self, value):
        return _tensor(value)

    def _to_numpy(self, value):
        return _numpy(value)

    def _ones_seq_lens(self, batch_size: int):
        return tf.ones(batch_size, dtype=tf.int32)

    def _probability(self, logp):
        return tf.exp(tf.cast(logp, tf.float32))

    # -- learning ----------------------------------------------------------------------------------------
    def compute_gradients(self, postprocessed_batch):
        """Gradients (numpy, one per variable of each optimizer's list) and the stats of one loss evaluation."""
        grads, fetches = self._gradients_and_fetches(postprocessed_batch)
        return [None if g is None else g.numpy() for group in grads for g in group], fetches

    def apply_gradients(self, gradients) -> None:
        groups, i = [], 0
        for variables in self._steps.grad_variables:
            groups.append([None if g is None else tf.convert_to_tensor(g) for g in gradients[i:i + len(variables)]])
            i += len(variables)
        self._steps.apply(groups)
        self.num_grad_updates += 1
        self._weights_version += 1

    def learn_on_batch(self, postprocessed_batch: SampleBatch) -> dict[str, Any]:
        """One step per optimizer on the whole batch; returns {"learner_stats": {...}, ...}."""
        result = {}
        if self.callbacks is not None:
            self.callbacks.on_learn_on_batch(policy=self, train_batch=postprocessed_batch, result=result)
        grads, fetches = self._gradients_and_fetches(postprocessed_batch)
        self._steps.apply(grads)
        self.num_grad_updates += 1
        self._weights_version += 1
        return self._learn_on_batch_result(fetches, result)

    def _gradients_and_fetches(self, batch: SampleBatch):
        losses, grads, finite, stats = self._steps.gradients(self._as_sequences(batch))
        if not bool(finite):
            raise FloatingPointError(f"{type(self).__name__}: the loss or a gradient is not finite (losses: "
                                     f"{[float(v) for v in losses]}); the weights are left unchanged. Check the loss "
                                     "and the batch's columns.")
        fetches = self.extra_compute_grad_fetches()
        fetches[LEARNER_STATS_KEY] = {**fetches.get(LEARNER_STATS_KEY, {}), **{k: _scalar(v) for k, v in stats.items()}}
        return grads, fetches

    # -- weights -----------------------------------------------------------------------------------------
    def get_weights(self) -> dict[str, np.ndarray]:
        return {k: v.numpy().copy() for k, v in self.model.variables(as_dict=True).items()}

    def set_weights(self, weights) -> None:
        variables = self.model.variables(as_dict=True)
        missing, unknown = sorted(set(variables) - set(weights)), sorted(set(weights) - set(variables))
        if missing or unknown:
            raise ValueError(f"{type(self).__name__}.set_weights: the weights do not fit the model (missing: "
                             f"{missing}, unknown: {unknown}); give get_weights() of a policy with the same model.")
        for key, variable in variables.items():
            variable.assign(np.asarray(weights[key], dtype=variable.dtype.as_numpy_dtype))
        self._weights_version += 1

    def get_state(self) -> dict[str, Any]:
        state = super().get_state()
        self._steps.build_optimizers()
        state["_optimizer_variables"] = [[np.asarray(v.numpy()) for v in o.variables] for o in self._optimizers]
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        self._steps.build_optimizers()
        for optimizer, saved in zip(self._optimizers, state.get("_optimizer_variables") or []):
            if len(saved) != len(optimizer.variables):
                raise ValueError(f"{type(self).__name__}.set_state: the optimizer state has {len(saved)} variables, "
                                 f"this policy's optimizer {len(optimizer.variables)}; the model or optimizer differ.")
            for variable, value in zip(optimizer.variables, saved):
                variable.assign(np.reshape(np.asarray(value), variable.shape))  # the format may store 0-d as 1-d
        super().set_state(state)


def limit_tf_threads(config) -> None:
    """One intra-op and one inter-op thread: TF's own pools would take every core on top of the torch Learner's
    threads (learner/torch_threads.py); OMP_NUM_THREADS opts out. TF accepts this only before it runs its first
    op: later it keeps what it has."""
    if "OMP_NUM_THREADS" in os.environ:
        return
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:
        pass  # TF already runs


def _tensor(value):
    if isinstance(value, (tf.Tensor, tf.Variable)):
        return value
    array = np.asarray(value)
    if array.dtype == object:
        return value
    return tf.convert_to_tensor(array.astype(np.float32) if array.dtype == np.float64 else array)


def _numpy(value):
    if isinstance(value, (tf.Tensor, tf.Variable)):
        return value.numpy()
    return np.asarray(value) if isinstance(value, (list, tuple)) else value


def _scalar(value):
    if isinstance(value, (tf.Tensor, tf.Variable)):
        value = value.numpy()
    if isinstance(value, np.ndarray) and value.size == 1:
        return value.item()
    return value.item() if isinstance(value, np.generic) else value


__all__ = ["EagerTFPolicy", "limit_tf_threads"]
