"""BCConfig: MARWIL's config with beta = 0 (pure imitation of the logged actions)."""
from __future__ import annotations

from relayrl.algorithms.marwil.marwil_config import MARWILConfig

__all__ = ["BCConfig"]


class BCConfig(MARWILConfig):
    """Config for BC: `BCConfig().offline_data(input_=[path]).environment("CartPole-v1")` (the env evaluates)."""

    _DEFAULTS = {"beta": 0.0}

    def get_default_rl_module_spec(self):
        from relayrl.algorithms.bc.default_bc_rl_module import DefaultBCTorchRLModule
        from relayrl.modules.rl_module_spec import RLModuleSpec

        return RLModuleSpec(module_class=DefaultBCTorchRLModule)

    def validate(self) -> None:
        super().validate()
        if self.beta != 0.0:
            raise ValueError(f"BC clones the logged actions: beta must be 0.0 (got {self.beta}); for advantage-"
                             "weighted imitation use MARWILConfig().training(beta=...).")
