"""What a PolicyRunner checkpoints, checks and restores (mixed into PolicyRunner), as the RLModule EnvRunner does
(env/env_runner_state.py): with all of it restored, training continues bit-identically.

- `policy_weights`, `global_vars`: what remote runners are synced with (also a restarted actor's state).
- `policy_states`: each policy's get_state() beyond its weights (optimizer state, global_timestep,
  num_grad_updates, ...) and the numpy fast path's generator (numpy_forward.py); parts that are not data
  (e.g. a framework's variable objects) are left out with a warning.
- `metrics`: the runner's metrics logger (the smoothing windows).
- `filters` (observation_filter="MeanStdFilter"): each policy's running statistics (observation_filters.py);
  checkpoints from before filters existed have none and restore as they did.
- `sampling` (single-agent runners on a sync vector env): the sub-envs' state (checkpoints/env_state.py),
  the current observations, the ongoing episodes with their collected rows, and the batches not yet returned.
  Where the envs' state cannot be captured (env_state.py decides when saving), the checkpoint says why
  (`fresh_episodes`) and the restored runner starts fresh episodes, keeping everything else.
The global python/numpy/torch RNGs are the Algorithm's part of the checkpoint.
"""
import logging
from typing import Any

import gymnasium as gym
import numpy as np

from relayrl.checkpoints.checkpointable import selected
from relayrl.checkpoints.codec import Encoder
from relayrl.checkpoints.env_state import (
    capture_vector_env_state,
    check_vector_env_state,
    env_config_changed,
    env_config_key,
    fresh_episodes_seed,
    log_fresh_episodes,
    set_vector_env_state,
)
from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.state_checks import check_mapping, require
from relayrl.policy.policy_reset_config import set_policy_lr
from relayrl.policy.rollout.episode import PolicyEpisode
from relayrl.policy.rollout.trajectory import Trajectory
from relayrl.policy.sample_batch import SampleBatch

logger = logging.getLogger("relayrl")

PARTS = ("policy_weights", "global_vars", "policy_states", "metrics", "filters", "sampling")
_EPISODE_NUMBERS = ("episode_id", "length", "total_reward", "prev_reward")
_EPISODE_DATA = ("user_data", "custom_metrics", "hist_data")


