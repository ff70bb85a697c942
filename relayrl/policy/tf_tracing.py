"""The TF policy's gradient step and update, run eagerly or, with `eager_tracing=True`, as `tf.function`s.

Traced, the step is one graph per set of batch columns (their dtypes and trailing shapes; any batch size),
so a changing train batch size does not retrace. As in RLlib, Python values the loss reads (a float
attribute of the policy) are fixed when the step is traced: what changes between steps must be a
`tf.Variable` (the TF mixins keep `kl_coeff` and the learning rate in variables).
"""
import numpy as np
import tensorflow as tf

from relayrl.policy.model_policy import as_list
from relayrl.policy.sample_batch import SampleBatch


class TapeOptimizer:
    """What `gradients_fn(policy, optimizer, loss)` gets: the policy's optimizer with TF1's
    `compute_gradients(loss, var_list)`, answered from the step's GradientTape."""

    def __init__(self, optimizer, tape, variables):
        self._optimizer, self.tape, self._variables = optimizer, tape, variables

    def compute_gradients(self, loss, var_list=None, **graph_placement_hints):
        """[(grad, variable)]; graph placement hints (colocate_gradients_with_ops, ...) mean nothing eagerly."""
        var_list = self._variables if var_list is None else list(var_list)
        return list(zip(self.tape.gradient(loss, var_list), var_list))

    def __getattr__(self, name):
        return getattr(self._optimizer, name)


class StepFunctions:
    def __init__(self, policy, traced: bool):
        self.policy = policy
        self.traced = traced
        self.grad_variables = None  # per optimizer, the variables its gradients are for (set by each step)
        self._gradient_fns = {}
        self._apply_fn = None
        self._built = False

    def build_optimizers(self) -> None:
        """Create the optimizers' slots now (not inside a traced step; get_state/set_state see them)."""
        if not self._built:
            variables = self.policy.model.trainable_variables()
            for optimizer in self.policy._optimizers:
                if hasattr(optimizer, "build") and variables:
                    optimizer.build(variables)
            self._built = True

    def gradients(self, batch: SampleBatch):
        """(losses, grads per optimizer, all finite?, stats) for one train batch."""
        self.build_optimizers()
        columns = _columns(batch)
        if not self.traced:
            return self._gradients(columns, batch.count)
        key = tuple((k, v.dtype.str, v.shape[1:]) for k, v in sorted(columns.items()))
        if key not in self._gradient_fns:
            signature = {k: tf.TensorSpec((None, *v.shape[1:]), tf.as_dtype(v.dtype)) for k, v in columns.items()}
            self._gradient_fns[key] = tf.function(self._gradients, input_signature=[signature])
        return self._gradient_fns[key](columns)

    def _gradients(self, columns, count=None):
        policy = self.policy
        train_batch = SampleBatch(columns, _is_training=True,
                                  _max_seq_len=policy.max_seq_len if SampleBatch.SEQ_LENS in columns else None)
        if count is not None:
            train_batch.count = count
        variables = policy.model.trainable_variables()
        with tf.GradientTape(persistent=True) as tape:
            losses = as_list(policy.loss(policy.model, policy.dist_class, train_batch))
        if len(losses) != len(policy._optimizers):
            raise ValueError(f"{type(policy).__name__}: the loss gave {len(losses)} losses but there are "
                             f"{len(policy._optimizers)} optimizers; optimizer_fn must return one per loss.")
        policy._grad_info = {}
        grads, grad_variables = [], []
        for optimizer, loss in zip(policy._optimizers, losses):
            pairs = _call_gradients(policy, TapeOptimizer(optimizer, tape, variables), loss)
            grads.append([g for g, _ in pairs])
            grad_variables.append([v for _, v in pairs])
        del tape
        self.grad_variables = grad_variables
        stats = {**policy.stats_fn(train_batch), **policy._grad_info, **policy.grad_stats(train_batch, grads)}
        stats = {k: tf.convert_to_tensor(v) if isinstance(v, tf.Variable) else v for k, v in stats.items()}
        checked = [tf.reduce_all(tf.math.is_finite(tf.cast(x, tf.float32)))
                   for x in losses + [g for group in grads for g in group if g is not None]]
        return losses, grads, tf.reduce_all(checked), stats

    def apply(self, grads) -> None:
        # The update is traced whenever it is the default one (no apply_gradients_fn): no user code runs in it,
        # and an eager Keras update dispatches per variable (~75 ms per step on the 2-core machine, ~3x the rest).
        from relayrl.policy.eager_tf_policy import EagerTFPolicy

        default_update = type(self.policy).apply_gradients_op is EagerTFPolicy.apply_gradients_op
        if not (self.traced or default_update):
            return self._apply(grads)
        if self._apply_fn is None:
            self._apply_fn = tf.function(self._apply)
        self._apply_fn(grads)

    def _apply(self, grads) -> None:
        for optimizer, group, variables in zip(self.policy._optimizers, grads, self.grad_variables):
            self.policy.apply_gradients_op(optimizer, list(zip(group, variables)))


def _call_gradients(policy, optimizer, loss):
    try:
        return policy.gradients(optimizer, loss)
    except RuntimeError as error:
        if "tf.gradients is not supported" not in str(error):
            raise
        raise RuntimeError(f"{type(policy).__name__}: gradients_fn calls tf.gradients, which TensorFlow allows only in "
                           "a graph: set eager_tracing=True (the step then runs as a tf.function), or take the "
                           "gradients with optimizer.compute_gradients(loss, var_list).") from None


def _columns(batch) -> dict:
    """The batch's numeric columns as arrays (float64 as float32, as the model's); infos and the like stay out."""
    columns = {}
    for key, value in batch.items():
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf" and value.ndim >= 1:
            columns[key] = value.astype(np.float32) if value.dtype == np.float64 else value
    return columns


__all__ = ["StepFunctions", "TapeOptimizer"]
