"""`DefaultModelConfig`: the knobs of relayrl's default RLModules (RLlib's field names and defaults)."""
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Union

from relayrl.core.suggest import did_you_mean


@dataclass
class DefaultModelConfig:
    """Architecture of the default models. Pass via `config.rl_module(model_config=...)`."""

    _checkpoint_kind = "model config"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)

    fcnet_hiddens: List[int] = field(default_factory=lambda: [256, 256])
    fcnet_activation: Optional[str] = "tanh"
    fcnet_kernel_initializer: Optional[Union[str, Callable]] = None
    fcnet_kernel_initializer_kwargs: Optional[dict] = None
    fcnet_bias_initializer: Optional[Union[str, Callable]] = None
    fcnet_bias_initializer_kwargs: Optional[dict] = None
    conv_filters: Optional[List[List[Any]]] = None
    conv_activation: str = "relu"
    head_fcnet_hiddens: List[int] = field(default_factory=list)
    head_fcnet_activation: Optional[str] = "relu"
    head_fcnet_kernel_initializer: Optional[Union[str, Callable]] = None
    head_fcnet_kernel_initializer_kwargs: Optional[dict] = None
    head_fcnet_bias_initializer: Optional[Union[str, Callable]] = None
    head_fcnet_bias_initializer_kwargs: Optional[dict] = None
    free_log_std: bool = False
    log_std_clip_param: float = 20.0
    vf_share_layers: bool = True
    use_lstm: bool = False
    max_seq_len: int = 20
    lstm_cell_size: int = 256
    lstm_use_prev_action: bool = False
    lstm_use_prev_reward: bool = False

    @classmethod
    def from_dict(cls, model_config: Optional[dict]) -> "DefaultModelConfig":
        """Build from a user dict; unknown keys raise with a did-you-mean hint."""
        if isinstance(model_config, cls):
            return model_config
        if dataclasses.is_dataclass(model_config):
            model_config = dataclasses.asdict(model_config)
        model_config = dict(model_config or {})
        names = [f.name for f in dataclasses.fields(cls)]
        for key in model_config:
            if key not in names:
                raise ValueError(
                    f"Unknown model_config key `{key}` for the default RLModule.{did_you_mean(key, names)} "
                    f"Valid keys are the fields of DefaultModelConfig: {', '.join(names)}."
                )
        return cls(**model_config)
