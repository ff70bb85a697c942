"""An AlgorithmConfig as JSON data in a checkpoint, and `Algorithm.from_checkpoint`.

Options that are classes or functions are stored by "module:qualname"; lambdas and closures are
marked unstorable (saving still works; from_checkpoint asks for them). Loading resolves every
name through a `Trust` (relayrl/checkpoints/trust.py): a name stands only for a relayrl class of the
kind its option holds (`OPTION_KINDS`) or for what the caller trusts, and string paths inside options
(env="pkg.mod:MyEnv", exploration and replay buffer types) are resolved the same way before anything
is built.
"""
import dataclasses
import os
from typing import Any, Dict, Optional

from relayrl.checkpoints import by_name
from relayrl.checkpoints.checkpointable import check_class, checked_restore, checkpoint_class, manifest_class_where
from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.format import class_path, read_manifest, read_state
from relayrl.checkpoints.state_checks import Where
from relayrl.checkpoints.trust import Trust
from relayrl.checkpoints.untrusted_names import NameCheck

# The kinds of relayrl class (checkpoints/nameable.py) a stored option may name; the other options name none (a
# class or function there resolves only when the caller trusts it).
OPTION_KINDS = {
    "env": ("env",),
    "callbacks_class": ("callbacks",),
    "env_to_module_connector": ("connector",),
    "module_to_env_connector": ("connector",),
    "learner_connector": ("connector",),
    "exploration_config": ("exploration",),
    "replay_buffer_config": ("replay buffer",),
    "learner_class": ("learner",),
    "env_runner_cls": ("env runner",),
    "model_config": ("model config",),
    "rl_module_spec": ("module spec", "RL module", "model config"),
    "policies": ("policy spec", "policy"),
}


# Options that say how one restore goes, not what the run is: a checkpoint of a run restored with one keeps the
# default for the next restore (input_restore_position=False once must not make every later resume start over).
_RESTORE_TIME_OPTIONS = ("input_restore_position",)


def config_to_json(config) -> Dict[str, Any]:
    algo_class = getattr(config, "_algo_class", None)
    return {
        "class": class_path(config),
        "algo_class": by_name.describe(algo_class) if algo_class is not None else None,
        "options": by_name.describe(config.to_dict()),
    }


def config_from_json(data: Any, overrides: Optional[Dict[str, Any]] = None, *, trust: Trust,
                     where: Optional[Where] = None):
    """The config `data` describes, with `overrides` (option key -> value) taking precedence."""
    from relayrl.algorithms.algorithm_config import AlgorithmConfig

    where = where or Where("the stored config")
    if not isinstance(data, dict) or not isinstance(data.get("options"), dict):
        raise CheckpointError(f"{where} is malformed (no `options` table).")
    config_cls = trust.for_kinds(("algorithm config",)).resolve(data.get("class", ""), what=str(where / "class"))
    if not (isinstance(config_cls, type) and issubclass(config_cls, AlgorithmConfig)):
        raise CheckpointError(f"{where}: `class` {data['class']!r} is not an AlgorithmConfig.")
    overrides = dict(overrides or {})
    table = config_cls._option_table
    stored = _stored_options(data["options"], table, config_cls.__name__, overrides, where)
    options = {}
    for key, (option, value) in stored.items():
        options[key] = _rebuild_option(table, option, value, trust, where / "options" / key)
    _require_storable(options)  # every option at once: one error to fix, not one per try
    for key, (option, _) in stored.items():
        options[key] = _resolve_names(table, option, options[key], trust, where / "options" / key)
    _forget_state_paths(options)
    config = config_cls()
    try:
        config.update_from_dict(options)
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"{where}: {error}") from None
    config.mark_given()  # the values the run trained with: no default resolved for a new run replaces them
    if overrides:
        config.update_from_dict(overrides)
    if data.get("algo_class") is not None:
        config.algo_class = by_name.rebuild(data["algo_class"], trust.for_kinds(("algorithm",)), where / "algo_class")
    return config


