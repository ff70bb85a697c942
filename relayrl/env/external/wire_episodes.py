"""Episode chunks on the wire: RLlib's `SingleAgentEpisode.get_state()` layout, checked on arrival.

An EPISODES message carries `{"episodes": [state, ...]}`, each state a dict of InfiniteLookbackBuffer
states (`{"data", "lookback", ...}`) for observations, actions, rewards, infos and extra model outputs,
plus the done flags and `t_started`. The server takes nothing on trust: every column must fit its
space (the server's config, never the spaces a message names), the lengths must agree, rewards and
model outputs must be finite numbers, and the model outputs this config's module produces (the ones
its Learner reads) must be there. Anything else is an RLlinkProtocolError that says where and what.

Supported spaces: Box, Discrete, MultiDiscrete, MultiBinary, and Dict spaces of those.
"""
from typing import Any, Dict, List, Mapping, Optional, Tuple

import gymnasium as gym
import numpy as np

from relayrl.env.external.rllink import RLlinkProtocolError
from relayrl.episodes.infinite_lookback_buffer import InfiniteLookbackBuffer
from relayrl.episodes.single_agent_episode import SingleAgentEpisode

_ARRAY_SPACES = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)
_MAX_ID_CHARS = 256


def check_supported_space(space: gym.Space, what: str) -> None:
    if isinstance(space, gym.spaces.Dict):
        for key, sub in space.spaces.items():
            check_supported_space(sub, f"{what}[{key!r}]")
    elif not isinstance(space, _ARRAY_SPACES):
        raise ValueError(f"The external-env server takes Box, Discrete, MultiDiscrete, MultiBinary and Dict spaces; "
                         f"the {what} is {space}.")


# -- sending ----------------------------------------------------------------------------------------
def episode_to_wire(episode: SingleAgentEpisode) -> Dict[str, Any]:
    """`episode` in RLlib's state layout, without spaces (the server has its own) and without pickles."""
    return {
        "id_": episode.id_, "agent_id": None, "module_id": None, "multi_agent_episode_id": None,
        "observations": _buffer_to_wire(episode.observations), "actions": _buffer_to_wire(episode.actions),
        "rewards": _buffer_to_wire(episode.rewards), "infos": _buffer_to_wire(episode.infos),
        "extra_model_outputs": {k: _buffer_to_wire(v) for k, v in episode.extra_model_outputs.items()},
        "is_terminated": bool(episode.is_terminated), "is_truncated": bool(episode.is_truncated),
        "t_started": int(episode.t_started), "t": int(episode.t),
        "_observation_space": None, "_action_space": None, "_start_time": None, "_last_step_time": None,
        "custom_data": dict(episode.custom_data),
    }


def _buffer_to_wire(buffer: InfiniteLookbackBuffer) -> Dict[str, Any]:
    data = buffer.data if buffer.finalized else list(buffer.data)
    return {"data": data, "lookback": int(buffer.lookback), "finalized": bool(buffer.finalized), "space": None}


