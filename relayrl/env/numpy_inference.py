"""The EnvRunner's numpy inference: the default PPO module's Discrete actions computed without torch.

On the few rows of a vector-env step, a small MLP's torch calls cost far more in dispatch than in
arithmetic. When the module is the default PPO module (Discrete actions, plain Linear layers with
tanh/relu on CPU, float32), the EnvRunner computes what `forward_exploration`/`forward_inference`
and the `GetActions` piece would (logits, a Categorical sample, its log-prob) with numpy *views* of
the module's own weights: one matmul per layer, Gumbel-max sampling and a log-softmax. Views share
memory with the parameters, so weight syncs (in-place copies) are seen at once.

The connector pipelines still run around it: the module-to-env pipeline gets a batch whose actions
are already chosen, so `GetActions` passes it on and `TensorToNumpy` finds arrays. When both
pipelines hold only the default pieces, which then only convert between arrays and tensors, the
runner skips calling them (`calls_pipelines` False). Anything the numpy policy cannot reproduce (a
module overriding its forward, other layers or devices, an Exploration object, a piece before
`GetActions`) makes `plan_numpy_policy` return None and the torch path runs.

Same distribution, columns and dtypes as the torch path (`action_dist_inputs` float32, `actions`
int64, `action_logp` float32); the random stream is the runner's own numpy Generator, seeded from
torch's so seeded runs repeat. `config.env_runners(numpy_inference=False)` turns it off.
"""
from typing import Callable, List, Optional, Tuple

import numpy as np
import torch
from torch import nn

from relayrl.connectors.common.add_observations_from_episodes_to_batch import AddObservationsFromEpisodesToBatch
from relayrl.connectors.common.batch_individual_items import BatchIndividualItems
from relayrl.connectors.common.numpy_to_tensor import NumpyToTensor
from relayrl.connectors.common.tensor_to_numpy import TensorToNumpy
from relayrl.connectors.module_to_env.get_actions import GetActions
from relayrl.connectors.module_to_env.listify_data_for_vector_env import ListifyDataForVectorEnv
from relayrl.core.columns import Columns
from relayrl.modules.distributions import TorchCategorical

# The default pipelines' pieces that run for a stateless module with Discrete actions (the others
# skip it). With only these, the pipelines just turn the vector env's observations into a tensor and
# the module's outputs into arrays, so the runner need not call them.
_ENV_TO_MODULE = (AddObservationsFromEpisodesToBatch, BatchIndividualItems, NumpyToTensor)
_MODULE_TO_ENV = (GetActions, TensorToNumpy, ListifyDataForVectorEnv)

# The module methods that decide what forward_exploration/forward_inference compute; a subclass
# overriding any of them computes something else and keeps the torch path.
_FORWARD_METHODS = ("forward_exploration", "forward_inference", "_forward_exploration", "_forward_inference",
                    "_forward", "_dist_inputs", "get_exploration_action_dist_cls", "get_inference_action_dist_cls")


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0, out=x)


_ACTIVATIONS = {nn.Tanh: np.tanh, nn.ReLU: _relu}

Layer = Tuple[np.ndarray, np.ndarray, Optional[Callable]]


class NumpyCategoricalPolicy:
    """`policy(observations, explore)` -> the module's outputs with the actions chosen, in numpy.

    `calls_pipelines` False: both pipelines are the default pieces only, and the runner feeds the
    vector env's observations straight in instead of calling them.
    """

    def __init__(self, layers: List[Layer], rng: np.random.Generator, calls_pipelines: bool = True):
        self._layers = layers
        self._rng = rng
        self._rows = np.arange(0)  # row indices for picking each row's log-prob (kept between calls)
        self.calls_pipelines = calls_pipelines

    def observations_in(self, to_module) -> Optional[np.ndarray]:
        """The env-to-module batch's observations as an array this policy takes (a view), or None
        (e.g. a custom piece made them something else): then the torch module computes the step."""
        return _observations_in(to_module, self._layers[0][0].shape[0])

    def __call__(self, observations: np.ndarray, explore: bool) -> dict:
        x = observations if observations.dtype == np.float32 else observations.astype(np.float32)
        for weight_t, bias, activation in self._layers:
            x = x @ weight_t
            x += bias
            if activation is not None:
                x = activation(x)
        logits = x
        if not explore:  # the inference distribution made deterministic: argmax, log-prob 0 (as TorchDeterministic)
            actions = logits.argmax(-1)
            return {Columns.ACTION_DIST_INPUTS: logits, Columns.ACTIONS: actions,
                    Columns.ACTION_LOGP: np.zeros(len(actions), np.float32)}
        actions = (logits + self._rng.gumbel(size=logits.shape)).argmax(-1)  # Gumbel-max: a Categorical sample
        rows = self._rows
        if len(rows) != len(actions):
            rows = self._rows = np.arange(len(actions))
        # Log-softmax at the actions as logit - logsumexp, one ufunc reduction; in float64 so the
        # difference of two large numbers keeps float32 precision for log-probs near 0.
        wide = logits.astype(np.float64)
        logp = (wide[rows, actions] - np.logaddexp.reduce(wide, axis=-1)).astype(np.float32)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.ACTIONS: actions, Columns.ACTION_LOGP: logp}