def _stored_options(stored: Dict[str, Any], table, owner: str, overrides: Dict[str, Any], where: Where, *,
                    strict: bool = True) -> Dict:
    """{key: (option, stored value)} of the options a load looks up: not those given again in `overrides` (an
    overridden option's stored value is never looked up), nor those that say how one restore goes. `strict=False`:
    a key `table` does not know gives (None, value) instead of an error."""
    override_names = {getattr(_option_or_none(table, k, owner, strict), "name", None) for k in overrides}
    options = {}
    for key, value in stored.items():
        try:
            option = _option_or_none(table, key, owner, strict)
        except ValueError as error:  # an unknown key: the checkpoint is not this config class's
            raise CheckpointError(f"{where}: {error}") from None
        if option is None or (option.name not in override_names and option.name not in _RESTORE_TIME_OPTIONS):
            options[key] = (option, value)
    return options


def _option_or_none(table, key: str, owner: str, strict: bool):
    try:
        return table.resolve(key, owner=owner)
    except ValueError:
        if strict:
            raise
        return None


def refused_names_in_config(data: Any, overrides: Optional[Dict[str, Any]], *, trust: Trust, where: Where,
                            check: NameCheck) -> None:
    """Add to `check` every name in the stored config `data` that `config_from_json` would refuse, each where
    it would report it. Names only: nothing they name is imported (the config class, which the trust allows,
    is looked up for its option table; a refused one leaves the base AlgorithmConfig's). A malformed config adds
    nothing: `config_from_json` reports it."""
    from relayrl.algorithms.algorithm_config import AlgorithmConfig

    if not isinstance(data, dict) or not isinstance(data.get("options"), dict):
        return
    class_trust = trust.for_kinds(("algorithm config",))
    check.name(data.get("class", ""), class_trust, str(where / "class"))
    config_cls = AlgorithmConfig
    if not class_trust.refuses(data.get("class", "")):
        try:
            config_cls = class_trust.resolve(data.get("class", ""), what=str(where / "class"))
        except CheckpointError:
            return  # (refused for another reason: the load says why)
        if not (isinstance(config_cls, type) and issubclass(config_cls, AlgorithmConfig)):
            return
    table = config_cls._option_table
    try:
        stored = _stored_options(data["options"], table, config_cls.__name__, dict(overrides or {}), where,
                                 strict=config_cls is not AlgorithmConfig)
    except (CheckpointError, ValueError):
        return
    for key, (option, value) in stored.items():
        if option is None:  # a subclass's option, its class refused: its `__import__` names all the same
            check.described(value, trust.for_kinds(()), where / "options" / key)
        else:
            _option_names(table, option, value, trust, where / "options" / key, check)
    if data.get("algo_class") is not None:
        check.described(data["algo_class"], trust.for_kinds(("algorithm",)), where / "algo_class")


def _option_names(table, option, value: Any, trust: Trust, where: Where, check: NameCheck) -> None:
    """The refused names in one stored option: its `__import__` ones and the string paths it declares."""
    if option.name == "evaluation_config" and isinstance(value, dict):  # option overrides: each with its kinds
        for key, item in value.items():
            try:
                inner = table.resolve(key, owner="evaluation_config")
            except ValueError:
                continue  # (the load reports it)
            _option_names(table, inner, item, trust, where / key, check)
        return
    trust = trust.for_kinds(OPTION_KINDS.get(option.name, ()))
    check.described(value, trust, where)
    if option.resolve_names is not None:
        try:
            option.resolve_names(value, _NamesFound(trust, where, check))
        except Exception:  # noqa: BLE001 -- (_Named, or a malformed value that the load reports with its error)
            pass


class _Named(Exception):
    """Ends an option's `resolve_names` at the name it would look up: the check only notes it."""


