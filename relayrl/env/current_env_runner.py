"""The EnvRunner sampling in this process: RLlib's old `get_global_worker()` (seed 000: "use this from any callback
to get a reference to the RolloutWorker running in the process"). relayrl's EnvRunner plays the RolloutWorker."""
import weakref
from typing import Any, Optional

_current: Optional[weakref.ReferenceType] = None


def set_current_env_runner(env_runner: Any) -> None:
    """Called by EnvRunner.sample(): the runner whose episodes the callbacks now see."""
    global _current
    _current = weakref.ref(env_runner)


def get_global_worker() -> Any:
    """The EnvRunner that sampled last in this process (in a sampling callback: the one calling it)."""
    runner = _current() if _current is not None else None
    if runner is None:
        raise RuntimeError("get_global_worker(): no EnvRunner has sampled in this process yet. Call it from an "
                           "episode or sample callback, or use `algorithm.env_runner` on the driver.")
    return runner


__all__ = ["get_global_worker"]
