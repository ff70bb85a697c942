"""Action source: a stateful module's numpy forward, its state held on the runner, the pipelines not called.

With a recurrent module the default pipelines do more than convert arrays: every step the env-to-module
pipeline reads each episode's latest `state_out` (AddStatesFromEpisodesToBatch), adds and removes a time
axis, and the episodes record the state per sub-env. Where both pipelines hold only those default pieces
(AddObservations -> AddTimeDim -> AddStates -> BatchIndividualItems -> NumpyToTensor, and GetActions ->
TensorToNumpy -> RemoveSingleTsTimeRank -> Listify), what they compute is known: the state in is the
previous step's state out, or the module's initial state in a sub-env whose episode just started. So this
source keeps the state as one batched structure of arrays (B, 1, cell), runs the module's numpy step
(modules/numpy_recurrent_forward.py) once per vector step, and resets the rows of new episodes.

The episodes get the same columns as from the pipelines (`state_out` included: the Learner starts its
sequences from it); the recorder takes them as rows of a step log (vector_step_log.py), since nothing
reads the episodes between steps. After the loop the env-to-module pipeline runs once, so the torch path
(and a checkpoint) finds the batch it expects. Not used for vector envs that auto-reset on the next step
(their placeholder episodes and reset rows stay with the pipelines), nor where NumpyActions would not be
(`runner_allows_numpy_policy`).
"""
from typing import Any, Dict, Optional

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from relayrl.connectors.common.add_observations_from_episodes_to_batch import AddObservationsFromEpisodesToBatch
from relayrl.connectors.common.add_states_from_episodes_to_batch import AddStatesFromEpisodesToBatch
from relayrl.connectors.common.add_time_dim_to_batch_and_zero_pad import AddTimeDimToBatchAndZeroPad
from relayrl.connectors.common.batch_individual_items import BatchIndividualItems
from relayrl.connectors.common.numpy_to_tensor import NumpyToTensor
from relayrl.connectors.common.stateful import initial_state_numpy, is_stateful
from relayrl.connectors.common.tensor_to_numpy import TensorToNumpy
from relayrl.connectors.module_to_env.get_actions import GetActions
from relayrl.connectors.module_to_env.listify_data_for_vector_env import ListifyDataForVectorEnv
from relayrl.connectors.module_to_env.remove_single_ts_time_rank_from_batch import RemoveSingleTsTimeRankFromBatch
from relayrl.core.columns import Columns
from relayrl.core.tree import map_structure
from relayrl.env.native_vector_env import autoreset_mode
from relayrl.env.sampling.numpy_actions import NumpyCategoricalPolicy, inference_rng, runner_allows_numpy_policy

# The default pieces that run for a stateful module with Discrete actions, in the order they run.
_ENV_TO_MODULE = {AddObservationsFromEpisodesToBatch, AddTimeDimToBatchAndZeroPad, AddStatesFromEpisodesToBatch,
                  BatchIndividualItems, NumpyToTensor}
_MODULE_TO_ENV = (GetActions, TensorToNumpy, RemoveSingleTsTimeRankFromBatch, ListifyDataForVectorEnv)


class RecurrentNumpyActions:
    """An action source (see TorchModuleActions for the protocol) for stateful modules, never calling the pipelines."""

    BYPASSES_PIPELINES = True  # nothing reads the episodes between steps: the step-log recorder may run

    def __init__(self, runner, explore: bool, forward, policy: NumpyCategoricalPolicy, observations, state, initial):
        self.runner = runner
        self.explore = explore
        self.forward = forward
        self.policy = policy
        self._observations = observations  # the vector env's latest observations (B, n)
        self._state = state  # the state in for the next step, batched (B, 1, cell) per leaf
        self._initial = initial  # the module's initial state (1, cell) per leaf

    @classmethod
    def plan(cls, runner, explore: bool) -> Optional["RecurrentNumpyActions"]:
        """This source where the pipelines would only do what it does; None otherwise."""
        module = runner.module
        if not is_stateful(module) or not runner_allows_numpy_policy(runner):
            return None
        if _piece_types(runner._module_to_env, module) != _MODULE_TO_ENV:
            return None
        pieces = runner._env_to_module._active_pieces(module)
        if len(pieces) != len(_ENV_TO_MODULE) or {type(piece) for piece in pieces} != _ENV_TO_MODULE:
            return None
        add_observations = next(p for p in pieces if type(p) is AddObservationsFromEpisodesToBatch)
        to_tensor = next(p for p in pieces if type(p) is NumpyToTensor)
        if (not add_observations._upstream_episodes_untouched or to_tensor._device is not None
                or autoreset_mode(runner.env) == AutoresetMode.NEXT_STEP):
            return None
        forward = module.numpy_recurrent_forward()
        if forward is None:
            return None
        batch = runner._cached_to_module
        observations, state = _from_batch(batch, forward.input_width)
        if observations is None or len(batch) != 2:  # the batch holds more than observations and states
            return None
        initial = initial_state_numpy(module)
        if not _same_structure(state, initial):
            return None
        policy = NumpyCategoricalPolicy(forward, inference_rng(runner))
        return cls(runner, explore, forward, policy, observations, state, initial)

    def __call__(self, timestep: int) -> Dict[str, Any]:
        logits, state_out = self.forward(self._observations, self._state)
        out = self.policy.act(logits, self.explore)
        out[Columns.STATE_OUT] = self._state = state_out
        return out

    def next_step(self, observations, finished=()) -> None:
        self._observations = observations
        if finished:  # new episodes start from the initial state; new arrays, as the recorded ones may be views
            rows = list(finished)

            def reset(batched, initial):
                batched = batched.copy()
                batched[rows] = initial
                return batched

            self._state = map_structure(reset, self._state, self._initial)

    def restart(self) -> None:  # the envs were rebuilt and reset: the runner's new batch has initial states
        self._observations, self._state = _from_batch(self.runner._cached_to_module, self.forward.input_width)

    def finish(self, steps: int) -> None:
        if steps:  # the pipeline's batch, for the next call (or a checkpoint); the episodes hold every step
            runner = self.runner
            runner._cached_to_module = runner._env_to_module_call(runner._episodes, self.explore, self._observations)


def _from_batch(batch, width: int):
    """(observations (B, n), state) as arrays from an env-to-module batch, or (None, None) if they do not fit."""
    obs, state = batch.get(Columns.OBS), batch.get(Columns.STATE_IN)
    if not isinstance(obs, torch.Tensor) or obs.ndim != 3 or obs.shape[1:] != (1, width) or state is None:
        return None, None
    if obs.dtype != torch.float32 or obs.device.type != "cpu":
        return None, None
    try:
        state = map_structure(lambda t: t.detach().cpu().numpy().copy(), state)
    except AttributeError:
        return None, None
    return obs[:, 0].numpy(), state


def _same_structure(state, initial) -> bool:
    if isinstance(initial, dict):
        return isinstance(state, dict) and state.keys() == initial.keys() and all(
            _same_structure(state[k], initial[k]) for k in initial)
    return (isinstance(state, np.ndarray) and state.dtype == np.float32 and state.ndim == initial.ndim + 1
            and state.shape[1:] == initial.shape)


def _piece_types(pipeline, module) -> tuple:
    return tuple(type(piece) for piece in pipeline._active_pieces(module))
