"""`SampleBatch` and `MultiAgentBatch`: the old API stack's column batches (RLlib's `policy/sample_batch.py`).

A SampleBatch is a dict of equally long columns (numpy arrays, or torch tensors inside a loss), one row per
timestep. A MultiAgentBatch maps policy IDs to SampleBatches and counts env steps separately from agent steps.
"""
from collections.abc import Iterable

import numpy as np

from relayrl.core.columns import DEFAULT_POLICY_ID, Columns

# Columns whose items stay a list (arbitrary objects), never a numpy array.
_OBJECT_COLUMNS = ("infos",)


class SampleBatch(dict):
    """Columns of equal length: `batch["obs"]`, `batch["rewards"]`, ... (`count` rows)."""

    OBS = CUR_OBS = Columns.OBS
    NEXT_OBS = Columns.NEXT_OBS
    ACTIONS = Columns.ACTIONS
    REWARDS = Columns.REWARDS
    TERMINATEDS = Columns.TERMINATEDS
    TRUNCATEDS = Columns.TRUNCATEDS
    DONES = "dones"
    INFOS = Columns.INFOS
    SEQ_LENS = Columns.SEQ_LENS
    T = Columns.T
    EPS_ID = Columns.EPS_ID
    ACTION_DIST_INPUTS = Columns.ACTION_DIST_INPUTS
    ACTION_PROB = Columns.ACTION_PROB
    ACTION_LOGP = Columns.ACTION_LOGP
    ACTION_DIST = "action_dist"
    VF_PREDS = Columns.VF_PREDS
    VALUES_BOOTSTRAPPED = Columns.VALUES_BOOTSTRAPPED
    PREV_ACTIONS = "prev_actions"
    PREV_REWARDS = "prev_rewards"
    ENV_ID = "env_id"
    AGENT_INDEX = "agent_index"
    UNROLL_ID = "unroll_id"
    OBS_EMBEDS = "obs_embeds"
    RETURNS_TO_GO = "returns_to_go"
    ATTENTION_MASKS = "attention_masks"

    def __init__(self, *args, _time_major: bool | None = None, _max_seq_len: int | None = None,
                 _zero_padded: bool = False, _is_training: bool | None = None,
                 _num_grad_updates: int | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        if self.DONES in self:
            raise KeyError("SampleBatch has no `dones` column: give `terminateds` and `truncateds` "
                           "(gymnasium's split of done); reading batch['dones'] returns terminateds.")
        self.time_major = _time_major
        self.zero_padded = _zero_padded
        self._is_training = _is_training
        self.num_grad_updates = _num_grad_updates
        for key, value in list(self.items()):
            if isinstance(value, (list, tuple)) and key not in _OBJECT_COLUMNS:
                dict.__setitem__(self, key, _to_array(value))
            elif isinstance(value, (int, float, np.number)) and key != self.SEQ_LENS:
                dict.__setitem__(self, key, np.asarray([value]))
        seq_lens = self.get(self.SEQ_LENS)
        # (a traced TF step's seq_lens is symbolic: its length is unknown, shape[0] None)
        if seq_lens is not None and (seq_lens.shape[0] if hasattr(seq_lens, "shape") else len(seq_lens)) == 0:
            dict.__delitem__(self, self.SEQ_LENS)
        elif seq_lens is not None and isinstance(seq_lens, (list, np.ndarray)):
            dict.__setitem__(self, self.SEQ_LENS, np.asarray(seq_lens, dtype=np.int32))
        self.max_seq_len = _max_seq_len if _max_seq_len is not None else (
            int(max(self[self.SEQ_LENS])) if self.SEQ_LENS in self else None)
        self.count = self._infer_count()

    def _infer_count(self) -> int:
        for key, value in self.items():
            if key == self.SEQ_LENS or (key.startswith("state_in_") and self.SEQ_LENS in self):
                continue
            try:
                return len(value)
            except TypeError:
                continue
        return 0

    # -- dict access ---------------------------------------------------------------------------------
    def __getitem__(self, key):
        if isinstance(key, slice):
            return self.slice(key.start or 0, self.count if key.stop is None else key.stop)
        if key == self.DONES and key not in self:
            return dict.__getitem__(self, self.TERMINATEDS)
        return dict.__getitem__(self, key)

    def __setitem__(self, key, value) -> None:
        if key == self.DONES:
            raise KeyError("Cannot set `dones`: set `terminateds` (and `truncateds`) instead.")
        if not self and not self.count:
            self.count = len(value) if hasattr(value, "__len__") else 0
        dict.__setitem__(self, key, value)

    def __len__(self) -> int:
        return self.count

    def __reduce__(self):
        # pickle (Ray) rebuilds a dict subclass by __setitem__ before its attributes exist: rebuild in one call
        return _rebuild, (dict(self), dict(self.__dict__))

    def __bool__(self) -> bool:
        return dict.__len__(self) > 0

    def __repr__(self) -> str:
        return f"SampleBatch({self.count}: {list(self.keys())})"

    def env_steps(self) -> int:
        return self.count

    def agent_steps(self) -> int:
        return self.count

    # -- copies and selections -------------------------------------------------------------------------
    def _like(self, columns: dict) -> "SampleBatch":
        return SampleBatch(columns, _time_major=self.time_major, _zero_padded=self.zero_padded,
                           _is_training=self._is_training, _num_grad_updates=self.num_grad_updates)

    def copy(self, shallow: bool = False) -> "SampleBatch":
        if shallow:
            return self._like(dict(self))
        return self._like({k: (list(v) if isinstance(v, list) else _copy(v)) for k, v in self.items()})

    def columns(self, keys: Iterable[str]) -> list:
        return [self[k] for k in keys]

    def rows(self):
        """Each timestep as a dict of single items (`seq_lens` is 1 per row)."""
        for i in range(self.count):
            row = {k: v[i] for k, v in self.items() if k != self.SEQ_LENS}
            if self.SEQ_LENS in self:
                row[self.SEQ_LENS] = 1
            yield row

    def slice(self, start: int, end: int, state_start=None, state_end=None) -> "SampleBatch":
        columns = {}
        for key, value in self.items():
            if key == self.SEQ_LENS:
                continue
            if key.startswith("state_in_") and state_start is not None:
                columns[key] = value[state_start:state_end]
            else:
                columns[key] = value[start:end]
        return self._like(columns)

    def shuffle(self) -> "SampleBatch":
        """Permute the rows in place (all columns alike); refused for batches of sequences."""
        if self.SEQ_LENS in self:
            raise ValueError("SampleBatch.shuffle(): this batch holds sequences (seq_lens); shuffling rows would "
                             "break them. Shuffle before building sequences, or keep the order.")
        order = np.random.permutation(self.count)
        for key, value in list(self.items()):
            dict.__setitem__(self, key, [value[i] for i in order] if isinstance(value, list) else value[order])
        return self

    def split_by_episode(self, key: str | None = None) -> list["SampleBatch"]:
        """One batch per episode: by `eps_id` (or `key`), else cut after each terminated/truncated row."""
        key = key or (self.EPS_ID if self.EPS_ID in self else None)
        if key is not None:
            ids = np.asarray(self[key])
            cuts = list(np.nonzero(ids[1:] != ids[:-1])[0] + 1)
        else:
            ends = np.asarray(self[self.TERMINATEDS], bool)
            if self.TRUNCATEDS in self:
                ends = ends | np.asarray(self[self.TRUNCATEDS], bool)
            cuts = [int(i) + 1 for i in np.nonzero(ends)[0] if i + 1 < self.count]
        bounds = [0, *cuts, self.count]
        return [self.slice(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]

    def timeslices(self, size: int | None = None, num_slices: int | None = None, k: int | None = None):
        size = size or k
        if size is None:
            size = -(-self.count // num_slices)
        return [self.slice(i, min(i + size, self.count)) for i in range(0, self.count, size)]

    def concat(self, other: "SampleBatch") -> "SampleBatch":
        return concat_samples([self, other])

    # -- flags and conversions ---------------------------------------------------------------------------
    @property
    def is_training(self) -> bool:
        return bool(self._is_training)

    def set_training(self, training: bool = True) -> None:
        self._is_training = training

    def is_terminated_or_truncated(self) -> bool:
        last = lambda col: bool(np.asarray(self[col])[-1]) if col in self and self.count else False
        return last(self.TERMINATEDS) or last(self.TRUNCATEDS)

    def is_single_trajectory(self) -> bool:
        if self.EPS_ID not in self or not self.count:
            return True
        ids = np.asarray(self[self.EPS_ID])
        return bool((ids == ids[0]).all())

    def as_multi_agent(self, module_id: str | None = None) -> "MultiAgentBatch":
        return MultiAgentBatch({module_id or DEFAULT_POLICY_ID: self}, self.count)

    def size_bytes(self) -> int:
        return int(sum(getattr(v, "nbytes", 0) for v in self.values()))

    def to_device(self, device, framework: str = "torch", pin_memory: bool = False, **kwargs) -> "SampleBatch":
        """Numeric columns as torch tensors on `device` (in place; object columns stay)."""
        import torch

        for key, value in list(self.items()):
            if isinstance(value, np.ndarray) and value.dtype != object:
                dict.__setitem__(self, key, torch.as_tensor(value, device=device))
            elif isinstance(value, torch.Tensor):
                dict.__setitem__(self, key, value.to(device))
        return self

    def compress(self, bulk: bool = False, columns=frozenset(["obs", "new_obs"])) -> "SampleBatch":
        return self  # relayrl keeps batches uncompressed (they live in memory for one update)

    def decompress_if_needed(self, columns=frozenset(["obs", "new_obs"])) -> "SampleBatch":
        return self

    def get_single_step_input_dict(self, view_requirements=None, index="last") -> "SampleBatch":
        """A one-row input dict at `index` ("last": the step after the last row, for bootstrapping)."""
        i = self.count - 1 if index == "last" else int(index)
        row = {}
        if index == "last" and self.NEXT_OBS in self:
            row[self.OBS] = self[self.NEXT_OBS][i:i + 1]
        else:
            row[self.OBS] = self[self.OBS][i:i + 1]
        for key, value in self.items():
            if key.startswith("state_out_"):
                row["state_in_" + key[len("state_out_"):]] = value[i:i + 1]
        if self.ACTIONS in self:
            row[self.PREV_ACTIONS] = self[self.ACTIONS][i:i + 1]
        if self.REWARDS in self:
            row[self.PREV_REWARDS] = self[self.REWARDS][i:i + 1]
        return SampleBatch(row)

    @staticmethod
    def concat_samples(samples):
        raise NotImplementedError("SampleBatch.concat_samples is gone (as in RLlib): use the module function "
                                  "relayrl.policy.sample_batch.concat_samples(samples).")


class MultiAgentBatch:
    """`{policy_id: SampleBatch}` plus the number of env steps they came from."""

    def __init__(self, policy_batches: dict[str, SampleBatch], env_steps: int):
        self.policy_batches = dict(policy_batches)
        self.count = int(env_steps)

    def env_steps(self) -> int:
        return self.count

    def agent_steps(self) -> int:
        return sum(b.count for b in self.policy_batches.values())

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, policy_id: str) -> SampleBatch:
        return self.policy_batches[policy_id]

    def __repr__(self) -> str:
        return f"MultiAgentBatch({self.policy_batches}, env_steps={self.count})"

    def copy(self) -> "MultiAgentBatch":
        return MultiAgentBatch({k: v.copy() for k, v in self.policy_batches.items()}, self.count)

    def as_multi_agent(self, module_id=None) -> "MultiAgentBatch":
        return self

    def to_device(self, device, framework: str = "torch", **kwargs) -> "MultiAgentBatch":
        for batch in self.policy_batches.values():
            batch.to_device(device, framework, **kwargs)
        return self

    def compress(self, bulk: bool = False, columns=frozenset(["obs", "new_obs"])) -> "MultiAgentBatch":
        return self

    def decompress_if_needed(self, columns=frozenset(["obs", "new_obs"])) -> "MultiAgentBatch":
        return self

    def size_bytes(self) -> int:
        return sum(b.size_bytes() for b in self.policy_batches.values())

    @staticmethod
    def wrap_as_needed(policy_batches: dict[str, SampleBatch], env_steps: int):
        """The bare SampleBatch when the only policy is `default_policy`, else a MultiAgentBatch."""
        if len(policy_batches) == 1 and DEFAULT_POLICY_ID in policy_batches:
            return policy_batches[DEFAULT_POLICY_ID]
        return MultiAgentBatch(policy_batches, env_steps)

    @staticmethod
    def concat_samples(samples):
        raise NotImplementedError("MultiAgentBatch.concat_samples is gone (as in RLlib): use "
                                  "relayrl.policy.sample_batch.concat_samples(samples).")


def concat_samples(samples: list) -> "SampleBatch | MultiAgentBatch":
    """One batch from many: rows appended column by column (MultiAgentBatches: per policy)."""
    samples = [s for s in samples if s is not None and s.count > 0]
    if any(isinstance(s, MultiAgentBatch) for s in samples):
        return _concat_multi_agent(samples)
    if not samples:
        return SampleBatch()
    if len({s.zero_padded for s in samples}) > 1 or len({s.time_major for s in samples}) > 1:
        raise ValueError("concat_samples: the batches differ in zero_padded / time_major; they cannot be joined.")
    keys = list(samples[0].keys())
    for s in samples[1:]:
        if set(s.keys()) != set(keys):
            raise KeyError(f"concat_samples: the batches have different columns ({sorted(keys)} vs "
                           f"{sorted(s.keys())}); give them the same columns before joining.")
    columns = {key: _concat_column([s[key] for s in samples]) for key in keys}
    grad_updates = [s.num_grad_updates for s in samples]
    num_grad_updates = None
    if all(g is not None for g in grad_updates):
        num_grad_updates = sum(g * s.count for g, s in zip(grad_updates, samples)) / sum(s.count for s in samples)
    first = samples[0]
    return SampleBatch(columns, _time_major=first.time_major, _zero_padded=first.zero_padded,
                       _is_training=first._is_training, _num_grad_updates=num_grad_updates)


def _concat_multi_agent(samples: list) -> MultiAgentBatch:
    per_policy: dict[str, list[SampleBatch]] = {}
    env_steps = 0
    for s in samples:
        ma = s.as_multi_agent()
        env_steps += ma.env_steps()
        for pid, batch in ma.policy_batches.items():
            per_policy.setdefault(pid, []).append(batch)
    return MultiAgentBatch({pid: concat_samples(b) for pid, b in per_policy.items()}, env_steps)


def _concat_column(parts: list):
    first = parts[0]
    if isinstance(first, list):
        return [item for part in parts for item in part]
    if type(first).__module__.startswith("torch"):
        import torch

        return torch.cat(parts)
    return np.concatenate(parts)


def _rebuild(columns: dict, attributes: dict) -> SampleBatch:
    batch = SampleBatch.__new__(SampleBatch)
    dict.update(batch, columns)
    batch.__dict__.update(attributes)
    return batch


def _to_array(value):
    try:
        return np.asarray(value)
    except ValueError:  # ragged items: keep them as objects
        array = np.empty(len(value), dtype=object)
        array[:] = list(value)
        return array


def _copy(value):
    copy = getattr(value, "copy", None) or getattr(value, "clone", None)
    return copy() if callable(copy) else value


def convert_ma_batch_to_sample_batch(batch) -> SampleBatch:
    """A MultiAgentBatch's policy batches joined into one SampleBatch (a SampleBatch is returned as is)."""
    if isinstance(batch, MultiAgentBatch):
        return concat_samples(list(batch.policy_batches.values()))
    return batch


DEFAULT_POLICY_ID = DEFAULT_POLICY_ID
__all__ = [
    "DEFAULT_POLICY_ID",
    "MultiAgentBatch",
    "SampleBatch",
    "concat_samples",
    "convert_ma_batch_to_sample_batch",
]
