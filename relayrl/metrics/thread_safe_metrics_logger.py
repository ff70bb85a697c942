"""The Algorithm's MetricsLogger: a parallel evaluation thread and the training step may both log."""
import threading

from relayrl.metrics.metrics_logger import MetricsLogger


def _locked(name):
    method = getattr(MetricsLogger, name)

    def wrapper(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    wrapper.__name__ = name
    wrapper.__doc__ = method.__doc__
    return wrapper


class ThreadSafeMetricsLogger(MetricsLogger):
    """The Algorithm's logger: a parallel evaluation thread and the training step may both log."""

    def __init__(self):
        super().__init__()
        self._lock = threading.RLock()


for _name in ("log_value", "log_dict", "set_value", "peek", "reduce", "reduce_for_merge",
              "merge_and_log_n_dicts", "delete", "reset", "get_state", "set_state", "__contains__"):
    setattr(ThreadSafeMetricsLogger, _name, _locked(_name))
del _name
