"""`make_exploration`: build the Exploration object an `exploration_config` dict describes."""
import inspect
import numbers
from typing import Any, Dict, Mapping, Optional, Tuple

from relayrl.core.imports import ImportObject, import_object
from relayrl.core.suggest import did_you_mean
from relayrl.exploration.epsilon_greedy import EpsilonGreedy
from relayrl.exploration.exploration import Exploration
from relayrl.exploration.gaussian_noise import GaussianNoise
from relayrl.exploration.ornstein_uhlenbeck_noise import OrnsteinUhlenbeckNoise
from relayrl.exploration.random_exploration import Random
from relayrl.exploration.soft_q import SoftQ
from relayrl.exploration.stochastic_sampling import StochasticSampling

BUILT_IN = {cls.__name__: cls for cls in (StochasticSampling, EpsilonGreedy, SoftQ, GaussianNoise,
                                          OrnsteinUhlenbeckNoise, Random)}
DEFAULT_EXPLORATION_CONFIG = {"type": "StochasticSampling"}
_CONTEXT_KEYS = ("framework", "policy_config", "model", "num_workers", "worker_index")


def resolve_exploration_class(type_: Any, import_name: ImportObject = import_object) -> type:
    """An Exploration subclass from a class, a built-in name, or a dotted path "pkg.mod:Class" / "pkg.mod.Class"
    (imported through `import_name`)."""
    if isinstance(type_, type):
        if not issubclass(type_, Exploration):
            raise TypeError(f"exploration_config type {type_.__name__} must subclass relayrl.exploration.Exploration")
        return type_
    if not isinstance(type_, str) or not type_:
        raise TypeError(f"exploration_config['type'] must be a class name, an Exploration subclass or a dotted "
                        f"path 'pkg.module:Class', got {type_!r}")
    if type_ in BUILT_IN:
        return BUILT_IN[type_]
    module_name, sep, class_name = type_.partition(":")
    if not sep:
        module_name, _, class_name = type_.rpartition(".")
    if not module_name:
        raise ValueError(f"Unknown exploration type {type_!r}.{did_you_mean(type_, BUILT_IN)} Built-in types: "
                         f"{sorted(BUILT_IN)}; or pass a class or a dotted path 'pkg.module:Class'.")
    if class_name in BUILT_IN and "rllib.utils.exploration" in module_name:
        return BUILT_IN[class_name]  # RLlib's full paths ("ray.rllib.utils.exploration.EpsilonGreedy") port as is
    cls = import_name(f"{module_name}:{class_name}", what=f"exploration_config type {type_!r}")
    if not isinstance(cls, type):
        raise TypeError(f"exploration_config type {type_!r} is a {type(cls).__name__}, not an Exploration subclass.")
    return resolve_exploration_class(cls)


def make_exploration(exploration_config: Optional[Mapping], action_space, *,
                     default: Optional[Mapping] = None, **context) -> Exploration:
    """`cls(action_space, **context, **kwargs)` for `{"type": cls_or_name, **kwargs}`.

    An empty (or None) config means `default` ({"type": "StochasticSampling"} unless given). `context`
    holds framework, policy_config, model, num_workers and worker_index.
    """
    unknown_context = set(context) - set(_CONTEXT_KEYS)
    if unknown_context:
        raise TypeError(f"make_exploration got unexpected context {sorted(unknown_context)}; allowed: {_CONTEXT_KEYS}")
    cls, kwargs = check_exploration_config(exploration_config, default=default)
    try:
        return cls(action_space, **context, **kwargs)
    except (TypeError, ValueError) as error:  # name the option: the class's own message may not
        error_type = TypeError if isinstance(error, TypeError) else ValueError
        raise error_type(f"exploration_config {_short(exploration_config)} (type {cls.__name__}): {error}") from error


def check_exploration_config(exploration_config: Optional[Mapping], *,
                             default: Optional[Mapping] = None) -> Tuple[type, Dict[str, Any]]:
    """(Exploration class, its kwargs) for an exploration_config; raise naming the bad key or value.

    Checked without building anything (no action space needed), so config.validate() runs it: the type
    must resolve, every key must be an argument of the class, and a key whose default is a number
    must get a number.
    """
    config: Dict[str, Any] = dict(exploration_config or default or DEFAULT_EXPLORATION_CONFIG)
    if "type" not in config:
        # Only kwargs: they configure the default type (RLlib merges exploration_config over its default).
        config = {**dict(default or DEFAULT_EXPLORATION_CONFIG), **config}
    cls = resolve_exploration_class(config.pop("type"))
    _check_kwargs(cls, config)
    return cls, config


def _short(value: Any, limit: int = 120) -> str:
    text = repr(dict(value)) if isinstance(value, Mapping) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _constructor_params(cls: type) -> Tuple[Dict[str, inspect.Parameter], bool]:
    """The keyword parameters of cls's __init__ chain, and whether it takes any keyword (**kwargs to the end)."""
    params: Dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        if klass is object or "__init__" not in vars(klass):
            continue
        signature = inspect.signature(klass.__init__).parameters
        for name, param in signature.items():
            if param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD):
                params.setdefault(name, param)
        if not any(p.kind is p.VAR_KEYWORD for p in signature.values()):
            return params, False
    return params, True


def _check_kwargs(cls: type, kwargs: Mapping) -> None:
    """Bad keys and values raise naming the class and the key (with a did-you-mean), before the constructor runs."""
    params, takes_any = _constructor_params(cls)
    accepted = set(params) - {"self", "action_space", *_CONTEXT_KEYS}
    for key, value in kwargs.items():
        if key in _CONTEXT_KEYS or key == "action_space":
            raise ValueError(f"exploration_config must not set {key!r}: the EnvRunner passes it to {cls.__name__}.")
        if key not in accepted:
            if takes_any:
                continue
            raise ValueError(f"{cls.__name__} has no argument {key!r} (from exploration_config)."
                             f"{did_you_mean(key, accepted)} Its arguments: {sorted(accepted)}.")
        default = params[key].default
        if _is_number(default) and not _is_number(value):
            raise ValueError(
                f"exploration_config[{key!r}] must be a number, got {_short(value, 60)} ({type(value).__name__}). "
                f"Fix: e.g. exploration_config={{'type': '{cls.__name__}', '{key}': {default!r}}} "
                f"({default!r} is {cls.__name__}'s default).")


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
