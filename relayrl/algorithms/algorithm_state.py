"""What an Algorithm checkpoints, checks and restores (mixed into `Algorithm`).

Its own state: iteration, time_total_s, counters, the metrics logger (the smoothing windows the next result needs),
the last evaluation's results (carried_evaluation.py), python/numpy/torch RNG states, the config as JSON (data, read
only by `from_checkpoint`) and the plain numbers a subclass names in `STATE_ATTRIBUTES` (e.g. DQN's fractional
update count). Its components: learner_group, env_runner (local), eval_env_runners (connector states), replay_buffer
(`algo.local_replay_buffer`), callbacks (those defining get_state/set_state) and offline_data (an offline
algorithm's embedded reader: where its pass over the data is, restored unless config.input_restore_position is
False; relayrl/offline/reader_position.py).

`set_state` is all-or-nothing: every part is checked against the live objects first
(`check_state`), then set; a mismatch raises one CheckpointError and changes nothing.
"""
import copy
import random
from collections import defaultdict
from typing import Any, Dict, List, Optional

import numpy as np
import torch

from relayrl.algorithms.carried_evaluation import check_plain_results, plain_results
from relayrl.checkpoints.checkpointable import selected
from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.state_checks import (
    Where,
    check_int,
    check_mapping,
    check_real,
    check_rng_state,
    require,
)
from relayrl.core.columns import DEFAULT_MODULE_ID

EVAL_RUNNER_PARTS = ["env_to_module_connector", "module_to_env_connector"]
OWN_STATE = ("iteration", "time_total_s", "counters", "metrics_logger", "last_evaluation_results", "rng", "config",
             "attributes")
COMPONENTS = ("learner_group", "env_runner", "eval_env_runners", "replay_buffer", "callbacks", "offline_data")
# Attributes relayrl 0.1.0 stored beside `iteration` and `time_total_s` (same values): read, not applied.
_LEGACY_ATTRIBUTES = ("_algorithm_iteration", "_time_total_s")


