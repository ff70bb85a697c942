"""Action source: actions from the module's numpy forward (`NumpyForwardAPI`), pipelines around it.

On the few rows of a vector-env step, a small MLP's torch calls cost far more in dispatch than in
arithmetic. When the module declares a numpy forward (relayrl/modules/numpy_forward.py; the default
PPO module does, and SAC's for Box actions) and both acting distributions are one a numpy policy
samples, the runner computes what the module's forward and the `GetActions` piece would (the
distribution inputs, a sample, its log-prob) in numpy. Policies: `NumpyCategoricalPolicy` here
(Gumbel-max sampling and a log-softmax), the Gaussian ones in numpy_gaussian_policies.py; which one
a runner gets: numpy_policies.py.

The connector pipelines still run around it: the module-to-env pipeline gets a batch whose actions
are already chosen, so `GetActions` passes it on, `TensorToNumpy` finds arrays and the pieces after
it (e.g. NormalizeAndClipActions for Box actions) run as on the torch path. A step whose
env-to-module batch has no float observations of the first layer's width goes to the torch module.
Not used (`for_runner` returns None) with `numpy_inference=False`, an Exploration object, or a
module-to-env piece before `GetActions` (it could change the distribution inputs).

Same distribution, columns and dtypes as the torch path (Discrete: `action_dist_inputs` float32,
`actions` int64, `action_logp` float32); the random stream is the runner's own numpy Generator,
seeded from torch's so seeded runs repeat, and checkpointed with the runner.
"""
import math
from typing import Any, Dict, Optional

import numpy as np
import torch

from relayrl.connectors.common.tensor_to_numpy import TensorToNumpy
from relayrl.connectors.module_to_env.get_actions import GetActions
from relayrl.core.columns import Columns
from relayrl.env.sampling.torch_actions import TorchModuleActions
from relayrl.modules.distributions import TorchCategorical
from relayrl.modules.numpy_forward import NumpyForwardAPI, NumpyMLP


class NumpyPolicy:
    """`policy(observations, explore)` -> the module's outputs with the actions chosen, in numpy.

    A subclass samples one acting distribution (`DISTRIBUTION`, the module's class) from the inputs
    the module's numpy forward computes: `act(action_dist_inputs, explore)`."""

    DISTRIBUTION = None

    def __init__(self, forward, rng: np.random.Generator):
        self._forward = forward  # observations (B, n) -> action_dist_inputs; has `input_width`
        self._rng = rng

    @classmethod
    def for_runner(cls, runner) -> Optional["NumpyPolicy"]:
        """The numpy policy for this runner's module and pipelines now, or None where the torch path must run."""
        if not runner_allows_numpy_policy(runner, cls.DISTRIBUTION):
            return None
        forward = runner.module.numpy_forward()
        return None if forward is None else cls(forward, inference_rng(runner))

    def observations_in(self, to_module) -> Optional[np.ndarray]:
        """The env-to-module batch's observations as an array this policy takes (a view), or None
        (e.g. a custom piece made them something else): then the torch module computes the step."""
        obs = to_module.get(Columns.OBS) if isinstance(to_module, dict) else None
        if isinstance(obs, torch.Tensor):
            if obs.dtype != torch.float32 or obs.device.type != "cpu" or obs.requires_grad:
                return None
            obs = obs.numpy()
        if (not isinstance(obs, np.ndarray) or obs.ndim != 2 or obs.shape[1] != self._forward.input_width
                or obs.dtype.kind != "f"):
            return None
        return obs

    def __call__(self, observations: np.ndarray, explore: bool) -> dict:
        return self.act(self._forward(observations), explore)

    def act(self, action_dist_inputs: np.ndarray, explore: bool) -> dict:
        raise NotImplementedError


