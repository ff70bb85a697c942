"""External envs over TCP (RLlib's `ray.rllib.env.external`): a simulator in another process connects to an
EnvRunner, runs the RLModule itself and sends episodes; RLlink is the protocol (docs/external_env.md).

- `EnvRunnerServerForExternalInference` (the server: `config.env_runners(env_runner_cls=...)`),
- `ExternalSimulator` (a gymnasium env as the simulator; `python -m relayrl.env.external ENV --port N`),
- `SimulatorClient` (for a simulator that runs its own loop), `RLlinkClient` (the messages themselves),
- RLlib's names: `RLlink`, `send_rllink_message`, `get_rllink_message`.
"""
import importlib

from relayrl.env.external.rllink import RLlink, RLlinkProtocolError, get_rllink_message, send_rllink_message

_LAZY = {  # these import torch and the EnvRunner stack: loaded on first use
    "EnvRunnerServerForExternalInference": "relayrl.env.external.env_runner_server_for_external_inference",
    "ExternalSimulator": "relayrl.env.external.external_simulator",
    "SimulatorClient": "relayrl.env.external.simulator_client",
    "SimulatorClosed": "relayrl.env.external.simulator_client",
    "RLlinkClient": "relayrl.env.external.rllink_client",
    "RLlinkServerError": "relayrl.env.external.rllink_client",
}

__all__ = ["RLlink", "RLlinkProtocolError", "get_rllink_message", "send_rllink_message", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
