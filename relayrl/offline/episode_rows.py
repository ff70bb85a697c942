"""Episode rows (`output_write_episodes=True`, `input_read_episodes=True`): one parquet row per episode (chunk),
the `item` column holding the msgpack'd episode state in RLlib's form (its `SingleAgentEpisode.get_state()`:
buffers of `data`/`lookback`/`finalized`/`space`, numpy values as msgpack-numpy writes them), so RLlib and
relayrl read each other's recordings. A multi-agent episode becomes one row per agent (its SingleAgentEpisode,
naming the agent, its module and the multi-agent episode).

Decoding never unpickles: msgpack-numpy's object arrays (which it would unpickle) are refused.
"""
from typing import Any, Dict

from relayrl.episodes.single_agent_episode import SingleAgentEpisode
from relayrl.offline.deps import require

ITEM_COLUMN = "item"  # Ray Data's column name for rows made from plain items (ray.data.from_items)
_BUFFERS = ("observations", "actions", "rewards", "infos")


class EpisodeRowError(ValueError):
    """An `item` cell that is not an episode state relayrl can rebuild (the reader adds the file and row)."""


def _decode_numpy(obj: Dict) -> Any:
    """msgpack-numpy's decode hook, refusing dtypes that hold Python objects (it would unpickle those)."""
    mnp = require("msgpack_numpy", "reading episode rows")
    if b"nd" in obj:
        kind = obj.get(b"kind", b"")
        if kind == b"O":
            raise EpisodeRowError("holds a pickled object array (refused: unpickling it could run code)")
        try:
            dtype = mnp._unpack_dtype(obj[b"type"])
        except (TypeError, ValueError, KeyError) as error:
            raise EpisodeRowError(f"holds an array of unknown dtype ({error})") from None
        if dtype.hasobject:
            raise EpisodeRowError("holds an array of Python objects (refused)")
    return mnp.decode(obj)


def decode_episode_state(blob) -> Dict[str, Any]:
    msgpack = require("msgpack", "reading episode rows")
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise EpisodeRowError(f"is a {type(blob).__name__}, not the bytes of a msgpack'd episode")
    try:
        state = msgpack.unpackb(bytes(blob), object_hook=_decode_numpy, strict_map_key=False)
    except EpisodeRowError:
        raise
    except Exception as error:
        raise EpisodeRowError(f"is not a msgpack'd episode state ({error})") from None
    if not isinstance(state, dict) or "observations" not in state or "actions" not in state:
        raise EpisodeRowError("is not an episode state (a dict with 'observations', 'actions', 'rewards', ...)")
    return state


def episode_from_state(state: Dict[str, Any], observation_space=None, action_space=None) -> SingleAgentEpisode:
    """A numpy'd SingleAgentEpisode from RLlib's (or relayrl's writer's) episode state."""
    buffers = {name: state.get(name) for name in _BUFFERS}
    for name in ("observations", "actions", "rewards"):
        if not isinstance(buffers[name], dict) or "data" not in buffers[name]:
            raise EpisodeRowError(f"has no `{name}` buffer (a dict with 'data' and 'lookback')")
    lookback = int(buffers["observations"].get("lookback", 0))
    extra = state.get("extra_model_outputs") or {}
    for name, buffer in [*buffers.items(), *extra.items()]:
        if buffer is not None and int(buffer.get("lookback", 0)) != lookback:
            raise EpisodeRowError(f"has buffers with different lookbacks ({name}: {buffer.get('lookback')}, "
                                  f"observations: {lookback})")
    infos = buffers["infos"]["data"] if isinstance(buffers["infos"], dict) else None
    try:
        episode = SingleAgentEpisode(
            state.get("id_"), observations=_data(buffers["observations"]), observation_space=observation_space,
            infos=None if infos is None else [info if isinstance(info, dict) else {} for info in infos],
            actions=_data(buffers["actions"]), action_space=action_space, rewards=_data(buffers["rewards"]),
            extra_model_outputs={k: _data(v) for k, v in extra.items() if v is not None},
            terminated=bool(state.get("is_terminated", False)), truncated=bool(state.get("is_truncated", False)),
            t_started=int(state.get("t_started") or 0), len_lookback_buffer=lookback,
            agent_id=state.get("agent_id"), module_id=state.get("module_id"),
            multi_agent_episode_id=state.get("multi_agent_episode_id"))
    except (ValueError, TypeError, IndexError) as error:
        raise EpisodeRowError(f"holds an inconsistent episode ({error})") from None
    return episode.to_numpy()


def _data(buffer: Dict[str, Any]):
    data = buffer["data"]
    return list(data) if isinstance(data, tuple) else data


def _buffer_state(buffer, data=None) -> Dict[str, Any]:
    data = buffer.data if data is None else data
    return {"data": data, "lookback": buffer.lookback, "finalized": not isinstance(data, list), "space": None}


def episode_state(episode: SingleAgentEpisode) -> Dict[str, Any]:
    """RLlib's episode state of one single-agent episode (spaces left out: readers take them from the config)."""
    return {
        "id_": episode.id_,
        "agent_id": episode.agent_id,
        "module_id": episode.module_id,
        "multi_agent_episode_id": episode.multi_agent_episode_id,
        "observations": _buffer_state(episode.observations),
        "actions": _buffer_state(episode.actions),
        "rewards": _buffer_state(episode.rewards),
        "infos": _buffer_state(episode.infos, list(episode.infos.data)),
        "extra_model_outputs": {k: _buffer_state(v) for k, v in episode.extra_model_outputs.items()} or None,
        "is_terminated": bool(episode.is_terminated),
        "is_truncated": bool(episode.is_truncated),
        "t_started": int(episode.t_started),
        "t": int(episode.t),
        "_observation_space": None,
        "_action_space": None,
        "_start_time": None,
        "_last_step_time": None,
        "custom_data": {},
    }


def encode_episode(episode: SingleAgentEpisode) -> bytes:
    msgpack = require("msgpack", "writing episode rows")
    mnp = require("msgpack_numpy", "writing episode rows")
    state = episode_state(episode)
    try:
        return msgpack.packb(state, default=mnp.encode)
    except TypeError as error:  # e.g. an info value msgpack cannot write
        raise TypeError(f"episode {episode.id_}: cannot write it as an episode row ({error}); keep infos to "
                        "numbers, strings, lists, dicts and numpy arrays, or record transition rows "
                        "(output_write_episodes=False).") from None


def single_agent_episodes(episodes) -> list:
    """The single-agent episodes to write: a multi-agent episode's agents' episodes, each naming its multi-agent
    episode (as RLlib's agent episodes do)."""
    out = []
    for episode in episodes:
        agent_episodes = getattr(episode, "agent_episodes", None)
        if agent_episodes is None:
            out.append(episode)
            continue
        for agent_episode in agent_episodes.values():
            if len(agent_episode):
                agent_episode.multi_agent_episode_id = episode.id_
                out.append(agent_episode)
    return out


__all__ = ["ITEM_COLUMN", "EpisodeRowError", "decode_episode_state", "episode_from_state", "episode_state",
           "encode_episode", "single_agent_episodes"]
