"""IQL: offline updates from `input_` (relayrl/algorithms/offline_algorithm.py) with IQL's module and Learner (no
replay buffer, no sampling; the env, where one is set, evaluates)."""
from relayrl.algorithms.iql.iql_config import IQLConfig
from relayrl.algorithms.offline_algorithm import OfflineAlgorithm
from relayrl.algorithms.sac.sac import SAC


class IQL(OfflineAlgorithm, SAC):
    @classmethod
    def get_default_config(cls) -> IQLConfig:
        return IQLConfig()


__all__ = ["IQL"]
