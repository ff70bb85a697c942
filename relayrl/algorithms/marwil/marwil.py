"""MARWIL: offline updates from `input_` (relayrl/algorithms/offline_algorithm.py) with MARWIL's Learner."""
from relayrl.algorithms.algorithm import Algorithm
from relayrl.algorithms.marwil.marwil_config import MARWILConfig
from relayrl.algorithms.offline_algorithm import OfflineAlgorithm


class MARWIL(OfflineAlgorithm, Algorithm):
    @classmethod
    def get_default_config(cls) -> MARWILConfig:
        return MARWILConfig()


__all__ = ["MARWIL"]