class PolicyRunnerState:
    def get_state(self, components=None, *, not_components=None, **kwargs) -> dict[str, Any]:
        parts = {"policy_weights": self.get_weights, "global_vars": lambda: dict(self.global_vars),
                 "policy_states": self._policy_states, "metrics": self.metrics.get_state,
                 "filters": self.filter_states if self._filtering else None,
                 "sampling": self._sampling_state if self._can_store_sampling() else None}
        return {name: get() for name, get in parts.items()
                if get is not None and selected(name, components, not_components)}

    def check_state(self, state: dict[str, Any], where) -> None:
        """Raise a CheckpointError if `state` names policies this runner lacks or weights that do not fit."""
        check_mapping(state, where, known=PARTS, owner=f"a {type(self).__name__}")
        weights = state.get("policy_weights", {})
        for part in ("policy_weights", "policy_states"):
            unknown = sorted(set(state.get(part, {})) - set(self.policy_map))
            if unknown:
                raise (where / part).error(f"the checkpoint has policies {unknown} this algorithm does not (it has "
                                           f"{sorted(self.policy_map)}): restore it with Algorithm.from_checkpoint"
                                           "(path), which builds the policies its config holds (add_policy ones "
                                           "too), or add_policy them before restoring.")
        for pid, w in weights.items():
            mine = self.policy_map[pid].get_weights()
            if isinstance(mine, dict) and isinstance(w, dict):
                bad = [k for k in mine if k not in w or np.shape(w[k]) != np.shape(mine[k])]
                if bad:
                    raise where.error(f"policy {pid!r}: the weights {bad} are missing or differ in shape.")
        if "metrics" in state:
            self.metrics.check_state(state["metrics"], where / "metrics")
        self._check_filter_states(state.get("filters"), where / "filters")
        sampling = state.get("sampling")
        if sampling is not None and self._can_store_sampling() and not sampling.get("fresh") \
                and "fresh_episodes" not in sampling and not env_config_changed(sampling, self.config.env_config):
            at = where / "sampling"
            require(len(sampling["episodes"]) == self.num_envs, at / "episodes",
                    f"the checkpoint has {len(sampling['episodes'])} ongoing episodes, this runner has "
                    f"{self.num_envs} sub-envs: set num_envs_per_env_runner as when it was saved.")
            check_vector_env_state(self.env, sampling["env"], at / "env")

    def set_state(self, state: dict[str, Any], **kwargs) -> None:
        self.set_weights(state.get("policy_weights", {}), state.get("global_vars"))
        for pid, policy_state in state.get("policy_states", {}).items():
            self._set_policy_state(self.policy_map[pid], policy_state)
        if "metrics" in state:
            self.metrics.set_state(state["metrics"])
        if state.get("sampling") is not None and self._can_store_sampling():
            self._set_sampling_state(state["sampling"])
        if state.get("filters"):  # after the sampling state: fresh episodes' first observations are not counted twice
            self.sync_filters(state["filters"])

    def _check_filter_states(self, states, where) -> None:
        if states is None:
            return
        check_mapping(states, where, owner=f"a {type(self).__name__}'s filters")
        for pid, stat in states.items():
            require(pid in self.policy_map, where / str(pid), f"a filter of policy {pid!r}, which this algorithm "
                    f"does not have (it has {sorted(self.policy_map)}).")
            obs_filter = self.observation_filter(pid)
            require(obs_filter is not None, where, "observation filter statistics, but this algorithm's "
                    "observation_filter is 'NoFilter': set observation_filter='MeanStdFilter' as when it was saved.")
            obs_filter.check_state(stat, where / str(pid))

    # -- policies -------------------------------------------------------------------------------------------
    def _policy_states(self) -> dict[str, Any]:
        out = {}
        for pid, policy in self.policy_map.items():
            full = dict(policy.get_state())
            full.pop("policy_spec", None)
            full.pop("weights", None)  # in policy_weights
            kept = {}
            for key, value in full.items():
                try:
                    Encoder().encode(value, f"policy_states/{pid}/{key}")
                except CheckpointError as error:
                    logger.warning("policy %r: %s is not stored in the checkpoint (%s)", pid, key, error)
                    continue
                kept[key] = value
            if "_fast_forward" in policy.__dict__ or hasattr(policy, "_numpy_forward"):
                fast = policy.__dict__.get("_fast_forward")
                # None: not planned yet (it seeds itself from torch's generator when first used)
                kept["numpy_forward_rng"] = None if fast is None else fast.rng
            out[pid] = kept
        return out

    @staticmethod
    def _set_policy_state(policy, state: dict[str, Any]) -> None:
        state = dict(state)
        has_rng = "numpy_forward_rng" in state
        rng = state.pop("numpy_forward_rng", None)
        if has_rng and rng is None:
            policy.__dict__.pop("_fast_forward", None)  # planned again (and seeded) when first used
        if state:
            policy.set_state(state)
            if "_optimizer_variables" in state and "lr" in policy.config:
                # The optimizer state carries the saved lr; the config's lr stays in force (as for RLModule
                # algorithms), so a PBT exploit trains the donor's weights with its own perturbed lr.
                set_policy_lr(policy, policy.config["lr"])
        if rng is not None and hasattr(policy, "_numpy_forward"):
            fast = policy._numpy_forward()
            if fast is not None:
                fast.rng.bit_generator.state = rng.bit_generator.state

    # -- ongoing episodes -----------------------------------------------------------------------------------
    def _can_store_sampling(self) -> bool:
        return type(self.env).__module__ != gym.vector.AsyncVectorEnv.__module__ and hasattr(self.env, "envs") \
            and hasattr(self, "_episodes")

    def _sampling_state(self) -> dict[str, Any]:
        if self.global_vars["timestep"] == 0 and not self._pending and not self._num_finished:
            # Not stepped yet (a checkpoint right after the build, e.g. Tune's state for a reused actor): the
            # first reset again gives the same start (gymnasium's env checkers keep unstorable first-step data).
            return {"fresh": True, "unroll_id": self._unroll_id}
        kept = {"unroll_id": self._unroll_id, "num_finished": self._num_finished,
                "pending": [dict(batch) for batch in self._pending]}
        env_state, why_not = capture_vector_env_state(self.env)
        if env_state is None:  # the restored runner starts fresh episodes, and says why
            return {**kept, "fresh_episodes": why_not}
        return {**kept, "env": env_state, "obs": self._obs, "infos": list(self._infos),
                "episodes": [_episode_state(e) for e in self._episodes],
                "env_config": env_config_key(self.config.env_config)}

    def _set_sampling_state(self, state: dict[str, Any]) -> None:
        if state.get("fresh"):
            self._restart_episodes(seed=self._first_seed)
            self._pending, self._num_finished, self._unroll_id = [], 0, int(state["unroll_id"])
            return
        if "fresh_episodes" in state or env_config_changed(state, self.config.env_config):
            self._restart_episodes(seed=fresh_episodes_seed(self.config.seed, self.worker_index,
                                                            self.global_vars["timestep"]))
            if "fresh_episodes" in state:
                log_fresh_episodes(state["fresh_episodes"])
        else:
            set_vector_env_state(self.env, state["env"])
            self._obs = np.asarray(state["obs"])
            self._infos = [dict(i) for i in state["infos"]]
            self._episodes = [self._episode_from_state(i, s) for i, s in enumerate(state["episodes"])]
        self._unroll_id, self._num_finished = int(state["unroll_id"]), int(state["num_finished"])
        self._pending = [SampleBatch(dict(b)) for b in state["pending"]]

    def _episode_from_state(self, i: int, state: dict[str, Any]) -> PolicyEpisode:
        episode = PolicyEpisode(i, worker=self)
        for name in _EPISODE_NUMBERS + _EPISODE_DATA:
            setattr(episode, name, state[name])
        episode.id_ = str(episode.episode_id)
        episode.agent_rewards = {(a, p): r for a, p, r in state["agent_rewards"]}
        episode._last_infos = dict(state["last_infos"])
        episode.user_state = list(state["user_state"])
        episode.prev_action = state["prev_action"]
        t = state["trajectory"]
        episode.trajectory = Trajectory(t["eps_id"], t["agent_index"], t["env_id"], t["unroll_id"])
        episode.trajectory.t0 = t["t0"]
        episode.trajectory.columns = {k: (list(v) if k == SampleBatch.INFOS else _rows(v)) for k, v in t["columns"].items()}
        return episode


def _episode_state(episode: PolicyEpisode) -> dict[str, Any]:
    t = episode.trajectory
    columns = {k: (v if k == SampleBatch.INFOS else _stacked(v)) for k, v in t.columns.items()}
    return {**{name: getattr(episode, name) for name in _EPISODE_NUMBERS + _EPISODE_DATA},
            "agent_rewards": [[a, p, r] for (a, p), r in episode.agent_rewards.items()],
            "last_infos": dict(episode._last_infos), "user_state": list(episode.user_state),
            "prev_action": episode.prev_action,
            "trajectory": {"eps_id": t.eps_id, "agent_index": t.agent_index, "env_id": t.env_id,
                           "unroll_id": t.unroll_id, "t0": t.t0, "columns": columns}}


def _stacked(values: list):
    """A column's rows as one array where they stack (the same values to_batch() will stack), else the list."""
    try:
        return np.stack([np.asarray(v) for v in values])
    except ValueError:
        return list(values)


def _rows(value) -> list:
    return list(value) if isinstance(value, np.ndarray) else list(value)
