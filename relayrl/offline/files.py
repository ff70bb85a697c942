"""Where offline data lives: `input_` paths, globs, folders and URIs -> the parquet files to read; `output` -> the
folder to write to. Files and folders whose names start with '.' or '_' are skipped, as pyarrow and Ray Data do
(a file being written has a hidden name until it is complete)."""
import glob
import os
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

from relayrl.offline.deps import require

LOCAL_PREFIXES = ("local://", "file://")
JSON_SUFFIXES = (".json", ".jsonl")  # RLlib's old-stack SampleBatch files (relayrl/offline/sample_batch_json.py)
_GLOB_CHARS = set("*?[")


def _filesystem(name_or_fs: Any, kwargs: Optional[Mapping] = None):
    """The pyarrow filesystem of config.input_filesystem / output_filesystem (None: decided by each path)."""
    if name_or_fs is None:
        return None
    fs = require("pyarrow.fs", "offline data")
    if name_or_fs == "s3":
        return fs.S3FileSystem(**dict(kwargs or {}))
    if name_or_fs == "gcs":
        return fs.GcsFileSystem(**dict(kwargs or {}))
    return name_or_fs


def split_location(location: str, filesystem=None) -> Tuple[Any, str]:
    """(pyarrow filesystem, path) of a path or URI: 'local://' and 'file://' mean the local disk."""
    fs = require("pyarrow.fs", "offline data")
    if filesystem is not None:
        return filesystem, location.split("://", 1)[-1] if "://" in location else location
    for prefix in LOCAL_PREFIXES:
        if location.startswith(prefix):
            return fs.LocalFileSystem(), os.path.abspath(location[len(prefix):])
    if "://" in location:
        return fs.FileSystem.from_uri(location)
    return fs.LocalFileSystem(), os.path.abspath(os.path.expanduser(location))


def _hidden(relative_path: str) -> bool:
    return any(part.startswith((".", "_")) for part in relative_path.replace("\\", "/").split("/") if part)


def input_files(inputs: Union[str, Sequence[str]], *, filesystem=None,
                filesystem_kwargs: Optional[Mapping] = None) -> Tuple[Any, List[str]]:
    """(filesystem, sorted files) named by `input_`: parquet files, or RLlib's old-stack JSON (a folder's *.json
    files where it holds no parquet file); ValueError naming an input that matches nothing."""
    pafs = require("pyarrow.fs", "reading offline data")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs)
    chosen = _filesystem(filesystem, filesystem_kwargs)
    files: List[str] = []
    fs = None
    for location in inputs:
        loc_fs, path = split_location(_from_launch_folder(location) if chosen is None else location, chosen)
        if fs is not None and type(loc_fs) is not type(fs):
            raise ValueError(f"input_ mixes filesystems ({type(fs).__name__} and {type(loc_fs).__name__} for "
                             f"{location!r}); read from one filesystem at a time.")
        fs = loc_fs
        if _GLOB_CHARS & set(path):
            if not isinstance(fs, pafs.LocalFileSystem):
                raise ValueError(f"input_ {location!r}: globs work on local paths only; list the files or give "
                                 "their folder.")
            matches = sorted(p for p in glob.glob(path, recursive=True) if os.path.isfile(p))
            found = [p for p in matches if not _hidden(os.path.basename(p))]
        else:
            found = _files_at(fs, path, location)
        if not found:
            raise ValueError(f"input_ {location!r} matches no parquet or JSON file (looked for *.parquet, then "
                             f"*.json files in {path!r}).")
        files.extend(found)
    return fs, sorted(dict.fromkeys(files))


def _from_launch_folder(location: str) -> str:
    """A relative local `location` that is not in this folder but is in the one Tune started from: Tune runs each
    trial in its own working folder (RAY_CHDIR_TO_TRIAL_DIR), so `input_="data"` meant the launch folder's data.
    Ray Tune's trials set TUNE_ORIG_WORKING_DIR to that folder."""
    launch = os.environ.get("TUNE_ORIG_WORKING_DIR")
    path = location
    for prefix in LOCAL_PREFIXES:
        if location.startswith(prefix):
            path = location[len(prefix):]
    path = os.path.expanduser(path)
    if not launch or os.path.isabs(path) or ("://" in path) or os.path.abspath(launch) == os.getcwd():
        return location
    here_exists = glob.glob(path) if _GLOB_CHARS & set(path) else os.path.exists(path)
    there = os.path.join(launch, path)
    there_exists = glob.glob(there) if _GLOB_CHARS & set(there) else os.path.exists(there)
    return there if there_exists and not here_exists else location


def _files_at(fs, path: str, location: str) -> List[str]:
    pafs = require("pyarrow.fs", "reading offline data")
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.NotFound:
        under_tune = (" Under Tune, give an absolute path (each trial runs in its own working folder)."
                      if os.environ.get("TUNE_ORIG_WORKING_DIR") else "")
        raise ValueError(f"input_ {location!r}: no such file or folder ({path}).{under_tune}")
    if info.type == pafs.FileType.File:
        return [path]
    selector = pafs.FileSelector(path, recursive=True)
    prefix = path.rstrip("/") + "/"
    visible = [entry.path for entry in fs.get_file_info(selector)
               if entry.type == pafs.FileType.File
               and not _hidden(entry.path[len(prefix):] if entry.path.startswith(prefix) else entry.base_name)]
    parquet = [p for p in visible if p.endswith(".parquet")]
    return parquet or [p for p in visible if p.lower().endswith(JSON_SUFFIXES)]


def output_location(output: str, *, filesystem=None, filesystem_kwargs: Optional[Mapping] = None) -> Tuple[Any, str]:
    """(filesystem, folder) that `output` names."""
    return split_location(output, _filesystem(filesystem, filesystem_kwargs))


__all__ = ["input_files", "output_location", "split_location", "LOCAL_PREFIXES"]
