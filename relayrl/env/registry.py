"""Turning `config.env` (registered name, gymnasium id, class or creator) into env instances.

Names come from `relayrl.register_env` or, as in RLlib, from Ray Tune's `ray.tune.registry.register_env`. Tune's
registry is also how a name reaches Ray's other processes (EnvRunner actors, Tune trials): relayrl copies its own
names there before it makes actors (`share_registered_envs_with_ray`), and looks a name up there when this process
uses Ray (relayrl/tune/env_names.py). Without Ray nothing here imports it.
"""
import inspect
import sys
from typing import Callable, Dict, Optional

import gymnasium as gym

from relayrl.core.imports import ImportObject, import_object, module_and_name
from relayrl.core.suggest import did_you_mean
from relayrl.env.env_checks import check_env_class
from relayrl.env.env_context import EnvContext

_ENV_CREATORS: Dict[str, Callable] = {}


def register_env(name: str, env_creator: Callable) -> None:
    """Make `config.environment(name)` call `env_creator(env_config)` (as ray.tune.registry.register_env)."""
    if not callable(env_creator):
        raise TypeError(f"register_env('{name}', ...) needs a callable taking env_config, got {env_creator!r}.")
    _ENV_CREATORS[name] = env_creator
    if "ray.tune.registry" in sys.modules:  # Ray is in use: other processes look the name up there
        from relayrl.tune.env_names import register_with_tune

        register_with_tune({name: env_creator})


def registered_env_creators() -> list:
    """The creators register_env() registered in this process (a checkpoint may name them: checkpoints/trust.py)."""
    return list(_ENV_CREATORS.values())


def share_registered_envs_with_ray() -> None:
    """Copy every register_env() name into Ray Tune's registry, where Ray's workers find it (before making actors,
    and when Tune is imported)."""
    if _ENV_CREATORS:
        from relayrl.tune.env_names import register_with_tune

        register_with_tune(_ENV_CREATORS)


def registered_env_creator(name: str) -> Optional[Callable]:
    """The creator registered under `name` (relayrl's register_env, then Ray Tune's), or None."""
    if name in _ENV_CREATORS:
        return _ENV_CREATORS[name]
    from relayrl.tune.env_names import creator_from_tune, uses_ray

    return creator_from_tune(name) if uses_ray() else None


def _accepts_positional_arg(cls) -> bool:
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return True
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params)


def is_registered_env(name: str) -> bool:
    """Whether `name` is a register_env() name or a gymnasium id (making it imports nothing it names)."""
    return name in gym.registry or registered_env_creator(name) is not None


def resolve_env_spec(env_spec, import_name: ImportObject = import_object):
    """`env_spec` with a "module:Class" / "module.Class" path replaced by the object (through `import_name`)."""
    if isinstance(env_spec, str) and not is_registered_env(env_spec) and (":" in env_spec or "." in env_spec):
        return import_name(module_and_name(env_spec), what=f"the env {env_spec!r}")
    return env_spec


class EnvDependencyMissing(ValueError):
    """A gymnasium id whose extra is not installed (Box2D, MuJoCo, ...): one line naming the pip command."""


# gymnasium's own hint builds box2d-py from source (swig and a C++ compiler); Box2D's wheel needs neither.
BOX2D_HINT = ' (or, without swig and a compiler: pip install "relayrl[box2d]", the prebuilt Box2D wheel)'


def make_gym_env(env_id: str, kwargs: dict) -> gym.Env:
    """`gym.make(env_id, **kwargs)`, a missing extra reported as EnvDependencyMissing (gymnasium's own hint kept)."""
    try:
        return gym.make(env_id, **kwargs)
    except gym.error.DependencyNotInstalled as err:
        hint = BOX2D_HINT if "box2d" in str(err).lower() else ""
        raise EnvDependencyMissing(f"The env {env_id!r} needs a package that is not installed: {err}{hint}") from None


def make_env_creator(env_spec) -> Callable[[EnvContext], gym.Env]:
    """Return a function EnvContext -> gym.Env for `env_spec`; unknown ids fail here, with a hint."""
    env_spec = resolve_env_spec(env_spec)
    if isinstance(env_spec, str):
        creator = registered_env_creator(env_spec)
        if creator is not None:
            return creator
        if env_spec.startswith("ALE/"):  # ale-py's games, with the standard preprocessing (env/wrappers/atari_wrappers.py)
            from relayrl.env.wrappers.atari_wrappers import make_atari_env, register_atari_envs

            register_atari_envs()
            return lambda ctx: make_atari_env(env_spec, dict(ctx))
        if env_spec in gym.registry:
            return lambda ctx: make_gym_env(env_spec, dict(ctx))
        known = list(_ENV_CREATORS) + list(gym.registry)
        raise ValueError(
            f"Unknown env `{env_spec}`.{did_you_mean(env_spec, known)} Use a gymnasium id (e.g. 'CartPole-v1'), "
            "a name registered with relayrl.register_env(name, creator) or ray.tune.registry.register_env(name, "
            "creator), an env class or a creator function."
        )
    if isinstance(env_spec, type):
        check_env_class(env_spec)
        if _accepts_positional_arg(env_spec):
            return lambda ctx: env_spec(ctx)
        return lambda ctx: env_spec()
    if callable(env_spec):
        return env_spec
    raise TypeError(f"config.env must be a str, a gymnasium Env class or a callable, got {env_spec!r}.")

