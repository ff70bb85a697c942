"""`EnvRunnerServerForExternalInference`: an EnvRunner whose env is a simulator in another process, over TCP.

As in RLlib: the simulator connects to the runner's port (env_config["port"] + worker_index), asks for
the config and the weights, runs the RLModule and connector pipelines itself, and sends episode chunks
(RLlink, rllink.py). The runner holds no env; its module is only a weights container. `sample()` returns
what the simulator sent. A simulator that sent EPISODES_AND_GET_STATE (on-policy) gets SET_STATE once
`set_state()` (the Algorithm's weight sync) brought newer weights, or once sample() needs more data: then
the current weights are still the newest, so an on-policy simulator never waits on a sample() that waits
on it. All socket I/O happens in the connection's thread: the trainer's calls never wait on a simulator.

A simulator may crash and reconnect at any time; training goes on. What it had not sent is lost and
reported in the results (env_runners/num_env_steps_lost: for each simulator that vanished while
collecting, the steps of one of its messages, an upper bound; env_runners/num_episodes_dropped: its
episodes that had started but will never finish). Weights, optimizer and counters live in the Learner
and the Algorithm, which a simulator never touches.
"""
import collections
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from relayrl.algorithms.config_json import config_to_json
from relayrl.algorithms.inference import compute_actions_on_runner
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.env.env_runner import EnvRunner
from relayrl.env.external.rllink import RLlink, RLlinkProtocolError
from relayrl.env.external.rllink_server import RLlinkServer, SimulatorConnection
from relayrl.env.external.server_settings import ServerSettings
from relayrl.env.external.wire_episodes import EpisodeSchema
from relayrl.episodes.single_agent_episode import SingleAgentEpisode

logger = logging.getLogger("relayrl")

_WAIT_LOG_S = 30.0  # how often sample() says it is still waiting for a simulator
_PEER_CHECK_S = 0.2  # how often a connection thread waiting for weights looks whether its simulator left
_DROPPED_IDS_KEPT = 10_000  # ids of dropped episodes remembered (their late chunks train, but count in no return)
_SAMPLING_CLIENT_MESSAGES = (RLlink.GET_STATE, RLlink.EPISODES, RLlink.EPISODES_AND_GET_STATE)


@dataclass
class _Session:
    """The server's notes on one connection."""

    ongoing: set = field(default_factory=set)  # ids of its episodes sent in part, not finished
    message_steps: Optional[int] = None  # env steps in its last EPISODES message (what a crash loses, at most)
    samples: bool = False  # it asked for weights or sent episodes (a simulator, not just a probe)
    waiting: bool = False  # it sent all it had and waits for weights (a crash now loses nothing)


