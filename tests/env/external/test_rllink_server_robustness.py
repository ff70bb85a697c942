"""The external-env server under malformed and hostile messages, sent with raw sockets: each gets an ERROR that
names the problem, the connection is closed, and the server goes on serving the next simulator."""
import os
import pickle
import socket
import threading
import time

import msgpack
import numpy as np
import pytest
from external_env_helpers import connect, frame, read_until_closed, rllib_episode_state, send_raw, server_config

from relayrl import DefaultModelConfig
from relayrl.env.external import RLlink, get_rllink_message
from relayrl.env.external.env_runner_server_for_external_inference import EnvRunnerServerForExternalInference
from relayrl.env.external.rllink_client import RLlinkClient, RLlinkServerError

LIMITS = {"message_timeout_s": 0.5, "max_pending_env_steps": 100, "max_message_bytes": 100_000}


@pytest.fixture(scope="module")
def server():
    """One server for the whole module: every test's bad connection is followed by the next test's."""
    runner = EnvRunnerServerForExternalInference(config=server_config(**LIMITS))
    yield runner
    runner.stop()


def assert_still_serving(server):
    """A well-behaved simulator connects, shakes hands and delivers episodes that sample() returns."""
    client = RLlinkClient(port=server.port, connect_timeout_s=5)
    client.connect()
    assert set(client.get_state()["rl_module"]) == set(server.module.get_state(inference_only=True))
    client.send_episodes([rllib_episode_state(3)], wait_for_state=False)
    (episode,) = server.sample()
    assert len(episode) == 3 and episode.is_terminated
    client.close()


def refused(server, data: bytes, problem: str) -> str:
    with connect(server.port) as sock:
        sock.sendall(data)
        msg_type, body = read_until_closed(sock)
    assert msg_type is RLlink.ERROR and problem in body["message"], body
    assert_still_serving(server)
    return body["message"]


@pytest.mark.parametrize("data, problem", [
    (b"abcdefgh", "Bad RLlink length header b'abcdefgh'"),
    (b"-0000001", "expected 8 ASCII digits"),
    (b"99999999", "announces 99999999 bytes, over this server's limit of 100000"),  # refused before any body
    (frame(b"\xc1\xc1\xc1"), "not msgpack"),
    (frame(b'{"type": "PING"}'), "Undecodable RLlink message body"),  # JSON is not RLlink's encoding
    (frame(msgpack.packb({"type": 5})), "no 'type' field"),
    (frame(msgpack.packb([1, 2, 3])), "must be a map"),
    (frame(msgpack.packb({"type": "HELLO"})), "Unknown RLlink message type 'HELLO'"),
    (frame(msgpack.packb({"type": "GET_ACTION", "observation": [0, 0, 0, 0]})), "RLlib's old API stack"),
    (frame(msgpack.packb({"type": "SET_STATE"})), "a message the server sends"),
    (frame(msgpack.packb({"type": "EPISODES", "episodes": {"a": 1}})), "'episodes': a list"),
])
def test_malformed_messages_get_a_clear_error_and_the_server_keeps_serving(server, data, problem):
    refused(server, data, problem)


def test_wrong_types_inside_an_episode_are_named(server):
    state = rllib_episode_state(4)
    state["observations"]["data"][2] = "not an observation"
    message = refused(server, frame(msgpack.packb({"type": "EPISODES", "episodes": [state]}, default=_numpy)),
                      "episodes[0].observations.data")
    assert "expected numbers" in message or "different shapes" in message


def test_a_too_large_episode_is_refused(server):
    refused(server, frame(msgpack.packb({"type": "EPISODES", "episodes": [rllib_episode_state(150)]}, default=_numpy)),
            "more than 100 env steps, this server's limit per message")


def test_an_object_array_is_refused_without_unpickling(server, tmp_path):
    marker = str(tmp_path / "unpickled")

    class Marker:
        def __reduce__(self):
            return (open, (marker, "w"))

    payload = {b"nd": True, b"type": "|O", b"kind": b"O", b"shape": [1], b"data": pickle.dumps(Marker())}
    refused(server, frame(msgpack.packb({"type": "EPISODES", "episodes": [payload]})), "refused")
    assert not os.path.exists(marker)


def test_a_disconnect_mid_message_leaves_the_server_serving(server):
    with connect(server.port) as sock:
        sock.sendall(b"00001000" + b"\x81" * 10)  # 10 of 1000 bytes, then gone
    assert_still_serving(server)


def test_a_message_that_stalls_halfway_times_out(server):
    with connect(server.port) as sock:
        sock.sendall(b"00001000" + b"\x81" * 10)
        started = time.monotonic()
        msg_type, body = read_until_closed(sock)
    assert msg_type is RLlink.ERROR and "Timed out after 10 of 1000 bytes" in body["message"]
    assert time.monotonic() - started < 5
    assert_still_serving(server)


def test_a_silent_peer_does_not_hold_the_port(server):
    with connect(server.port) as sock:
        msg_type, body = read_until_closed(sock)  # sends nothing: dropped after message_timeout_s
    assert msg_type is RLlink.ERROR and "No message within 0.5 s of connecting" in body["message"]
    assert_still_serving(server)


def test_a_second_simulator_is_told_the_port_is_busy(server):
    first = RLlinkClient(port=server.port)
    first.connect()
    with connect(server.port) as sock:
        msg_type, body = read_until_closed(sock)
    assert msg_type is RLlink.ERROR and body["message"].startswith("Busy: a simulator is connected")
    second = RLlinkClient(port=server.port, connect_timeout_s=0.3)
    with pytest.raises(ConnectionError, match="Busy"):
        second.connect()
    first.close()
    assert_still_serving(server)


