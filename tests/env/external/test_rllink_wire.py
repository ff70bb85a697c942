"""RLlink on the wire: framing, the msgpack body with msgpack-numpy's array layout (never pickle), and episode
chunks in RLlib's state layout checked against the server's spaces."""
import os
import pickle
import socket
import threading
import time

import msgpack
import numpy as np
import pytest
from external_env_helpers import ACT_SPACE, OBS_SPACE, frame, rllib_episode_state

from relayrl.env.external import RLlink, RLlinkProtocolError, get_rllink_message, send_rllink_message
from relayrl.env.external.wire_codec import WireFormatError, pack, unpack
from relayrl.env.external.wire_episodes import EpisodeSchema, episode_to_wire
from relayrl.episodes.single_agent_episode import SingleAgentEpisode

PPO_OUTPUTS = {"action_dist_inputs": (2,), "action_logp": ()}


def test_arrays_and_scalars_travel_in_msgpack_numpys_layout():
    values = {"f": np.arange(6, dtype=np.float32).reshape(2, 3), "i": np.array([1, -2], np.int64),
              "b": np.array([True, False]), "u8": np.zeros((2, 2), np.uint8), "s": np.float32(2.5), "n": [1, "x", None]}
    decoded = unpack(pack(values))
    for key in ("f", "i", "b", "u8"):
        assert decoded[key].dtype == values[key].dtype and np.array_equal(decoded[key], values[key])
        assert decoded[key].flags.writeable  # (torch warns on read-only arrays)
    assert decoded["s"] == np.float32(2.5) and decoded["n"] == [1, "x", None]
    # The map msgpack-numpy writes for an array (what RLlib's clients send) is what relayrl writes and reads.
    raw = msgpack.unpackb(pack(np.ones(3, np.float32)), raw=False)
    assert raw == {b"nd": True, b"type": "<f4", b"kind": b"", b"shape": [3], b"data": np.ones(3, np.float32).tobytes()}
    as_msgpack_numpy_writes_it = msgpack.packb({b"nd": True, b"type": "<f8", b"kind": b"", b"shape": (2,),
                                                b"data": np.array([0.5, 1.5]).tobytes()}, use_bin_type=True)
    assert np.array_equal(unpack(as_msgpack_numpy_writes_it), [0.5, 1.5])


