"""Per-iteration results on disk: one JSON line per `train()` in `<logdir>/result.json` and, when
tensorboardX is installed, every numeric leaf as a TensorBoard scalar (Tune's layout) and the training
videos (video_summaries.py).

Configured by `config.debugging(logger_config={"logdir": ..., "type": ...})`. Nothing is created
or imported (tensorboardX included) until the first result is written.
"""
from __future__ import annotations

import datetime
import json
import logging
import math
import numbers
import os
import re
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple

from relayrl.core.suggest import did_you_mean

__all__ = ["RESULTS_DIR_ENV", "LOGGER_CONFIG_KEYS", "LOGGER_TYPES", "RESULT_FILE", "ResultLogger",
           "check_logger_config", "default_results_root", "default_logdir", "to_jsonable",
           "flatten_numeric"]

logger = logging.getLogger("relayrl")

RESULTS_DIR_ENV = "RELAYRL_RESULTS_DIR"  # root of default logdirs (default ~/relayrl_results)
RESULT_FILE = "result.json"
LOGGER_CONFIG_KEYS = ("logdir", "type")
LOGGER_TYPES = ("json+tensorboard", "json", "none")
STEP_KEY = "num_env_steps_sampled_lifetime"
_SKIPPED_KEYS = ("config",)  # RLlib/Tune leave the config out of result.json's lines


def check_logger_config(logger_config: Any) -> None:
    """ValueError for anything but None or a dict with known keys and a known "type"."""
    if logger_config is None:
        return
    if not isinstance(logger_config, Mapping):
        raise ValueError(f"logger_config must be a dict or None, got {type(logger_config).__name__}")
    for key in logger_config:
        if key not in LOGGER_CONFIG_KEYS:
            raise ValueError(f"unknown logger_config key `{key}`.{did_you_mean(str(key), LOGGER_CONFIG_KEYS)} "
                             f"Known keys: {', '.join(LOGGER_CONFIG_KEYS)}.")
    kind = logger_config.get("type", LOGGER_TYPES[0])
    if kind not in LOGGER_TYPES:
        raise ValueError(f"logger_config['type'] must be one of {', '.join(map(repr, LOGGER_TYPES))}, got "
                         f"{kind!r}.{did_you_mean(str(kind), LOGGER_TYPES)}")
    logdir = logger_config.get("logdir")
    if logdir is not None and not isinstance(logdir, (str, os.PathLike)):
        raise ValueError(f"logger_config['logdir'] must be a path (str) or None, got {logdir!r}")


def default_results_root() -> str:
    """`$RELAYRL_RESULTS_DIR`, else `~/relayrl_results`."""
    return os.environ.get(RESULTS_DIR_ENV) or os.path.join(os.path.expanduser("~"), "relayrl_results")


def _env_name(env: Any) -> str:
    if env is None:
        name = "env"
    elif isinstance(env, str):
        name = env
    else:
        name = getattr(env, "__name__", None) or type(env).__name__
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "env"


def default_logdir(algo_name: str, env: Any) -> str:
    """`<root>/<AlgoName>_<env-name>_<YYYY-mm-dd_HH-MM-SS>` (with `_1`, `_2`, ... if taken)."""
    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    base = os.path.join(default_results_root(), f"{algo_name}_{_env_name(env)}_{stamp}")
    path, n = base, 0
    while os.path.exists(path):
        n += 1
        path = f"{base}_{n}"
    return path


