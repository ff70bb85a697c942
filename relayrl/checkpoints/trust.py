"""What a name stored in a checkpoint may stand for: loading a checkpoint runs no code from it.

A checkpoint is data. Where it names code ("pkg.module:Class" for a config class, an env, a callbacks
class, ...), the name resolves only to

- a class on relayrl's list (nameable.py: its extension classes and side-effect-free example envs), and only
  where a class of its kind may stand (an env where the config holds an env, ...); the modules of that list
  are the only ones ever imported to look a name up; or
- what the caller passes or registered in this process: `trusted=[MyEnv, my_env_creator, "my_project"]`
  (objects, or modules / module names whose contents may be imported by name), the class it loads with
  (`MyAlgo.from_checkpoint`) and the config it gives, and env creators registered with `register_env`.

Anything else (relayrl.testing, relayrl.__main__, `subprocess:Popen`, a function, a module not on the list)
raises a CheckpointError that names it and the fix, as does any exception (SystemExit included) raised while
looking a name up. See docs/checkpoints.md, "What a checkpoint can do".
"""
import importlib
import inspect
import re
import sys
from typing import Any, Dict, FrozenSet, Iterable, Iterator, Optional, Union

from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.nameable import ENV_MODULES, is_declared

_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
# The class attribute that marks relayrl's base classes (and so their subclasses) with their kind ("env",
# "callbacks", ...): where a config holds a callbacks class, a checkpoint may name only a class of that kind.
KIND_ATTRIBUTE = "_checkpoint_kind"
_CLI = "relayrl.__main__"  # the command line: importing it would run it
# The rules a name may resolve by (Trust._rules), in the order they are tried.
_OBJECT, _GIVEN, _SCRIPT_MODULE, _ENV_CREATOR, _TRUSTED_MODULE, _DECLARED = (
    "an object passed", "a script's class passed", "a trusted script", "a registered env creator",
    "a trusted module", "relayrl's list")


def checkpoint_kind(obj: Any) -> Optional[str]:
    """What kind of class `obj` is ("env", "callbacks", ...), or None if it is of no kind a config names."""
    if not isinstance(obj, type):
        return None
    kind = inspect.getattr_static(obj, KIND_ATTRIBUTE, None)
    if isinstance(kind, str):
        return kind
    gym = sys.modules.get("gymnasium")
    if gym is not None and issubclass(obj, gym.Env):
        return "env"
    return None


def split_name(name: Any) -> tuple:
    """("pkg.module", "Qual.name") from "pkg.module:Qual.name"; a CheckpointError for anything else."""
    module_name, sep, qualname = str(name).partition(":") if isinstance(name, str) else ("", "", "")
    if not sep or not _DOTTED.match(module_name) or not _DOTTED.match(qualname):
        raise CheckpointError(f"{name!r} is not a 'module:qualname' reference: the checkpoint is corrupt.")
    return module_name, qualname


def _name_of(obj: Any) -> Optional[str]:
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{module}:{qualname}" if isinstance(module, str) and isinstance(qualname, str) else None


