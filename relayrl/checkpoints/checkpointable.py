"""`Checkpointable`: RLlib's checkpoint API (save_to_path, restore_from_path, from_checkpoint) for any
object with get_state/set_state. The files are data only (see format.py); nothing is unpickled.
"""
import pathlib
from typing import Any, Collection, Dict, List, Optional, Tuple, Union

from relayrl.checkpoints import by_name
from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.format import MANIFEST, read_manifest, read_state, write_checkpoint
from relayrl.checkpoints.save_result import as_path

CTOR_KEY = "__ctor__"  # metadata entry: the constructor arguments from get_ctor_args_and_kwargs()


class Checkpointable:
    """Mixin: implement `get_state` / `set_state` (and `get_checkpointable_components` for sub-objects)."""

    def get_state(self, components: Optional[Union[str, Collection[str]]] = None, *,
                  not_components: Optional[Union[str, Collection[str]]] = None, **kwargs) -> Dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement get_state().")

    def set_state(self, state: Dict[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement set_state().")

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
        """Load the state saved at `path` into this object (its manifest is verified first).

        `component="learner_group"` restores only that part. A component's sub-folder of a
        checkpoint (e.g. `<ckpt>/learner_group`) may also be passed as `path`; then this object
        takes that component's state.
        """
        root, sub = _locate(as_path(path))
        manifest = read_manifest(root)
        if sub is not None:
            if component is not None:
                raise ValueError("Pass either a component folder as `path` or `component=`, not both.")
            self.set_state(read_state(root, manifest, component=sub))
        elif component is not None:
            self.set_state({component: read_state(root, manifest, component=component)})
        else:
            self.set_state(read_state(root, manifest))

    @classmethod
    def from_checkpoint(cls, path: Union[str, pathlib.Path], **kwargs):
        """A new object built from the checkpoint alone (class and constructor arguments included)."""
        path = as_path(path)
        manifest = read_manifest(path)
        klass = checkpoint_class(manifest, cls, path)
        ctor = by_name.rebuild(manifest.get("metadata", {}).get(CTOR_KEY, {"args": [], "kwargs": {}}))
        unstorable = by_name.find_unstorable(ctor)
        if unstorable:
            where, value = unstorable[0]
            raise CheckpointError(f"{path}: the constructor argument `{where}` was not stored ({value.description}); "
                                  f"build a {klass.__name__} yourself and call restore_from_path() on it.")
        obj = klass(*ctor["args"], **{**ctor["kwargs"], **kwargs})
        obj.set_state(read_state(path, manifest))
        return obj


def checkpoint_class(manifest: Dict[str, Any], expected: type, path) -> type:
    """The class the checkpoint was written by, checked to be `expected` or a subclass."""
    klass = by_name.import_by_name(manifest.get("class", ""))
    if not (isinstance(klass, type) and issubclass(klass, expected)):
        raise CheckpointError(f"{pathlib.Path(path) / MANIFEST}: the checkpoint holds a {manifest.get('class')}, "
                              f"not a {expected.__name__}; load it with that class's from_checkpoint().")
    return klass


def _locate(path) -> Tuple[pathlib.Path, Optional[str]]:
    """(checkpoint root, component name) for a checkpoint folder or one of its component sub-folders."""
    path = pathlib.Path(path)
    if not (path / MANIFEST).is_file() and (path.parent / MANIFEST).is_file():
        return path.parent, path.name
    return path, None


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