class _NamesFound:
    """`_NamesThrough` for the check: notes the name (or env module) that would be looked up, looks up nothing."""

    def __init__(self, trust: Trust, where: Where, check: NameCheck):
        self.trust, self.where, self.check = trust, where, check

    def __call__(self, path: str, what: str) -> Any:
        self.check.name(path, self.trust, f"{self.where} ({what})")
        raise _Named

    def import_env_module(self, module_name: str):
        self.check.env_module(module_name, self.trust, str(self.where))
        raise _Named


def _option_of(table, key: str, where: Where):
    try:
        return table.resolve(key, owner="evaluation_config")
    except ValueError as error:
        raise CheckpointError(f"{where}: {error}") from None


def _rebuild_option(table, option, value: Any, trust: Trust, where: Where) -> Any:
    """`by_name.rebuild` of one option's stored value, its names resolving to relayrl classes of its kinds only."""
    if option.name == "evaluation_config" and isinstance(value, dict):  # option overrides: each with its kinds
        return {k: _rebuild_option(table, _option_of(table, k, where / k), v, trust, where / k)
                for k, v in value.items()}
    return by_name.rebuild(value, trust.for_kinds(OPTION_KINDS.get(option.name, ())), where)


def _require_storable(options: dict) -> None:
    """Raise naming every option whose value could not be stored (a lambda, a closure, a local class)."""
    reasons = []
    for key, value in options.items():
        missing = by_name.find_unstorable(value)
        if missing:
            where, marker = missing[0]
            where = f"{key}{'.' + where if where and not where.startswith('[') else where}"
            reasons.append((key, f"`{where}` is {marker.description}"))
    if not reasons:
        return
    keys = [key for key, _ in reasons]
    names = ", ".join(f"`{key}`" for key in keys)
    example = ", ".join(f"'{key}': ..." for key in keys)
    raise CheckpointError(
        f"The config option{'s' if len(keys) > 1 else ''} {names} could not be stored in the checkpoint "
        f"({'; '.join(reason for _, reason in reasons)}). Pass {'them' if len(keys) > 1 else 'it'} again: "
        f"Algorithm.from_checkpoint(path, config_overrides={{{example}}}), or use a module-level function / class "
        "(or register_env(name, creator) for envs) so it is stored by name.")


def _resolve_names(table, option, value: Any, trust: Trust, where: Where) -> Any:
    """`value` with the string paths its option declares (`Option.resolve_names`) resolved through `trust`."""
    if option.name == "evaluation_config" and isinstance(value, dict):  # option overrides: resolve each
        return {k: _resolve_names(table, _option_of(table, k, where / k), v, trust, where / k)
                for k, v in value.items()}
    if option.resolve_names is None:
        return value
    trust = trust.for_kinds(OPTION_KINDS.get(option.name, ()))
    try:
        resolved = option.resolve_names(value, _NamesThrough(trust, where))
    except CheckpointError:
        raise
    except (ValueError, TypeError) as error:
        raise CheckpointError(f"{where}: {error}") from None
    if option.name == "env":
        _require_resolvable_env(resolved, where)
    return resolved


class _NamesThrough:
    """What an option's `resolve_names` looks names up with: `names(path, what)` gives the object a
    "module:qualname" path stands for, `names.import_env_module(module)` the module of a "module:EnvId" env
    string; both through the checkpoint's Trust."""

    def __init__(self, trust: Trust, where: Where):
        self.trust, self.where = trust, where

    def __call__(self, path: str, what: str) -> Any:
        return self.trust.resolve(path, what=f"{self.where} ({what})")

    def import_env_module(self, module_name: str):
        return self.trust.import_env_module(module_name, what=str(self.where))


