"""`SimulatorClient`: for a simulator that runs its own loop (it calls us, we do not call it).

    client = SimulatorClient(port=5555)
    obs, info = sim.reset()
    client.start_episode(obs, info)
    while True:
        action = client.get_action()
        obs, reward, terminated, truncated, info = sim.step(action)
        client.log_step(obs, reward, terminated, truncated, info)
        if terminated or truncated:
            obs, info = sim.reset()
            client.start_episode(obs, info)

Inside, an ExternalSimulator runs in a background thread with a one-env "loopback" env whose reset() and
step() hand over to these calls: the actions come from relayrl's EnvRunner (the server config's module,
connector pipelines and exploration), the episodes and weights travel as ExternalSimulator sends them.
On-policy, get_action() waits while a batch of episodes is out for training.
"""
import queue
import threading
from typing import Any, Optional

import gymnasium as gym

from relayrl.env.external.external_simulator import ExternalSimulator

_POLL_S = 0.2  # how often a waiting call checks whether the background thread failed


class SimulatorClosed(RuntimeError):
    """A SimulatorClient call after close() (from another thread too): the loop can end on it."""


class _Closed(BaseException):
    """Raised inside the loopback env when the client closes: it ends the background sample() (a BaseException,
    so no env-failure handling takes it for a crashed env)."""


class _Handover:
    """The two threads' meeting points: one queue per direction and kind of call."""

    def __init__(self):
        self.resets, self.actions, self.steps = queue.Queue(1), queue.Queue(1), queue.Queue(1)
        self.closed = threading.Event()

    def take(self, q: queue.Queue) -> Any:
        """The env side's wait (background thread): until the user's call, or close."""
        while not self.closed.is_set():
            try:
                return q.get(timeout=_POLL_S)
            except queue.Empty:
                continue
        raise _Closed()


class _LoopbackEnv(gym.Env):
    """The env the background EnvRunner steps: reset() and step() wait for the user's calls."""

    def __init__(self, handover: _Handover, observation_space: gym.Space, action_space: gym.Space):
        self.handover, self.observation_space, self.action_space = handover, observation_space, action_space

    def reset(self, *, seed=None, options=None):
        return self.handover.take(self.handover.resets)

    def step(self, action):
        self.handover.actions.put(action)
        return self.handover.take(self.handover.steps)


class SimulatorClient(ExternalSimulator):
    """A user's simulator loop as the env of an EnvRunnerServerForExternalInference (module docstring).

    Takes ExternalSimulator's arguments but `env` (the loop is the env); the server's config must name the
    observation and action spaces (it does: the server needs them too).
    """

    def __init__(self, host: str = "localhost", port: int = 5555, **kwargs):
        self._handover = _Handover()
        self._expect = "start_episode"
        self._error: Optional[BaseException] = None
        super().__init__(None, host=host, port=port, **kwargs)
        self._thread = threading.Thread(target=self._run_in_background, name="relayrl-simulator-client", daemon=True)
        self._thread.start()

    def _env_for(self, config) -> Any:
        config.env_runners(num_envs_per_env_runner=1, gym_env_vectorize_mode="SYNC")
        handover, spaces = self._handover, (config.observation_space, config.action_space)
        return lambda env_context: _LoopbackEnv(handover, *spaces)

    # -- the user's calls -----------------------------------------------------------------------------
    def start_episode(self, observation, info: Optional[dict] = None) -> None:
        """A new episode begins with `observation` (after the simulator's reset)."""
        self._expecting("start_episode")
        self._handover.resets.put((observation, info or {}))
        self._expect = "get_action"

    def get_action(self) -> Any:
        """The action for the latest observation (waits while the server trains on-policy)."""
        self._expecting("get_action")
        action = self._wait(self._handover.actions)
        self._expect = "log_step"
        return action

    def log_step(self, observation, reward: float, terminated: bool = False, truncated: bool = False,
                 info: Optional[dict] = None) -> None:
        """What the simulator did with the action: the next observation, the reward and whether the episode ended."""
        self._expecting("log_step")
        self._handover.steps.put((observation, float(reward), bool(terminated), bool(truncated), info or {}))
        self._expect = "start_episode" if terminated or truncated else "get_action"

    def close(self) -> None:
        """Stop sending and disconnect (the episodes not yet sent are dropped). A call waiting in another
        thread, and every later call, raises SimulatorClosed."""
        self._handover.closed.set()
        self.stop()
        self._thread.join(timeout=10)
        self.runner.stop()

    # -- the background thread --------------------------------------------------------------------------
    def _run_in_background(self) -> None:
        try:
            self.run()
        except _Closed:
            pass
        except BaseException as error:  # handed to the user's next call
            self._error = error

    def _expecting(self, call: str) -> None:
        if self._error is not None:
            raise RuntimeError(f"The simulator client stopped: {self._error}") from self._error
        if self._handover.closed.is_set():
            raise SimulatorClosed("The simulator client is closed.")
        if call != self._expect:
            raise RuntimeError(f"SimulatorClient.{call}() called where {self._expect}() comes next: the order is "
                               "start_episode, then get_action and log_step for each step, then start_episode "
                               "again after a terminated or truncated step.")

    def _wait(self, q: queue.Queue) -> Any:
        while True:
            try:
                return q.get(timeout=_POLL_S)
            except queue.Empty:
                self._expecting(self._expect)