class _Marker:
    """Unpickling it would create a file: the proof that nothing was unpickled."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_an_object_array_is_refused_and_never_unpickled(tmp_path):
    marker = str(tmp_path / "unpickled")
    # msgpack-numpy writes an object array as a pickle (kind b"O") and unpickles it when reading.
    body = msgpack.packb({"type": "EPISODES", "x": {b"nd": True, b"type": "|O", b"kind": b"O", b"shape": [1],
                                                    b"data": pickle.dumps(_Marker(marker))}}, use_bin_type=True)
    with pytest.raises(WireFormatError, match="refused"):
        unpack(body)
    assert not os.path.exists(marker)
    with pytest.raises(TypeError, match="RLlink carries no numpy arrays of dtype object"):
        pack({"x": np.array([object()])})


@pytest.mark.parametrize("body, problem", [
    (b"\xc1", "not msgpack"),
    (b"\x91" * 5000, "nested too deeply"),
    (msgpack.packb(1) + b"\x01", "bytes after"),
    (msgpack.packb({1: 2}), "not valid msgpack"),
    (msgpack.packb({b"nd": True, b"type": "<f4", b"kind": b"", b"shape": [1000000], b"data": b"1234"}), "needs"),
    (msgpack.packb({b"nd": True, b"type": "not-a-dtype", b"kind": b"", b"shape": [1], b"data": b"1"}), "unknown"),
    (msgpack.packb(msgpack.ExtType(5, b"x")), "extension type"),
])
def test_bodies_that_are_not_rllinks_msgpack_get_a_clear_error(body, problem):
    with pytest.raises(WireFormatError, match=problem):
        unpack(body)


def test_the_number_of_maps_and_lists_is_bounded():
    """A few bytes per empty map would become ~60 bytes of Python object each: bounded before they pile up."""
    with pytest.raises(WireFormatError, match="more than 1000 maps and lists"):
        unpack(pack([{} for _ in range(5000)]), max_containers=1000)
    assert len(unpack(pack([{} for _ in range(500)]), max_containers=1000)) == 500


def test_framing_round_trip_and_header_checks():
    a, b = socket.socketpair()
    with a, b:
        send_rllink_message(a, {"type": RLlink.PING, "n": np.arange(3)})
        msg_type, body = get_rllink_message(b)
        assert msg_type is RLlink.PING and np.array_equal(body["n"], [0, 1, 2])
        a.sendall(b"12ab5678")
        with pytest.raises(RLlinkProtocolError, match="Bad RLlink length header b'12ab5678'"):
            get_rllink_message(b)
        a.sendall(b"99999999")  # announced, never sent: refused before a byte of the body is awaited
        with pytest.raises(RLlinkProtocolError, match="announces 99999999 bytes, over this server's limit of 1000"):
            get_rllink_message(b, max_message_bytes=1000)
        a.sendall(frame(pack({"type": "NO_SUCH"})))
        with pytest.raises(RLlinkProtocolError, match="Unknown RLlink message type 'NO_SUCH'; RLlink 0.0.1 has: PING"):
            get_rllink_message(b)
        a.sendall(frame(pack([1, 2])))
        with pytest.raises(RLlinkProtocolError, match="must be a map with a 'type'"):
            get_rllink_message(b)
        a.sendall(frame(b"x" * 10)[:12])  # a message that stops halfway
        with pytest.raises(RLlinkProtocolError, match="Timed out after 4 of 10 bytes"):
            get_rllink_message(b, message_timeout_s=0.2)



def test_a_read_halfway_through_a_message_ends_when_another_thread_closes_the_socket():
    """A stopping client closes its socket from another thread; epoll forgets a closed fd without waking the
    reader, which used to wait out message_timeout_s (60 s: a simulator that outlived stop(), CI 2026-12-05)."""
    a, b = socket.socketpair()
    ended = {}

    def read():
        start = time.monotonic()
        with pytest.raises(ConnectionError, match=r"closed \(by this process\) after 5 of 7 bytes of a length header"):
            get_rllink_message(b, message_timeout_s=30.0)
        ended["after_s"] = time.monotonic() - start

    with a:
        reader = threading.Thread(target=read)
        reader.start()
        a.sendall(b"000001")  # the first byte and part of the header, then nothing
        time.sleep(0.3)  # (the reader now waits for the rest)
        b.close()  # no shutdown(): what a close between two reads of a message looks like to the reader
        reader.join(10)
    assert not reader.is_alive() and ended["after_s"] < 5.0

def test_rllib_layout_episodes_become_relayrl_episodes():
    schema = EpisodeSchema(OBS_SPACE, ACT_SPACE, PPO_OUTPUTS)
    body = {"episodes": [rllib_episode_state(5, terminated=True), rllib_episode_state(3, terminated=False, id_="b"),
                         rllib_episode_state(0, terminated=False, id_="empty")], "timesteps": 8}
    first, second = schema.episodes_from_wire(body, max_env_steps=100)  # the stepless chunk is left out
    assert (len(first), first.is_terminated, first.id_) == (5, True, "episode-1")
    assert (len(second), second.is_done) == (3, False)
    assert first.get_observations().shape == (6, 4) and first.get_observations().dtype == np.float32
    assert list(first.get_actions()) == [0, 1, 0, 1, 0] and first.get_return() == 5.0
    assert first.get_extra_model_outputs("action_dist_inputs").shape == (5, 2)
    first.validate()


def test_relayrl_episodes_survive_the_round_trip_with_their_lookback():
    episode = SingleAgentEpisode(observation_space=OBS_SPACE, action_space=ACT_SPACE)
    episode.add_env_reset(np.zeros(4, np.float32))
    for t in range(4):
        episode.add_env_step(np.full(4, t + 1, np.float32), t % 2, 1.0,
                             extra_model_outputs={"action_dist_inputs": np.ones(2, np.float32), "action_logp": -0.5})
    successor = episode.cut(len_lookback_buffer=2)
    successor.add_env_step(np.full(4, 9, np.float32), 1, 2.0,
                           extra_model_outputs={"action_dist_inputs": np.ones(2, np.float32), "action_logp": -0.1})
    successor.to_numpy()
    wire = unpack(pack({"episodes": [episode_to_wire(successor)]}))
    (received,) = EpisodeSchema(OBS_SPACE, ACT_SPACE, PPO_OUTPUTS).episodes_from_wire(wire, max_env_steps=100)
    assert (received.id_, len(received), received.t_started) == (successor.id_, 1, 4)
    assert np.array_equal(received.get_observations(slice(-3, None), neg_index_as_lookback=False),
                          successor.get_observations(slice(-3, None)))
    assert received.observations.lookback == successor.observations.lookback > 0


def _broken(change):
    state = rllib_episode_state(4)
    change(state)
    return {"episodes": [state]}


@pytest.mark.parametrize("body, where, problem", [
    ({"episodes": "x"}, "", "needs 'episodes': a list"),
    ({"episodes": [7]}, "episodes[0]", "expected an episode state"),
    (_broken(lambda s: s["observations"]["data"].__setitem__(2, np.zeros(5, np.float32))), "observations.data",
     "different shapes"),
    (_broken(lambda s: s["observations"].__setitem__("data", [np.zeros(3)] * 5)), "observations.data",
     r"shape \(3,\) do not fit"),
    (_broken(lambda s: s["observations"].__setitem__("data", [{"a": 1}] * 5)), "observations.data", "expected numbers"),
    (_broken(lambda s: s["observations"]["data"].__setitem__(1, np.full(4, np.nan, np.float32))),
     "observations.data", "NaN"),
    (_broken(lambda s: s["actions"]["data"].__setitem__(0, 2)), "actions.data", "outside the Discrete"),
    (_broken(lambda s: s["actions"]["data"].__setitem__(0, 0.5)), "actions.data", "whole numbers"),
    (_broken(lambda s: s["rewards"]["data"].append(1.0)), "episodes[0]", "5 rewards for 4 actions"),
    (_broken(lambda s: s["rewards"]["data"].__setitem__(0, float("inf"))), "rewards.data", "NaN or infinite"),
    (_broken(lambda s: s["rewards"]["data"].__setitem__(0, "1")), "rewards.data", "expected numbers"),
    (_broken(lambda s: s["observations"]["data"].pop()), "episodes[0]", "4 observations for 4 actions"),
    (_broken(lambda s: s["extra_model_outputs"].pop("action_logp")), "extra_model_outputs",
     r"lacks \['action_logp'\], which this config's module produces"),
    (_broken(lambda s: s["extra_model_outputs"]["action_dist_inputs"].__setitem__("data", [np.zeros(3)] * 4)),
     "action_dist_inputs", r"rows of shape \(3,\); this config's module gives \(2,\)"),
    (_broken(lambda s: s.__setitem__("is_terminated", "yes")), "is_terminated", "expected a bool"),
    (_broken(lambda s: s.__setitem__("t_started", -3)), "t_started", "expected an int >= 0"),
    (_broken(lambda s: s["observations"].__setitem__("lookback", 99)), "observations", "lookback 99 is longer"),
    (_broken(lambda s: s.__setitem__("multi_agent_episode_id", "m")), "episodes[0]", "multi-agent"),
    (_broken(lambda s: s["infos"].__setitem__("data", [1] * 5)), "infos", "every info must be a map"),
])
def test_malformed_episodes_name_where_and_what(body, where, problem):
    with pytest.raises(RLlinkProtocolError, match=problem) as error:
        EpisodeSchema(OBS_SPACE, ACT_SPACE, PPO_OUTPUTS).episodes_from_wire(body, max_env_steps=100)
    assert where in str(error.value)


def test_a_message_over_the_step_limit_is_refused():
    body = {"episodes": [rllib_episode_state(60, id_="a"), rllib_episode_state(60, id_="b")]}
    with pytest.raises(RLlinkProtocolError, match="more than 100 env steps, this server's limit per message"):
        EpisodeSchema(OBS_SPACE, ACT_SPACE, PPO_OUTPUTS).episodes_from_wire(body, max_env_steps=100)
