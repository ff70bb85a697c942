"""What `algo.save()` returns: RLlib's TrainingResult shape (`.checkpoint.path`, `.metrics`), usable as a path."""
import os
from typing import Any, Dict, Optional


class Checkpoint:
    """A checkpoint directory on the local filesystem (Ray Train's `Checkpoint` API subset)."""

    def __init__(self, path: str):
        self.path = os.fspath(path)

    @classmethod
    def from_directory(cls, path) -> "Checkpoint":
        return cls(path)

    def to_directory(self, path: Optional[str] = None) -> str:
        return self.path if path is None else _copy_tree(self.path, path)

    def __fspath__(self) -> str:
        return self.path

    def __str__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"Checkpoint(path={self.path!r})"


class SaveResult:
    """`algo.save()`'s result: `.checkpoint.path` as in RLlib; `str()` / `os.fspath()` give the path too."""

    def __init__(self, path: str, metrics: Optional[Dict[str, Any]] = None):
        self.checkpoint = Checkpoint(path)
        self.metrics = metrics or {}

    @property
    def path(self) -> str:
        return self.checkpoint.path

    def __fspath__(self) -> str:
        return self.checkpoint.path

    def __str__(self) -> str:
        return self.checkpoint.path

    def __repr__(self) -> str:
        return f"SaveResult(checkpoint={self.checkpoint!r})"


def as_path(value) -> str:
    """A path from a str/PathLike, a SaveResult / TrainingResult (`.checkpoint.path`) or a Checkpoint (`.path`)."""
    checkpoint = getattr(value, "checkpoint", None)
    if checkpoint is not None and hasattr(checkpoint, "path"):
        return os.fspath(checkpoint.path)
    if not isinstance(value, (str, os.PathLike)) and hasattr(value, "path"):
        return os.fspath(value.path)
    return os.fspath(value)


def _copy_tree(source: str, target: str) -> str:
    import shutil

    shutil.copytree(source, target, dirs_exist_ok=True)
    return target