class Trust:
    """The caller's allow-list plus relayrl's list; `resolve(name, what=...)` gives the object or raises.

    `also`: further objects the caller passed (the class it loads with, its config's algorithm class).
    `called_on`: the Algorithm subclass `from_checkpoint` was called on: it also stands for the saving script's
    `__main__:Name` of that name (the restoring script imported it from the saving one).
    `for_kinds(kinds)`: the same trust where only relayrl classes of those kinds may be named.
    """

    def __init__(self, trusted: Optional[Iterable[Union[str, Any]]] = None, *, also: Iterable[Any] = (),
                 called_on: Optional[type] = None):
        if isinstance(trusted, Trust):
            self._objects, self._modules = dict(trusted._objects), list(trusted._modules)
            self._given = dict(trusted._given)
        else:
            if isinstance(trusted, str) or (trusted is not None and not isinstance(trusted, Iterable)):
                trusted = [trusted]
            self._objects: Dict[str, Any] = {}
            self._modules = []
            self._given: Dict[str, Any] = {}  # the objects of `trusted` itself by qualname (not `also`'s)
            for item in trusted or ():
                if inspect.ismodule(item):  # trusted=[my_envs]: as trusted=["my_envs"], and its classes by name
                    self._modules.append(item.__name__)
                    for value in vars(item).values():
                        if getattr(value, "__module__", None) == item.__name__ and isinstance(
                                getattr(value, "__qualname__", None), str):
                            self._given.setdefault(value.__qualname__, []).append(value)
                elif isinstance(item, str):
                    if not _DOTTED.match(item):
                        raise ValueError(f"trusted=[{item!r}]: a module name such as 'my_project.envs' was expected.")
                    self._modules.append(item)
                else:
                    self._add(item)
                    if isinstance(getattr(item, "__qualname__", None), str):
                        self._given.setdefault(item.__qualname__, []).append(item)
        for item in also:
            if item is not None:
                self._add(item)
        if called_on is not None:  # `MyAlgo.from_checkpoint(path)` names MyAlgo, as trusted=[MyAlgo] does
            self._add(called_on)
            if all(called_on is not other for other in self._given.get(called_on.__qualname__, ())):
                self._given.setdefault(called_on.__qualname__, []).append(called_on)
        self._kinds: Optional[FrozenSet[str]] = None  # None: relayrl classes of any kind

    def _add(self, obj: Any) -> None:
        name = _name_of(obj)
        if name is not None:
            self._objects[name] = obj

    def for_kinds(self, kinds: Iterable[str]) -> "Trust":
        view = Trust(self)
        view._kinds = frozenset(kinds)
        return view

    def trusts_module(self, module_name: str) -> bool:
        return any(module_name == m or module_name.startswith(m + ".") for m in self._modules)

    def allows_env_module(self, module_name: str) -> bool:
        """Whether a checkpoint's gymnasium "module:EnvId" env string may import `module_name` (decided on the name
        alone): one this process imported already (importing it again runs nothing), one on relayrl's list
        (nameable.ENV_MODULES) or one the caller trusts (`trusted=["my_envs"]`)."""
        return module_name in sys.modules or bool(_DOTTED.match(module_name)) and (
            module_name in ENV_MODULES or self.trusts_module(module_name))

    def import_env_module(self, module_name: str, *, what: str):
        """The module a checkpoint's gymnasium "module:EnvId" env string names (importing it registers EnvId), if
        `allows_env_module`; anything else is refused."""
        if module_name in sys.modules:
            return sys.modules[module_name]
        if self.allows_env_module(module_name):
            return importlib.import_module(module_name)
        raise CheckpointError(env_module_refusal(module_name, what))

    def resolve(self, name: str, *, what: str) -> Any:
        """The object `name` ("module:qualname") stands for; `what` says where the checkpoint names it."""
        try:
            return self._resolve(name, what)
        except (CheckpointError, KeyboardInterrupt):
            raise
        except BaseException as error:  # (SystemExit too: a lookup never ends the loading process)
            raise CheckpointError(f"{what}: looking up `{name}` failed ({type(error).__name__}: {error}); "
                                  "nothing from the checkpoint was loaded.") from None

    def refuses(self, name: Any) -> bool:
        """Whether `resolve(name)` refuses `name` as neither relayrl's nor the caller's (the message of
        `refusal`), decided on the name alone: nothing is imported. False for a name refused for another reason
        (not a "module:qualname" name, one in relayrl.__main__, a relayrl class of the wrong kind: each keeps its
        own error) and for a script's `__main__:Name` while the caller trusts modules (only importing them tells
        whether one defines it)."""
        try:
            module_name, qualname = split_name(name)
        except CheckpointError:
            return False
        return not _is_cli(module_name) and next(self._rules(name, module_name, qualname), None) is None

    def _rules(self, name: str, module_name: str, qualname: str) -> Iterator[str]:
        """The rules that may resolve `name`, in the order `_resolve` tries them, chosen by the name alone
        (nothing is imported): none for a name that is neither relayrl's nor the caller's. `refuses` and
        `_resolve` both go by it, so the names a check reports are those a load refuses."""
        if name in self._objects:
            yield _OBJECT
        if module_name == "__main__" and len(self._given.get(qualname, ())) == 1:
            # Saved by a script (its `__main__`), restored by another that imported the class from that script
            # and passed it in `trusted` (as the refusal says to): the caller named this very class.
            yield _GIVEN
        if module_name == "__main__" and self._modules:
            yield _SCRIPT_MODULE  # the script itself may be trusted by name (trusted=["train"], --trust train)
        if (self._kinds is None or "env" in self._kinds) and name in _registered_env_creators():
            yield _ENV_CREATOR
        if self.trusts_module(module_name):
            yield _TRUSTED_MODULE
        if is_declared(module_name, qualname):
            yield _DECLARED

    def _resolve(self, name: str, what: str) -> Any:
        module_name, qualname = split_name(name)
        if _is_cli(module_name):
            raise CheckpointError(f"{what} names `{name}`, in relayrl's command line (relayrl.__main__), which a "
                                  "checkpoint never names: the checkpoint was changed by hand or is corrupt.")
        for rule in self._rules(name, module_name, qualname):
            if rule == _OBJECT:
                return self._objects[name]
            if rule == _GIVEN:
                return self._given[qualname][0]
            if rule == _SCRIPT_MODULE:
                found = [obj for obj in (_defined_in(m, qualname) for m in self._modules) if obj is not None]
                if len(found) == 1:
                    return found[0]
            elif rule == _ENV_CREATOR:
                return _registered_env_creators()[name]
            elif rule == _TRUSTED_MODULE:
                return _import(module_name, qualname, name, what)
            elif rule == _DECLARED:
                obj = getattr(importlib.import_module(module_name), qualname)
                kind = checkpoint_kind(obj)
                if self._kinds is not None and kind not in self._kinds:
                    allowed = " or ".join(sorted(self._kinds)) + " classes" if self._kinds else "no relayrl class"
                    raise CheckpointError(f"{what} names `{name}`, a relayrl {kind} class; here a checkpoint may "
                                          f"name {allowed}: the checkpoint was changed by hand or is corrupt.")
                return obj
        raise CheckpointError(refusal(name, what))