class AlgorithmState:
    """get_state / check_state / set_state of an Algorithm."""

    STATE_ATTRIBUTES: tuple = ()  # names of plain-number attributes a subclass keeps between steps

    def get_checkpointable_components(self) -> List[tuple]:
        if self.learner_group is None:  # a Policy-based algorithm (relayrl/policy/): its runner holds the weights
            return [("env_runner", self.env_runner)]
        parts = [("learner_group", self.learner_group)]
        if self.env_runner is not None:
            parts.append(("env_runner", self.env_runner))
        if getattr(self, "eval_env_runner_group", None) is not None:
            parts.append(("eval_env_runners", self.eval_env_runner_group))
        buffer = getattr(self, "local_replay_buffer", None)
        if buffer is not None and callable(getattr(buffer, "get_state", None)):
            parts.append(("replay_buffer", buffer))
        if any(_has_state_api(obj) for obj in self._callbacks.objects):
            parts.append(("callbacks", self._callbacks))
        offline_data = getattr(self, "offline_data", None)
        if offline_data is not None and callable(getattr(offline_data, "get_state", None)):
            parts.append(("offline_data", offline_data))  # the embedded reader (Ray Data's starts over)
        return parts

    def get_state(self, components=None, *, not_components=None, **kwargs) -> Dict[str, Any]:
        from relayrl.algorithms.config_json import config_to_json

        own = {
            "iteration": lambda: self.iteration,
            "time_total_s": lambda: self._time_total_s,
            "counters": lambda: dict(self._counters),
            "metrics_logger": lambda: self.metrics.get_state(),
            "last_evaluation_results": lambda: plain_results(self._last_evaluation_results),
            "rng": rng_state,
            "config": lambda: config_to_json(self.config),
            "attributes": lambda: {name: getattr(self, name) for name in self.STATE_ATTRIBUTES},
        }
        state = {name: get() for name, get in own.items() if selected(name, components, not_components)}
        sub_paths = _sub_paths(components), _sub_paths(not_components)
        for name, obj in self.get_checkpointable_components():
            if not selected(name, components, not_components):
                continue
            if name == "eval_env_runners":
                state[name] = [r.get_state(components=EVAL_RUNNER_PARTS) for r in _eval_runners(obj)]
            elif name == "callbacks":
                state[name] = [o.get_state() if _has_state_api(o) else None for o in obj.objects]
            elif name in ("replay_buffer", "offline_data"):
                state[name] = obj.get_state()
            else:
                state[name] = obj.get_state(components=sub_paths[0].get(name), not_components=sub_paths[1].get(name))
        return state

    # -- checking -------------------------------------------------------------------------------
    def check_state(self, state: Dict[str, Any], where: Where) -> None:
        """Raise a CheckpointError if `state` does not fit this algorithm; change nothing."""
        owner = f"a {type(self).__name__}"
        check_mapping(state, where, known=OWN_STATE + COMPONENTS, owner=owner)
        if "iteration" in state:
            check_int(state["iteration"], where / "iteration", low=0)
        if "time_total_s" in state:
            check_real(state["time_total_s"], where / "time_total_s")
        if "counters" in state:
            counters = check_mapping(state["counters"], where / "counters", owner=owner)
            for key, value in counters.items():
                check_int(value, where / "counters" / key)
        if "metrics_logger" in state:
            self.metrics.check_state(state["metrics_logger"], where / "metrics_logger")
        if "last_evaluation_results" in state:
            check_plain_results(state["last_evaluation_results"], where / "last_evaluation_results")
        if "rng" in state:
            check_rng_state(state["rng"], where / "rng")
        if "config" in state:
            check_mapping(state["config"], where / "config", owner=owner)
        if "attributes" in state:
            self._check_attributes(state["attributes"], where / "attributes")
        try:
            self._check_components(state, where)
        except CheckpointError as error:
            hint = resolved_model_hint(self.config, error)
            if hint:
                raise CheckpointError(f"{error} {hint}") from None
            raise

    def _check_attributes(self, attributes: Any, where: Where) -> None:
        known = self.STATE_ATTRIBUTES + _LEGACY_ATTRIBUTES
        check_mapping(attributes, where, known=known, owner=f"a {type(self).__name__}")
        for name, value in attributes.items():
            require(value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)), where / name,
                    f"expected a number, found {value!r}.")

    def _check_components(self, state: Dict[str, Any], where: Where) -> None:
        present = dict(self.get_checkpointable_components())
        for name in COMPONENTS:
            if name not in state:
                continue
            at = where.component(name)
            if name in ("learner_group", "env_runner", "replay_buffer"):
                if name in present:
                    present[name].check_state(state[name], at)
                elif name == "replay_buffer":
                    raise at.error(f"the checkpoint has a replay buffer, {type(self).__name__} has none.")
            elif name == "eval_env_runners":
                runners = check_list(state[name], at)
                local = _local_eval_runner(self)
                if local is not None and runners:
                    local.check_state(runners[0], at / 0)
            elif name == "callbacks":
                check_list(state[name], at)
            elif name == "offline_data" and name in present and self._restores_data_position():
                present[name].check_state(state[name], at)

    # -- setting --------------------------------------------------------------------------------
    def set_state(self, state: Dict[str, Any]) -> None:
        """Check every part against this algorithm, then set it (all or nothing)."""
        self.check_state(state, Where.in_memory(type(self).__name__))
        self._apply_state(state)
        self._callbacks("on_checkpoint_loaded", algorithm=self, metrics_logger=self.metrics)

    def _restores_data_position(self) -> bool:
        return bool(self.config.get("input_restore_position", True))

    def _apply_state(self, state: Dict[str, Any]) -> None:
        offline_data = dict(self.get_checkpointable_components()).get("offline_data")
        if "offline_data" in state and offline_data is not None and self._restores_data_position():
            offline_data.set_state(state["offline_data"])  # first: it reads files, and may fail before any change
        if "iteration" in state:
            self.iteration = int(state["iteration"])
        if "time_total_s" in state:
            self._time_total_s = float(state["time_total_s"])
        if "counters" in state:  # Policy-based algorithms keep RLlib's defaultdict (the seeds' `+=` on new keys)
            counters = state["counters"]
            self._counters = (defaultdict(int, counters) if isinstance(self._counters, defaultdict) else dict(counters))
        if "metrics_logger" in state:
            self.metrics.set_state(state["metrics_logger"])
        if "last_evaluation_results" in state:  # (older checkpoints have none: the carried results stay as they are)
            self._last_evaluation_results = copy.deepcopy(state["last_evaluation_results"])
        for name, value in state.get("attributes", {}).items():
            if name in self.STATE_ATTRIBUTES:
                setattr(self, name, value)
        if "learner_group" in state:
            self.learner_group.set_state(state["learner_group"])
        if "env_runner" in state and self.env_runner is not None:
            self.env_runner.set_state(state["env_runner"])
            if getattr(self, "_policy_based", False):  # remote PolicyRunners act with the restored weights, filters
                self.env_runner_group.sync_weights()
                self.env_runner_group.synchronize_filters(merge=False, push=True)
        group = getattr(self, "eval_env_runner_group", None)
        if state.get("eval_env_runners") and group is not None:
            stored = state["eval_env_runners"]
            for i, runner in enumerate(_eval_runners(group)):  # extra eval runners take the first one's state
                runner.set_state(stored[min(i, len(stored) - 1)])
        buffer = getattr(self, "local_replay_buffer", None)
        if "replay_buffer" in state and buffer is not None:
            buffer.set_state(state["replay_buffer"])
        for obj, obj_state in zip(self._callbacks.objects, state.get("callbacks", [])):
            if obj_state is not None and _has_state_api(obj):
                obj.set_state(obj_state)
        if "learner_group" in state and "env_runner" not in state:
            self.sync_weights()  # runners act with the restored weights
        group = self.env_runner_group
        if "learner_group" in state and group.num_remote_env_runners():
            # Remote runners' episodes are not stored: they get the weights and the local runner's connector states
            # as they are (restored, or kept when the checkpoint has none), then sample anew.
            group.sync_restored_state(self.learner_group)
        if "rng" in state:  # last: building and syncing above must not advance the restored generators
            set_rng_state(state["rng"])

    # -- checkpoint files (format: relayrl/checkpoints/) -----------------------------------------
    def _checkpoint_extra_files(self) -> Dict[str, Any]:
        if getattr(self, "_policy_based", False):
            # RLlib's old-stack layout: each policy's own checkpoint in policies/<policy_id>
            # (Policy.from_checkpoint(<ckpt>/policies/default_policy) reads it).
            policy_map = self.env_runner_group.local_worker().policy_map
            return {f"policies/{pid}": (lambda path, policy=policy: policy.export_checkpoint(path))
                    for pid, policy in policy_map.items()}
        if not self.config.get("export_native_model_files", False):
            return {}
        from relayrl.checkpoints.export import native_model_writers

        return native_model_writers(self.learner_group.get_module())

    def save(self, checkpoint_dir: Optional[str] = None, prev_state=None):
        """Write a checkpoint (a fresh directory when None); returns an object with `.checkpoint.path`."""
        if self._built_by_tune:  # Tune's protocol: ray.tune.Trainable.save -> save_checkpoint()
            return self._tune_trainable_call("save", checkpoint_dir)
        from relayrl.checkpoints.save_result import SaveResult

        return SaveResult(self.save_to_path(checkpoint_dir), metrics={"training_iteration": self.iteration})

    def restore(self, checkpoint_path) -> None:
        """Load a checkpoint written by save() / save_to_path() into this algorithm."""
        if self._built_by_tune:  # Tune's protocol: ray.tune.Trainable.restore -> load_checkpoint()
            return self._tune_trainable_call("restore", checkpoint_path)
        self.restore_from_path(checkpoint_path)

    @classmethod
    def from_checkpoint(cls, path, *, config=None, config_overrides: Optional[Dict[str, Any]] = None, env=None,
                        trusted=None, **kwargs):
        """Rebuild the algorithm from a checkpoint alone.

        The stored config is data: names in it (env, callbacks, connector, module classes) resolve only to
        relayrl's list of nameable classes (checkpoints/nameable.py), registered envs, this class and what
        you pass in `trusted` (objects, or module names); see docs/checkpoints.md. `config_overrides` supplies options
        that could not be stored (lambdas, closures), `env` the env, `config` replaces the stored config.
        """
        from relayrl.algorithms.config_json import algorithm_from_checkpoint
        from relayrl.checkpoints.save_result import as_path

        return algorithm_from_checkpoint(cls, as_path(path), config=config, config_overrides=config_overrides,
                                         env=env, trusted=trusted)

    def export_policy_model(self, export_dir: str, policy_id: str = DEFAULT_MODULE_ID, onnx=None) -> str:
        """Write the module's inference forward (obs -> action_dist_inputs) as TorchScript `<export_dir>/model.pt`."""
        if onnx:
            raise ValueError("ONNX export is not supported; export_policy_model writes TorchScript (onnx=None).")
        import os

        from relayrl.checkpoints.export import _module_or_raise, export_torchscript

        module = _module_or_raise(self.learner_group.get_module(), policy_id)
        os.makedirs(export_dir, exist_ok=True)
        return export_torchscript(module, os.path.join(export_dir, "model.pt"))


