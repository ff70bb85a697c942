"""What a name stored in a checkpoint may stand for: loading a checkpoint runs no code from it.

A checkpoint is data. Where it names code ("pkg.module:Class" for a config class, an env, a callbacks
class, ...), the name is looked up, never imported at will. It resolves to:

- relayrl's own classes of a kind a config may name (algorithms and their configs, callbacks, connector
  pieces, RL modules and their specs, learners, exploration, replay buffers), and
- classes of those kinds, or gymnasium Env subclasses, defined in modules this process has already
  imported (nothing is imported, so no module code runs), and
- whatever the caller trusts: `trusted=[MyEnv, my_env_creator, "my_project"]` (objects, or module
  names whose contents may be imported by name).

Anything else (a function, `subprocess:Popen`, a class of another kind, a module not yet imported)
raises a CheckpointError that names it and the fix. See docs/checkpoints.md, "What a checkpoint can do".
"""
import importlib
import inspect
import re
import sys
from typing import Any, Iterable, Optional, Union

from relayrl.checkpoints.errors import CheckpointError

_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
# The class attribute that marks relayrl's base classes (and so every subclass) as nameable in a
# checkpoint; its value says what kind of thing the class is, for error messages.
KIND_ATTRIBUTE = "_checkpoint_kind"


def checkpoint_kind(obj: Any) -> Optional[str]:
    """What kind of nameable class `obj` is ("env", "callbacks", ...), or None if a checkpoint may not name it."""
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


class Trust:
    """The caller's allow-list plus the rules above; `resolve(name)` gives the object or raises."""

    def __init__(self, trusted: Optional[Iterable[Union[str, Any]]] = None):
        if isinstance(trusted, Trust):
            self._objects, self._modules = trusted._objects, trusted._modules
            return
        if isinstance(trusted, str) or (trusted is not None and not isinstance(trusted, Iterable)):
            trusted = [trusted]
        self._objects, self._modules = [], []
        for item in trusted or ():
            if isinstance(item, str):
                if not _DOTTED.match(item):
                    raise ValueError(f"trusted=[{item!r}]: a module name such as 'my_project.envs' was expected.")
                self._modules.append(item)
            else:
                self._objects.append(item)

    def trusts_module(self, module_name: str) -> bool:
        return any(module_name == m or module_name.startswith(m + ".") for m in self._modules)

    def trusts_object(self, obj: Any) -> bool:
        return any(obj is o for o in self._objects)

    def resolve(self, name: str, *, what: str, subclass_of: Optional[type] = None) -> Any:
        """The object `name` ("module:qualname") stands for; `what` says where the checkpoint names it.

        `subclass_of`: also accept subclasses of this class (the one the caller loads the checkpoint with).
        """
        module_name, qualname = split_name(name)
        if self.trusts_module(module_name):
            return _import(module_name, qualname, name, what)
        obj = _lookup_without_importing(module_name, qualname, name, what)
        if self.trusts_object(obj) or checkpoint_kind(obj) is not None:
            return obj
        if subclass_of is not None and isinstance(obj, type) and issubclass(obj, subclass_of):
            return obj
        kind = ("a function" if inspect.isroutine(obj) else
                "a class of no kind a config may name" if isinstance(obj, type) else f"a {type(obj).__name__}")
        raise CheckpointError(
            f"{what} names `{name}`, {kind}: a checkpoint may name only env classes, relayrl's extension classes "
            "(callbacks, connectors, modules, learners, ...) and what you trust. If you wrote it, pass "
            f"trusted=[{qualname.rsplit('.', 1)[-1]}] (or trusted=['{module_name}']) to from_checkpoint(), or give "
            "the value again with config_overrides.")


def _import(module_name: str, qualname: str, name: str, what: str) -> Any:
    try:
        obj = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as error:
        raise CheckpointError(f"{what}: cannot import `{name}` ({error}).") from None
    return obj


def _lookup_without_importing(module_name: str, qualname: str, name: str, what: str) -> Any:
    """The named object from an already-imported module (relayrl's own modules are imported as needed)."""
    if module_name == "relayrl" or module_name.startswith("relayrl."):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            module = None
    else:
        module = sys.modules.get(module_name)
    if module is None:
        hint = (" `__main__` was the script that saved the checkpoint; move the definition into a module."
                if module_name == "__main__" else "")
        raise CheckpointError(
            f"{what} names `{name}`, from the module `{module_name}`, which this process has not imported: loading "
            f"a checkpoint never imports the modules it names. Import `{module_name}` before loading, or pass "
            f"trusted=['{module_name}'] to from_checkpoint().{hint}")
    obj = module
    for part in qualname.split("."):
        try:  # getattr_static: no properties, module __getattr__ hooks or descriptors run
            obj = inspect.getattr_static(obj, part)
        except AttributeError:
            raise CheckpointError(f"{what} names `{name}`, but `{module_name}` has no `{qualname}`.") from None
    return obj
