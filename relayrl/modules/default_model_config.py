"""`DefaultModelConfig`: the knobs of relayrl's default RLModules (RLlib's field names and defaults)."""
import dataclasses
import functools
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, List, Mapping, Optional, Union

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
    # SAC with image observations and Box actions: the MLP over [CNN features, action] before the Q head.
    fusionnet_hiddens: List[int] = field(default_factory=lambda: [256, 256])
    fusionnet_activation: Optional[str] = "tanh"
    fusionnet_kernel_initializer: Optional[Union[str, Callable]] = None
    fusionnet_kernel_initializer_kwargs: Optional[dict] = None
    fusionnet_bias_initializer: Optional[Union[str, Callable]] = None
    fusionnet_bias_initializer_kwargs: Optional[dict] = None
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
    lstm_kernel_initializer: Optional[Union[str, Callable]] = None
    lstm_kernel_initializer_kwargs: Optional[dict] = None
    lstm_bias_initializer: Optional[Union[str, Callable]] = None
    lstm_bias_initializer_kwargs: Optional[dict] = None

    def __post_init__(self) -> None:
        # Ray Tune search values pass: Tune resolves them per trial (relayrl/tune/model_config_search.py).
        check_model_config_values({f.name: getattr(self, f.name) for f in dataclasses.fields(self)},
                                  search_spaces_allowed=True)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        given = self.__dict__.get("_given_fields")
        if given is not None and not name.startswith("_"):
            given.add(name)  # set after it was made: the user's choice too

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


_dataclass_init = DefaultModelConfig.__init__


@functools.wraps(_dataclass_init)
def _init_noting_given_fields(self, *args, **kwargs):
    _dataclass_init(self, *args, **kwargs)
    names = [f.name for f in dataclasses.fields(DefaultModelConfig)]
    object.__setattr__(self, "_given_fields", set(names[:len(args)]) | set(kwargs))


# The fields a user passed (or set later) are theirs: a default resolved for the run (e.g. max_seq_len for a
# stateful module, relayrl/algorithms/resolved_defaults.py) replaces only the others.
DefaultModelConfig.__init__ = _init_noting_given_fields


def given_model_fields(model_config) -> frozenset:
    """The model-config keys the user chose: a dict's keys; a DefaultModelConfig's passed or set fields (all fields
    of another dataclass, or of a subclass, which builds its own __init__)."""
    if model_config is None:
        return frozenset()
    if isinstance(model_config, Mapping):
        return frozenset(model_config)
    given = getattr(model_config, "__dict__", {}).get("_given_fields")
    if given is None or type(model_config).__init__ is not _init_noting_given_fields:
        return frozenset(f.name for f in dataclasses.fields(model_config))
    return frozenset(given)


# -- value checks ------------------------------------------------------------------------------------
# Each field's rule: (test, what the value must be, an example of a good value). Checked when a
# DefaultModelConfig is made and by AlgorithmConfig.validate() for model_config dicts, so a bad value
# is named here instead of failing deep inside torch when the module is built.
# Sequences are padded to max_seq_len: a huge one costs time and memory in proportion (10**6: 150x slower).
MAX_SEQ_LEN = 10_000
ACTIVATION_NAMES = ("tanh", "relu", "swish", "silu", "elu", "linear")  # relayrl/modules/mlp.py maps them to torch


def _is_positive_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value > 0


def _layer_sizes(value) -> bool:
    return isinstance(value, (list, tuple)) and all(_is_positive_int(size) for size in value)


def _activation(value) -> bool:
    return value is None or (isinstance(value, str) and value.lower() in ACTIVATION_NAMES)


def _initializer(value) -> bool:
    if value is None or callable(value):
        return True
    if not isinstance(value, str):
        return False
    from torch import nn  # only for a name given as a string

    return callable(getattr(nn.init, value if value.endswith("_") else value + "_", None))


def _conv_filters(value) -> bool:
    return value is None or (isinstance(value, (list, tuple)) and all(
        isinstance(layer, (list, tuple)) and len(layer) in (3, 4) for layer in value))


def _bool(value) -> bool:
    return isinstance(value, bool)