# -- receiving --------------------------------------------------------------------------------------
class EpisodeSchema:
    """What the server accepts: its spaces and the model outputs its module produces ({column: row shape})."""

    def __init__(self, observation_space: gym.Space, action_space: gym.Space,
                 model_outputs: Mapping[str, Tuple[int, ...]]):
        check_supported_space(observation_space, "observation space")
        check_supported_space(action_space, "action space")
        self.observation_space, self.action_space = observation_space, action_space
        self.model_outputs = dict(model_outputs)

    def episodes_from_wire(self, body: Mapping[str, Any], max_env_steps: int) -> List[SingleAgentEpisode]:
        """The episode chunks of an EPISODES message body (numpy'd); chunks without steps are left out."""
        states = body.get("episodes")
        if not isinstance(states, list):
            raise RLlinkProtocolError("An EPISODES message needs 'episodes': a list of episode states "
                                      "(SingleAgentEpisode.get_state()).")
        episodes, steps = [], 0
        for i, state in enumerate(states):
            episode = self._episode_from_wire(state, f"episodes[{i}]")
            steps += len(episode)
            if steps > max_env_steps:
                raise RLlinkProtocolError(f"The message holds more than {max_env_steps} env steps, this server's "
                                          "limit per message (env_config['max_pending_env_steps']): send smaller "
                                          "batches.")
            if len(episode):
                episodes.append(episode)
        return episodes

    def _episode_from_wire(self, state: Any, where: str) -> SingleAgentEpisode:
        if not isinstance(state, dict):
            _fail(where, f"expected an episode state (a map), got a {type(state).__name__}.")
        if state.get("multi_agent_episode_id") is not None:
            _fail(where, "multi-agent episodes are not served (the external-env server is single-agent).")
        observations = self._buffer(state, "observations", where, self.observation_space)
        actions = self._buffer(state, "actions", where, self.action_space)
        rewards = self._buffer(state, "rewards", where, "reward")
        steps = len(actions)
        _require(len(rewards) == steps, where, f"{len(rewards)} rewards for {steps} actions.")
        _require(len(observations) == steps + 1, where,
                 f"{len(observations)} observations for {steps} actions (expected one more: the reset one).")
        infos = self._infos(state.get("infos"), observations, f"{where}.infos")
        extra = self._model_outputs(state.get("extra_model_outputs"), steps, f"{where}.extra_model_outputs")
        episode = SingleAgentEpisode._from_buffers(
            observations, infos, actions, rewards, extra,
            t_started=_count(state.get("t_started") or 0, f"{where}.t_started"),
            terminated=_flag(state, "is_terminated", where), truncated=_flag(state, "is_truncated", where),
            id_=_episode_id(state.get("id_"), where), observation_space=self.observation_space,
            action_space=self.action_space)
        if isinstance(state.get("custom_data"), dict):
            episode._custom_data = state["custom_data"]
        return episode

    def _buffer(self, state: dict, key: str, where: str, space) -> InfiniteLookbackBuffer:
        where = f"{where}.{key}"
        buffer = state.get(key)
        if not isinstance(buffer, dict) or "data" not in buffer:
            _fail(where, "expected a buffer state {'data': [...], 'lookback': n} (InfiniteLookbackBuffer).")
        if space == "reward":
            data = _finite(_numbers(buffer["data"], where + ".data"), where + ".data").astype(np.float32)
            _require(data.ndim == 1, where + ".data", f"rewards must be numbers, got shape {data.shape[1:]} items.")
            space = None
        else:
            data = _column(buffer["data"], space, where + ".data")
        lookback = _count(buffer.get("lookback", 0), where + ".lookback")
        _require(lookback <= _length(data), where, f"lookback {lookback} is longer than the data "
                                                   f"({_length(data)} items).")
        return InfiniteLookbackBuffer(data=data, lookback=lookback, space=space)

    @staticmethod
    def _infos(buffer: Any, observations: InfiniteLookbackBuffer, where: str) -> InfiniteLookbackBuffer:
        if buffer is None:  # no infos sent: empty ones, one per observation
            n = observations.len_incl_lookback()
            return InfiniteLookbackBuffer(data=[{} for _ in range(n)], lookback=observations.lookback)
        if not isinstance(buffer, dict) or not isinstance(buffer.get("data"), list):
            _fail(where, "expected a buffer state whose 'data' is a list of info dicts.")
        items = buffer["data"]
        _require(all(item is None or isinstance(item, dict) for item in items), where, "every info must be a map "
                 "(or None).")
        lookback = _count(buffer.get("lookback", 0), where + ".lookback")
        _require(len(items) - lookback == len(observations), where,
                 f"{len(items) - lookback} infos for {len(observations)} observations (one per observation).")
        return InfiniteLookbackBuffer(data=[item or {} for item in items], lookback=lookback)

    def _model_outputs(self, outputs: Any, steps: int, where: str) -> Dict[str, InfiniteLookbackBuffer]:
        outputs = {} if outputs is None else outputs
        if not isinstance(outputs, dict):
            _fail(where, "expected a map of column name -> buffer state.")
        missing = sorted(set(self.model_outputs) - set(outputs))
        if missing and steps:
            _fail(where, f"lacks {missing}, which this config's module produces and its Learner reads: the simulator "
                         "must record them with each step (episode.add_env_step(..., extra_model_outputs=...)).")
        columns = {}
        for key, buffer in outputs.items():
            if not isinstance(key, str) or not isinstance(buffer, dict) or "data" not in buffer:
                _fail(f"{where}[{key!r}]", "expected a buffer state {'data': [...], 'lookback': n}.")
            data = _output_column(buffer["data"], self.model_outputs.get(key), f"{where}[{key!r}].data")
            lookback = _count(buffer.get("lookback", 0), f"{where}[{key!r}].lookback")
            rows = _length(data) - lookback
            _require(rows == steps, f"{where}[{key!r}]", f"{rows} rows for {steps} steps (one per action).")
            columns[key] = InfiniteLookbackBuffer(data=data, lookback=lookback)
        return columns


# -- columns ----------------------------------------------------------------------------------------
def _column(data: Any, space: gym.Space, where: str) -> Any:
    """`data` (a list of items, or the items batched) as a batched column checked against `space`."""
    if isinstance(space, gym.spaces.Dict):
        return _dict_column(data, space, where)
    column = _numbers(data, where, row_shape=space.shape)
    _require(column.shape[1:] == space.shape, where,
             f"items of shape {column.shape[1:]} do not fit the {space} (shape {space.shape}).")
    if isinstance(space, gym.spaces.Box):
        return _finite(column, where).astype(space.dtype, copy=False)
    _require(column.dtype.kind in "biu" or bool(np.all(column == np.floor(column))), where,
             f"{space} needs whole numbers.")
    if isinstance(space, gym.spaces.Discrete):
        low, high = int(space.start), int(space.start) + int(space.n) - 1
    elif isinstance(space, gym.spaces.MultiDiscrete):
        low, high = space.start, space.start + space.nvec - 1
    else:  # MultiBinary
        low, high = 0, 1
    _require(bool(np.all((column >= low) & (column <= high))), where, f"values outside the {space}.")
    return column.astype(space.dtype, copy=False)


