"""Assemble the three default pipelines around the user's pieces, in RLlib's documented order."""
from typing import Optional

import torch

from relayrl.connectors.common.add_observations_from_episodes_to_batch import (
    AddObservationsFromEpisodesToBatch,
)
from relayrl.connectors.common.add_states_from_episodes_to_batch import (
    AddStatesFromEpisodesToBatch,
)
from relayrl.connectors.common.add_time_dim_to_batch_and_zero_pad import (
    AddTimeDimToBatchAndZeroPad,
)
from relayrl.connectors.common.agent_to_module_mapping import AgentToModuleMapping
from relayrl.connectors.common.batch_individual_items import BatchIndividualItems
from relayrl.connectors.common.numpy_to_tensor import NumpyToTensor
from relayrl.connectors.common.tensor_to_numpy import TensorToNumpy
from relayrl.connectors.connector_pipeline_v2 import (
    EnvToModulePipeline,
    LearnerConnectorPipeline,
    ModuleToEnvPipeline,
)
from relayrl.connectors.connector_v2 import call_user_factory
from relayrl.connectors.env_to_module.observation_filter import with_observation_filter
from relayrl.connectors.learner.add_columns_from_episodes_to_train_batch import (
    AddColumnsFromEpisodesToTrainBatch,
)
from relayrl.connectors.module_to_env.get_actions import GetActions
from relayrl.connectors.module_to_env.listify_data_for_vector_env import (
    ListifyDataForVectorEnv,
)
from relayrl.connectors.module_to_env.module_to_agent_unmapping import ModuleToAgentUnmapping
from relayrl.connectors.module_to_env.normalize_and_clip_actions import (
    NormalizeAndClipActions,
)
from relayrl.connectors.module_to_env.remove_single_ts_time_rank_from_batch import (
    RemoveSingleTsTimeRankFromBatch,
)
from relayrl.connectors.module_to_env.un_batch_to_individual_items import (
    UnBatchToIndividualItems,
)
from relayrl.connectors.multi_agent_flag_check import check_multi_agent_flags


def env_spaces(env, spaces: Optional[dict]):
    """(observation_space, action_space) of ONE sub-env, from `spaces` or the (vector) env."""
    if spaces and "__env_single__" in spaces:
        return spaces["__env_single__"]
    if env is None:
        raise ValueError("Pass `env` or `spaces` to build a connector pipeline.")
    obs = getattr(env, "single_observation_space", None) or env.observation_space
    act = getattr(env, "single_action_space", None) or env.action_space
    return obs, act


def build_env_to_module_pipeline(config, env=None, spaces=None, device=None) -> EnvToModulePipeline:
    """[observation filter] -> [user pieces] (the filter after their FlattenObservations) -> AddObservations ->
    AddTimeDim -> AddStates -> BatchIndividualItems -> NumpyToTensor."""
    obs_space, act_space = env_spaces(env, spaces)
    user_pieces = []
    if config.env_to_module_connector is not None:
        user_pieces = call_user_factory(config.env_to_module_connector, env, spaces, device)
        check_multi_agent_flags(config, user_pieces, "env_to_module_connector")
    pieces = with_observation_filter(config, obs_space, user_pieces)
    if config.add_default_connectors_to_env_to_module_pipeline:
        pieces += [
            AddObservationsFromEpisodesToBatch(),
            AddTimeDimToBatchAndZeroPad(),
            AddStatesFromEpisodesToBatch(),
            *_agent_to_module_mapping(config),
            BatchIndividualItems(multi_agent=config.is_multi_agent),
            NumpyToTensor(device=device),
        ]
    return EnvToModulePipeline(obs_space, act_space, connectors=pieces)


def build_module_to_env_pipeline(config, env=None, spaces=None) -> ModuleToEnvPipeline:
    """GetActions -> TensorToNumpy -> UnBatch -> RemoveTimeRank -> [user pieces] -> NormalizeAndClip -> Listify."""
    obs_space, act_space = env_spaces(env, spaces)
    pieces = []
    if config.module_to_env_connector is not None:
        pieces = call_user_factory(config.module_to_env_connector, env, spaces)
    if config.add_default_connectors_to_module_to_env_pipeline:
        unmapping = [ModuleToAgentUnmapping()] if config.is_multi_agent else []
        pieces = [GetActions(), TensorToNumpy(), UnBatchToIndividualItems(), *unmapping,
                  RemoveSingleTsTimeRankFromBatch()] + pieces + [
                NormalizeAndClipActions(normalize_actions=config.normalize_actions, clip_actions=config.clip_actions),
                ListifyDataForVectorEnv(),
            ]
    return ModuleToEnvPipeline(obs_space, act_space, connectors=pieces)


def build_learner_pipeline(config, input_observation_space, input_action_space, device=None):
    """[user pieces] -> AddObservations -> AddColumns -> AddTimeDim -> AddStates -> BatchIndividualItems -> NumpyToTensor."""
    pieces = []
    if config.learner_connector is not None:
        pieces = call_user_factory(config.learner_connector, input_observation_space, input_action_space)
        check_multi_agent_flags(config, pieces, "learner_connector")
    if config.add_default_connectors_to_learner_pipeline:
        pieces += [
            AddObservationsFromEpisodesToBatch(as_learner_connector=True),
            AddColumnsFromEpisodesToTrainBatch(),
            AddTimeDimToBatchAndZeroPad(as_learner_connector=True),
            AddStatesFromEpisodesToBatch(as_learner_connector=True),
            *_agent_to_module_mapping(config, as_learner_connector=True),
            BatchIndividualItems(multi_agent=config.is_multi_agent, pin_memory=_is_cuda(device)),
            NumpyToTensor(as_learner_connector=True, device=device),
        ]
    return LearnerConnectorPipeline(input_observation_space, input_action_space, connectors=pieces)


def _is_cuda(device) -> bool:
    """A Learner on a GPU: its batches are built in pinned memory (relayrl/core/pinned.py)."""
    return device is not None and torch.device(device).type == "cuda"


def _agent_to_module_mapping(config, as_learner_connector: bool = False) -> list:
    """Multi-agent pipelines regroup the agents' data by module (one batch per module)."""
    if not config.is_multi_agent:
        return []
    specs = getattr(config.rl_module_spec, "rl_module_specs", None) or {}
    return [AgentToModuleMapping(rl_module_specs=specs, agent_to_module_mapping_fn=config.agent_to_module_mapping_fn,
                                 as_learner_connector=as_learner_connector)]


__all__ = ["build_env_to_module_pipeline", "build_module_to_env_pipeline", "build_learner_pipeline", "env_spaces"]