def _require_resolvable_env(env: Any, where: Where) -> None:
    from relayrl.env.registry import gym_env_id, is_registered_env
    from relayrl.env.wrappers.atari_wrappers import is_atari_id, register_atari_envs

    if isinstance(env, str) and is_atari_id(gym_env_id(env)) and not is_registered_env(env):
        try:  # ale-py registers its ids only when asked, as building the env does: a new process has none yet
            register_atari_envs()
        except ValueError as error:  # ale-py is not installed
            raise CheckpointError(f"{where}: {error}") from None
    if isinstance(env, str) and not is_registered_env(env):
        raise CheckpointError(
            f"{where}: the env {env!r} is not registered in this process. Register it first "
            f"(relayrl.register_env({env!r}, creator)) or pass it: Algorithm.from_checkpoint(path, env=...).")


def _forget_state_paths(value: Any) -> None:
    """Module specs' `load_state_path`: the checkpoint's own weights replace them (and no file outside the
    checkpoint is read)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if getattr(value, "load_state_path", None) is not None:
            value.load_state_path = None
        for field in dataclasses.fields(value):
            _forget_state_paths(getattr(value, field.name))
    elif isinstance(value, dict):
        for item in value.values():
            _forget_state_paths(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _forget_state_paths(item)


def _with_saved_buffer_type(config, state: Dict[str, Any]):
    """A stored `replay_buffer_config` without a type meant the default type of the version that saved it (SAC's
    was prioritized until 2026-11-29): build the type the checkpoint's buffer state names, so that it loads."""
    buffer_config = getattr(config, "replay_buffer_config", None)
    buffer_state = state.get("replay_buffer")
    saved_type = buffer_state.get("type") if isinstance(buffer_state, dict) else None
    if not isinstance(buffer_config, dict) or "type" in buffer_config or not isinstance(saved_type, str):
        return config
    return config.training(replay_buffer_config={**buffer_config, "type": saved_type})


def algorithm_from_checkpoint(cls, path, *, config=None, config_overrides: Optional[Dict[str, Any]] = None,
                              env=None, trusted=None):
    """Build the checkpoint's Algorithm class with its stored config (or `config`), then restore its state."""
    from relayrl.algorithms.algorithm import Algorithm

    path = os.fspath(path)
    manifest = read_manifest(path)
    # The classes the caller passes are trusted: the one it loads with and its config's algorithm class.
    # `MyAlgo.from_checkpoint(path)` names the user's MyAlgo (not relayrl's own classes: a script's `class PPO(PPO)`
    # saved as `__main__:PPO` is not relayrl's PPO).
    own_class = issubclass(cls, Algorithm) and cls.__module__.partition(".")[0] != "relayrl"
    trust = Trust(trusted, also=[cls, getattr(config, "algo_class", None)], called_on=cls if own_class else None)
    state = read_state(path, manifest)
    overrides = dict(config_overrides or {})
    if env is not None:
        overrides["env"] = env
    # Every name this trust refuses, in one error, before any is looked up (a new process would otherwise meet
    # them one at a time: the env class, then the mapping function, ...).
    check = NameCheck()
    check.name(manifest.get("class", ""), trust, manifest_class_where(path))
    if config is None:
        refused_names_in_config(state.get("config"), overrides, trust=trust,
                                where=Where.checkpoint(path) / "config", check=check)
    check.raise_if_any(path)
    algo_cls = checkpoint_class(manifest, cls if issubclass(cls, Algorithm) else Algorithm, path, trust)
    if config is None:
        if "config" not in state:
            raise CheckpointError(f"{path} holds no config: pass Algorithm.from_checkpoint(path, config=...).")
        config = config_from_json(state["config"], overrides, trust=trust, where=Where.checkpoint(path) / "config")
        config = _with_saved_buffer_type(config, state)
    elif overrides:
        config = config.copy(copy_frozen=False).update_from_dict(overrides)
    algo = algo_cls(config=config)
    try:
        check_class(manifest, algo, path)
        checked_restore(algo, state, Where.checkpoint(path))
    except BaseException:
        algo.stop()  # its envs and actors; the caller gets no half-restored algorithm
        raise
    return algo
