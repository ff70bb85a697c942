"""Checkpoints you can trust: directories of JSON, `.npy` and weights-only torch files with a verified
manifest; never pickles. See docs/checkpoints.md.

Names load lazily (this package is imported by the Algorithm, Learner and RLModule modules).
"""
import importlib

_PUBLIC = {
    "Checkpointable": "relayrl.checkpoints.checkpointable",
    "CheckpointError": "relayrl.checkpoints.errors",
    "FORMAT_VERSION": "relayrl.checkpoints.format",
    "read_manifest": "relayrl.checkpoints.format",
    "export_torchscript": "relayrl.checkpoints.export",
    "Checkpoint": "relayrl.checkpoints.save_result",
    "SaveResult": "relayrl.checkpoints.save_result",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'relayrl.checkpoints' has no attribute '{name}'")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