class NumpyCategoricalPolicy(NumpyPolicy):
    """TorchCategorical in numpy: Gumbel-max sampling and a log-softmax. The Policy API's numpy fast path
    (relayrl/policy/numpy_forward.py) samples with it too, one row at a time through `sample_row`."""

    DISTRIBUTION = TorchCategorical

    def __init__(self, forward: NumpyMLP, rng: np.random.Generator):
        super().__init__(forward, rng)
        self._rows = np.arange(0)  # row indices for picking each row's log-prob (kept between calls)

    def act(self, logits: np.ndarray, explore: bool) -> dict:
        """The module-to-env columns for `logits`: a Categorical sample (or argmax) and its log-prob."""
        if not explore:  # the inference distribution made deterministic: argmax, log-prob 0 (as TorchDeterministic)
            actions = logits.argmax(-1)
            return {Columns.ACTION_DIST_INPUTS: logits, Columns.ACTIONS: actions,
                    Columns.ACTION_LOGP: np.zeros(len(actions), np.float32)}
        actions = (logits + self._rng.gumbel(size=logits.shape)).argmax(-1)  # Gumbel-max: a Categorical sample
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.ACTIONS: actions,
                Columns.ACTION_LOGP: self.log_probs(logits, actions)}

    def log_probs(self, logits: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """The log-softmax of `logits` [B, k] at `actions` [B], float32."""
        rows = self._rows
        if len(rows) != len(actions):
            rows = self._rows = np.arange(len(actions))
        # Log-softmax at the actions as logit - logsumexp, one ufunc reduction; in float64 so the
        # difference of two large numbers keeps float32 precision for log-probs near 0.
        wide = logits.astype(np.float64)
        return (wide[rows, actions] - np.logaddexp.reduce(wide, axis=-1)).astype(np.float32)

    def sample_row(self, logits: np.ndarray, explore: bool) -> tuple:
        """(action, probability, log-probability) for one row of logits [k], explore=False the argmax (the
        first maximum) and its actual probability. The softmax and the draw (one uniform, the first action
        whose cumulative weight reaches it) run on Python floats (float64): on a few logits each numpy call's
        overhead costs more than its arithmetic. A NaN weight is never reached (action 0, as argmax)."""
        values = logits.tolist()
        top = max(values)
        exps = [math.exp(value - top) for value in values]
        total = sum(exps)
        if explore:
            draw, action, last = self._rng.random() * total, 0, len(exps) - 1
            edge = exps[0]
            while action < last and draw > edge:
                action += 1
                edge += exps[action]
        else:
            action = values.index(top)
        return action, exps[action] / total, values[action] - top - math.log(total)


def runner_allows_numpy_policy(runner, distribution=TorchCategorical) -> bool:
    """Whether the runner may act from a numpy forward of its module: numpy_inference on, no Exploration
    object, GetActions the first module-to-env piece, both acting distributions `distribution`."""
    if not runner.config.numpy_inference or runner._use_exploration:
        return False
    module = runner.module
    pieces = [type(piece) for piece in runner._module_to_env._active_pieces(module)[:2]]
    if pieces != [GetActions, TensorToNumpy]:  # a piece before GetActions may change the logits
        return False
    return (distribution is not None and isinstance(module, NumpyForwardAPI)
            and module.get_exploration_action_dist_cls() is distribution
            and module.get_inference_action_dist_cls() is distribution)


def inference_rng(runner) -> np.random.Generator:
    """The runner's numpy sampling Generator (checkpointed with it)."""
    if runner._inference_rng is None:
        # Seeded from torch's generator: runs seeded with torch.manual_seed (config.seed) repeat.
        runner._inference_rng = np.random.default_rng(int(torch.randint(2**62, ()).item()))
    return runner._inference_rng


class NumpyActions(TorchModuleActions):
    """The numpy policy between the pipelines (which keep running every step); the torch module takes
    the steps whose env-to-module batch the policy cannot read."""

    def __init__(self, runner, explore: bool, policy: NumpyPolicy):
        super().__init__(runner, explore)
        self.policy = policy

    def __call__(self, timestep: int) -> Dict[str, Any]:
        runner = self.runner
        observations = self.policy.observations_in(runner._cached_to_module)
        if observations is None:
            return super().__call__(timestep)
        return runner._module_to_env(rl_module=runner.module, batch=self.policy(observations, self.explore),
                                     episodes=runner._episodes, explore=self.explore, shared_data={},
                                     metrics=runner.metrics)
