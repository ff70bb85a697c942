"""BC: MARWIL's offline training with beta = 0 (RLlib's BC is a MARWIL subclass too)."""
from relayrl.algorithms.bc.bc_config import BCConfig
from relayrl.algorithms.marwil.marwil import MARWIL


class BC(MARWIL):
    @classmethod
    def get_default_config(cls) -> BCConfig:
        return BCConfig()


__all__ = ["BC"]
