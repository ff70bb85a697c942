"""Action source: the numpy policy fed the vector env's observations directly, the pipelines not called.

When both pipelines hold only the default pieces that run for the module (a stateless module:
AddObservations -> BatchIndividualItems -> NumpyToTensor, and GetActions -> TensorToNumpy ->
(NormalizeAndClipActions for Box actions) -> Listify), all they do is turn the vector env's observations
into a tensor and the module's outputs into arrays, and for Box actions write `actions_for_env` (the
actions mapped to the env's bounds). Then the runner skips calling them: the numpy policy
(numpy_actions.py, numpy_gaussian_policies.py) reads the observations the env returned, the
NormalizeAndClipActions piece (its own object, so its options hold) maps its actions for Box spaces, and
the outputs go to the env as they are. After the loop the env-to-module pipeline runs once, so the
torch path (and a checkpoint) finds the batch it expects.
"""
from typing import Any, Dict, Optional

from relayrl.connectors.common.add_observations_from_episodes_to_batch import AddObservationsFromEpisodesToBatch
from relayrl.connectors.common.batch_individual_items import BatchIndividualItems
from relayrl.connectors.common.numpy_to_tensor import NumpyToTensor
from relayrl.connectors.common.tensor_to_numpy import TensorToNumpy
from relayrl.connectors.module_to_env.get_actions import GetActions
from relayrl.connectors.module_to_env.listify_data_for_vector_env import ListifyDataForVectorEnv
from relayrl.connectors.module_to_env.normalize_and_clip_actions import NormalizeAndClipActions
from relayrl.env.sampling.numpy_actions import NumpyPolicy

# The default pieces that run for a stateless module (the others skip it); Box actions add
# NormalizeAndClipActions, which this source calls itself.
_ENV_TO_MODULE = (AddObservationsFromEpisodesToBatch, BatchIndividualItems, NumpyToTensor)
_MODULE_TO_ENV = (GetActions, TensorToNumpy, ListifyDataForVectorEnv)
_MODULE_TO_ENV_BOX = (GetActions, TensorToNumpy, NormalizeAndClipActions, ListifyDataForVectorEnv)


class DirectNumpyActions:
    """An action source (see TorchModuleActions for the protocol) that never calls the pipelines."""

    BYPASSES_PIPELINES = True  # so pieces that only read episodes do not keep the step-log recorder away

    def __init__(self, runner, explore: bool, policy: NumpyPolicy, observations,
                 to_env_bounds: Optional[NormalizeAndClipActions] = None):
        self.runner = runner
        self.explore = explore
        self.policy = policy
        self._observations = observations  # the vector env's latest observations
        self._to_env_bounds = to_env_bounds  # Box actions: the pipeline's NormalizeAndClipActions piece

    @classmethod
    def plan(cls, runner, explore: bool, policy: NumpyPolicy) -> Optional["DirectNumpyActions"]:
        """This source where the pipelines would only convert arrays and tensors (and map Box actions to
        the env's bounds); None otherwise."""
        module = runner.module
        module_to_env = runner._module_to_env._active_pieces(module)
        kinds = tuple(type(piece) for piece in module_to_env)
        if kinds not in (_MODULE_TO_ENV, _MODULE_TO_ENV_BOX):
            return None
        to_env_bounds = module_to_env[2] if kinds == _MODULE_TO_ENV_BOX else None
        env_to_module = runner._env_to_module
        if _piece_types(env_to_module, module) != _ENV_TO_MODULE:
            return None
        add_observations, _, to_tensor = env_to_module._active_pieces(module)
        if not (add_observations._downstream_batched_safe and add_observations._upstream_episodes_untouched
                and to_tensor._device is None):
            return None
        to_module = runner._cached_to_module
        observations = policy.observations_in(to_module)
        if observations is None or len(to_module) != 1:  # the batch holds more than the observations
            return None
        return cls(runner, explore, policy, observations, to_env_bounds)

    def __call__(self, timestep: int) -> Dict[str, Any]:
        out = self.policy(self._observations, self.explore)
        if self._to_env_bounds is not None:  # writes `actions_for_env`, as in the pipeline
            out = self._to_env_bounds(rl_module=self.runner.module, batch=out, episodes=None)
        return out

    def next_step(self, observations, finished=()) -> None:
        self._observations = observations

    def restart(self) -> None:
        self._observations = self.policy.observations_in(self.runner._cached_to_module)

    def finish(self, steps: int) -> None:
        if steps:  # the pipeline's batch, for the next call (or a checkpoint)
            runner = self.runner
            runner._cached_to_module = runner._env_to_module_call(runner._episodes, self.explore, self._observations)


def _piece_types(pipeline, module) -> tuple:
    return tuple(type(piece) for piece in pipeline._active_pieces(module))
