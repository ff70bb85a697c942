"""`RLModule`: the neural network(s) of one policy, with RLlib's forward API.

Users override `setup()` and `_forward` (or `_forward_inference/_exploration/_train`); the public
`forward_*` methods are the fixed entry points the EnvRunner and Learner call.
"""
import dataclasses
import logging
from typing import Any, Dict, Optional

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from relayrl.checkpoints.checkpointable import Checkpointable
from relayrl.core.columns import Columns
from relayrl.modules.distributions import TorchCategorical, TorchDiagGaussian
from relayrl.modules.partial_module_state import partial_module_states_allowed
from relayrl.modules.target_network_api import is_target_key

logger = logging.getLogger("relayrl")


class RLModule(Checkpointable, nn.Module):
    """A torch module with the RLModule API (`forward_inference`, `forward_exploration`, `forward_train`)."""

    _checkpoint_kind = "RL module"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)

    framework = "torch"

    def __init__(
        self,
        *,
        observation_space: Optional[gym.Space] = None,
        action_space: Optional[gym.Space] = None,
        inference_only: Optional[bool] = None,
        learner_only: bool = False,
        model_config: Optional[Dict[str, Any]] = None,
        catalog_class=None,
        **kwargs,
    ):
        nn.Module.__init__(self)
        if kwargs:
            raise TypeError(f"RLModule got unexpected keyword arguments {sorted(kwargs)}.")
        if dataclasses.is_dataclass(model_config):
            model_config = dataclasses.asdict(model_config)
        self.observation_space = observation_space
        self.action_space = action_space
        self.inference_only = bool(inference_only)
        self.learner_only = learner_only
        self.model_config = dict(model_config or {})
        self.catalog_class = catalog_class
        self.action_dist_cls = None
        self.setup()

    def setup(self) -> None:
        """Build the layers here (called once by the constructor)."""

    # -- forward passes: fixed entry points -------------------------------------------------
    def forward_inference(self, batch: Dict[str, Any], **kwargs) -> Dict[str, Any]:
        return self._forward_inference(batch, **kwargs)

    def forward_exploration(self, batch: Dict[str, Any], **kwargs) -> Dict[str, Any]:
        return self._forward_exploration(batch, **kwargs)

    def forward_train(self, batch: Dict[str, Any], **kwargs) -> Dict[str, Any]:
        if self.inference_only:
            raise RuntimeError(
                "forward_train() called on an inference-only RLModule; build it with inference_only=False to train."
            )
        return self._forward_train(batch, **kwargs)

    # nn.Module.__call__ routes to forward(); make that the train pass, as RLlib's TorchRLModule does.
    def forward(self, batch: Dict[str, Any], **kwargs) -> Dict[str, Any]:
        return self.forward_train(batch, **kwargs)

    # -- overridable implementations -----------------------------------------------------
    def _forward(self, batch: Dict[str, Any], **kwargs) -> Dict[str, Any]:
        return {}

    def _forward_inference(self, batch: Dict[str, Any], **kwargs) -> Dict[str, Any]:
        return self._forward(batch, **kwargs)

    def _forward_exploration(self, batch: Dict[str, Any], **kwargs) -> Dict[str, Any]:
        return self._forward(batch, **kwargs)

    def _forward_train(self, batch: Dict[str, Any], **kwargs) -> Dict[str, Any]:
        return self._forward(batch, **kwargs)

    # -- action distributions ---------------------------------------------------------------
    def _default_action_dist_cls(self):
        if self.action_dist_cls is not None:
            return self.action_dist_cls
        if isinstance(self.action_space, gym.spaces.Discrete):
            return TorchCategorical
        if isinstance(self.action_space, gym.spaces.Box):
            return TorchDiagGaussian
        raise NotImplementedError(
            f"{type(self).__name__} has no action distribution for {self.action_space}; "
            "override get_inference_action_dist_cls/get_exploration_action_dist_cls/get_train_action_dist_cls."
        )

    def get_inference_action_dist_cls(self):
        return self._default_action_dist_cls()

    def get_exploration_action_dist_cls(self):
        return self._default_action_dist_cls()

    def get_train_action_dist_cls(self):
        return self._default_action_dist_cls()

    # -- recurrent state ----------------------------------------------------------------------
    def get_initial_state(self) -> Dict[str, Any]:
        return {}

    def is_stateful(self) -> bool:
        return bool(self.get_initial_state())

    # -- state ---------------------------------------------------------------------------------
    def get_state(self, components=None, *, not_components=None, inference_only: bool = False, **kwargs) -> Dict:
        """Weights as a dict of numpy arrays (copies), keyed like `state_dict()`; `inference_only` leaves out the
        target networks (attributes `_target_*`), which only the Learner uses."""
        return self._numpy_state(skip=is_target_key if inference_only else None)

    def _numpy_state(self, skip=None) -> Dict:
        """`state_dict()` as numpy copies, leaving out the keys `skip(key)` is true for (never copied: an
        EnvRunner's weight sync after every off-policy update then copies only the policy)."""
        return {k: v.detach().cpu().numpy().copy() for k, v in self.state_dict().items()
                if skip is None or not skip(k)}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Load weights from numpy arrays or tensors; unknown or missing keys raise. Inside
        `partial_module_states()` (a module loaded from a checkpoint path: RLlib's `strict=False`, e.g. a trained BC
        module into a subclass that adds a value head) a state holding part of the weights sets that part, with a
        warning naming what keeps its values; one holding none of them still raises."""
        state = self._state_to_load(state)
        own = self._live_tensors()
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        if unexpected or (missing and (len(missing) == len(own) or not partial_module_states_allowed())):
            raise KeyError(f"{type(self).__name__}.set_state: missing keys {missing[:5]}, unexpected keys {unexpected[:5]}.")
        if missing:
            logger.warning("%s.set_state: the state has no %s; they keep their current values.",
                           type(self).__name__, missing)
        with torch.no_grad():
            for key, tensor in own.items():
                if key not in state:
                    continue
                value = state[key]
                if not isinstance(value, torch.Tensor):
                    value = np.asarray(value)
                    # Ray hands over read-only arrays; torch warns on those (UserWarning in every remote runner).
                    value = torch.from_numpy(value if value.flags.writeable else value.copy())
                tensor.copy_(value)

    def check_state(self, state: Dict[str, Any], where) -> None:
        """Raise a CheckpointError naming the parameter if `state`'s names, shapes or dtypes differ from this
        module's. A subclass with its own set_state gets its shared parameters' shapes checked."""
        from relayrl.checkpoints.state_checks import check_mapping, check_tensor, check_weights

        state = self._state_to_load(check_mapping(state, where, owner=type(self).__name__))
        live = {k: v.detach() for k, v in self._live_tensors().items()}
        if type(self).set_state is RLModule.set_state:
            check_weights(live, state, where, type(self).__name__, allow_missing=partial_module_states_allowed())
        else:
            for name in live.keys() & state.keys():
                check_tensor(live[name], state[name], where / name, type(self).__name__)

    def _live_tensors(self) -> Dict[str, torch.Tensor]:
        """The named tensors set_state writes."""
        return self.state_dict()

    def _state_to_load(self, state: Dict[str, Any]) -> Dict[str, Any]:
        """The part of a stored state this module takes (subclasses drop e.g. what inference_only lacks). A copy
        without target networks (an EnvRunner's: the Learner makes them) takes a state with them minus those."""
        if any(map(is_target_key, state)) and not any(map(is_target_key, self.state_dict())):
            state = {k: v for k, v in state.items() if not is_target_key(k)}
        return state

    def get_ctor_args_and_kwargs(self):
        return (), {
            "observation_space": self.observation_space,
            "action_space": self.action_space,
            "inference_only": self.inference_only,
            "model_config": self.model_config,
        }

    def export_torchscript(self, path: str, example_obs=None) -> str:
        """Save the inference forward (obs -> action_dist_inputs) as TorchScript; loads with plain torch.jit.load."""
        from relayrl.checkpoints.export import export_torchscript

        return export_torchscript(self, path, example_obs=example_obs)

    def unwrapped(self) -> "RLModule":
        return self

    def as_multi_rl_module(self):
        from relayrl.core.columns import DEFAULT_MODULE_ID
        from relayrl.modules.multi_rl_module import MultiRLModule

        multi = MultiRLModule()
        multi.add_module(DEFAULT_MODULE_ID, self)
        return multi

    def input_specs_inference(self):
        return [Columns.OBS]

    def output_specs_inference(self):
        return [Columns.ACTION_DIST_INPUTS]


TorchRLModule = RLModule


class ValueFunctionAPI:
    """Mixin for modules with a value function (used by GAE and PPO's loss)."""

    def compute_values(self, batch: Dict[str, Any], embeddings=None):
        raise NotImplementedError
