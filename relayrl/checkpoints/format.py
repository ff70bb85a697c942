"""The checkpoint directory: state files per component plus a manifest that is checked before anything loads.

    <checkpoint>/manifest.json          format_version, relayrl version, class, components, files (sha256, size)
    <checkpoint>/state.json             the object's own state (JSON; tensors/arrays replaced by references)
    <checkpoint>/tensors.pt             torch.save({name: tensor}); read with torch.load(weights_only=True)
    <checkpoint>/arrays/<n>.npy         numpy arrays; read with np.load(allow_pickle=False)
    <checkpoint>/<component>/...        the same three for each sub-component (learner_group, env_runner, ...)

The manifest is written last (atomically): a directory with a manifest is a finished checkpoint.
"""
import hashlib
import json
import os
import pathlib
import tempfile
import warnings
from typing import Any, Callable, Dict, Iterable, Optional

import numpy as np
import torch

from relayrl.checkpoints.codec import Encoder, decode
from relayrl.checkpoints.errors import CheckpointError

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
STATE_FILE, TENSOR_FILE, ARRAY_DIR = "state.json", "tensors.pt", "arrays"


def class_path(obj_or_cls) -> str:
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    return f"{cls.__module__}:{cls.__qualname__}"


def write_checkpoint(path, state: Dict[str, Any], *, cls, components: Iterable[str] = (),
                     extra_files: Optional[Dict[str, Callable[[str], None]]] = None,
                     metadata: Optional[Dict[str, Any]] = None) -> str:
    """Write `state` (top-level keys in `components` go to their own folders) and the manifest; return the path.

    `extra_files` maps a relative file name to a writer `fn(absolute_path)` (e.g. TorchScript exports);
    they are hashed like every other file.
    """
    root = pathlib.Path(path if path is not None else tempfile.mkdtemp(prefix="relayrl_checkpoint_")).absolute()
    root.mkdir(parents=True, exist_ok=True)
    (root / MANIFEST).unlink(missing_ok=True)  # no manifest until every file below is complete
    components = [c for c in components if c in state]
    own = {k: v for k, v in state.items() if k not in components}
    files = []
    files += _write_part(root, "", own, "state")
    for name in components:
        files += _write_part(root, name, state[name], name)
    for name, writer in (extra_files or {}).items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        writer(str(target))
        files.append(name)
    import relayrl

    manifest = {
        "format_version": FORMAT_VERSION,
        "relayrl_version": relayrl.__version__,
        "class": class_path(cls),
        "components": {name: {"path": name} for name in components},
        "metadata": metadata or {},
        "files": {name: _file_record(root / name) for name in sorted(set(files))},
    }
    tmp = root / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, root / MANIFEST)
    return str(root)


def _write_part(root: pathlib.Path, folder: str, state: Any, where: str) -> list:
    encoder = Encoder()
    data = encoder.encode(state, where)
    base = root / folder if folder else root
    base.mkdir(parents=True, exist_ok=True)
    prefix = f"{folder}/" if folder else ""
    (base / STATE_FILE).write_text(json.dumps(data))
    written = [prefix + STATE_FILE]
    if encoder.tensors:
        torch.save(encoder.tensors, base / TENSOR_FILE)
        written.append(prefix + TENSOR_FILE)
    if encoder.arrays:
        (base / ARRAY_DIR).mkdir(exist_ok=True)
        for i, array in enumerate(encoder.arrays):
            np.save(base / ARRAY_DIR / f"{i}.npy", np.ascontiguousarray(array), allow_pickle=False)
            written.append(f"{prefix}{ARRAY_DIR}/{i}.npy")
    return written


def _file_record(file: pathlib.Path) -> Dict[str, Any]:
    return {"sha256": _sha256(file), "size": file.stat().st_size}


