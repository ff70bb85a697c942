"""`Checkpointable`: RLlib's checkpoint API (save_to_path, restore_from_path, from_checkpoint) for any
object with get_state/set_state. The files are data only (see format.py); nothing is unpickled.
"""
import pathlib
from typing import Any, Collection, Dict, List, Optional, Tuple, Union

from relayrl.checkpoints import by_name
from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.format import MANIFEST, class_path, read_manifest, read_state, write_checkpoint
from relayrl.checkpoints.save_result import as_path
from relayrl.checkpoints.state_checks import Where, unexpected_error
from relayrl.checkpoints.trust import Trust
from relayrl.checkpoints.untrusted_names import NameCheck

CTOR_KEY = "__ctor__"  # metadata entry: the constructor arguments from get_ctor_args_and_kwargs()
CTOR_KINDS = ("model config",)  # the relayrl classes constructor arguments may name (an RLModule's model_config)


class Checkpointable:
    """Mixin: implement `get_state` / `set_state` (and `get_checkpointable_components` for sub-objects)."""

    def get_state(self, components: Optional[Union[str, Collection[str]]] = None, *,
                  not_components: Optional[Union[str, Collection[str]]] = None, **kwargs) -> Dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement get_state().")

    def set_state(self, state: Dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement set_state().")

    def check_state(self, state: Dict[str, Any], where: Where) -> None:
        """Raise a CheckpointError (naming `where`) if `set_state(state)` would fail or leave this object
        inconsistent; change nothing. Restores run it on every component before setting any state."""

    def get_checkpointable_components(self) -> List[Tuple[str, Any]]:
        """(name, sub-object) pairs whose states are stored in their own sub-folders."""
        return []

    def get_ctor_args_and_kwargs(self) -> Tuple[tuple, Dict[str, Any]]:
        """Constructor arguments that `from_checkpoint` rebuilds the object with."""
        return (), {}

    def get_metadata(self) -> Dict[str, Any]:
        return {}

    # -- writing ------------------------------------------------------------------------------
    def save_to_path(self, path: Optional[Union[str, pathlib.Path]] = None, *, state: Optional[Dict[str, Any]] = None,
                     filesystem=None, use_msgpack: bool = False) -> str:
        """Write a checkpoint directory (a fresh temp directory when `path` is None); return its path."""
        path = None if path is None else as_path(path)
        if filesystem is not None:
            raise ValueError("save_to_path(filesystem=...) is not supported: pass a local path, and copy the "
                             "folder to remote storage afterwards (e.g. with pyarrow.fs or Ray Tune's syncing).")
        state = self.get_state() if state is None else state
        args, kwargs = self.get_ctor_args_and_kwargs()
        metadata = {**self.get_metadata(), CTOR_KEY: by_name.describe({"args": list(args), "kwargs": kwargs})}
        components = [name for name, _ in self.get_checkpointable_components()]
        return write_checkpoint(path, state, cls=type(self), components=components,
                                extra_files=self._checkpoint_extra_files(), metadata=metadata)

    def _checkpoint_extra_files(self) -> Dict[str, Any]:
        """Further files to write into the checkpoint, {relative name: writer(path)} (e.g. TorchScript)."""
        return {}

    # -- reading ------------------------------------------------------------------------------
    def restore_from_path(self, path: Union[str, pathlib.Path], *, component: Optional[str] = None,
                          **kwargs) -> None:
        """Load the state saved at `path` into this object, all or nothing: the manifest is verified and
        every part of the state is checked against this object before any of it is set.

        `component="learner_group"` restores only that part; a nested one (RLlib's
        `"learner_group/learner/rl_module"`) only what is there. A component's path inside a checkpoint
        (e.g. `<ckpt>/learner_group` or RLlib's `<ckpt>/learner_group/learner/rl_module/default_policy`) may also
        be passed as `path`: then this object takes that component's state, or, with `component=` naming where it
        goes in this object (as RLlib's scripts pass it), that part of this object does. Such a part that is an
        RLModule's weights may hold only some of the module's (RLlib's strict=False; the rest keep their values,
        with a warning: relayrl/modules/partial_module_state.py); a whole object's state may not.
        """
        root, sub = _locate(as_path(path))
        manifest = read_manifest(root)
        if sub is not None:
            state, where = read_state(root, manifest, component=sub), Where.checkpoint(root).component(sub)
            if component is not None:  # the state of `sub` goes to this object's `component`
                state = _nested(component, state)
        else:
            if not _names_a_module(component):  # an RLModule's weights move between algorithms (BC -> PPO)
                check_class(manifest, self, root)
            where = Where.checkpoint(root)
            if component is not None:
                state = _nested(component, read_state(root, manifest, component=component))
            else:
                state = read_state(root, manifest)
        from relayrl.modules.partial_module_state import partial_module_states

        # A module's weights loaded by path: RLlib's strict=False.
        with partial_module_states(_names_a_module(component if component is not None else sub)):
            checked_restore(self, state, where)

    @classmethod
    def from_checkpoint(cls, path: Union[str, pathlib.Path], *, trusted=None, **kwargs):
        """A new object built from the checkpoint alone (class and constructor arguments included).

        Names in the checkpoint resolve only to relayrl's list, this class and what `trusted` adds (see
        relayrl/checkpoints/trust.py).
        """
        path = as_path(path)
        manifest = read_manifest(path)
        trust = Trust(trusted, also=[cls])
        stored_ctor = manifest.get("metadata", {}).get(CTOR_KEY, {"args": [], "kwargs": {}})
        ctor_where = Where(str(pathlib.Path(path) / MANIFEST), "metadata.__ctor__")
        check = NameCheck()  # every name the trust refuses, in one error, before any is looked up
        check.name(manifest.get("class", ""), trust, manifest_class_where(path))
        check.described(stored_ctor, trust.for_kinds(CTOR_KINDS), ctor_where)
        check.raise_if_any(path)
        klass = checkpoint_class(manifest, cls, path, trust)
        ctor = by_name.rebuild(stored_ctor, trust.for_kinds(CTOR_KINDS), ctor_where)
        if not isinstance(ctor, dict) or not isinstance(ctor.get("args"), list) or not isinstance(
                ctor.get("kwargs"), dict):
            raise CheckpointError(f"{pathlib.Path(path) / MANIFEST}: malformed constructor arguments.")
        unstorable = by_name.find_unstorable(ctor)
        if unstorable:
            where, value = unstorable[0]
            raise CheckpointError(f"{path}: the constructor argument `{where}` was not stored ({value.description}); "
                                  f"build a {klass.__name__} yourself and call restore_from_path() on it.")
        obj = klass(*ctor["args"], **{**ctor["kwargs"], **kwargs})
        checked_restore(obj, read_state(path, manifest), Where.checkpoint(path))
        return obj


def _names_a_module(component: Optional[str]) -> bool:
    """Whether a component path reaches into an RLModule's weights (`.../rl_module` or `.../rl_module/<id>`)."""
    return component is not None and "rl_module" in str(component).split("/")


def read_state_at(path: Union[str, pathlib.Path]) -> Tuple[Any, Where]:
    """(the state stored at `path`, where it is, for errors): a checkpoint folder or a component's path inside one
    (manifest verified; nothing is set anywhere)."""
    root, sub = _locate(as_path(path))
    manifest = read_manifest(root)
    if sub is None:
        return read_state(root, manifest), Where.checkpoint(root)
    return read_state(root, manifest, component=sub), Where.checkpoint(root).component(sub)


def checked_restore(obj, state: Dict[str, Any], where: Where) -> None:
    """`obj.check_state(state)` (any stray error there becomes a CheckpointError), then `obj.set_state(state)`."""
    try:
        obj.check_state(state, where)
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as error:
        raise unexpected_error(where, error) from None
    obj.set_state(state)


def check_class(manifest: Dict[str, Any], obj, root) -> None:
    """The checkpoint was written by `obj`'s class or one of its bases (compared by name: nothing is imported)."""
    stored = manifest.get("class")
    if not any(names_class(stored, c) for c in type(obj).__mro__):
        raise CheckpointError(f"{pathlib.Path(root) / MANIFEST}: the checkpoint holds a {stored}, which cannot be "
                              f"restored into a {type(obj).__name__} ({class_path(obj)}); build a "
                              f"{str(stored).rpartition(':')[2] or '?'} to restore it.")


def names_class(stored, klass: type) -> bool:
    """`stored` is `klass`'s "module:qualname", or `__main__:qualname` for a class of the script that saved the
    checkpoint, which the restoring process imported from that script (`from train import MyAlgo`): matched by its
    name, as `trusted=` matches the script's classes."""
    module, _, qualname = str(stored).partition(":")
    return stored == class_path(klass) or (module == "__main__" and qualname == klass.__qualname__)


def manifest_class_where(path) -> str:
    """Where a checkpoint names its class, for errors."""
    return f"{pathlib.Path(path) / MANIFEST} (`class`)"


def checkpoint_class(manifest: Dict[str, Any], expected: type, path, trust: Trust) -> type:
    """The class the checkpoint was written by, checked to be `expected` or a subclass."""
    # Looked up through the trust (relayrl's list, `expected` itself, what the caller trusts); then checked.
    klass = trust.resolve(manifest.get("class", ""), what=manifest_class_where(path))
    if not (isinstance(klass, type) and issubclass(klass, expected)):
        raise CheckpointError(f"{pathlib.Path(path) / MANIFEST}: the checkpoint holds a {manifest.get('class')}, "
                              f"not a {expected.__name__}; load it with that class's from_checkpoint().")
    return klass


_MAX_COMPONENT_DEPTH = 5  # learner_group/learner/rl_module/<module_id> and one more


def _locate(path) -> Tuple[pathlib.Path, Optional[str]]:
    """(checkpoint root, component path) for a checkpoint folder or a component's path inside one (a top-level
    component's folder, or RLlib's nested path below it such as `learner_group/learner/rl_module`)."""
    path = pathlib.Path(path)
    if not (path / MANIFEST).is_file():
        for depth, parent in enumerate(path.parents[:_MAX_COMPONENT_DEPTH], start=1):
            if (parent / MANIFEST).is_file():
                return parent, "/".join(path.parts[-depth:])
    return path, None


def _nested(component: str, state: Any) -> Dict[str, Any]:
    """{"a": {"b": state}} for component "a/b": the form get_state(components="a/b") returns."""
    for key in reversed(component.strip("/").split("/")):
        state = {key: state}
    return state


def selected(name: str, components=None, not_components=None) -> bool:
    """Whether get_state(components=..., not_components=...) asks for the top-level component `name`.

    Names may be paths ("learner_group/learner"): a path selects its first part.
    """
    def heads(value):
        value = [value] if isinstance(value, str) else list(value)
        return {v.split("/", 1)[0] for v in value}

    if components is not None and name not in heads(components):
        return False
    if not_components is not None:
        excluded = [not_components] if isinstance(not_components, str) else list(not_components)
        if name in excluded:  # only a whole component is excluded; "a/b" excludes inside `a`
            return False
    return True


def sub_components(name: str, value):
    """The paths below `name` in a components / not_components argument ("learner/rl_module" -> ["rl_module"]);
    None when none are given (everything inside `name`)."""
    if value is None:
        return None
    paths = [value] if isinstance(value, str) else list(value)
    inner = [p.split("/", 1)[1] for p in paths if p.startswith(name + "/")]
    return inner or None
