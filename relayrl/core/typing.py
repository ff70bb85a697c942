"""RLlib's type aliases (`ray.rllib.utils.typing`) that ported code annotates with; plain aliases."""
from typing import Any, Dict, Union

AgentID = Any
ModuleID = str
PolicyID = str
EpisodeID = str
EpisodeType = Any  # SingleAgentEpisode
TensorType = Any  # numpy array or torch tensor
TensorStructType = Union[TensorType, dict, tuple]
ResultDict = Dict[str, Any]
EnvType = Any
EnvConfigDict = Dict[str, Any]
AlgorithmConfigDict = Dict[str, Any]
StateDict = Dict[str, Any]

__all__ = ["AgentID", "ModuleID", "PolicyID", "EpisodeID", "EpisodeType", "TensorType", "TensorStructType",
           "ResultDict", "EnvType", "EnvConfigDict", "AlgorithmConfigDict", "StateDict"]
