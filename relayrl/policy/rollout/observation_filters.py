"""`observation_filter="MeanStdFilter"` on the Policy API's runners: RLlib's old-stack filters, one per policy.

As RLlib's RolloutWorker: each runner keeps a filter per policy over the policy's (preprocessed) observations.
Every observation the env returns (resets, steps, final observations) is pushed into the running statistics
and normalised as `(obs - mean) / (std + 1e-8)` (no clipping: RLlib's old stack builds it with clip=None);
the policy acts on the normalised observation and the sample batch holds it. What a runner pushed since its
last sync is also kept apart (`buffer`): after each training iteration the driver merges the remote runners'
buffers into the local runner's statistics and sends the merged statistics back (PolicyWorkerSet.
synchronize_filters, RLlib's FilterManager.synchronize). Evaluation runners and `Algorithm.compute_single_action`
normalise with the training statistics without updating them.

The statistics and normalisation are the env-to-module MeanStdFilter's (connectors/env_to_module/
mean_std_filter.py: RunningStat, normalize, the state checks); this file only adds the per-policy buffer.
"""
from typing import Any

import numpy as np

from relayrl.connectors.env_to_module.mean_std_filter import MeanStdFilter, RunningStat


class PolicyObservationFilter:
    """One policy's MeanStdFilter on one runner: the statistics that normalise and the buffer (the delta since the
    last sync). `update=False` (evaluation runners) normalises without pushing."""

    def __init__(self, shape, *, update: bool = True):
        self.shape = tuple(shape)
        self.update = update
        self._filter = MeanStdFilter(clip_by_value=None, update_stats=update)
        self._filter._stats[None] = RunningStat(self.shape)
        self.buffer = RunningStat(self.shape)

    @property
    def running_stats(self) -> RunningStat:
        return self._filter._stats[None]

    def __call__(self, observations, update: bool | None = None) -> np.ndarray:
        """A batch of observations -> normalised (float32); each is pushed first (RLlib's order) if updating."""
        update = self.update if update is None else update
        if not update:
            return self._filter.normalize(np.asarray(observations, np.float64))
        stat, buffer = self.running_stats, self.buffer
        out = np.empty((len(observations),) + self.shape, np.float32)
        for i, obs in enumerate(observations):  # one at a time: each normalised with the statistics so far
            x = np.asarray(obs, np.float64).reshape(self.shape)
            stat.push(x)
            buffer.push(x)
            out[i] = self._filter.normalize(x)
        return out

    # -- syncing (the driver merges the remote runners' deltas, then broadcasts) ----------------------------------
    def flush_buffer(self) -> dict[str, Any]:
        """The delta since the last flush, as a RunningStat dict; the buffer starts empty again."""
        delta, self.buffer = self.buffer.to_dict(), RunningStat(self.shape)
        return delta

    def apply_delta(self, delta: dict[str, Any]) -> None:
        """Merge another runner's delta into these statistics (Chan et al.'s parallel update)."""
        self._filter._stats[None] = RunningStat.merged([self.running_stats, RunningStat.from_dict(delta)])

    def get_state(self) -> dict[str, Any]:
        return self.running_stats.to_dict()

    def set_state(self, state: dict[str, Any]) -> None:
        """Take these statistics (a sync or a restore); the buffer starts empty."""
        self._filter._stats[None] = RunningStat.from_dict(state)
        self.buffer = RunningStat(self.shape)

    def check_state(self, state, where) -> None:
        MeanStdFilter._check_stat(state, where, self._space())

    def _space(self):
        import gymnasium as gym

        return gym.spaces.Box(-np.inf, np.inf, self.shape)


def wants_filters(config) -> bool:
    """Whether the config asks for observation filters (anything but None / "NoFilter": "MeanStdFilter")."""
    name = getattr(config, "observation_filter", None)
    if name in (None, "NoFilter"):
        return False
    if name != "MeanStdFilter":
        raise ValueError(f"observation_filter={name!r} is not known: use 'MeanStdFilter' or 'NoFilter'.")
    return True


def filter_for_policy(policy, *, update: bool) -> PolicyObservationFilter:
    """A new filter over `policy`'s (preprocessed) observation space."""
    shape = getattr(policy.observation_space, "shape", None)
    if not shape and shape != ():
        raise ValueError(f"observation_filter='MeanStdFilter' normalises array observations, but policy "
                         f"{type(policy).__name__}'s observation space is {policy.observation_space}; use "
                         "observation_filter='NoFilter' or a Box observation space.")
    return PolicyObservationFilter(shape, update=update)





class RunnerObservationFilters:
    """A PolicyRunner's filters (mixed into PolicyRunner): `filters` {policy_id: PolicyObservationFilter}, built
    when a policy first sees an observation, and RLlib's RolloutWorker methods to sync them."""

    filters: dict[str, PolicyObservationFilter]

    def _init_filters(self, config) -> None:
        self.filters = {}
        self._filtering = wants_filters(config)
        self._filters_update = not getattr(config, "in_evaluation", False)  # evaluation: the training statistics

    def observation_filter(self, policy_id: str) -> PolicyObservationFilter | None:
        """The policy's filter (None with observation_filter='NoFilter')."""
        f = self.filters.get(policy_id)
        if f is None and self._filtering:
            f = self.filters[policy_id] = filter_for_policy(self.policy_map[policy_id], update=self._filters_update)
        return f

    def get_filters(self, flush_after: bool = False) -> dict[str, dict[str, Any]]:
        """{policy_id: {"running_stats": ..., "buffer": ...}} (RunningStat dicts); flush_after empties the buffers."""
        out = {pid: {"running_stats": f.get_state(), "buffer": f.buffer.to_dict()} for pid, f in self._own_filters()}
        if flush_after:
            for _, f in self._own_filters():
                f.flush_buffer()
        return out

    def get_filter_deltas(self) -> dict[str, dict[str, Any]]:
        """What each filter pushed since the last call (the buffers, emptied)."""
        return {pid: f.flush_buffer() for pid, f in self._own_filters()}

    def apply_filter_deltas(self, deltas: dict[str, dict[str, Any]]) -> None:
        for pid, delta in deltas.items():
            if pid in self.policy_map and self.observation_filter(pid) is not None:
                self.filters[pid].apply_delta(delta)

    def filter_states(self) -> dict[str, dict[str, Any]]:
        return {pid: f.get_state() for pid, f in self._own_filters()}

    def sync_filters(self, states: dict[str, dict[str, Any]]) -> None:
        """Take these statistics {policy_id: RunningStat dict} (the driver's merged ones); buffers start empty."""
        for pid, state in states.items():
            if pid in self.policy_map and self.observation_filter(pid) is not None:
                self.filters[pid].set_state(state)

    def _own_filters(self):
        return [(pid, f) for pid, f in self.filters.items() if pid in self.policy_map]  # (not removed policies')


__all__ = ["PolicyObservationFilter", "RunnerObservationFilters", "filter_for_policy", "wants_filters"]
