"""How connector states (e.g. MeanStdFilter statistics) move between the driver and remote EnvRunners.

RLlib's two options decide it (config.env_runners(...)):
- `merge_env_runner_states` (True / False / "training_only"): gather the remote runners' states and merge what they
  added into the driver's state; otherwise the driver's (local runner's) state is the reference as it is.
  "training_only" merges for training runners, not for evaluation runners (config.in_evaluation).
- `broadcast_env_runner_states` (bool): send the resulting state back to the remote runners; False keeps it on the
  driver and every remote runner keeps (and goes on adding to) its own.

`ConnectorStateSync` is the driver's memory for one EnvRunnerGroup: the state last merged (`base`) and, for runners
that keep their own state, what each held when last looked at, so that only what a runner added since is merged
(never its whole history twice). The synchronous sync (EnvRunnerGroup.sync_weights) and IMPALA/APPO's asynchronous
one (AsyncSampler) share it.
"""
from typing import Any, Dict, Iterable, Mapping, Tuple

CONNECTOR_KEYS = ("env_to_module_connector", "module_to_env_connector")


def state_sync_mode(config) -> Tuple[bool, bool]:
    """(merge, broadcast) for a group built from `config` (an evaluation config has in_evaluation=True)."""
    merge_option = getattr(config, "merge_env_runner_states", "training_only")
    merge = merge_option is True or (merge_option == "training_only" and not getattr(config, "in_evaluation", False))
    return merge, bool(getattr(config, "broadcast_env_runner_states", True))


def connector_part(state: Mapping[str, Any]) -> Dict[str, Any]:
    """The connector states in a runner state dict (not its weights)."""
    return {key: state[key] for key in CONNECTOR_KEYS if key in state}


class ConnectorStateSync:
    def __init__(self):
        self.base: Dict[str, Any] = {}  # the state last merged or taken as the reference, per pipeline key
        self._held: Dict[int, Dict[str, Any]] = {}  # worker_index -> its state when last looked at (if not base)

    def merge(self, pipelines: Mapping[str, Any], states_by_runner: Mapping[int, Mapping[str, Any]], *,
              broadcast: bool) -> Dict[str, Any]:
        """The runners' states merged onto `base` (each reduced to what it added since last looked at); the
        result becomes `base`. `broadcast`: the runners are about to hold the result."""
        from relayrl.distributed.connector_states import merge_connector_states

        ids = list(states_by_runner)
        merged = {}
        for key, pipeline in pipelines.items():
            merged[key] = merge_connector_states(
                pipeline, self.base.get(key, {}), [states_by_runner[i].get(key, {}) for i in ids],
                runner_bases=[self._held[i].get(key, {}) if i in self._held else None for i in ids])
        self.base = merged
        if broadcast:
            self._held.clear()
        else:
            self._held.update({i: connector_part(states_by_runner[i]) for i in ids})
        return merged

    def take_reference(self, state: Mapping[str, Any]) -> None:
        """merge=False with broadcast: every runner is about to hold `state` (the driver's)."""
        self.base = dict(state)
        self._held.clear()

    def runners_started(self, worker_indices: Iterable[int], state: Mapping[str, Any]) -> None:
        """New or restarted runners that start from `state` (their own history is gone)."""
        for i in worker_indices:
            self._held[i] = dict(state)