def plan_numpy_policy(runner, random_actions: bool) -> Optional[NumpyCategoricalPolicy]:
    """The numpy policy for this sample() call, or None where the torch path must run."""
    if random_actions or not runner.config.numpy_inference or runner._use_exploration:
        return None
    module = runner.module
    module_to_env = _piece_types(runner._module_to_env, module)
    if module_to_env[:2] != _MODULE_TO_ENV[:2]:  # a piece before GetActions may change the logits
        return None
    layers = _numpy_layers(module)
    if layers is None:
        return None
    if runner._inference_rng is None:
        # Seeded from torch's generator: runs seeded with torch.manual_seed (config.seed) repeat.
        runner._inference_rng = np.random.default_rng(int(torch.randint(2**62, ()).item()))
    to_module = runner._cached_to_module
    skips_pipelines = (module_to_env == _MODULE_TO_ENV and _default_env_to_module(runner)
                       and _observations_in(to_module, layers[0][0].shape[0]) is not None and len(to_module) == 1)
    return NumpyCategoricalPolicy(layers, runner._inference_rng, calls_pipelines=not skips_pipelines)


def _piece_types(pipeline, module) -> tuple:
    return tuple(type(piece) for piece in pipeline._active_pieces(module))


def _default_env_to_module(runner) -> bool:
    """Whether the env-to-module pipeline only turns the vector env's observations into a tensor."""
    pipeline = runner._env_to_module
    if _piece_types(pipeline, runner.module) != _ENV_TO_MODULE:
        return False
    add_obs, _, to_tensor = pipeline._active_pieces(runner.module)
    return add_obs._downstream_batched_safe and add_obs._upstream_episodes_untouched and to_tensor._device is None


def _observations_in(to_module, width: int) -> Optional[np.ndarray]:
    obs = to_module.get(Columns.OBS) if isinstance(to_module, dict) else None
    if isinstance(obs, torch.Tensor):
        if obs.dtype != torch.float32 or obs.device.type != "cpu" or obs.requires_grad:
            return None
        obs = obs.numpy()
    if not isinstance(obs, np.ndarray) or obs.ndim != 2 or obs.shape[1] != width or obs.dtype.kind != "f":
        return None
    return obs


def _numpy_layers(module) -> Optional[List[Layer]]:
    """(weight transposed, bias, activation) per Linear of the policy network, as numpy views of
    the parameters; None unless the module is (or only re-initialises) the default PPO module
    with Discrete actions and plain CPU float32 layers."""
    from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule

    if not isinstance(module, DefaultPPOTorchRLModule) or not module._discrete:
        return None
    if any(getattr(type(module), name) is not getattr(DefaultPPOTorchRLModule, name) for name in _FORWARD_METHODS):
        return None
    if not (module.get_exploration_action_dist_cls() is TorchCategorical
            and module.get_inference_action_dist_cls() is TorchCategorical):
        return None
    layers: List[Layer] = []
    for sequential in (module.encoder, module.pi):
        if type(sequential) is not nn.Sequential:
            return None
        for layer in sequential:
            kind = type(layer)
            if kind is nn.Linear:
                weight, bias = layer._parameters.get("weight"), layer._parameters.get("bias")
                if not all(_plain_cpu_float32(p) for p in (weight, bias)):
                    return None
                layers.append((weight.detach().numpy().T, bias.detach().numpy(), None))
            elif kind in _ACTIVATIONS and layers and layers[-1][2] is None:
                layers[-1] = layers[-1][:2] + (_ACTIVATIONS[kind],)
            else:
                return None
    return layers


def _plain_cpu_float32(parameter) -> bool:
    return isinstance(parameter, torch.Tensor) and parameter.dtype == torch.float32 and parameter.device.type == "cpu"