class EnvRunnerServerForExternalInference(EnvRunner):
    """Serves one external simulator on `localhost:env_config["port"] + worker_index` (docs/external_env.md)."""

    # env_config keys that are this runner's settings, not an env's: evaluation runners of another class (a local
    # env, evaluation_config={"env_runner_cls": None, "env": "CartPole-v1"}) do not pass them to their env.
    OWN_ENV_CONFIG_KEYS = ("port", "host", "max_message_bytes", "message_timeout_s", "max_pending_env_steps")

    def __init__(self, *, config, worker_index: int = 0, **kwargs):
        if getattr(config, "is_multi_agent", False):
            raise ValueError("EnvRunnerServerForExternalInference serves single-agent simulators; this config is "
                             "multi-agent.")
        self.settings = ServerSettings.from_config(config, worker_index)
        self._cond = threading.Condition()
        self._pending: List[SingleAgentEpisode] = []  # received, not yet sampled
        self._pending_steps = 0
        self._disconnects: List[tuple] = []  # (episode ids dropped, env steps lost, protocol error?)
        self._num_connections = 0
        self._waiting_for_state: Optional[SimulatorConnection] = None
        self._stopped = False
        self._dropped_ids: collections.OrderedDict = collections.OrderedDict()
        super().__init__(config=config, worker_index=worker_index, **kwargs)
        obs_space, act_space = self._spaces["__env_single__"]
        self._schema = EpisodeSchema(obs_space, act_space, self._module_outputs())
        self._state_message = self._make_state_message()
        # The driver's runner beside remote runners never samples (the actors do, on port + their worker index):
        # it listens on no port, so no simulator can connect where nothing would read what it sends.
        self._num_remote_runners = config.num_env_runners if worker_index == 0 else 0
        self._server = None if self._num_remote_runners else RLlinkServer(self.settings, self)
        self.port = None if self._server is None else self._server.port  # env_config["port"] 0: the OS's choice
        if self._server is not None:
            self._server.start()

    # -- EnvRunner -------------------------------------------------------------------------------
    def make_env(self) -> None:
        """No env here (the simulator runs it): the spaces come from the config."""
        obs_space, act_space = self.config.observation_space, self.config.action_space
        if obs_space is None or act_space is None:
            raise ValueError("EnvRunnerServerForExternalInference needs the simulator's spaces: "
                             "config.environment(observation_space=..., action_space=...).")
        module_spaces = getattr(self, "_spaces", {}).get(DEFAULT_MODULE_ID)
        self._spaces = {"__env_single__": (obs_space, act_space)}
        if module_spaces is not None:
            self._spaces[DEFAULT_MODULE_ID] = module_spaces
        self.num_envs = 1
        self._episodes = []
        self._needs_reset = True

    def sample(self, *, num_timesteps: Optional[int] = None, num_episodes: Optional[int] = None,
               explore: Optional[bool] = None, random_actions: bool = False,
               force_reset: bool = False) -> List[SingleAgentEpisode]:
        """The episode chunks the simulator sent since the last call; waits until there are some.

        How many steps a message holds is the simulator's choice (RLlib's clients send
        `config.get_rollout_fragment_length()` steps), so the arguments are ignored.
        """
        if self._server is None:
            raise RuntimeError(f"This EnvRunnerServerForExternalInference (worker_index 0, in the driver) does not "
                               f"listen for simulators: the {self._num_remote_runners} remote EnvRunners do, on "
                               "env_config['port'] + their worker index; sample from them (the Algorithm does), or "
                               "set num_env_runners=0 to serve from the driver.")
        chunks, disconnects = self._wait_for_episodes()
        self._log_connection_metrics(disconnects)  # first: chunks of episodes dropped since count in no return
        steps = 0
        for chunk in chunks:
            steps += len(chunk)
            self._count_chunk(chunk)
        self._stats.on_steps(steps)
        self.num_env_steps_sampled_lifetime += steps
        # As any EnvRunner's sample(): callbacks see what it returns, and offline_data(output=...) records it here,
        # where training happens (the simulator's own runner records nothing: _NOT_SIMULATED).
        for handler in self._cb_sample_end:
            handler(env_runner=self, metrics_logger=self.metrics, samples=chunks)
        if self._offline_writer is not None:
            self._offline_writer.write(chunks)
        return chunks

    def set_state(self, state: Dict[str, Any]) -> None:
        super().set_state(state)
        if "rl_module" in state:
            self.weights_seq_no += 1
            self._state_message = self._make_state_message()
            self._release_waiting_simulator()

    def assert_healthy(self) -> None:
        assert not self._stopped, "The external-env server is stopped."

    def foreach_env(self, func):
        raise ValueError("EnvRunnerServerForExternalInference has no env: the simulator runs it in its own process.")

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        server = getattr(self, "_server", None)
        if server is not None:
            server.close()
        writer, self._offline_writer = getattr(self, "_offline_writer", None), None
        if writer is not None:
            writer.close()  # (output_write_remaining_data)

    # -- the simulator's messages (RLlinkServer's handler; its connection threads call these) ------
    def on_connect(self, connection: SimulatorConnection) -> None:
        connection.session = _Session()
        with self._cond:
            self._num_connections += 1
        logger.info("RLlink: a simulator connected from %s to port %d.", connection.address, self.port)

    def on_message(self, connection: SimulatorConnection, msg_type: RLlink, body: Dict[str, Any]):
        connection.session.samples |= msg_type in _SAMPLING_CLIENT_MESSAGES
        if msg_type is RLlink.PING:
            return {"type": RLlink.PONG.name}
        if msg_type is RLlink.GET_CONFIG:
            # The config as data (relayrl/algorithms/config_json.py); RLlib sends a pickle here.
            return {"type": RLlink.SET_CONFIG.name, "config": config_to_json(self.config)}
        if msg_type is RLlink.GET_STATE:
            return self._state_message
        if msg_type is RLlink.EPISODES:
            self._receive_episodes(connection, body)
            return None
        if msg_type is RLlink.EPISODES_AND_GET_STATE:
            self._receive_episodes(connection, body, wait_for_state=True)
            if not connection.send(self._state_message):  # it went away while waiting: it had sent all it had
                raise ConnectionError("the simulator went away while waiting for weights")
            connection.session.waiting = False
            return None
        if msg_type in (RLlink.PONG, RLlink.SET_STATE, RLlink.SET_CONFIG, RLlink.ERROR):
            raise RLlinkProtocolError(f"{msg_type} is a message the server sends, not one it takes.")
        raise RLlinkProtocolError(f"{msg_type} belongs to RLlib's old API stack (actions computed on the server), "
                                  "which relayrl does not serve: the simulator runs the RLModule itself and sends "
                                  "EPISODES or EPISODES_AND_GET_STATE (docs/external_env.md).")

    def on_disconnect(self, connection: SimulatorConnection, error: Optional[BaseException]) -> None:
        session: _Session = getattr(connection, "session", None) or _Session()
        # Waiting for weights, it had sent all it had; else its next message is lost (estimated: its last one's size).
        lost = 0 if session.waiting or not session.samples else (session.message_steps or self._message_steps())
        with self._cond:
            self._disconnects.append((set(session.ongoing), lost, isinstance(error, RLlinkProtocolError)))
            self._cond.notify_all()

    def _receive_episodes(self, connection: SimulatorConnection, body: Dict[str, Any], *,
                          wait_for_state: bool = False) -> None:
        """Queue the message's chunks for sample(); with `wait_for_state`, return once the simulator's answer is
        due: newer weights came (set_state), or sample() needs more data, or the server stops."""
        limit = self.settings.max_pending_env_steps
        episodes = self._schema.episodes_from_wire(body, max_env_steps=limit)
        steps = sum(len(e) for e in episodes)
        session = connection.session
        session.message_steps = steps
        for episode in episodes:
            (session.ongoing.discard if episode.is_done else session.ongoing.add)(episode.id_)
        with self._cond:
            while self._pending and self._pending_steps + steps > limit and not self._stopped:
                self._wait_while_connected(connection)  # back-pressure: until sample() takes what is pending
            self._pending.extend(episodes)
            self._pending_steps += steps
            session.waiting = wait_for_state  # (from here on, a simulator that leaves has lost nothing)
            self._waiting_for_state = connection if wait_for_state else None
            self._cond.notify_all()
            while self._waiting_for_state is connection and not self._stopped:
                self._wait_while_connected(connection)

    def _wait_while_connected(self, connection: SimulatorConnection) -> None:
        """Wait (holding self._cond) for sample() or set_state; ConnectionError if the simulator leaves meanwhile.
        This thread does not read while it waits, so without a look it would keep a gone simulator's slot until the
        next sample(), and a new simulator (the one that would feed that sample()) would be refused as busy."""
        self._cond.wait(timeout=_PEER_CHECK_S)
        if connection.peer_closed():
            if self._waiting_for_state is connection:
                self._waiting_for_state = None
            raise ConnectionError("the simulator went away while waiting")

    # -- sampling helpers ----------------------------------------------------------------------------
    def _wait_for_episodes(self):
        """(chunks, disconnects) once chunks are pending; a simulator waiting for weights gets the current ones."""
        started = last_log = time.monotonic()
        while True:
            with self._cond:
                if self._pending:
                    chunks, self._pending, self._pending_steps = self._pending, [], 0
                    disconnects, self._disconnects = self._disconnects, []
                    self._cond.notify_all()
                    return chunks, disconnects
                if self._stopped:
                    raise RuntimeError(f"The external-env server on port {self.port} was stopped while sample() "
                                       "waited for episodes.")
                if self._waiting_for_state is not None:  # no update since its message: the weights are the newest
                    self._waiting_for_state = None
                    self._cond.notify_all()
                self._cond.wait(timeout=1.0)
            if time.monotonic() - last_log >= _WAIT_LOG_S:
                last_log = time.monotonic()
                logger.warning("EnvRunnerServerForExternalInference: sample() has waited %.0f s for episodes from a "
                               "simulator on %s:%d (%s).", last_log - started, self.settings.host, self.port,
                               "one is connected" if self._server.connected_address() else "none is connected")

    def _release_waiting_simulator(self) -> None:
        """A simulator waiting for weights gets them (its connection thread sends them)."""
        with self._cond:
            self._waiting_for_state = None
            self._cond.notify_all()

    def _count_chunk(self, chunk: SingleAgentEpisode) -> None:
        """Episode metrics: a chunk of a dropped episode trains, but its return would be partial: not counted."""
        if chunk.id_ in self._dropped_ids:
            if chunk.is_done:
                del self._dropped_ids[chunk.id_]
        elif chunk.is_done:
            self._stats.on_episode_done(chunk)
        else:
            self._stats.on_chunk_cut(chunk)

    def _log_connection_metrics(self, disconnects: List[tuple]) -> None:
        """What the simulators' connections cost since the last sample(): lost steps, dropped episodes."""
        lost = dropped = errors = 0
        for episode_ids, steps, protocol_error in disconnects:
            lost += steps
            errors += protocol_error
            for episode_id in episode_ids:
                dropped += 1
                self._stats.forget_id(episode_id)
                self._dropped_ids[episode_id] = None
        while len(self._dropped_ids) > _DROPPED_IDS_KEPT:
            self._dropped_ids.popitem(last=False)
        log = self.metrics.log_value
        log("num_env_steps_lost", lost, reduce="sum", clear_on_reduce=True)
        log("num_env_steps_lost_lifetime", lost, reduce="sum")
        log("num_episodes_dropped", dropped, reduce="sum", clear_on_reduce=True)
        log("num_episodes_dropped_lifetime", dropped, reduce="sum")
        log("num_simulator_disconnects_lifetime", len(disconnects), reduce="sum")
        log("num_protocol_errors_lifetime", errors, reduce="sum")
        with self._cond:
            connections, self._num_connections = self._num_connections, 0
        log("num_simulator_connections_lifetime", connections, reduce="sum")
        if lost or dropped:
            logger.warning("EnvRunnerServerForExternalInference: %d simulator connection(s) ended; about %d env steps "
                           "lost, %d episodes dropped.", len(disconnects), lost, dropped)

    def _message_steps(self) -> int:
        """Steps per message of a simulator that sent none yet: what RLlib's clients send (rollout fragment)."""
        return self.config.get_rollout_fragment_length(self.worker_index) * self.config.num_envs_per_env_runner

    # -- weights and what the simulator must record ----------------------------------------------------
    def _make_state_message(self) -> Dict[str, Any]:
        weights = self.module.get_state(inference_only=True)
        return {"type": RLlink.SET_STATE.name, "state": {"rl_module": weights, "weights_seq_no": self.weights_seq_no}}

    def _module_outputs(self) -> Dict[str, tuple]:
        """{column: row shape} of the model outputs an EnvRunner of this config records with each step (one
        action computed here, as the simulator would): episodes must carry them, the Learner reads them."""
        obs_space = self._spaces["__env_single__"][0]
        _, _, extra = compute_actions_on_runner(self, [obs_space.sample()], explore=self.config.explore)
        return {key: _row_shapes(value) for key, value in extra[0].items()
                if key != Columns.ACTION_PROB}  # (added by compute_actions_on_runner, not recorded by a runner)


def _row_shapes(value):
    """A model output's row shape; for a nested output (a recurrent state), the map of its leaves' row shapes."""
    if isinstance(value, dict):
        return {key: _row_shapes(sub) for key, sub in value.items()}
    return tuple(getattr(value, "shape", ()))
