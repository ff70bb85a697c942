"""The external-env server's socket: one simulator at a time on (host, port), its messages handed to a handler.

Python's socketserver accepts the connections, each in its own thread. The first one is the simulator; a
second one while it is connected gets an ERROR ("busy") and is closed, unless the first leaves within
RECONNECT_GRACE_S (a simulator reconnecting at once after closing, before its old thread has seen the end of
the stream). A connection that breaks the
protocol gets an ERROR naming the problem and is closed; either way the server keeps listening, and the
simulator reconnects. A connection must send its first message within `message_timeout_s`, so a silent
peer does not hold the port.
"""
import logging
import select
import socket
import socketserver
import threading
from typing import Any, Dict, Optional

from relayrl.env.external.rllink import RLlink, RLlinkProtocolError, get_rllink_message, send_rllink_message

logger = logging.getLogger("relayrl")


RECONNECT_GRACE_S = 0.5  # how long a new simulator waits for the slot of one that has just left before "Busy"


class SimulatorConnection:
    """One connected simulator; its thread does all the reading and sending."""

    def __init__(self, sock: socket.socket, address):
        self.sock, self.address = sock, address
        self.session: Any = None  # the handler's notes on this connection

    def send(self, message: Dict[str, Any]) -> bool:
        """Send `message`; False (logged) if the connection is gone."""
        try:
            send_rllink_message(self.sock, message)
            return True
        except ConnectionError as error:
            logger.info("RLlink: could not send %s to the simulator at %s: %s", message.get("type"), self.address,
                        error)
            return False

    def peer_closed(self) -> bool:
        """Whether the simulator closed its end, looked at without reading a byte (for a thread that waits instead
        of reading: a simulator waiting for an answer sends nothing, so a readable socket there means its end)."""
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
            return bool(readable) and self.sock.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):  # reset, or already closed here
            return True

    def refuse(self, reason: str) -> None:
        """Tell the peer why it is being disconnected (if it still listens)."""
        self.send({"type": RLlink.ERROR.name, "message": reason})

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class RLlinkServer:
    """Listens on (settings.host, settings.port) from construction (a taken port fails there) and, once
    started, serves in daemon threads. `handler` gets `on_connect(connection)`, `on_message(connection,
    type, body)` (returns the answer or None; raises RLlinkProtocolError to refuse) and
    `on_disconnect(connection, error)` (what ended the connection; None when the server closed it)."""

    def __init__(self, settings, handler):
        self.settings, self._handler = settings, handler
        try:
            self._tcp = _TCPServer((settings.host, settings.port), _Request, owner=self)
        except OSError as error:
            raise OSError(error.errno, f"The external-env server cannot listen on {settings.host}:{settings.port}: "
                                       f"{error.strerror}. Another server (or an earlier run) may hold the port: "
                                       "pick another with config.environment(env_config={'port': ...}), or 0 for "
                                       "any free port.") from error
        self.port = self._tcp.server_address[1]
        self._released = threading.Condition()  # guards _active; notified when the simulator's slot frees
        self._active: Optional[SimulatorConnection] = None
        self._thread = threading.Thread(target=self._tcp.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=f"rllink-server-{self.port}", daemon=True)

    def start(self) -> None:
        self._thread.start()
        logger.info("RLlink: waiting for a simulator on %s:%d", self.settings.host, self.port)

    def close(self) -> None:
        """Stop listening and drop the simulator's connection."""
        if self._thread.is_alive():
            self._tcp.shutdown()
        self._tcp.server_close()
        with self._released:
            active, self._active = self._active, None
            self._released.notify_all()
        if active is not None:
            active.close()

    def serve(self, sock: socket.socket, address) -> None:
        """One connection, start to end (a socketserver thread)."""
        connection = SimulatorConnection(sock, address)
        with self._released:
            # A simulator that just closed its connection may not be noticed yet (its thread reads the end of the
            # stream a moment later): a reconnect within the grace is served, not refused as busy.
            busy = not self._released.wait_for(lambda: self._active is None, timeout=RECONNECT_GRACE_S)
            if not busy:
                self._active = connection
        if busy:
            logger.warning("RLlink: refused a second simulator from %s: one is connected already.", address)
            connection.refuse(f"Busy: a simulator is connected to this EnvRunner already (from "
                              f"{self.connected_address()}). Each EnvRunner serves one; connect to another port "
                              "(port + worker_index).")
            connection.close()
            return
        _keep_alive(sock)
        ended_by = None
        try:
            self._handler.on_connect(connection)
            self._serve_messages(connection)
        except RLlinkProtocolError as error:
            ended_by = error
            logger.warning("RLlink: closing the connection of the simulator at %s: %s", address, error)
            connection.refuse(str(error))
        except (ConnectionError, OSError) as error:  # the peer closed, reset, or vanished
            ended_by = error
            logger.info("RLlink: the simulator at %s disconnected: %s", address, error)
        except Exception as error:  # a bug here: the server keeps serving, the peer learns it was not its fault
            ended_by = error
            logger.exception("RLlink: internal error while serving the simulator at %s", address)
            connection.refuse(f"The server failed on this message ({error!r}); see its log.")
        finally:
            with self._released:
                if self._active is connection:
                    self._active = None
                self._released.notify_all()
            connection.close()
            self._handler.on_disconnect(connection, ended_by)

    def _serve_messages(self, connection: SimulatorConnection) -> None:
        settings, sock = self.settings, connection.sock
        sock.settimeout(settings.message_timeout_s)  # the first message: a silent peer must not hold the port
        try:
            message = self._next_message(sock)
        except socket.timeout:
            raise RLlinkProtocolError(f"No message within {settings.message_timeout_s} s of connecting "
                                      "(env_config['message_timeout_s']).") from None
        sock.settimeout(None)  # then: as long as the simulator needs between messages
        while True:
            answer = self._handler.on_message(connection, *message)
            if answer is not None and not connection.send(answer):
                raise ConnectionError("the simulator went away before its answer")
            message = self._next_message(sock)

    def _next_message(self, sock: socket.socket):
        settings = self.settings
        return get_rllink_message(sock, max_message_bytes=settings.max_message_bytes,
                                  message_timeout_s=settings.message_timeout_s,
                                  max_containers=settings.max_containers)

    def connected_address(self):
        """The connected simulator's (host, port), or None."""
        active = self._active
        return None if active is None else active.address


class _TCPServer(socketserver.ThreadingTCPServer):
    allow_reuse_address = True  # a restarted server rebinds at once, not after TIME_WAIT
    daemon_threads = True

    def __init__(self, address, request_handler, *, owner: RLlinkServer):
        self.owner = owner
        super().__init__(address, request_handler)


class _Request(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.server.owner.serve(self.request, self.client_address)


def _keep_alive(sock: socket.socket) -> None:
    """TCP keep-alive probes, so a simulator whose machine vanished (no FIN) is noticed in about half a minute."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (("TCP_KEEPIDLE", 10), ("TCP_KEEPINTVL", 5), ("TCP_KEEPCNT", 4)):
        if hasattr(socket, name):  # (Linux; macOS and Windows have other names or none)
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)