def test_a_simulator_that_reconnects_at_once_is_served_not_refused_as_busy(server):
    """The old connection's thread notices the end of its stream a moment after the simulator closed it; a new
    connection arriving in between waits for the slot (RECONNECT_GRACE_S) instead of getting "Busy"."""
    first = RLlinkClient(port=server.port)
    first.connect()
    closer = threading.Timer(0.1, first.close)  # leaves while the second connection is already waiting
    with connect(server.port) as sock:
        closer.start()
        send_raw(sock, {"type": RLlink.PING.name})
        msg_type, _ = get_rllink_message(sock)
    closer.join()
    assert msg_type is RLlink.PONG
    assert_still_serving(server)


def test_the_client_raises_the_servers_error(make_server):
    """RLlinkClient turns the server's ERROR into an exception that quotes it."""
    client = RLlinkClient(port=make_server(**LIMITS).port)
    client.connect()
    bad = rllib_episode_state(4)
    del bad["extra_model_outputs"]["action_logp"]
    with pytest.raises(RLlinkServerError, match=r"closed the connection with an error: episodes\[0\]"
                                                r".extra_model_outputs: lacks \['action_logp'\]"):
        client.send_episodes([bad])
    assert not client.connected


def test_protocol_errors_and_connections_are_counted(make_server):
    server = make_server(**LIMITS)
    for data in (b"abcdefgh", frame(msgpack.packb({"type": "HELLO"}))):
        with connect(server.port) as sock:
            sock.sendall(data)
            read_until_closed(sock)
    assert_still_serving(server)
    peek = server.metrics.peek
    assert peek("num_protocol_errors_lifetime") == 2
    assert peek("num_simulator_connections_lifetime") == 3
    assert peek("num_simulator_disconnects_lifetime") >= 2  # (the third may end after sample() returned)
    assert peek("num_env_steps_lost_lifetime") == 0  # none was a simulator in the middle of collecting


def _numpy(obj):
    if isinstance(obj, np.ndarray):
        return {b"nd": True, b"type": obj.dtype.str, b"kind": b"", b"shape": list(obj.shape), b"data": obj.tobytes()}
    if isinstance(obj, np.generic):
        return {b"nd": False, b"type": obj.dtype.str, b"data": obj.tobytes()}
    raise TypeError(obj)


def test_old_api_stack_clients_learn_what_to_send_instead(server):
    with connect(server.port) as sock:
        send_raw(sock, {"type": "PING"})
        assert get_rllink_message(sock)[0] is RLlink.PONG
        send_raw(sock, {"type": "START_EPISODE"})
        msg_type, body = read_until_closed(sock)
    assert "sends EPISODES or EPISODES_AND_GET_STATE" in body["message"]
    assert_still_serving(server)


def test_a_simulator_that_stops_reading_never_stalls_training(make_server):
    """It asks for weights (4 MB of them) and never reads: the trainer's sample() and set_state() do no socket
    I/O (the connection's own thread sends, and blocks alone), and stop() still ends that thread."""
    server = make_server(config=server_config().rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[1024, 1024])))
    with connect(server.port) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        send_raw(sock, {"type": "EPISODES_AND_GET_STATE", "episodes": [rllib_episode_state(3)]})
        started = time.monotonic()
        (episode,) = server.sample()
        for _ in range(3):
            server.set_state({"rl_module": server.module.get_state(inference_only=True)})
        assert time.monotonic() - started < 5 and len(episode) == 3
        server.stop()
    assert not server._server._thread.is_alive()


def test_a_body_of_countless_tiny_maps_is_refused(make_server):
    """200,000 empty maps fit in 200 KB of msgpack but would take ~15 MB as Python dicts: bounded by the count
    of maps and lists (10 per allowed step + 100,000)."""
    server = make_server(max_pending_env_steps=100, max_message_bytes=1_000_000)
    body = msgpack.packb({"type": "EPISODES", "episodes": [{} for _ in range(200_000)]})
    with connect(server.port) as sock:
        sock.sendall(frame(body))
        msg_type, answer = read_until_closed(sock)
    assert msg_type is RLlink.ERROR and "more than 101000 maps and lists" in answer["message"]


def test_a_simulator_that_leaves_while_waiting_for_weights_frees_its_slot(make_server):
    """An on-policy simulator's message waits on the server for newer weights; its connection thread does not
    read meanwhile. If that simulator closes (ExternalSimulator.stop()), the next one must be served, not refused as
    busy until a sample() that only the next simulator could feed (the docs' example hung there for 60 s)."""
    server = make_server(**LIMITS)
    first = RLlinkClient(port=server.port, connect_timeout_s=5)
    first.connect()
    first.get_state()
    sender = threading.Thread(target=lambda: pytest.raises(ConnectionError, first.send_episodes,
                                                           [rllib_episode_state(3)], wait_for_state=True),
                              daemon=True)
    sender.start()
    deadline = time.monotonic() + 5
    while server._waiting_for_state is None and time.monotonic() < deadline:  # its message waits for weights
        time.sleep(0.01)
    assert server._waiting_for_state is not None
    first.close()
    second = RLlinkClient(port=server.port, connect_timeout_s=3)
    second.connect()  # before: "Busy: a simulator is connected to this EnvRunner already"
    second.send_episodes([rllib_episode_state(2)], wait_for_state=False)
    deadline = time.monotonic() + 5  # the second one's message is read by its connection's thread: wait for it
    while server._pending_steps < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(len(e) for e in server.sample()) == [2, 3]  # the first one's message was kept: nothing lost
    second.close()
    sender.join(5)
