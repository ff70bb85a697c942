"""Multi-agent action source: each module's numpy forward on its agents' latest observations, no pipelines.

Where every module of the MultiRLModule declares a numpy forward (`NumpyForwardAPI`) with Categorical
action distributions and both pipelines hold only the default multi-agent pieces (which would only
regroup agents by module and convert arrays and tensors), the runner skips the pipelines: per step it
collects the acting agents' latest observations per module (rows in env, then agent order), runs one
numpy forward per module (numpy_actions.py's `NumpyCategoricalPolicy`: same distribution, columns and
dtypes as the torch path) and scatters the results into one {agent_id: value} dict per env. After the
loop the env-to-module pipeline runs once, so the torch path and checkpoints find the batch they expect.
Modules with Box actions (Gaussian distributions) keep the torch path (`MultiAgentModuleActions`): the
numpy Gaussian policies are single-agent only, and NormalizeAndClipActions would have to run.
"""
from typing import Any, Dict, Optional

import numpy as np
import torch

from relayrl.connectors.common.add_observations_from_episodes_to_batch import AddObservationsFromEpisodesToBatch
from relayrl.connectors.common.agent_to_module_mapping import AgentToModuleMapping
from relayrl.connectors.common.batch_individual_items import BatchIndividualItems
from relayrl.connectors.common.numpy_to_tensor import NumpyToTensor
from relayrl.connectors.common.tensor_to_numpy import TensorToNumpy
from relayrl.connectors.module_to_env.get_actions import GetActions
from relayrl.connectors.module_to_env.listify_data_for_vector_env import ListifyDataForVectorEnv
from relayrl.connectors.module_to_env.module_to_agent_unmapping import ModuleToAgentUnmapping
from relayrl.connectors.module_to_env.un_batch_to_individual_items import UnBatchToIndividualItems
from relayrl.core.columns import Columns
from relayrl.env.sampling.numpy_actions import NumpyCategoricalPolicy
from relayrl.modules.distributions import TorchCategorical
from relayrl.modules.numpy_forward import NumpyForwardAPI

# The default multi-agent pieces that run for stateless modules with Discrete actions.
_ENV_TO_MODULE = (AddObservationsFromEpisodesToBatch, AgentToModuleMapping, BatchIndividualItems, NumpyToTensor)
_MODULE_TO_ENV = (GetActions, TensorToNumpy, UnBatchToIndividualItems, ModuleToAgentUnmapping,
                  ListifyDataForVectorEnv)
_COLUMNS = (Columns.ACTIONS, Columns.ACTION_LOGP, Columns.ACTION_DIST_INPUTS)


class MultiAgentNumpyActions:
    """An action source (TorchModuleActions' protocol) that never calls the pipelines."""

    def __init__(self, runner, explore: bool, policies: Dict[str, NumpyCategoricalPolicy]):
        self.runner = runner
        self.explore = explore
        self._policies = policies
        self._widths = {mid: policy._forward.input_width for mid, policy in policies.items()}
        self._observations = latest_observations(runner._episodes)  # per env: {agent_id: latest observation}

    @classmethod
    def plan(cls, runner, explore: bool) -> Optional["MultiAgentNumpyActions"]:
        """This source where the pipelines would only regroup and convert; None otherwise."""
        config, module = runner.config, runner.module
        if not config.numpy_inference or runner._use_exploration:
            return None
        if (_piece_types(runner._module_to_env, module) != _MODULE_TO_ENV
                or _piece_types(runner._env_to_module, module) != _ENV_TO_MODULE):
            return None
        if runner._env_to_module._active_pieces(module)[-1]._device is not None:  # NumpyToTensor to a device
            return None
        forwards = {}
        for module_id, sub_module in module.items():
            if not (isinstance(sub_module, NumpyForwardAPI)
                    and sub_module.get_exploration_action_dist_cls() is TorchCategorical
                    and sub_module.get_inference_action_dist_cls() is TorchCategorical):
                return None
            forwards[module_id] = sub_module.numpy_forward()
            if forwards[module_id] is None:
                return None
        if runner._inference_rng is None:
            runner._inference_rng = np.random.default_rng(int(torch.randint(2**62, ()).item()))
        policies = {mid: NumpyCategoricalPolicy(forward, runner._inference_rng) for mid, forward in forwards.items()}
        return cls(runner, explore, policies)

    def __call__(self, timestep: int) -> Dict[str, Any]:
        rows: Dict[str, tuple] = {}  # module id -> ([(env index, agent id)], [observations])
        for i, (episode, observations) in enumerate(zip(self.runner._episodes, self._observations)):
            for agent_id in episode.get_agents_to_act():
                module_id = episode.module_for(agent_id)
                module_rows = rows.get(module_id)
                if module_rows is None:
                    module_rows = rows[module_id] = ([], [])
                module_rows[0].append((i, agent_id))
                module_rows[1].append(observations[agent_id])
        out = {column: [{} for _ in self._observations] for column in _COLUMNS}
        for module_id, (keys, observations) in rows.items():
            batch = np.asarray(observations, dtype=np.float32)
            if batch.ndim != 2 or batch.shape[1] != self._widths[module_id]:
                raise ValueError(f"Module `{module_id}` gets observations of shape {batch.shape[1:]}; its numpy "
                                 f"forward takes {self._widths[module_id]} floats (check its observation space).")
            result = self._policies[module_id](batch, self.explore)
            for column in _COLUMNS:
                values, per_env = result[column], out[column]
                if column == Columns.ACTIONS:  # Python ints: gymnasium's Discrete.contains checks them ~5x faster
                    values = values.tolist()
                for row, (i, agent_id) in enumerate(keys):
                    per_env[i][agent_id] = values[row]
        return out

    def next_step(self, stepped) -> None:
        observations, resets = stepped[0], stepped[5]
        self._observations = [obs if reset is None else reset[0] for obs, reset in zip(observations, resets)]

    def restart(self) -> None:
        self._observations = latest_observations(self.runner._episodes)

    def finish(self, steps: int) -> None:
        if steps:  # the pipeline's batch, for the next call (or a checkpoint)
            self.runner._cache_env_to_module(self.explore)


def latest_observations(episodes) -> list:
    """Per episode: {agent_id: latest observation} of the agents about to act."""
    return [{aid: episode.agent_episodes[aid].get_observations(-1) for aid in episode.get_agents_to_act()}
            for episode in episodes]


def _piece_types(pipeline, module) -> tuple:
    return tuple(type(piece) for piece in pipeline._active_pieces(module))
