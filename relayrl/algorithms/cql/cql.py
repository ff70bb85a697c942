"""CQL: offline updates from `input_` (relayrl/algorithms/offline_algorithm.py) with CQL's module and Learner (as in
RLlib, CQL subclasses SAC; no replay buffer, no sampling)."""
from relayrl.algorithms.cql.cql_config import CQLConfig
from relayrl.algorithms.offline_algorithm import OfflineAlgorithm
from relayrl.algorithms.sac.sac import SAC


class CQL(OfflineAlgorithm, SAC):
    @classmethod
    def get_default_config(cls) -> CQLConfig:
        return CQLConfig()


__all__ = ["CQL"]