_LAYERS = (_layer_sizes, "a list of positive ints (one size per hidden layer)", "[64, 64]")
_ACTIVATION = (_activation, f"one of {', '.join(ACTIVATION_NAMES)} or None", "'relu'")
_INIT = (_initializer, "None, a callable, or the name of a torch.nn.init function", "'orthogonal_'")
_KWARGS = (lambda v: v is None or isinstance(v, Mapping), "None or a dict of keyword arguments", "{'gain': 1.0}")
_BOOL = (_bool, "True or False", "True")
_RULES = {
    "fcnet_hiddens": _LAYERS,
    "fcnet_activation": _ACTIVATION,
    "fcnet_kernel_initializer": _INIT,
    "fcnet_kernel_initializer_kwargs": _KWARGS,
    "fcnet_bias_initializer": _INIT,
    "fcnet_bias_initializer_kwargs": _KWARGS,
    "conv_filters": (_conv_filters, "None or a list of [out_channels, kernel, stride(, padding)] lists",
                     "[[16, 4, 2]]"),
    "conv_activation": _ACTIVATION,
    "fusionnet_hiddens": _LAYERS,
    "fusionnet_activation": _ACTIVATION,
    "fusionnet_kernel_initializer": _INIT,
    "fusionnet_kernel_initializer_kwargs": _KWARGS,
    "fusionnet_bias_initializer": _INIT,
    "fusionnet_bias_initializer_kwargs": _KWARGS,
    "head_fcnet_hiddens": (_layer_sizes, "a list of positive ints (may be empty)", "[]"),
    "head_fcnet_activation": _ACTIVATION,
    "head_fcnet_kernel_initializer": _INIT,
    "head_fcnet_kernel_initializer_kwargs": _KWARGS,
    "head_fcnet_bias_initializer": _INIT,
    "head_fcnet_bias_initializer_kwargs": _KWARGS,
    "free_log_std": _BOOL,
    "log_std_clip_param": (lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool) and v > 0,
                           "a positive number", "20.0"),
    "vf_share_layers": _BOOL,
    "use_lstm": _BOOL,
    "max_seq_len": (lambda v: _is_positive_int(v) and v <= MAX_SEQ_LEN,
                    f"a positive int up to {MAX_SEQ_LEN} (recurrent modules train on sequences padded to it)", "20"),
    "lstm_cell_size": (_is_positive_int, "a positive int", "256"),
    "lstm_use_prev_action": _BOOL,
    "lstm_use_prev_reward": _BOOL,
    "lstm_kernel_initializer": _INIT,
    "lstm_kernel_initializer_kwargs": _KWARGS,
    "lstm_bias_initializer": _INIT,
    "lstm_bias_initializer_kwargs": _KWARGS,
}


def check_model_config_values(model_config: Mapping, name: str = "model_config", fix: Optional[str] = None,
                              search_spaces_allowed: bool = False) -> None:
    """Raise ValueError naming the first DefaultModelConfig field whose value the default modules cannot use.

    Keys that are not DefaultModelConfig fields are left alone (a custom RLModule may read its own). `name`
    and `fix` ("... {key} ... {example} ...") word the error for another dict with these keys (the old stack's
    `model`). A Ray Tune search value passes where `search_spaces_allowed`, else it raises saying to use Tune.
    """
    from relayrl.algorithms.options import is_search_space, short_repr

    for key, (test, allowed, example) in _RULES.items():
        if key not in model_config:
            continue
        value = model_config[key]
        if is_search_space(value):
            if search_spaces_allowed:
                continue
            raise ValueError(f"{name}['{key}'] is still a Ray Tune search space ({short_repr(value)}): Tune picks "
                             "a value per trial, so pass the config to Tune (e.g. Tuner(PPO, param_space=config)) "
                             "instead of building it directly")
        try:
            ok = test(value)
        except Exception:  # a test tripping over an odd type means "not allowed"
            ok = False
        if not ok:
            text = repr(value)
            text = text if len(text) <= 80 else text[:77] + "..."
            hint = " (a string, not a list: write [64] for one layer of 64)" if key.endswith("hiddens") and \
                isinstance(value, str) else ""
            fix_text = (fix or "config.rl_module(model_config={{'{key}': {example}, ...}}) or "
                        "DefaultModelConfig({key}={example})").format(key=key, example=example)
            raise ValueError(f"{name}['{key}'] must be {allowed}, got {text}{hint}. Fix: e.g. {fix_text}.")
