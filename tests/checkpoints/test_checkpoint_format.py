"""The checkpoint format: round trips of plain data, and clear errors for corrupt or unsafe checkpoints."""
import json
import os
import pathlib
import pickle

import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl.checkpoints import Checkpointable, CheckpointError, read_manifest
from relayrl.checkpoints.format import FORMAT_VERSION, MANIFEST, _sha256, read_state, write_checkpoint


class Counter(Checkpointable):
    """A minimal Checkpointable with constructor arguments, a tensor, arrays and odd keys."""

    def __init__(self, start=0, space=None):
        self.count = start
        self.space = space
        self.weights = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        self.table = {0: "zero", (1, 2): [np.int64(3), (4.5, None)], "nan": float("nan")}
        self.history = [np.full(3, i, np.float32) for i in range(4)]
        self.rng = np.random.default_rng(5)

    def get_ctor_args_and_kwargs(self):
        return (), {"start": 0, "space": self.space}

    def get_state(self, components=None, *, not_components=None, **kwargs):
        return {"count": self.count, "weights": self.weights, "table": self.table, "history": self.history,
                "rng": self.rng}

    def set_state(self, state):
        self.count, self.weights, self.table = state["count"], state["weights"], state["table"]
        self.history, self.rng = state["history"], state["rng"]


def _saved(tmp_path) -> pathlib.Path:
    obj = Counter(space=gym.spaces.Box(-1.0, 1.0, (3,), np.float32))
    obj.count = 41
    obj.rng.random(3)
    return pathlib.Path(obj.save_to_path(tmp_path / "ckpt"))


def _rehash(root: pathlib.Path, name: str) -> None:
    """What an attacker would do: make the manifest agree with a replaced file."""
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["files"][name] = {"sha256": _sha256(root / name), "size": (root / name).stat().st_size}
    (root / MANIFEST).write_text(json.dumps(manifest))


def test_round_trip_restores_every_value_exactly(tmp_path):
    root = _saved(tmp_path)
    original = Counter(space=gym.spaces.Box(-1.0, 1.0, (3,), np.float32))
    original.count = 41
    original.rng.random(3)
    loaded = Counter.from_checkpoint(root)
    assert loaded.count == 41 and torch.equal(loaded.weights, original.weights)
    assert loaded.table[0] == "zero" and loaded.table[(1, 2)] == [np.int64(3), (4.5, None)]
    assert isinstance(loaded.table[(1, 2)][0], np.int64) and np.isnan(loaded.table["nan"])
    assert all(np.array_equal(a, b) for a, b in zip(loaded.history, original.history))
    assert loaded.rng.random() == original.rng.random()  # the generator continues where it was
    assert loaded.space == original.space  # constructor arguments (a gymnasium space) are rebuilt
    manifest = read_manifest(root)
    assert manifest["format_version"] == FORMAT_VERSION and manifest["class"].endswith(":Counter")
    assert set(manifest["files"]) == {"state.json", "tensors.pt", "arrays/0.npy"}  # the 4 arrays: one file


def test_unstorable_value_names_where_it_is(tmp_path):
    class Bad(Counter):
        def get_state(self, **kwargs):
            return {"nested": {"fn": object()}}

    with pytest.raises(CheckpointError, match=r"`state\.nested\.fn` \(builtins\.object\)"):
        Bad().save_to_path(tmp_path / "bad")
    with pytest.raises(CheckpointError, match="dtype=object"):
        write_checkpoint(tmp_path / "bad2", {"a": np.array([None, 1], dtype=object)}, cls=Counter)


def test_truncated_tensor_file_is_named(tmp_path):
    root = _saved(tmp_path)
    data = (root / "tensors.pt").read_bytes()
    (root / "tensors.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=r"tensors\.pt is truncated or was changed: \d+ bytes, the manifest says"):
        Counter.from_checkpoint(root)


def test_tampered_json_is_named(tmp_path):
    root = _saved(tmp_path)
    text = (root / "state.json").read_text()
    (root / "state.json").write_text(text.replace("41", "42"))  # same size, other content
    with pytest.raises(CheckpointError, match=r"state\.json was changed after saving: its sha256"):
        Counter().restore_from_path(root)


def test_missing_file_is_named(tmp_path):
    root = _saved(tmp_path)
    os.remove(root / "arrays" / "0.npy")
    with pytest.raises(CheckpointError, match=r"arrays/0\.npy is missing from the checkpoint"):
        Counter.from_checkpoint(root)


def test_missing_or_broken_manifest(tmp_path):
    root = _saved(tmp_path)
    (root / MANIFEST).write_text("{not json")
    with pytest.raises(CheckpointError, match=r"manifest\.json is not valid JSON"):
        Counter.from_checkpoint(root)
    os.remove(root / MANIFEST)
    with pytest.raises(CheckpointError, match=r"manifest\.json is missing.*not a relayrl checkpoint"):
        Counter.from_checkpoint(root)
    with pytest.raises(CheckpointError, match="No checkpoint directory"):
        Counter.from_checkpoint(tmp_path / "nowhere")


def test_future_format_version_says_upgrade(tmp_path):
    root = _saved(tmp_path)
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["format_version"] = FORMAT_VERSION + 1
    (root / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match=rf"format_version {FORMAT_VERSION + 1}.*upgrade relayrl"):
        Counter.from_checkpoint(root)


class _Exploit:
    def __reduce__(self):
        return (os.system, (f"touch {_Exploit.marker}",))


def test_pickle_in_place_of_tensors_is_refused_and_never_runs(tmp_path):
    root = _saved(tmp_path)
    _Exploit.marker = str(tmp_path / "pwned")
    with open(root / "tensors.pt", "wb") as f:
        pickle.dump({"t0": _Exploit()}, f)
    _rehash(root, "tensors.pt")  # the manifest is fooled; loading still must not unpickle
    with pytest.raises(CheckpointError, match=r"tensors\.pt is not a weights-only torch tensor file"):
        Counter.from_checkpoint(root)
    # torch.save'd code objects (a full pickle inside torch's zip format) are refused too.
    torch.save({"t0": _Exploit()}, root / "tensors.pt")
    _rehash(root, "tensors.pt")
    with pytest.raises(CheckpointError, match=r"tensors\.pt is not a weights-only torch tensor file"):
        Counter.from_checkpoint(root)
    assert not os.path.exists(_Exploit.marker)


def test_object_array_in_place_of_npy_is_refused(tmp_path):
    root = _saved(tmp_path)
    np.save(root / "arrays" / "0.npy", np.array([_Exploit()], dtype=object), allow_pickle=True)
    _rehash(root, "arrays/0.npy")
    with pytest.raises(CheckpointError, match=r"arrays/0\.npy is not a plain numpy array file"):
        Counter.from_checkpoint(root)


def test_manifest_paths_outside_the_checkpoint_are_refused(tmp_path):
    root = _saved(tmp_path)
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["files"]["../outside.json"] = {"sha256": "0", "size": 1}
    (root / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="outside the checkpoint"):
        read_manifest(root)


def test_class_is_checked_and_saving_again_replaces_the_checkpoint(tmp_path):
    class Other(Checkpointable):
        pass

    root = _saved(tmp_path)
    with pytest.raises(CheckpointError, match="not a Other"):
        Other.from_checkpoint(root, trusted=[Counter])
    obj = Counter()
    obj.count = 7
    obj.save_to_path(root)
    assert read_state(root)["count"] == 7
