"""`RLlinkClient`: the simulator's end of RLlink, one request at a time over one TCP connection."""
import socket
import threading
import time
from typing import Any, Dict, Iterable, List, Optional

from relayrl.env.external.rllink import (
    DEFAULT_MAX_MESSAGE_BYTES,
    RLlink,
    RLlinkProtocolError,
    get_rllink_message,
    send_rllink_message,
)
from relayrl.env.external.wire_episodes import episode_to_wire


class RLlinkServerError(ConnectionError):
    """The server refused a message (its ERROR answer, which may answer an earlier message than the last one
    sent) and closed the connection."""


class RLlinkClient:
    """Connects to an EnvRunnerServerForExternalInference and asks it for the config and weights, and sends
    it episodes. Each call raises ConnectionError when the connection breaks (RLlinkServerError when the
    server refused the message); `connect()` again to go on."""

    def __init__(self, host: str = "localhost", port: int = 5555, *, connect_timeout_s: float = 60.0,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES):
        self.host, self.port = host, port
        self.connect_timeout_s = connect_timeout_s
        self.max_message_bytes = max_message_bytes
        self._sock: Optional[socket.socket] = None

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def connect(self, timeout_s: Optional[float] = None, *, stop: Optional[threading.Event] = None) -> None:
        """Connect and shake hands (PING, PONG), retrying for `timeout_s` (default connect_timeout_s) while the
        server is not up yet, busy, or restarting. Once `stop` is set, no more tries: ConnectionError."""
        self.close()
        timeout_s = self.connect_timeout_s if timeout_s is None else timeout_s
        deadline, delay = time.monotonic() + timeout_s, 0.05
        stop = stop or threading.Event()
        while True:
            if stop.is_set():
                raise ConnectionError(f"Stopped while connecting to {self.host}:{self.port}.")
            try:
                self._sock = socket.create_connection((self.host, self.port), timeout=max(timeout_s, 1.0))
                self._sock.settimeout(None)
                self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._request({"type": RLlink.PING.name}, RLlink.PONG)
                return
            except ConnectionError as error:
                self.close()
                if time.monotonic() + delay > deadline:
                    raise ConnectionError(f"No RLlink server answered on {self.host}:{self.port} within {timeout_s} s "
                                          f"(last: {error}).") from error
                stop.wait(delay)
                delay = min(delay * 2, 1.0)

    def get_config(self, *, trusted: Optional[Iterable[Any]] = None, config_overrides: Optional[Dict[str, Any]] = None):
        """The server's AlgorithmConfig. It comes as data: a class it names resolves only to relayrl's own, to
        ones this process imported, or to what `trusted` lists (as for checkpoints: docs/checkpoints.md);
        `config_overrides` gives options the data cannot hold (lambdas)."""
        from relayrl.algorithms.config_json import config_from_json, refused_names_in_config
        from relayrl.checkpoints.errors import CheckpointError
        from relayrl.checkpoints.state_checks import Where
        from relayrl.checkpoints.trust import Trust
        from relayrl.checkpoints.untrusted_names import NameCheck

        body = self._request({"type": RLlink.GET_CONFIG.name}, RLlink.SET_CONFIG)
        trust, where = Trust(trusted), Where("the server's config (SET_CONFIG)")
        try:
            check = NameCheck()  # every name the simulator does not trust, in one error, before any is looked up
            refused_names_in_config(body.get("config"), config_overrides, trust=trust, where=where, check=check)
            check.raise_if_any("the server's config (SET_CONFIG)")
            return config_from_json(body.get("config"), config_overrides, trust=trust, where=where)
        except CheckpointError as error:
            raise ValueError(f"Cannot use the server's config: {error} (Here: pass what it names to the simulator, "
                             "ExternalSimulator(..., trusted=[...], config_overrides={...}), or on the command line "
                             "--trust MODULE: the server's script, by its module name, for its `__main__` names.)"
                             ) from None

    def get_state(self) -> Dict[str, Any]:
        """The current weights: {"rl_module": {parameter name: array}, "weights_seq_no": n}."""
        return self._state(self._request({"type": RLlink.GET_STATE.name}, RLlink.SET_STATE))

    def send_episodes(self, episodes: List[Any], *, wait_for_state: bool = True) -> Optional[Dict[str, Any]]:
        """Send episode chunks (relayrl SingleAgentEpisodes, or states in RLlib's layout). With `wait_for_state`
        (EPISODES_AND_GET_STATE: on-policy) returns the weights the server answers with once they are newer."""
        states = [e if isinstance(e, dict) else episode_to_wire(e) for e in episodes]
        steps = sum(len(e) for e in episodes if not isinstance(e, dict))
        message = {"type": (RLlink.EPISODES_AND_GET_STATE if wait_for_state else RLlink.EPISODES).name,
                   "episodes": states, "timesteps": steps}
        if not wait_for_state:
            self._send(message)
            return None
        return self._state(self._request(message, RLlink.SET_STATE))

    def close(self) -> None:
        """Disconnect (from any thread: a call waiting for an answer then raises ConnectionError)."""
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # (wakes a recv() in another thread; close() alone may not)
            except OSError:
                pass
            sock.close()

    # -- messages ----------------------------------------------------------------------------------
    def _request(self, message: Dict[str, Any], answer: RLlink) -> Dict[str, Any]:
        sock = self._send(message)
        try:
            msg_type, body = get_rllink_message(sock, max_message_bytes=self.max_message_bytes)
        except ConnectionError:
            self.close()
            raise
        if msg_type is RLlink.ERROR:
            self.close()
            raise RLlinkServerError(f"The server closed the connection with an error: {body.get('message')}")
        if msg_type is not answer:
            self.close()
            raise RLlinkProtocolError(f"The server answered {message['type']} with {msg_type}, not {answer}.")
        return body

    def _send(self, message: Dict[str, Any]) -> socket.socket:
        sock = self._sock
        if sock is None:
            raise ConnectionError(f"Not connected to {self.host}:{self.port}: call connect() first.")
        try:
            send_rllink_message(sock, message)
        except ConnectionError:
            self.close()
            raise
        return sock

    @staticmethod
    def _state(body: Dict[str, Any]) -> Dict[str, Any]:
        state = body.get("state")
        if not isinstance(state, dict) or not isinstance(state.get("rl_module"), dict):
            raise RLlinkProtocolError("The server's SET_STATE holds no 'state': {'rl_module': weights}.")
        return state
