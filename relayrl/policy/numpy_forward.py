"""The fast path of a Policy's `compute_actions`: the default MLP and categorical sampling in numpy, through the
same numpy forward pass and sampler as the RLModule EnvRunners (relayrl/modules/numpy_forward.py's `NumpyMLP`,
relayrl/env/sampling/numpy_actions.py's `NumpyCategoricalPolicy`).

Acting on one or a few observations per step, torch's (and eager TF's) per-call overhead is most of the time;
the same network in numpy is several times faster. It applies only where it gives the same distribution and
columns as the framework's path: the default model (FullyConnectedNetwork / TFFullyConnectedNetwork) with
tanh / relu / linear activations on a flat observation space, a categorical distribution, no RNN state, no
action_sampler_fn / action_distribution_fn, and no extra action output but ValueNetworkMixin's `vf_preds`
(then the model's own value MLP runs in numpy too: PPOTorchPolicy). The conditions per framework:
`plan_torch_numpy_forward` here, tf_numpy_forward.py.

Columns as the framework's path: `action_dist_inputs` (float32 logits), `action_prob`, `action_logp` (float32;
with explore=False the argmax's actual log-probability, as `dist.logp(deterministic_sample())`), int64
actions, and `vf_preds` last. One row (one sub-env) samples through `NumpyCategoricalPolicy.sample_row`,
several through its Gumbel-max `act`: both draw exact Categorical samples from the policy's own numpy
Generator (checkpointed with the runner, seeded from torch's so seeded runs repeat).
"""
from typing import Callable, Optional, Tuple

import gymnasium as gym
import numpy as np

from relayrl.env.sampling.numpy_actions import NumpyCategoricalPolicy
from relayrl.modules.numpy_forward import NumpyMLP
from relayrl.policy.sample_batch import SampleBatch

# read_mlps(): (the logits MLP, the value MLP or None), numpy over the model's current weights
ReadMLPs = Callable[[], Tuple[NumpyMLP, Optional[NumpyMLP]]]


class PolicyNumpyForward:
    """A policy's numpy acting path (module docstring). `version()` changes whenever the weights `read_mlps()`
    returned are stale (TF: the policy's count of its updates; torch: never, the MLPs are views of the
    parameters, which every update changes in place)."""

    def __init__(self, read_mlps: ReadMLPs, version: Callable, seed: int):
        self._read_mlps, self._version = read_mlps, version
        self._versions = object()  # (never equal: the first _refresh reads the MLPs)
        self.rng = np.random.default_rng(seed)
        self._refresh()
        self.extra_columns = () if self._values is None else (SampleBatch.VF_PREDS,)

    @property
    def rng(self) -> np.random.Generator:
        return self._rng

    @rng.setter
    def rng(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._sampler = NumpyCategoricalPolicy(None, rng)

    def _refresh(self) -> None:
        versions = self._version()
        if versions != self._versions:
            self._logits, self._values = self._read_mlps()
            self._versions = versions

    def compute(self, obs, explore: bool):
        """compute_actions' (actions, extra outputs) for a batch of observations."""
        self._refresh()
        x = np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)
        if len(x) == 1:
            action, logits, probability, logp = self.sample_row(x[0], explore)
            probability_and_logp = np.array([probability, logp], dtype=np.float32)  # one allocation for both
            actions = np.array([action], dtype=np.int64)
            extra = {SampleBatch.ACTION_DIST_INPUTS: logits[None], SampleBatch.ACTION_PROB: probability_and_logp[:1],
                     SampleBatch.ACTION_LOGP: probability_and_logp[1:]}
        else:
            logits = self._logits(x)
            if explore:  # Gumbel-max (its log-probs too)
                sampled = self._sampler.act(logits, True)
                actions, logp = sampled[SampleBatch.ACTIONS], sampled[SampleBatch.ACTION_LOGP]
            else:  # the argmax with its actual log-probability (the framework path's logp(deterministic_sample()))
                actions = logits.argmax(-1)
                logp = self._sampler.log_probs(logits, actions)
            actions = actions.astype(np.int64, copy=False)
            extra = {SampleBatch.ACTION_DIST_INPUTS: logits, SampleBatch.ACTION_PROB: np.exp(logp),
                     SampleBatch.ACTION_LOGP: logp}
        if self._values is not None:  # vf_preds last, as ValueNetworkMixin.extra_action_out adds it
            extra[SampleBatch.VF_PREDS] = self._values.row(x[0])[:1] if len(x) == 1 else self._values(x)[:, 0]
        return actions, extra

    def sample_row(self, x: np.ndarray, explore: bool) -> tuple:
        """(action, logits [k] (fresh), probability, log-probability) for one flat observation `x` [n]."""
        logits = self._logits.row(x)
        action, probability, logp = self._sampler.sample_row(logits, explore)
        return action, logits, probability, logp

    def extra_row(self, x: np.ndarray) -> tuple:
        """The values of `extra_columns` for one flat observation `x` [n] (after sample_row on it)."""
        return () if self._values is None else (self._values.row(x)[0],)


def plan_torch_numpy_forward(policy) -> Optional[PolicyNumpyForward]:
    """The fast path of a TorchPolicy, or None where it does not apply (module docstring)."""
    import torch

    from relayrl.policy.models.fully_connected import FullyConnectedNetwork
    from relayrl.policy.models.torch_action_dist import TorchCategorical

    model = policy.model
    if not (type(model) is FullyConnectedNetwork and policy.dist_class is TorchCategorical
            and acts_plainly(policy) and isinstance(policy.observation_space, gym.spaces.Box)):
        return None
    with_values = _only_value_extra_output(policy)
    if with_values is None:
        return None
    logits = NumpyMLP.from_sequentials(model._hidden, model._logits)
    values = None
    if with_values and model._value_hidden is not None:  # (shared value layers: the torch path computes them)
        values = NumpyMLP.from_sequentials(model._value_hidden, model._value_head)
    if logits is None or (with_values and values is None):
        return None
    return PolicyNumpyForward(lambda: (logits, values), version=lambda: 0,
                              seed=int(torch.randint(2 ** 31 - 1, (1,)).item()))


def acts_plainly(policy) -> bool:
    """No sampler or distribution function of its own and no RNN state (either framework)."""
    return policy._action_sampler_fn is None and policy._action_distribution_fn is None and not policy._state_inputs


def _only_value_extra_output(policy) -> Optional[bool]:
    """False: no extra action output; True: only ValueNetworkMixin's vf_preds, with the critic in use; None:
    another one (the fast path does not apply)."""
    from relayrl.policy.model_policy import ModelPolicy
    from relayrl.policy.torch_mixins import ValueNetworkMixin

    owners = {klass for klass in type(policy).__mro__ if "extra_action_out" in vars(klass)}
    if owners == {ModelPolicy}:
        return False
    if owners == {ValueNetworkMixin, ModelPolicy} and getattr(policy, "_use_critic", False):
        return True
    return None


__all__ = ["PolicyNumpyForward", "plan_torch_numpy_forward"]
