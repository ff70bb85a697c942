"""Turning `config.env` (registered name, gymnasium id, class or creator) into env instances.

Strings resolve as gymnasium resolves them, plus relayrl's own forms: a register_env() name, a gymnasium id
(`ALE/...` ids with the Atari preprocessing), gymnasium's `"module:EnvId"` (the module is imported, e.g.
ale-py's `"ale_py:ALE/Pong-v5"`, then EnvId is made as if given alone), or a `"module:Class"` /
`"module.Class"` path to an env class or creator. The one function that imports a module for an env string
is `import_env_module`, which takes the import hook: importlib for a config built in this process, the
checkpoint's trust model for a config loaded from a checkpoint (relayrl/checkpoints/trust.py).

Names come from `relayrl.register_env` or, as in RLlib, from Ray Tune's `ray.tune.registry.register_env`. Tune's
registry is also how a name reaches Ray's other processes (EnvRunner actors, Tune trials): relayrl copies its own
names there before it makes actors (`share_registered_envs_with_ray`), and looks a name up there when this process
uses Ray (relayrl/tune/env_names.py). Without Ray nothing here imports it.
"""
import importlib
import inspect
import re
import sys
from typing import Callable, Dict, Optional, Tuple

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
    """Whether `name` is a register_env() name or a gymnasium id (making it imports nothing it names); a
    "module:EnvId" string counts once its module was imported (resolve_env_spec)."""
    return gym_env_id(name) in gym.registry or registered_env_creator(name) is not None


_PYTHON_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def split_module_env_id(env_spec) -> Optional[Tuple[str, str]]:
    """("module", "EnvId") for gymnasium's "module:EnvId" form, e.g. ("ale_py", "ALE/Pong-v5"); None for anything
    else. What follows the colon is an env id where it is no Python name ("pkg.mod:MyEnv" stays a path to an
    object: resolve_env_spec imports the object)."""
    if not isinstance(env_spec, str):
        return None
    module_name, sep, env_id = env_spec.partition(":")
    if not sep or not _PYTHON_PATH.match(module_name) or not env_id or _PYTHON_PATH.match(env_id):
        return None
    return module_name, env_id


def gym_env_id(env_spec):
    """The gymnasium id a "module:EnvId" string names ("ale_py:ALE/Pong-v5" -> "ALE/Pong-v5"); other values as
    they are."""
    module_and_id = split_module_env_id(env_spec)
    return env_spec if module_and_id is None else module_and_id[1]


def import_env_module(env_spec: str, import_module: Callable = importlib.import_module) -> str:
    """Import the module of a "module:EnvId" string through `import_module` (importlib, or a checkpoint's trust
    model), so that it registers EnvId with gymnasium, as gym.make("module:EnvId") does; returns EnvId."""
    module_name, env_id = split_module_env_id(env_spec)
    try:
        import_module(module_name)
    except ImportError as error:
        hint = ' (pip install "relayrl[atari]")' if module_name == "ale_py" else ""
        raise ValueError(f"the env {env_spec!r}: cannot import module {module_name!r} ({error}){hint}.") from None
    if module_name == "ale_py":
        from relayrl.env.wrappers.atari_wrappers import register_atari_envs

        register_atari_envs()  # (ale-py registers its ALE ids only when asked)
    if env_id not in gym.registry:
        ids = [i for i in gym.registry if i.split("/")[0] == env_id.split("/")[0]] or list(gym.registry)
        raise ValueError(f"the env {env_spec!r}: importing {module_name!r} registered no gymnasium id {env_id!r}."
                         f"{did_you_mean(env_id, ids)}")
    return env_id


def resolve_env_spec(env_spec, import_name: ImportObject = import_object, import_module: Optional[Callable] = None):
    """`env_spec` with a "module:Class" / "module.Class" path replaced by the object (through `import_name`); a
    gymnasium "module:EnvId" string stays the string, its module imported (import_env_module, through
    `import_module`: importlib by default)."""
    if not isinstance(env_spec, str) or is_registered_env(env_spec) or not (":" in env_spec or "." in env_spec):
        return env_spec
    if split_module_env_id(env_spec) is not None:
        import_env_module(env_spec, import_module or importlib.import_module)
        return env_spec
    return import_name(module_and_name(env_spec), what=f"the env {env_spec!r}")


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
        env_spec = gym_env_id(env_spec)  # "module:EnvId": its module is imported, EnvId registered
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