def _is_cli(module_name: str) -> bool:
    return module_name == _CLI or module_name.startswith(_CLI + ".")


def env_module_refusal(module_name: str, what: str) -> str:
    """Why the env module `module_name` (which `Trust.allows_env_module` does not allow) is refused, and the fix."""
    return (f"{what} names the env module `{module_name}`, which this process has not imported and which is not on "
            "relayrl's list of env modules a checkpoint may import (relayrl/checkpoints/nameable.py's ENV_MODULES), "
            "so nothing is imported. If you trust it, import it before loading or pass "
            f"from_checkpoint(path, trusted=['{module_name}']).")


def refusal(name: str, what: str) -> str:
    """Why `name` (which `Trust.refuses`), named by the checkpoint at `what`, is refused, and the fix."""
    module_name, qualname = split_name(name)
    short = qualname.rsplit(".", 1)[-1]
    if module_name == "relayrl.testing" or module_name.startswith("relayrl.testing."):
        why = ("relayrl.testing holds test helpers (some create files or end the process), which a checkpoint never "
               "names")
    elif module_name == "__main__":
        why = "`__main__` is the script that wrote it (the checkpoint, or the server's config), not one to import"
    else:
        why = "it is not on relayrl's list of classes a checkpoint may name (relayrl/checkpoints/nameable.py)"
    # ('__main__' names the loading script, not the saving one: only the object itself helps there.)
    by_module = "" if module_name == "__main__" else f" (or trusted=['{module_name}'])"
    return (f"{what} names `{name}`: {why}, so nothing is imported or called for it. If you wrote it or trust it, "
            f"pass it: from_checkpoint(path, trusted=[{short}]){by_module}, or give the value "
            "again with config_overrides (env=... for the env).")


def _defined_in(module_name: str, qualname: str) -> Any:
    """The top-level class or function `qualname` that trusted module `module_name` defines itself, else None."""
    try:
        obj = importlib.import_module(module_name)
    except ImportError:
        return None
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj if getattr(obj, "__module__", None) == module_name else None


def _registered_env_creators() -> Dict[str, Any]:
    """{"module:qualname": creator} of the envs registered with relayrl.register_env in this process."""
    registry = sys.modules.get("relayrl.env.registry")
    if registry is None:
        return {}
    return {name: creator for creator in registry.registered_env_creators()
            if (name := _name_of(creator)) is not None}


def _import(module_name: str, qualname: str, name: str, what: str) -> Any:
    try:
        obj = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as error:
        raise CheckpointError(f"{what}: cannot import `{name}` ({error}).") from None
    return obj
