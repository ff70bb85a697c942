"""`ExternalSimulator`: a gymnasium env run as the simulator of an EnvRunnerServerForExternalInference.

It does what RLlib's example client does, with relayrl's EnvRunner: fetch the server's config and weights,
build an EnvRunner for the env (the config's module, connector pipelines and exploration: inference here,
in the simulator's process), then loop: sample, send the episodes, take the weights the server answers
with. When the connection breaks (the server restarted, or refused a message) it reconnects and goes on
with the episodes it is running; what it had not delivered is counted in `num_env_steps_lost`.
"""
import logging
import threading
from typing import Any, Dict, Iterable, Optional

from relayrl.env.env_runner import EnvRunner
from relayrl.env.external.rllink_client import RLlinkClient
from relayrl.env.external.server_settings import DEFAULT_PORT

logger = logging.getLogger("relayrl")
# The server records offline_data(output=...) of what it receives; the simulator's runner does not record it again.
_NOT_SIMULATED = {"evaluation_interval": None, "evaluation_config": None, "custom_evaluation_function": None,
                  "output": None}


class ExternalSimulator:
    """`ExternalSimulator("CartPole-v1", port=5555).run()`: simulate and send episodes until stopped.

    `env`: what config.environment(env=...) takes (default: the server config's env); `env_config` its
    settings (not the server's, which hold the port). `trusted` / `config_overrides`: see
    RLlinkClient.get_config. `wait_for_weights`: on-policy, each message waits for weights newer than the
    ones it was collected with (RLlib's EPISODES_AND_GET_STATE); False sends and fetches the current ones.
    `reconnect_timeout_s`: how long a broken connection is retried before run() gives up.
    """

    def __init__(self, env: Any = None, *, host: str = "localhost", port: int = DEFAULT_PORT,
                 env_config: Optional[Dict[str, Any]] = None, trusted: Optional[Iterable[Any]] = None,
                 config_overrides: Optional[Dict[str, Any]] = None, wait_for_weights: bool = True,
                 connect_timeout_s: float = 60.0, reconnect_timeout_s: float = 60.0, seed: Optional[int] = None):
        self.wait_for_weights = wait_for_weights
        self.reconnect_timeout_s = reconnect_timeout_s
        self.num_env_steps_sent = 0  # delivered to the server
        self.num_env_steps_lost = 0  # sampled here, never confirmed by the server (a broken connection)
        self.num_reconnects = 0
        self.weights_seq_no = 0
        self._stop = threading.Event()
        self.client = RLlinkClient(host, port, connect_timeout_s=connect_timeout_s)
        self.client.connect()
        try:
            self._build_runner(env, env_config, trusted, config_overrides, seed)
        except BaseException:
            self.client.close()  # (the server serves one simulator: free its port for the next)
            raise

    def _build_runner(self, env, env_config, trusted, config_overrides, seed) -> None:
        # Evaluation settings never run here (they may name a lambda the config cannot carry as data).
        overrides = {**_NOT_SIMULATED, **(config_overrides or {})}
        self.server_config = self.client.get_config(trusted=trusted, config_overrides=overrides)
        config = self.server_config.copy(copy_frozen=False)
        env = self._env_for(config) if env is None else env
        if env is None:
            raise ValueError("The server's config names no env: pass the env this simulator runs "
                             "(ExternalSimulator(env=...), or the CLI's ENV argument).")
        config.environment(env=env)
        config.env_config = dict(env_config or {})  # the simulator's own: the server's (its port) replaced, not merged
        config.env_runners(num_env_runners=0, env_runner_cls=None)
        if seed is not None:
            config.debugging(seed=seed)
        self.runner = EnvRunner(config=config)
        self._check_spaces()
        self._take(self.client.get_state())

    def _env_for(self, config) -> Any:
        """The env to run when none is passed (subclasses give their own)."""
        return config.env

    def run(self, max_env_steps: Optional[int] = None) -> None:
        """Sample and send until `max_env_steps` were delivered or stop() is called; ConnectionError if the
        server stays away longer than reconnect_timeout_s."""
        while not self._stop.is_set() and (max_env_steps is None or self.num_env_steps_sent < max_env_steps):
            episodes = self.runner.sample()
            if self._stop.is_set():
                return
            steps = sum(len(e) for e in episodes)
            try:
                state = self.client.send_episodes(episodes, wait_for_state=self.wait_for_weights)
                self.num_env_steps_sent += steps
                if state is None:
                    state = self.client.get_state()
            except ConnectionError as error:
                if self._stop.is_set():
                    return
                self.num_env_steps_lost += steps
                logger.warning("ExternalSimulator: the connection to %s:%d broke (%s); %d env steps lost, "
                               "reconnecting.", self.client.host, self.client.port, error, steps)
                state = self._reconnect()
                if state is None:
                    return
            self._take(state)

    def _reconnect(self) -> Optional[Dict[str, Any]]:
        """Connect again and fetch the weights; None once stop() was called (meanwhile, or while retrying)."""
        try:
            self.client.connect(self.reconnect_timeout_s, stop=self._stop)
            self.num_reconnects += 1
            return self.client.get_state()
        except ConnectionError:
            if self._stop.is_set():
                return None
            raise

    def stop(self) -> None:
        """Make run() return soon (call it from any thread): the sample() in progress ends, nothing more is sent."""
        self._stop.set()
        self.client.close()

    def close(self) -> None:
        """stop(), and close the env (once run() has returned)."""
        self.stop()
        self.runner.stop()

    def _take(self, state: Dict[str, Any]) -> None:
        self.runner.set_state({"rl_module": state["rl_module"]})
        self.weights_seq_no = state.get("weights_seq_no", self.weights_seq_no)

    def _check_spaces(self) -> None:
        ours = (self.runner.env.single_observation_space, self.runner.env.single_action_space)
        theirs = (self.server_config.observation_space, self.server_config.action_space)
        for name, mine, server in zip(("observation", "action"), ours, theirs):
            if server is not None and (getattr(mine, "shape", None) != getattr(server, "shape", None)
                                       or type(mine) is not type(server)):
                raise ValueError(f"The env's {name} space {mine} does not fit the server's {server}: run the env "
                                 "the server's config was made for.")
