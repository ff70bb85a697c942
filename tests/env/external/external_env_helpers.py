"""Helpers of the external-env tests: a small server config, raw-socket framing, RLlib-layout episodes."""
import contextlib
import socket
import sys
import threading
import traceback

import gymnasium as gym
import numpy as np

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.env.external.env_runner_server_for_external_inference import EnvRunnerServerForExternalInference
from relayrl.env.external.rllink import get_rllink_message
from relayrl.env.external.wire_codec import pack

OBS_SPACE = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)  # CartPole's shape, as RLlib's example declares it
ACT_SPACE = gym.spaces.Discrete(2)


def server_config(**env_config):
    """PPO on CartPole's spaces served over TCP (port 0: any free port), tiny batches and net."""
    return (PPOConfig()
            .environment(observation_space=OBS_SPACE, action_space=ACT_SPACE, env_config={"port": 0, **env_config})
            .env_runners(env_runner_cls=EnvRunnerServerForExternalInference)
            .training(train_batch_size=128, minibatch_size=64, num_epochs=1)
            .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
            .debugging(seed=0))


def connect(port: int) -> socket.socket:
    return socket.create_connection(("localhost", port), timeout=10)


def frame(body: bytes) -> bytes:
    return str(len(body)).zfill(8).encode() + body


def send_raw(sock: socket.socket, message) -> None:
    sock.sendall(frame(pack(message)))


def read_until_closed(sock: socket.socket):
    """The server's answer (type, body) and proof that it then closed the connection."""
    answer = get_rllink_message(sock)
    assert sock.recv(1) == b"", "the server kept the connection open"
    return answer


def rllib_episode_state(steps: int = 5, *, terminated: bool = True, id_: str = "episode-1", start: float = 0.0):
    """An episode chunk as RLlib's SingleAgentEpisode.get_state() writes it (an unfinalized episode: lists of
    per-step items, spaces as dicts, the client's clock), with the model outputs PPO's module gives."""
    def buffer(data, space=None):
        return {"data": data, "lookback": 0, "finalized": False, "space": space}

    return {
        "id_": id_, "agent_id": None, "module_id": None, "multi_agent_episode_id": None,
        "observations": buffer([np.full(4, start + t, np.float32) for t in range(steps + 1)],
                               {"space": "box", "low": "...", "high": "...", "shape": [4], "dtype": "<f4"}),
        "actions": buffer([t % 2 for t in range(steps)], {"space": "discrete", "n": 2, "start": 0, "dtype": "<i8"}),
        "rewards": buffer([1.0] * steps),
        "infos": buffer([{} for _ in range(steps + 1)]),
        "extra_model_outputs": {"action_dist_inputs": buffer([np.zeros(2, np.float32) for _ in range(steps)]),
                                "action_logp": buffer([np.float32(-0.693)] * steps)},
        "is_terminated": terminated, "is_truncated": False, "t_started": 0, "t": steps,
        "_observation_space": {"space": "box"}, "_action_space": {"space": "discrete", "n": 2},
        "_start_time": 1234.5, "_last_step_time": 1240.0, "custom_data": {},
    }


@contextlib.contextmanager
def running(simulator):
    """`simulator.run()` in a thread for the block; then stopped and joined."""
    thread = threading.Thread(target=simulator.run, daemon=True)
    thread.start()
    try:
        yield simulator
    finally:
        simulator.stop()
        thread.join(5)
        if thread.is_alive():  # where it hangs, for the report
            stack = "".join(traceback.format_stack(sys._current_frames().get(thread.ident)))
            raise AssertionError(f"The simulator still runs 5 s after stop(), at:\n{stack}")
        simulator.close()
