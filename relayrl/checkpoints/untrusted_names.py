"""Every name in a checkpoint that this process may not load, found before anything is looked up, in one error.

Resuming a script's run in a new process (`Algorithm.from_checkpoint(path)` without `trusted=`) would otherwise
meet the refusals one at a time: the env class, then (once trusted) the mapping function, then a connector.
`NameCheck` collects the names a load would refuse, each with where the checkpoint names it, and
`raise_if_any` raises one `UntrustedNames` error with the fix for all of them at once (`trusted=[...]`
listing their modules; `--trust MODULE ...` on the command line).

Only names are read: whether one is refused is `Trust.refuses` / `Trust.allows_env_module`, the rules loading
itself goes by (trust.py), so nothing is imported to find them. A name refused for another reason (a relayrl class
of the wrong kind, relayrl.__main__, a corrupt name) is not collected: the load reports it with its own error.
"""
from typing import Any, Dict, List, Tuple

from relayrl.checkpoints.by_name import DATACLASS, IMPORT, ITEMS, SPACE, TUPLE
from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.state_checks import Where
from relayrl.checkpoints.trust import Trust, env_module_refusal, refusal, split_name

_ENV_MODULE = "env module"
_NAME = "name"
# What stands for the saving script's module name in the fix (`__main__` names that script, not this one).
_SCRIPT = "train"


class UntrustedNames(CheckpointError):
    """A checkpoint names classes, functions or env modules this process may not load (none is relayrl's or
    trusted by the caller); nothing was imported or loaded. `modules`: the modules to trust, in the order found
    (`"__main__"` for the saving script's own definitions)."""

    def __init__(self, message: str, modules: List[str]):
        super().__init__(message)
        self.modules = modules

    def for_the_command_line(self) -> str:
        """The message with the command line's fix: `--trust MODULE ...`."""
        modules = [m for m in dict.fromkeys(self.modules) if m != "__main__"]
        if "__main__" not in self.modules:
            return (f"{self} From the command line: --trust {' '.join(modules)} (importable here, e.g. through "
                    "PYTHONPATH).")
        given = " ".join(modules + [_SCRIPT])
        also = f"--trust {' '.join(modules)} and " if modules else ""
        return (f"{self} From the command line: {also}--trust that script's module name for its `__main__` (train.py "
                f"saved it: --trust {given}), importable here, e.g. through PYTHONPATH.")


class NameCheck:
    """The refused names a checkpoint holds, each with the places it is named, in the order a load meets them."""

    def __init__(self):
        self._places: Dict[Tuple[str, str], List[str]] = {}  # (kind, name or module) -> where the checkpoint names it

    def name(self, name: Any, trust: Trust, what: str) -> None:
        """`name` ("module:qualname"), named at `what`, if the trust refuses it."""
        if trust.refuses(name):
            self._places.setdefault((_NAME, name), []).append(what)

    def env_module(self, module_name: str, trust: Trust, what: str) -> None:
        """The module of a gymnasium "module:EnvId" env string, named at `what`, if the trust does not allow it."""
        if not trust.allows_env_module(module_name):
            self._places.setdefault((_ENV_MODULE, module_name), []).append(what)

    def described(self, data: Any, trust: Trust, where: Where) -> None:
        """The names in a `by_name.describe` description, at the places `by_name.rebuild` reports them."""
        if isinstance(data, list):
            for i, value in enumerate(data):
                self.described(value, trust, where / i)
        elif isinstance(data, dict):
            if IMPORT in data:
                self.name(data[IMPORT], trust, str(where))
            elif DATACLASS in data:
                self.name(data[DATACLASS], trust, str(where))
                if isinstance(data.get("fields"), dict):
                    self.described(data["fields"], trust, where)
            elif TUPLE in data:
                self.described(data[TUPLE], trust, where)
            elif ITEMS in data:
                for pair in data[ITEMS] if isinstance(data[ITEMS], list) else ():
                    if isinstance(pair, list) and len(pair) == 2:
                        self.described(pair[0], trust, where)
                        self.described(pair[1], trust, where / pair[0])
            elif SPACE not in data:  # (a space's description names nothing)
                for key, value in data.items():
                    self.described(value, trust, where / key)

    def raise_if_any(self, root: Any) -> None:
        """One error naming every refused name (for a single one, the message its lookup gives)."""
        if not self._places:
            return
        modules = list(dict.fromkeys(name if kind == _ENV_MODULE else split_name(name)[0]
                                     for kind, name in self._places))
        if len(self._places) == 1:
            [((kind, name), places)] = self._places.items()
            message = env_module_refusal(name, places[0]) if kind == _ENV_MODULE else refusal(name, places[0])
            raise UntrustedNames(message, modules)
        prefix = f"{root}/"
        items = "; ".join(
            f"{'the env module ' if kind == _ENV_MODULE else ''}`{name}` "
            f"({', '.join(place.replace(prefix, '') for place in places)})"
            for (kind, name), places in self._places.items())
        raise UntrustedNames(
            f"{root}: the checkpoint names {len(self._places)} classes, functions or modules that are not on relayrl's "
            f"list of what a checkpoint may name (relayrl/checkpoints/nameable.py) and that the caller does not "
            f"trust: {items}. Nothing was imported, called or loaded. If you wrote them or trust them, trust them all "
            f"at once: {self._fix(modules)}; or give the values again with config_overrides (env=... for the env).",
            modules)

    def _fix(self, modules: List[str]) -> str:
        listed = [_SCRIPT if m == "__main__" else m for m in modules]
        fix = f"from_checkpoint(path, trusted={list(dict.fromkeys(listed))!r})"
        if "__main__" not in modules:
            return fix
        # `__main__:Name` names the script that saved the checkpoint; the loading one trusts it by its module name,
        # or passes the objects it imported from it.
        objects = [split_name(name)[1].rsplit(".", 1)[-1] for kind, name in self._places
                   if kind == _NAME and name.startswith("__main__:")]
        others = [repr(m) for m in dict.fromkeys(listed) if m != _SCRIPT]
        return (f"{fix} with '{_SCRIPT}' standing for the module name of the script that saved the checkpoint "
                f"(its `__main__`; 'train' for train.py, importable here), or pass the objects imported from that "
                f"script: trusted=[{', '.join(objects + others)}]")
