"""Connector pipelines and every built-in piece (lazy: importing this package does not import torch)."""
import importlib

_PIECES = {
    "ConnectorV2": "connector_v2",
    "ConnectorPipelineV2": "connector_pipeline_v2",
    "EnvToModulePipeline": "connector_pipeline_v2",
    "ModuleToEnvPipeline": "connector_pipeline_v2",
    "LearnerConnectorPipeline": "connector_pipeline_v2",
    "AddObservationsFromEpisodesToBatch": "common.add_observations_from_episodes_to_batch",
    "AddTimeDimToBatchAndZeroPad": "common.add_time_dim_to_batch_and_zero_pad",
    "AddStatesFromEpisodesToBatch": "common.add_states_from_episodes_to_batch",
    "BatchIndividualItems": "common.batch_individual_items",
    "NumpyToTensor": "common.numpy_to_tensor",
    "TensorToNumpy": "common.tensor_to_numpy",
    "FrameStacking": "common.frame_stacking",
    "FrameStackingEnvToModule": "common.frame_stacking",
    "FrameStackingLearner": "common.frame_stacking",
    "MeanStdFilter": "env_to_module.mean_std_filter",
    "FlattenObservations": "env_to_module.flatten_observations",
    "PrevActionsPrevRewards": "env_to_module.prev_actions_prev_rewards",
    "SingleAgentObservationPreprocessor": "env_to_module.observation_preprocessor",
    "MultiAgentObservationPreprocessor": "env_to_module.observation_preprocessor",
    "ObservationPreprocessor": "env_to_module.observation_preprocessor",
    "GetActions": "module_to_env.get_actions",
    "UnBatchToIndividualItems": "module_to_env.un_batch_to_individual_items",
    "RemoveSingleTsTimeRankFromBatch": "module_to_env.remove_single_ts_time_rank_from_batch",
    "NormalizeAndClipActions": "module_to_env.normalize_and_clip_actions",
    "ListifyDataForVectorEnv": "module_to_env.listify_data_for_vector_env",
    "AddColumnsFromEpisodesToTrainBatch": "learner.add_columns_from_episodes_to_train_batch",
    "AddOneTsToEpisodesAndTruncate": "learner.add_one_ts_to_episodes_and_truncate",
    "AddNextObservationsFromEpisodesToTrainBatch": "learner.add_next_observations_from_episodes_to_train_batch",
    "GeneralAdvantageEstimation": "learner.general_advantage_estimation",
}

__all__ = sorted(_PIECES)


def __getattr__(name):
    if name not in _PIECES:
        raise AttributeError(f"module 'relayrl.connectors' has no attribute '{name}'")
    return getattr(importlib.import_module(f"relayrl.connectors.{_PIECES[name]}"), name)