def _dict_column(data: Any, space: gym.spaces.Dict, where: str) -> Dict[str, Any]:
    if isinstance(data, list):  # a list of per-step dicts (an unfinalized buffer): one list per key
        _require(all(isinstance(item, dict) and set(item) == set(space.spaces) for item in data), where,
                 f"every item must be a map with the keys {sorted(space.spaces)}.")
        data = {key: [item[key] for item in data] for key in space.spaces}
    _require(isinstance(data, dict) and set(data) == set(space.spaces), where,
             f"expected a map with the keys {sorted(space.spaces)} (the {space}).")
    columns = {key: _column(data[key], sub, f"{where}[{key!r}]") for key, sub in space.spaces.items()}
    _require(len({_length(c) for c in columns.values()}) <= 1, where, "the keys hold different numbers of items.")
    return columns


def _numbers(data: Any, where: str, row_shape: Tuple[int, ...] = ()) -> np.ndarray:
    """`data` (an array, or a list of numbers / arrays / nested lists) as one numeric array, rows first."""
    if isinstance(data, list) and not data:
        return np.zeros((0, *row_shape))
    if not isinstance(data, (list, np.ndarray)):
        _fail(where, f"expected a list of items or an array, got a {type(data).__name__}.")
    try:
        column = np.asarray(data)
    except (ValueError, TypeError):
        _fail(where, "the items have different shapes.")
    if column.dtype.kind not in "biuf" or column.ndim == 0:
        _fail(where, f"expected numbers, got items of {_describe(data)}.")
    return column


def _output_column(data: Any, expected: Any, where: str) -> Any:
    """A model output column: numbers of the row shape `expected` (None: any), or, where the module gives a nested
    output (a recurrent state: {"h": ..., "c": ...}, per network), a map of such columns of equal lengths, sent
    batched or as a list of per-step maps (an unfinalized buffer)."""
    if isinstance(expected, dict) or isinstance(data, dict) or (isinstance(data, list) and data
                                                                 and isinstance(data[0], dict)):
        keys = sorted(expected) if isinstance(expected, dict) else None
        if isinstance(data, list):
            _require(all(isinstance(item, dict) and (keys is None or sorted(item) == keys) for item in data), where,
                     f"every item must be a map with the keys {keys}." if keys else "every item must be a map.")
            data = {key: [item[key] for item in data] for key in (keys or (data[0] if data else {}))}
        _require(isinstance(data, dict) and (keys is None or sorted(data) == keys), where,
                 f"expected a map with the keys {keys} (this config's module's output)." if keys else
                 "expected a map or numbers.")
        expected = expected if isinstance(expected, dict) else {}
        columns = {key: _output_column(value, expected.get(key), f"{where}[{key!r}]") for key, value in data.items()}
        _require(len({_length(c) for c in columns.values()}) <= 1, where, "the keys hold different numbers of items.")
        return columns
    column = _finite(_numbers(data, where), where)
    if expected is not None and len(column) and column.shape[1:] != tuple(expected):
        _fail(where, f"rows of shape {column.shape[1:]}; this config's module gives {tuple(expected)}.")
    return column


def _finite(column: np.ndarray, where: str) -> np.ndarray:
    if column.dtype.kind == "f" and not np.isfinite(column).all():
        _fail(where, "holds NaN or infinite values.")
    return column


def _describe(data: Any) -> str:
    first = data[0] if isinstance(data, list) and data else data
    return f"type {type(first).__name__}" if not isinstance(first, np.ndarray) else f"dtype {first.dtype}"


def _length(column: Any) -> int:
    return _length(next(iter(column.values()))) if isinstance(column, dict) and column else len(column)


# -- fields -----------------------------------------------------------------------------------------
def _count(value: Any, where: str) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0:
        return int(value)
    _fail(where, f"expected an int >= 0, got {value!r:.60}.")


def _flag(state: dict, key: str, where: str) -> bool:
    value = state.get(key, False)
    _require(isinstance(value, (bool, np.bool_)), f"{where}.{key}", f"expected a bool, got {value!r:.60}.")
    return bool(value)


def _episode_id(value: Any, where: str) -> Optional[str]:
    if value is None:
        return None
    _require(isinstance(value, str) and 0 < len(value) <= _MAX_ID_CHARS, f"{where}.id_",
             f"expected a str of 1 to {_MAX_ID_CHARS} characters.")
    return value


def _require(condition: bool, where: str, problem: str) -> None:
    if not condition:
        _fail(where, problem)


def _fail(where: str, problem: str):
    raise RLlinkProtocolError(f"{where}: {problem}")

