"""`MeanStdFilter`: normalise observations with running statistics, writing them back into the episodes."""
from typing import Any, Dict, List, Optional

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
    exactly what the module saw. Statistics merge across EnvRunners via `merge_states`. With
    `multi_agent=True` the observation space is a Dict by agent id and each agent keeps its own statistics.
    """

    def __init__(self, input_observation_space=None, input_action_space=None, *, multi_agent: bool = False,
                 de_mean_to_zero: bool = True, de_std_to_one: bool = True, clip_by_value: float = 10.0,
                 update_stats: bool = True, **kwargs):
        self.de_mean_to_zero = de_mean_to_zero
        self.de_std_to_one = de_std_to_one
        self.clip_by_value = clip_by_value
        self.update_stats = update_stats
        self._multi_agent = multi_agent
        self._stats: Dict[Any, RunningStat] = {}  # by agent id (None for a single-agent filter)
        super().__init__(input_observation_space, input_action_space, **kwargs)

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        if not self._multi_agent:
            return self._clipped_box(input_observation_space)
        if not isinstance(input_observation_space, gym.spaces.Dict):
            return input_observation_space  # the agents' spaces are not known yet
        return gym.spaces.Dict({aid: self._clipped_box(space, aid)
                                for aid, space in input_observation_space.spaces.items()})

    def _clipped_box(self, space, agent_id=None) -> gym.spaces.Box:
        if not isinstance(space, gym.spaces.Box):
            whose = "" if agent_id is None else f" for agent {agent_id!r}"
            raise ValueError(f"MeanStdFilter needs a Box observation space{whose}, got {space}; "
                             "put FlattenObservations before it.")
        bound = self.clip_by_value if self.clip_by_value is not None else np.inf
        return gym.spaces.Box(-bound, bound, space.shape, np.float32)

    def running_stat(self, agent_id=None) -> Optional[RunningStat]:
        """The statistics so far (of `agent_id` for a multi-agent filter), None before the first observation."""
        return self._stats.get(agent_id if self._multi_agent else None)

    def _stat(self, agent_id, shape) -> RunningStat:
        stat = self._stats.get(agent_id)
        if stat is None:
            stat = self._stats[agent_id] = RunningStat(shape)
        return stat

    def normalize(self, obs, agent_id=None):
        stat = self._stat(agent_id if self._multi_agent else None, np.shape(obs))
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
            agent_id = episode.agent_id if self._multi_agent else None
            obs = episode.get_observations(-1)
            if self.update_stats:
                self._stat(agent_id, np.shape(obs)).push(np.asarray(obs, np.float64))
            episode.set_observations(new_data=self.normalize(obs, agent_id), at_indices=-1)
        return batch

    def get_state(self, components=None, *, not_components=None, **kwargs):
        """Single-agent: {"stat": {...}}; multi-agent: {"stats": [[agent_id, {...}], ...]}."""
        if not self._stats:
            return {}
        if not self._multi_agent:
            return {"stat": self._stats[None].to_dict()}
        return {"stats": [[agent_id, stat.to_dict()] for agent_id, stat in self._stats.items()]}

    def set_state(self, state) -> None:
        if state.get("stat") is not None:
            self._stats = {None: RunningStat.from_dict(state["stat"])}
        elif state.get("stats") is not None:
            self._stats = {_agent_key(agent_id): RunningStat.from_dict(stat) for agent_id, stat in state["stats"]}

    def check_state(self, state, where) -> None:
        """The statistics have the observation space's shape (a wrong shape would only fail later, mid-sample)."""
        from relayrl.checkpoints.state_checks import check_mapping, require

        check_mapping(state, where, known=("stat", "stats"), owner="a MeanStdFilter")
        if state.get("stat") is not None:
            require(not self._multi_agent, where / "stat", "single-agent statistics, but this MeanStdFilter is "
                    "multi_agent=True (statistics per agent).")
            self._check_stat(state["stat"], where / "stat", self.input_observation_space)
        if state.get("stats") is not None:
            require(self._multi_agent and isinstance(state["stats"], list), where / "stats",
                    "per-agent statistics ([[agent_id, stat], ...]) for a MeanStdFilter with multi_agent=True.")
            spaces = self.input_observation_space
            for i, entry in enumerate(state["stats"]):
                require(isinstance(entry, (list, tuple)) and len(entry) == 2, where / "stats" / str(i),
                        "an [agent_id, stat] pair.")
                agent_id = _agent_key(entry[0])
                space = spaces[agent_id] if isinstance(spaces, gym.spaces.Dict) and agent_id in spaces.spaces else None
                self._check_stat(entry[1], where / "stats" / str(i), space)

    @staticmethod
    def _check_stat(stat, where, space) -> None:
        from relayrl.checkpoints.state_checks import check_int, check_mapping, require

        check_mapping(stat, where, known=("count", "mean", "m2"), required=("count", "mean", "m2"),
                      owner="a MeanStdFilter")
        check_int(stat["count"], where / "count", low=0)
        shape = getattr(space, "shape", None)
        for key in ("mean", "m2"):
            try:
                values = np.asarray(stat[key], np.float64)
            except (TypeError, ValueError):
                raise where.error(f"{key} is not a list of numbers.") from None
            require(shape is None or values.shape == tuple(shape), where / key,
                    f"shape {values.shape} in the checkpoint, but the observations here have shape {tuple(shape)}.")

    def reset_state(self) -> None:
        self._stats = {}

    def merge_states(self, states):
        if not self._multi_agent:
            stats = [RunningStat.from_dict(s["stat"]) for s in states if s.get("stat")]
            return {"stat": RunningStat.merged(stats).to_dict()} if stats else {}
        by_agent: Dict[Any, List[RunningStat]] = {}
        for state in states:
            for agent_id, stat in state.get("stats") or ():
                by_agent.setdefault(_agent_key(agent_id), []).append(RunningStat.from_dict(stat))
        return {"stats": [[aid, RunningStat.merged(stats).to_dict()] for aid, stats in by_agent.items()]} \
            if by_agent else {}


def _agent_key(agent_id):
    """Agent ids come back from a checkpoint as they went in, but tuples (hashable) as lists."""
    return tuple(agent_id) if isinstance(agent_id, list) else agent_id