def check_list(value: Any, where: Where) -> list:
    require(isinstance(value, list), where, f"expected a list, found {type(value).__name__}.")
    return value


def _has_state_api(obj) -> bool:
    return callable(getattr(obj, "get_state", None)) and callable(getattr(obj, "set_state", None))


def _eval_runners(group) -> list:
    return ([group.local_env_runner] if group.local_env_runner is not None else []) + list(group.remote_env_runners)


def _local_eval_runner(algo):
    group = getattr(algo, "eval_env_runner_group", None)
    return None if group is None else group.local_env_runner


def _sub_paths(value) -> Dict[str, list]:
    """{"learner_group": ["learner/rl_module"]} from ["learner_group/learner/rl_module", ...]."""
    if value is None:
        return {}
    out: Dict[str, list] = {}
    for path in [value] if isinstance(value, str) else value:
        head, _, rest = path.partition("/")
        if rest:
            out.setdefault(head, []).append(rest)
    return out


# -- RNGs ----------------------------------------------------------------------------------------
def rng_state() -> Dict[str, Any]:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: Dict[str, Any]) -> None:
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    np.random.set_state(tuple(state["numpy"]))
    torch.set_rng_state(state["torch"])


__all__ = ["AlgorithmState", "rng_state", "set_rng_state"]


_SHAPE_FIELDS = ("fcnet_hiddens", "head_fcnet_hiddens", "lstm_cell_size", "vf_share_layers")  # weights' shapes


def resolved_model_hint(config, error: CheckpointError) -> str:
    """For weights of another shape: the model_config fields this config resolved itself (a stateful module's
    measured defaults, e.g. PPO's head_fcnet_hiddens=[64]), which the checkpoint's algorithm (e.g. BC's, given the
    same model_config) did not; "" when there are none or the error is not about the model."""
    resolved = {key: value for key, value in (config.__dict__.get("_resolved_model_fields") or {}).items()
                if key in _SHAPE_FIELDS}
    if not resolved or "another model" not in str(error):
        return ""
    fields = ", ".join(f"{key}={value!r}" for key, value in resolved.items())
    return (f"Note: this {type(config).__name__}'s model_config has {fields} from the defaults for stateful "
            "modules (not set by you); if the checkpoint's algorithm had the same model_config, set these fields "
            "in both configs' model_config (docs/stateful_modules.md).")
