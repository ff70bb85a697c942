"""Helpers that tamper with a saved checkpoint as an attacker would: change a file, then recompute the
manifest's size and sha256 so the checkpoint still verifies."""
import hashlib
import json
import pathlib

import torch


def rehash(root, name: str) -> None:
    """Make the manifest's record of `name` match the file's current bytes."""
    root = pathlib.Path(root)
    manifest = json.loads((root / "manifest.json").read_text())
    data = (root / name).read_bytes()
    manifest["files"][name] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    (root / "manifest.json").write_text(json.dumps(manifest))


def edit_json(root, name: str, edit) -> None:
    """Apply `edit(data)` (in place, or returning the new data) to a JSON file of the checkpoint; rehash it."""
    root = pathlib.Path(root)
    data = json.loads((root / name).read_text())
    data = edit(data) or data
    (root / name).write_text(json.dumps(data))
    if name != "manifest.json":
        rehash(root, name)


def weights(algo) -> dict:
    return {k: v.clone() for k, v in algo.learner_group.get_module("default_policy").state_dict().items()}


def optimizer_state(algo) -> dict:
    return algo.learner_group.get_state(components="learner/optimizer")["learner"]["optimizer"]


def same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
