"""The external-env server's settings, read from `config.env_config` (where RLlib reads its port).

RLlib's server takes only `port` there (and binds `port + worker_index` on localhost); relayrl
adds the host and the bounds it puts on what a simulator may send.
"""
from dataclasses import dataclass
from typing import Any, Mapping

from relayrl.algorithms.options import is_int, is_real
from relayrl.env.external.rllink import DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MESSAGE_TIMEOUT_S, LARGEST_MESSAGE_BYTES

DEFAULT_PORT = 5555


@dataclass(frozen=True)
class ServerSettings:
    host: str = "localhost"  # the interface to bind: "localhost" serves only this machine
    port: int = DEFAULT_PORT  # env_config["port"] + worker_index; 0: any free port (see runner.port)
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES  # a longer message is refused before it is read
    message_timeout_s: float = DEFAULT_MESSAGE_TIMEOUT_S  # a message, once begun, must arrive whole within this
    max_pending_env_steps: int = 100_000  # received steps not yet sampled; the simulator waits beyond this

    @property
    def max_containers(self) -> int:
        """Most maps and lists in a message: a generous 10 per step (RLlib's clients send ~6: an array map and
        its shape list per observation and model output, an info dict), so memory stays bounded."""
        return 10 * self.max_pending_env_steps + 100_000

    @classmethod
    def from_config(cls, config, worker_index: int) -> "ServerSettings":
        env_config: Mapping[str, Any] = config.env_config or {}
        port = _setting(env_config, "port", DEFAULT_PORT, lambda v: is_int(v) and 0 <= v <= 65535,
                        "an int in [0, 65535]")
        if port:  # RLlib's rule: each EnvRunner listens on the base port plus its worker index
            port += worker_index
        default_pending = max(cls.max_pending_env_steps, 4 * int(getattr(config, "total_train_batch_size", 0) or 0))
        return cls(
            host=_setting(env_config, "host", cls.host, lambda v: isinstance(v, str) and v != "", "a host name"),
            port=port,
            max_message_bytes=_setting(env_config, "max_message_bytes", cls.max_message_bytes,
                                       lambda v: is_int(v) and 16 <= v <= LARGEST_MESSAGE_BYTES,
                                       f"an int in [16, {LARGEST_MESSAGE_BYTES}]"),
            message_timeout_s=float(_setting(env_config, "message_timeout_s", cls.message_timeout_s,
                                             lambda v: is_real(v) and v > 0, "a positive number of seconds")),
            max_pending_env_steps=_setting(env_config, "max_pending_env_steps", default_pending,
                                           lambda v: is_int(v) and v >= 1, "a positive int"),
        )


def _setting(env_config: Mapping[str, Any], key: str, default: Any, valid, allowed: str) -> Any:
    value = env_config.get(key, default)
    if not valid(value):
        raise ValueError(f"env_config[{key!r}] must be {allowed} for EnvRunnerServerForExternalInference; got "
                         f"{value!r}.")
    return value