def _sha256(file: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- reading -----------------------------------------------------------------------------------
def read_manifest(path) -> Dict[str, Any]:
    """The verified manifest: every listed file exists with its recorded size and sha256."""
    root = pathlib.Path(path)
    if not root.is_dir():
        raise CheckpointError(f"No checkpoint directory at {root}: pass the folder that save_to_path() / "
                              "algo.save() returned.")
    manifest_file = root / MANIFEST
    if not manifest_file.is_file():
        raise CheckpointError(f"{manifest_file} is missing: {root} is not a relayrl checkpoint, or saving it "
                              "did not finish.")
    try:
        manifest = json.loads(manifest_file.read_text())
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise CheckpointError(f"{manifest_file} is not valid JSON ({error}): the checkpoint is corrupt.") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise CheckpointError(f"{manifest_file} lacks the `files` table: the checkpoint is corrupt.")
    _check_version(manifest, manifest_file)
    components = manifest.get("components", {})
    if not isinstance(components, dict) or not all(
            isinstance(info, dict) and isinstance(info.get("path"), str) for info in components.values()):
        raise CheckpointError(f"{manifest_file}: the `components` table is malformed: the checkpoint is corrupt.")
    for name, record in manifest["files"].items():
        _verify_file(root, name, record)
    return manifest


def _check_version(manifest: Dict[str, Any], manifest_file: pathlib.Path) -> None:
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise CheckpointError(f"{manifest_file} has no valid format_version ({version!r}): the checkpoint is "
                              "corrupt.")
    if version > FORMAT_VERSION:
        import relayrl

        raise CheckpointError(
            f"{manifest_file}: checkpoint format_version {version} (written by relayrl "
            f"{manifest.get('relayrl_version', '?')}) is newer than this relayrl {relayrl.__version__} supports "
            f"(up to {FORMAT_VERSION}); upgrade relayrl (pip install -U relayrl) to load it.")


def _verify_file(root: pathlib.Path, name: str, record: Any) -> None:
    parts = pathlib.PurePosixPath(name).parts
    if not parts or name.startswith("/") or ".." in parts:
        raise CheckpointError(f"{root / MANIFEST} lists the file {name!r} outside the checkpoint: refusing to load.")
    if not isinstance(record, dict):
        raise CheckpointError(f"{root / MANIFEST}: the entry for {name!r} is malformed.")
    file = root / name
    real_root = root.resolve()
    if real_root not in file.resolve().parents:  # a symbolic link (of the file or a folder) that leaves it
        raise CheckpointError(f"{file} is a link to {file.resolve()}, outside the checkpoint: refusing to read it.")
    if not file.is_file():
        raise CheckpointError(f"{file} is missing from the checkpoint (listed in its manifest).")
    size = file.stat().st_size
    if size != record.get("size"):
        raise CheckpointError(f"{file} is truncated or was changed: {size} bytes, the manifest says "
                              f"{record.get('size')}.")
    if _sha256(file) != record.get("sha256"):
        raise CheckpointError(f"{file} was changed after saving: its sha256 does not match the manifest.")


def read_state(path, manifest: Optional[Dict[str, Any]] = None, component: Optional[str] = None) -> Dict[str, Any]:
    """The state tree written by `write_checkpoint` (verifying the manifest first unless given)."""
    root = pathlib.Path(path)
    manifest = manifest if manifest is not None else read_manifest(root)
    components = manifest.get("components", {})
    if component is not None:
        if component not in components:
            from relayrl.core.suggest import did_you_mean

            head = component.split("/")[0]
            nested = (f" relayrl's checkpoints keep one folder per top-level component, not RLlib's nested "
                      f"`{component}`: restore `{head}` (e.g. restore_from_path(path, component='{head}')), or "
                      "save a module alone with module.save_to_path(dir) and load RLModule.from_checkpoint(dir) "
                      "(docs/porting.md)." if "/" in component and head in components else "")
            raise CheckpointError(f"The checkpoint {root} has no component `{component}` (it has "
                                  f"{sorted(components)}).{nested or did_you_mean(component, list(components))}")
        return _read_part(root, components[component]["path"], manifest)
    state = _read_part(root, "", manifest)
    if not isinstance(state, dict):
        raise CheckpointError(f"{root / STATE_FILE} does not hold a state dict: the checkpoint is corrupt.")
    for name, info in components.items():
        state[name] = _read_part(root, info["path"], manifest)
    return state


def _read_part(root: pathlib.Path, folder: str, manifest: Dict[str, Any]) -> Any:
    prefix = f"{folder}/" if folder else ""
    listed = manifest["files"]
    state_name = prefix + STATE_FILE
    if state_name not in listed:
        raise CheckpointError(f"{root / state_name} is not listed in the manifest: the checkpoint is corrupt.")
    try:
        data = json.loads((root / state_name).read_text())
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        raise CheckpointError(f"{root / state_name} is not valid JSON ({type(error).__name__}: {error}).") from None
    tensors: Dict[str, torch.Tensor] = {}
    if prefix + TENSOR_FILE in listed:
        tensors = _load_tensors(root / (prefix + TENSOR_FILE))

    def tensor(name: str) -> torch.Tensor:
        if name not in tensors:
            raise CheckpointError(f"{root / (prefix + TENSOR_FILE)} has no tensor {name!r} that "
                                  f"{root / state_name} refers to.")
        return tensors[name]

    def array(name: str) -> np.ndarray:
        rel = f"{prefix}{ARRAY_DIR}/{name}"
        if rel not in listed or "/" in name or ".." in name:
            raise CheckpointError(f"{root / state_name} refers to {rel!r}, which the manifest does not list.")
        return _load_array(root / rel)

    try:
        return decode(data, tensor, array)
    except CheckpointError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as error:
        raise CheckpointError(f"{root / state_name} holds a malformed value ({type(error).__name__}: {error}).") \
            from None


def _load_array(file: pathlib.Path) -> np.ndarray:
    """np.load(allow_pickle=False), after checking that the header's shape and dtype are what the file holds (a
    header may declare any size: a tampered one would have numpy allocate it)."""
    try:
        with open(file, "rb") as f:
            version = np.lib.format.read_magic(f)
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                np.lib.format.read_array_header_2_0
            shape, _, dtype = read_header(f)
            data_bytes = file.stat().st_size - f.tell()
        declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if dtype.hasobject or declared != data_bytes:
            raise ValueError(f"its header declares {shape} {dtype} ({declared} bytes), the file holds {data_bytes} "
                             "bytes of data")
        return np.load(file, allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise CheckpointError(f"{file} is not a plain numpy array file ({error}).") from None


def _load_tensors(file: pathlib.Path) -> Dict[str, torch.Tensor]:
    try:
        with warnings.catch_warnings():  # torch warns about foreign pickle protocols before refusing them
            warnings.simplefilter("ignore")
            tensors = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as error:  # weights_only refuses pickled code; a broken zip raises its own errors
        raise CheckpointError(f"{file} is not a weights-only torch tensor file: {type(error).__name__}: "
                              f"{str(error).splitlines()[0] if str(error) else ''}") from None
    if not isinstance(tensors, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                                for k, v in tensors.items()):
        raise CheckpointError(f"{file} does not hold a flat {{name: tensor}} dict.")
    return tensors
