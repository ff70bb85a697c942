"""Action source: the numpy policy fed the vector env's observations directly, the pipelines not called.

When both pipelines hold only the default pieces that run for the module (a stateless module with
Discrete actions: AddObservations -> BatchIndividualItems -> NumpyToTensor, and GetActions ->
TensorToNumpy -> Listify), all they do is turn the vector env's observations into a tensor and the
module's outputs into arrays. Then the runner skips calling them: the numpy policy
(numpy_actions.py) reads the observations the env returned and its outputs go to the env as they
are. After the loop the env-to-module pipeline runs once, so the torch path (and a checkpoint) finds
the batch it expects.
"""
from typing import Any, Dict, Optional

from relayrl.connectors.common.add_observations_from_episodes_to_batch import AddObservationsFromEpisodesToBatch
from relayrl.connectors.common.batch_individual_items import BatchIndividualItems
from relayrl.connectors.common.numpy_to_tensor import NumpyToTensor
from relayrl.connectors.common.tensor_to_numpy import TensorToNumpy
from relayrl.connectors.module_to_env.get_actions import GetActions
from relayrl.connectors.module_to_env.listify_data_for_vector_env import ListifyDataForVectorEnv
from relayrl.env.sampling.numpy_actions import NumpyCategoricalPolicy

# The default pieces that run for a stateless module with Discrete actions (the others skip it).
_ENV_TO_MODULE = (AddObservationsFromEpisodesToBatch, BatchIndividualItems, NumpyToTensor)
_MODULE_TO_ENV = (GetActions, TensorToNumpy, ListifyDataForVectorEnv)


class DirectNumpyActions:
    """An action source (see TorchModuleActions for the protocol) that never calls the pipelines."""

    def __init__(self, runner, explore: bool, policy: NumpyCategoricalPolicy, observations):
        self.runner = runner
        self.explore = explore
        self.policy = policy
        self._observations = observations  # the vector env's latest observations

    @classmethod
    def plan(cls, runner, explore: bool, policy: NumpyCategoricalPolicy) -> Optional["DirectNumpyActions"]:
        """This source where the pipelines would only convert arrays and tensors; None otherwise."""
        if not isinstance(policy, NumpyCategoricalPolicy):  # Box actions: NormalizeAndClipActions must run
            return None
        module = runner.module
        if _piece_types(runner._module_to_env, module) != _MODULE_TO_ENV:
            return None
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
        return cls(runner, explore, policy, observations)

    def __call__(self, timestep: int) -> Dict[str, Any]:
        return self.policy(self._observations, self.explore)

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