def _scalar(value: Any) -> Any:
    """numpy scalars, 0-d arrays and one-element tensors -> Python numbers; anything else unchanged."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    item = getattr(value, "item", None)
    if callable(item):
        try:  # raises for arrays/tensors with more than one element
            return item()
        except Exception:
            pass
    return value


def to_jsonable(value: Any) -> Any:
    """A JSON-safe copy: NaN -> None, +-inf -> "inf"/"-inf", unknown objects -> str()."""
    value = _scalar(value)
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    tolist = getattr(value, "tolist", None)  # numpy arrays
    if callable(tolist):
        try:
            return to_jsonable(tolist())
        except Exception:
            pass
    return str(value)


def flatten_numeric(result: Mapping, prefix: str = "") -> Iterator[Tuple[str, float]]:
    """("a/b/c", value) for every finite-or-inf numeric leaf (bools and NaN skipped)."""
    for key, value in result.items():
        if not prefix and key in _SKIPPED_KEYS:
            continue
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from flatten_numeric(value, path + "/")
            continue
        value = _scalar(value)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            continue
        value = float(value)
        if not math.isnan(value):
            yield path, value


class ResultLogger:
    """Appends each result to `<logdir>/result.json` and (if possible) TensorBoard event files.

    `kind`: "json+tensorboard" (TensorBoard only where tensorboardX imports), "json", or "none".
    """

    def __init__(self, logdir: Optional[str], kind: str = "json+tensorboard"):
        self.kind = kind
        self.logdir = None if kind == "none" else (os.fspath(os.path.expanduser(logdir)) if logdir else None)
        self._writer = None
        self._tried_tensorboard = False

    @classmethod
    def from_config(cls, logger_config: Optional[Mapping], algo_name: str, env: Any) -> "ResultLogger":
        logger_config = dict(logger_config or {})
        check_logger_config(logger_config)
        kind = logger_config.get("type", LOGGER_TYPES[0])
        logdir = logger_config.get("logdir")
        if kind != "none" and not logdir:
            logdir = default_logdir(algo_name, env)
        return cls(logdir, kind)

    def on_result(self, result: Dict[str, Any]) -> None:
        if self.kind == "none" or self.logdir is None:
            return
        os.makedirs(self.logdir, exist_ok=True)
        line = to_jsonable({k: v for k, v in result.items() if k not in _SKIPPED_KEYS})
        with open(os.path.join(self.logdir, RESULT_FILE), "a", encoding="utf-8") as f:
            f.write(json.dumps(line, allow_nan=False) + "\n")
        if self.kind == "json+tensorboard":
            self._write_tensorboard(result)

    def _write_tensorboard(self, result: Mapping) -> None:
        if self._writer is None:
            if self._tried_tensorboard:
                return
            self._tried_tensorboard = True
            try:
                from tensorboardX import SummaryWriter  # optional: pip install "relayrl[tensorboard]"
            except ImportError:
                logger.info("tensorboardX is not installed: results go to result.json only "
                            '(pip install "relayrl[tensorboard]" for TensorBoard event files)')
                return
            self._writer = SummaryWriter(logdir=self.logdir, flush_secs=30)
        step = int(_scalar(result.get(STEP_KEY, 0)) or 0)
        scalars = list(flatten_numeric(result))
        file_writer = getattr(self._writer, "_get_file_writer", None)
        if file_writer is None:  # a tensorboardX without it: one event per scalar
            for tag, value in scalars:
                self._writer.add_scalar(tag, value, global_step=step)
        else:
            # One event holding all of the iteration's scalars (as TensorFlow's merged summaries are; each
            # tag is still its own series) instead of one event per scalar: ~10x cheaper per iteration.
            # tensorboardX's own scalar() builds each value, as add_scalar would (tag cleaning included).
            from tensorboardX.proto.summary_pb2 import Summary
            from tensorboardX.summary import scalar

            values = [value for tag, number in scalars for value in scalar(tag, number).value]
            file_writer().add_summary(Summary(value=values), global_step=step)
        self._writer.flush()

    @property
    def writes_tensorboard(self) -> bool:
        """Whether TensorBoard event files are written (known once the first result was: tensorboardX installed)."""
        return self._writer is not None

    def on_video(self, tag: str, path: str, result: Mapping) -> None:
        """The mp4 at `path` as an animated image in TensorBoard at `result`'s step (video_summaries.py)."""
        if self._writer is None:
            return
        from relayrl.algorithms.video_summaries import video_summary

        step = int(_scalar(result.get(STEP_KEY, 0)) or 0)
        self._writer._get_file_writer().add_summary(video_summary(tag, path), global_step=step)
        self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
