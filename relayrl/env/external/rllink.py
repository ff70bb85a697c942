"""RLlink: RLlib's protocol between an external simulator (the client) and an EnvRunner (the server).

A message is an 8-byte, zero-padded ASCII decimal length header, then that many bytes of msgpack
body (wire_codec.py): a map whose "type" is one of `RLlink`'s names. relayrl speaks version 0.0.1,
as RLlib 2.60 does, with two differences (docs/external_env.md): SET_CONFIG carries the config as
data (RLlib pickles it), and the server answers a message it refuses with ERROR before it closes
the connection (RLlib closes it without a word).

Reading never trusts the peer: the header must be 8 digits, the body at most `max_message_bytes`
(checked before a byte of it is read), and once a message has begun it must arrive whole within
`message_timeout_s`.
"""
import enum
import selectors
import socket
import time
from typing import Any, Dict, Optional, Tuple

from relayrl.env.external import wire_codec

PROTOCOL_VERSION = "0.0.1"
HEADER_BYTES = 8
LARGEST_MESSAGE_BYTES = 10 ** HEADER_BYTES - 1  # what an 8-digit header can announce
DEFAULT_MAX_MESSAGE_BYTES = 64 * 2 ** 20
DEFAULT_MESSAGE_TIMEOUT_S = 60.0
# How often a wait for the rest of a message looks whether another thread closed the socket: epoll drops a
# closed fd without waking anyone, so a stopping client would otherwise wait out message_timeout_s.
CLOSED_CHECK_S = 0.2


class RLlink(enum.Enum):
    """RLlink's message types (the "type" field of a message body)."""

    # Client (simulator) -> server (EnvRunner).
    PING = "PING"  # handshake; answered with PONG
    EPISODES = "EPISODES"  # {"episodes": [episode states], "timesteps": n}: samples, no answer
    GET_STATE = "GET_STATE"  # answered with SET_STATE
    GET_CONFIG = "GET_CONFIG"  # answered with SET_CONFIG
    EPISODES_AND_GET_STATE = "EPISODES_AND_GET_STATE"  # samples; SET_STATE answers once the weights are newer
    # Server -> client.
    PONG = "PONG"
    SET_STATE = "SET_STATE"  # {"state": {"rl_module": {param name: array}, "weights_seq_no": n}}
    SET_CONFIG = "SET_CONFIG"  # {"config": the AlgorithmConfig as data}
    ERROR = "ERROR"  # relayrl's: {"message": why the server refused the last message}; it then closes
    # RLlib's old API stack (server-side inference), which relayrl, like RLlib's new stack, does not serve.
    ACTION_SPACE = "ACTION_SPACE"
    OBSERVATION_SPACE = "OBSERVATION_SPACE"
    GET_WORKER_ARGS = "GET_WORKER_ARGS"
    GET_WEIGHTS = "GET_WEIGHTS"
    REPORT_SAMPLES = "REPORT_SAMPLES"
    START_EPISODE = "START_EPISODE"
    GET_ACTION = "GET_ACTION"
    LOG_ACTION = "LOG_ACTION"
    LOG_RETURNS = "LOG_RETURNS"
    END_EPISODE = "END_EPISODE"

    def __str__(self) -> str:
        return self.name


CLIENT_MESSAGES = (RLlink.PING, RLlink.EPISODES, RLlink.GET_STATE, RLlink.GET_CONFIG, RLlink.EPISODES_AND_GET_STATE)


class RLlinkProtocolError(ConnectionError):
    """A message that breaks RLlink (framing, encoding or content). A ConnectionError, as RLlib raises."""


def send_rllink_message(sock_: socket.socket, message: Dict[str, Any]) -> None:
    """Send `message` (a dict with a "type": an RLlink name or member) with its length header."""
    message = dict(message, type=str(message["type"]))
    body = wire_codec.pack(message)
    if len(body) > LARGEST_MESSAGE_BYTES:
        raise ValueError(f"An RLlink message holds at most {LARGEST_MESSAGE_BYTES} bytes (8-digit header); this "
                         f"{message['type']} message packs to {len(body)}: send fewer episodes per message.")
    try:
        sock_.sendall(str(len(body)).zfill(HEADER_BYTES).encode("ascii") + body)
    except OSError as error:
        raise ConnectionError(f"Could not send the {message['type']} message: {error}") from error


