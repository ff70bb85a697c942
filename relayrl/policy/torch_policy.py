"""`TorchPolicy`: a Policy around a TorchModelV2, a dist class, a loss and torch optimizers.

`build_policy_class` (policy_template.py) subclasses it and fills its hooks from the user's functions; every
hook left out has the default written here or in model_policy.py (shared with the TF policy).
"""
from typing import Any

import numpy as np
import torch

from relayrl.policy.model_policy import LEARNER_STATS_KEY, ModelPolicy
from relayrl.policy.model_policy import as_list as _as_list
from relayrl.policy.sample_batch import SampleBatch


class TorchPolicy(ModelPolicy):
    """Acts with `model` + `dist_class` and learns by `loss(model, dist_class, train_batch)` (one step per call)."""

    framework_name = "torch"
    no_grad = staticmethod(torch.no_grad)  # postprocess_fn runs without building graphs

    def __init__(self, observation_space, action_space, config, *, model, loss=None,
                 action_distribution_class=None, action_sampler_fn=None, action_distribution_fn=None,
                 max_seq_len: int = 20, get_batch_divisibility_req=None):
        ModelPolicy.__init__(self, observation_space, action_space, config, model=model, loss=loss,
                             action_distribution_class=action_distribution_class,
                             action_sampler_fn=action_sampler_fn, action_distribution_fn=action_distribution_fn,
                             max_seq_len=max_seq_len, get_batch_divisibility_req=get_batch_divisibility_req)
        self.device = torch.device("cpu")
        self._optimizers = _as_list(self.optimizer())
        self.cur_lr = self.config.get("lr")

    @staticmethod
    def prepare(config: dict) -> None:
        """Before the model exists (the TF policy limits TF's threads here; torch's are set by the algorithm)."""

    # -- hooks the templates replace -----------------------------------------------------------------------
    def optimizer(self):
        if self.model is None or not list(self.model.parameters()):
            return []
        # torch's fused Adam (as the Learners use: one kernel per step), minus torch's first-call import of
        # torch._dynamo (~5 s on a loaded machine); the numpy fast path reads views of the weights, so it sees
        # its in-place steps
        from relayrl.learner.optimizers import make_adam

        return make_adam(self.model.parameters(), lr=self.config.get("lr", 1e-3))

    def extra_grad_process(self, optimizer, loss) -> dict[str, Any]:
        grad_clip = self.config.get("grad_clip")
        if grad_clip is None:
            return {}
        params = [p for group in optimizer.param_groups for p in group["params"]]
        norm = torch.nn.utils.clip_grad_norm_(params, grad_clip)
        return {"grad_gnorm": float(norm)}

    # -- acting ------------------------------------------------------------------------------------------
    def get_initial_state(self) -> list:
        return [np.asarray(_numpy(s)) for s in self._state_inputs]

    def _plan_numpy_forward(self):
        from relayrl.policy.numpy_forward import plan_torch_numpy_forward

        return plan_torch_numpy_forward(self)

    def _acting(self):
        return torch.no_grad()

    def _to_tensor(self, value):
        return _tensor(value)

    def _to_numpy(self, value):
        return _numpy(value)

    def _ones_seq_lens(self, batch_size: int):
        return torch.ones(batch_size, dtype=torch.int32)

    def _probability(self, logp):
        return torch.exp(logp.float())

    # -- learning ----------------------------------------------------------------------------------------
    def _lazy_tensor_dict(self, batch: SampleBatch) -> SampleBatch:
        """The batch with its numeric columns as torch tensors (object columns, like infos, stay)."""
        columns = {}
        for key, value in batch.items():
            if isinstance(value, np.ndarray) and value.dtype != object:
                columns[key] = torch.from_numpy(np.ascontiguousarray(value)).to(self.device)
            else:
                columns[key] = value
        tensors = SampleBatch(columns, _is_training=True, _num_grad_updates=batch.num_grad_updates)
        tensors.count = batch.count
        return tensors

    def compute_gradients(self, postprocessed_batch):
        """Gradients (numpy, one per parameter of each optimizer) and the stats of one loss evaluation."""
        fetches = self._backward(postprocessed_batch)
        grads = [None if p.grad is None else p.grad.detach().clone()
                 for optimizer in self._optimizers for group in optimizer.param_groups for p in group["params"]]
        return grads, fetches

    def _backward(self, postprocessed_batch) -> dict[str, Any]:
        """The loss's gradients, left in the parameters' .grad (checked finite), and the stats (fetches)."""
        train_batch = self._lazy_tensor_dict(self._as_sequences(postprocessed_batch))
        losses = _as_list(self.loss(self.model, self.dist_class, train_batch))
        if len(losses) != len(self._optimizers):
            raise ValueError(f"{type(self).__name__}: the loss gave {len(losses)} losses but there are "
                             f"{len(self._optimizers)} optimizers; optimizer_fn must return one per loss.")
        grad_info = {}
        for i, (optimizer, loss) in enumerate(zip(self._optimizers, losses)):
            if not torch.isfinite(loss).all():
                raise FloatingPointError(f"{type(self).__name__}: the loss is {float(loss)} (not finite); the "
                                         "weights are left unchanged. Check the loss and the batch's columns.")
            optimizer.zero_grad()
            loss.backward(retain_graph=i < len(losses) - 1)
            grad_info.update(self.extra_grad_process(optimizer, loss))
        grads = [p.grad for optimizer in self._optimizers for group in optimizer.param_groups
                 for p in group["params"] if p.grad is not None]
        # one check over all gradients: a NaN or inf in any of them makes the sum of their sums NaN or inf
        # (per-gradient checks, or one over their concatenation, cost more than the small net's update)
        if grads and not torch.isfinite(torch.stack([g.sum() for g in grads]).sum()):
            raise FloatingPointError(f"{type(self).__name__}: a gradient is not finite; the weights are left "
                                     "unchanged.")
        stats = {k: _scalar(v) for k, v in self.stats_fn(train_batch).items()}
        fetches = self.extra_compute_grad_fetches()
        fetches[LEARNER_STATS_KEY] = {**fetches.get(LEARNER_STATS_KEY, {}), **stats, **grad_info}
        self._last_train_batch = train_batch
        return fetches

    def apply_gradients(self, gradients) -> None:
        params = [p for optimizer in self._optimizers for group in optimizer.param_groups for p in group["params"]]
        for p, g in zip(params, gradients):
            p.grad = None if g is None else torch.as_tensor(g, dtype=p.dtype)
        for optimizer in self._optimizers:
            optimizer.step()
        self.num_grad_updates += 1

    def learn_on_batch(self, postprocessed_batch: SampleBatch) -> dict[str, Any]:
        """One optimizer step per optimizer on the whole batch; returns {"learner_stats": {...}, ...}."""
        result = {}
        if self.callbacks is not None:
            self.callbacks.on_learn_on_batch(policy=self, train_batch=postprocessed_batch, result=result)
        if type(self).compute_gradients is TorchPolicy.compute_gradients:
            fetches = self._backward(postprocessed_batch)  # no numpy copies of the gradients: they stay in .grad
        else:  # a template's compute_gradients_fn (or a subclass) computes them
            _, fetches = self.compute_gradients(postprocessed_batch)
        for optimizer in self._optimizers:
            optimizer.step()  # the gradients are already in .grad: no copy back
        self.num_grad_updates += 1
        return self._learn_on_batch_result(fetches, result)

    # -- weights -----------------------------------------------------------------------------------------
    def get_weights(self) -> dict[str, np.ndarray]:
        return {k: v.detach().cpu().numpy().copy() for k, v in self.model.state_dict().items()}

    def set_weights(self, weights) -> None:
        self.model.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in weights.items()})

    def get_state(self) -> dict[str, Any]:
        state = super().get_state()
        state["_optimizer_variables"] = [o.state_dict() for o in self._optimizers]
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        for optimizer, saved in zip(self._optimizers, state.get("_optimizer_variables") or []):
            optimizer.load_state_dict(saved)
        super().set_state(state)


def _tensor(value):
    if isinstance(value, torch.Tensor):
        return value
    array = np.asarray(value)
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    return torch.from_numpy(np.ascontiguousarray(array)) if array.dtype != object else value


def _numpy(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value) if isinstance(value, (list, tuple)) else value


def _scalar(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().item() if value.numel() == 1 else value.detach().cpu().numpy()
    return value


__all__ = ["LEARNER_STATS_KEY", "TorchPolicy"]
