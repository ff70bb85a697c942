"""`make_exploration`: build the Exploration object an `exploration_config` dict describes."""
import inspect
from typing import Any, Dict, Mapping, Optional

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
    config: Dict[str, Any] = dict(exploration_config or default or DEFAULT_EXPLORATION_CONFIG)
    if "type" not in config:
        # Only kwargs: they configure the default type (RLlib merges exploration_config over its default).
        config = {**dict(default or DEFAULT_EXPLORATION_CONFIG), **config}
    cls = resolve_exploration_class(config.pop("type"))
    unknown_context = set(context) - set(_CONTEXT_KEYS)
    if unknown_context:
        raise TypeError(f"make_exploration got unexpected context {sorted(unknown_context)}; allowed: {_CONTEXT_KEYS}")
    _check_kwargs(cls, config)
    return cls(action_space, **context, **config)


def _check_kwargs(cls: type, kwargs: Mapping) -> None:
    """Bad keys raise naming the class and the key (with a did-you-mean), before the constructor runs."""
    accepted, takes_any = set(), False
    for klass in cls.__mro__:
        if klass is object or "__init__" not in vars(klass):
            continue
        params = inspect.signature(klass.__init__).parameters
        accepted |= {n for n, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            takes_any = False
            break
        takes_any = True
    if takes_any:
        return
    accepted -= {"self", "action_space", *_CONTEXT_KEYS}
    for key in kwargs:
        if key in _CONTEXT_KEYS or key == "action_space":
            raise ValueError(f"exploration_config must not set {key!r}: the EnvRunner passes it to {cls.__name__}.")
        if key not in accepted:
            raise ValueError(f"{cls.__name__} has no argument {key!r} (from exploration_config)."
                             f"{did_you_mean(key, accepted)} Its arguments: {sorted(accepted)}.")