def get_rllink_message(sock_: socket.socket, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                       message_timeout_s: Optional[float] = DEFAULT_MESSAGE_TIMEOUT_S,
                       max_containers: Optional[int] = None) -> Tuple[RLlink, Dict[str, Any]]:
    """The next message: (its type, its body without "type").

    Waits for the first byte as long as the socket's own timeout says (None: forever); the rest must
    come within `message_timeout_s`. `max_containers`: most maps and lists in the body (wire_codec.unpack).
    Raises ConnectionError when the peer closes or resets the connection, and RLlinkProtocolError (a
    ConnectionError too) for a message that breaks the protocol.
    """
    first = _recv_exactly(sock_, 1, deadline=None, what="a message")
    deadline = None if message_timeout_s is None else time.monotonic() + message_timeout_s
    header = first + _recv_exactly(sock_, HEADER_BYTES - 1, deadline, what="a length header")
    if not (header.isascii() and header.isdigit()):
        raise RLlinkProtocolError(f"Bad RLlink length header {header!r}: expected {HEADER_BYTES} ASCII digits "
                                  "(the body's length, zero-padded).")
    length = int(header)
    if length > max_message_bytes:
        raise RLlinkProtocolError(f"The message announces {length} bytes, over this server's limit of "
                                  f"{max_message_bytes} (env_config['max_message_bytes']): send fewer episodes "
                                  "per message.")
    body = _recv_exactly(sock_, length, deadline, what=f"a {length}-byte message body")
    try:
        message = wire_codec.unpack(body, max_containers=max_containers)
    except wire_codec.WireFormatError as error:
        raise RLlinkProtocolError(f"Undecodable RLlink message body: {error}") from None
    return _split_type(message)


def _split_type(message: Any) -> Tuple[RLlink, Dict[str, Any]]:
    if not isinstance(message, dict):
        raise RLlinkProtocolError(f"An RLlink message body must be a map with a 'type'; got a "
                                  f"{type(message).__name__}.")
    name = message.pop("type", None)
    if not isinstance(name, str):
        raise RLlinkProtocolError("The message has no 'type' field (a str naming the message, e.g. 'PING').")
    try:
        return RLlink(name), message
    except ValueError:
        known = ", ".join(m.name for m in RLlink)
        raise RLlinkProtocolError(f"Unknown RLlink message type {name[:60]!r}; RLlink {PROTOCOL_VERSION} has: "
                                  f"{known}.") from None


def _recv_exactly(sock_: socket.socket, n: int, deadline: Optional[float], *, what: str) -> bytes:
    """`n` bytes, read as they arrive (nothing is allocated ahead for a size the peer announced).

    `deadline` None: wait as the socket's own timeout says (socket.timeout, a TimeoutError, when it runs
    out). Otherwise each read waits for data with a selector, leaving the socket's timeout alone (another
    thread may be sending on it)."""
    chunks, received = [], 0
    selector = selectors.DefaultSelector() if deadline is not None else None
    try:
        if selector is not None:
            try:
                selector.register(sock_, selectors.EVENT_READ)
            except (ValueError, OSError):  # closed by another thread (a client stopping)
                raise ConnectionError(f"The connection was closed while reading {what}.") from None
        while received < n:
            if selector is not None:
                _wait_readable(selector, sock_, deadline, f"{received} of {n} bytes of {what}")
            try:
                chunk = sock_.recv(min(n - received, 2 ** 20))
            except socket.timeout:  # (an OSError, but no failed connection: the caller's timeout ran out)
                raise
            except OSError as error:
                raise ConnectionError(f"The connection failed while reading {what}: {error}") from error
            if not chunk:
                if received == 0 and deadline is None:
                    raise ConnectionError("The peer closed the connection.")
                raise ConnectionError(f"The peer closed the connection after {received} of {n} bytes of {what}.")
            chunks.append(chunk)
            received += len(chunk)
    finally:
        if selector is not None:
            selector.close()
    return b"".join(chunks)


def _wait_readable(selector: selectors.BaseSelector, sock_: socket.socket, deadline: float, progress: str) -> None:
    """Until `sock_` has data; RLlinkProtocolError at `deadline`, ConnectionError once the socket is closed.
    `progress`: what was read so far ("5 of 7 bytes of a length header")."""
    while not selector.select(min(max(deadline - time.monotonic(), 0.0), CLOSED_CHECK_S)):
        if sock_.fileno() < 0:
            raise ConnectionError(f"The connection was closed (by this process) after {progress}.")
        if time.monotonic() >= deadline:
            raise RLlinkProtocolError(f"Timed out after {progress}: a message must arrive whole within "
                                      "env_config['message_timeout_s'].")
