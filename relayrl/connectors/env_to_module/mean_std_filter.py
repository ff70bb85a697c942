"""`MeanStdFilter`: normalise observations with running statistics, writing them back into the episodes."""
from typing import Any, Dict, List

import gymnasium as gym
import numpy as np

from relayrl.connectors.connector_v2 import ConnectorV2


class RunningStat:
    """Count, mean and sum of squared deviations (Welford / Chan et al. for merging)."""

    def __init__(self, shape):
        self.count = 0
        self.mean = np.zeros(shape, np.float64)
        self.m2 = np.zeros(shape, np.float64)

    def push(self, x) -> None:
        self.count += 1
        delta = x - self.mean
        self.mean += delta / self.count
        self.m2 += delta * (x - self.mean)

    @property
    def std(self):
        if self.count < 2:
            return np.ones_like(self.mean)
        return np.sqrt(self.m2 / (self.count - 1))

    def to_dict(self) -> Dict[str, Any]:
        return {"count": self.count, "mean": self.mean.tolist(), "m2": self.m2.tolist()}

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "RunningStat":
        stat = cls(np.shape(d["mean"]))
        stat.count, stat.mean, stat.m2 = int(d["count"]), np.array(d["mean"], np.float64), np.array(d["m2"], np.float64)
        return stat

    @classmethod
    def merged(cls, stats: List["RunningStat"]) -> "RunningStat":
        out = cls(stats[0].mean.shape)
        for s in stats:
            if s.count == 0:
                continue
            n = out.count + s.count
            delta = s.mean - out.mean
            out.mean = out.mean + delta * s.count / n
            out.m2 = out.m2 + s.m2 + delta ** 2 * out.count * s.count / n
            out.count = n
        return out


class MeanStdFilter(ConnectorV2):
    """Env-to-module piece: each episode's newest observation -> (obs - mean) / std, clipped.

    The normalised observation replaces the raw one in the episode, so the Learner trains on
    exactly what the module saw. Statistics merge across EnvRunners via `merge_states`.
    """

    def __init__(self, input_observation_space=None, input_action_space=None, *, multi_agent: bool = False,
                 de_mean_to_zero: bool = True, de_std_to_one: bool = True, clip_by_value: float = 10.0,
                 update_stats: bool = True, **kwargs):
        self.de_mean_to_zero = de_mean_to_zero
        self.de_std_to_one = de_std_to_one
        self.clip_by_value = clip_by_value
        self.update_stats = update_stats
        self._stat = None
        super().__init__(input_observation_space, input_action_space, **kwargs)

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        if not isinstance(input_observation_space, gym.spaces.Box):
            raise ValueError(f"MeanStdFilter needs a Box observation space, got {input_observation_space}; "
                             "put FlattenObservations before it.")
        bound = self.clip_by_value if self.clip_by_value is not None else np.inf
        return gym.spaces.Box(-bound, bound, input_observation_space.shape, np.float32)

    def _stats(self, shape) -> RunningStat:
        if self._stat is None:
            self._stat = RunningStat(shape)
        return self._stat

    def normalize(self, obs):
        stat = self._stats(np.shape(obs))
        out = np.asarray(obs, np.float64)
        if self.de_mean_to_zero:
            out = out - stat.mean
        if self.de_std_to_one:
            out = out / (stat.std + 1e-8)
        if self.clip_by_value is not None:
            out = np.clip(out, -self.clip_by_value, self.clip_by_value)
        return out.astype(np.float32)

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, metrics=None, **kwargs):
        for episode in self.single_agent_episode_iterator(episodes):
            obs = episode.get_observations(-1)
            if self.update_stats:
                self._stats(np.shape(obs)).push(np.asarray(obs, np.float64))
            episode.set_observations(new_data=self.normalize(obs), at_indices=-1)
        return batch

    def get_state(self, components=None, *, not_components=None, **kwargs):
        return {"stat": self._stat.to_dict()} if self._stat is not None else {}

    def set_state(self, state) -> None:
        if state.get("stat") is not None:
            self._stat = RunningStat.from_dict(state["stat"])

    def check_state(self, state, where) -> None:
        """The statistics have the observation space's shape (a wrong shape would only fail later, mid-sample)."""
        from relayrl.checkpoints.state_checks import check_int, check_mapping, require

        check_mapping(state, where, known=("stat",), owner="a MeanStdFilter")
        stat = state.get("stat")
        if stat is None:
            return
        check_mapping(stat, where / "stat", known=("count", "mean", "m2"), required=("count", "mean", "m2"),
                      owner="a MeanStdFilter")
        check_int(stat["count"], where / "stat" / "count", low=0)
        shape = getattr(self.input_observation_space, "shape", None)
        for key in ("mean", "m2"):
            try:
                values = np.asarray(stat[key], np.float64)
            except (TypeError, ValueError):
                raise where.error(f"stat.{key} is not a list of numbers.") from None
            require(shape is None or values.shape == tuple(shape), where / "stat" / key,
                    f"shape {values.shape} in the checkpoint, but the observations here have shape {tuple(shape)}.")

    def reset_state(self) -> None:
        self._stat = None

    def merge_states(self, states):
        stats = [RunningStat.from_dict(s["stat"]) for s in states if s.get("stat")]
        return {"stat": RunningStat.merged(stats).to_dict()} if stats else {}
