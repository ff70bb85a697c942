"""The remote EnvRunner: the same EnvRunner class, with three helper methods, wrapped with `ray.remote`."""
from typing import Any, Callable, Dict, List, Optional, Tuple

CONNECTOR_STATE_KEYS = ("env_to_module_connector", "module_to_env_connector")


class RemoteEnvRunnerMethods:
    """Mixed in front of the EnvRunner class inside the actor (one round trip per call instead of several)."""

    def __init__(self, *args, config_blob: bytes, driver_sys_path: List[str], **kwargs):
        import sys

        import torch
        from ray import cloudpickle

        # The config names the user's env, callbacks and connector classes. Classes from modules the
        # driver imported through its own sys.path (a script's folder, a test folder) must import
        # here too, so the driver's path entries are added before the config is unpickled.
        sys.path.extend(p for p in driver_sys_path if p not in sys.path)
        config = kwargs["config"] = cloudpickle.loads(config_blob)
        # One actor per reserved CPU: torch must not spread over all cores of the node.
        threads = max(1, int(getattr(config, "num_cpus_per_env_runner", 1) or 1))
        torch.set_num_threads(threads)
        _seed_actor(config, kwargs.get("worker_index", 0))
        super().__init__(*args, **kwargs)

    def set_state(self, state: Dict[str, Any]) -> None:
        import warnings

        # Arrays from Ray's object store are read-only; torch copies them anyway, so its warning is noise.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            super().set_state(state)

    def apply(self, func: Callable, *args, **kwargs) -> Any:
        """`func(self, *args, **kwargs)`: how foreach_env_runner ships a function to the actor."""
        return func(self, *args, **kwargs)

    def sample_and_get_metrics(self, **sample_kwargs) -> Tuple[list, Dict[str, Any]]:
        episodes = self.sample(**sample_kwargs)
        return episodes, self.get_metrics()

    def get_connector_states(self) -> Dict[str, Any]:
        state = self.get_state(components=list(CONNECTOR_STATE_KEYS))  # not the episodes and env states
        return {key: state[key] for key in CONNECTOR_STATE_KEYS if key in state}


def _seed_actor(config, worker_index: int) -> None:
    """Seed the actor process's random, numpy and torch generators from `config.seed`, as RLlib's EnvRunner does.

    Unseeded, a remote runner's action sampling started from fresh generators in every run, so a seeded run with
    remote runners sampled other actions each time. The driver seeded its own (Algorithm), so the local runner
    is not seeded again here. Each runner, and the evaluation runners, get their own stream.
    """
    from relayrl.core.global_seed import seed_everything

    if config.seed is not None:
        seed_everything(int(config.seed) + 1000 * int(worker_index)
                        + (1_000_000 if getattr(config, "in_evaluation", False) else 0))


def remote_env_runner_class(ray, env_runner_cls: type, config, num_cpus: Optional[float] = None):
    """`ray.remote(<EnvRunner class + RemoteEnvRunnerMethods>)` with the config's per-runner resources (`num_cpus`
    instead of its CPUs where given: a share that fits the machine, ray_setup.check_resources).

    Ray's own actor restarts are off (max_restarts=0): the group replaces a failed actor itself, so
    the new one gets `recreated_worker=True` and the current weights and connector states.
    """
    cls = type(env_runner_cls.__name__, (RemoteEnvRunnerMethods, env_runner_cls),
               {"__module__": __name__, "__qualname__": f"Remote{env_runner_cls.__name__}"})
    return ray.remote(
        num_cpus=config.num_cpus_per_env_runner if num_cpus is None else num_cpus,
        num_gpus=config.num_gpus_per_env_runner,
        resources=dict(config.custom_resources_per_env_runner) or None,
        max_restarts=0,
        max_task_retries=0,
    )(cls)


class RemoteEnvRunnerProxy:
    """A remote EnvRunner used like a local one: `proxy.get_state()` calls the actor and waits for the answer.

    What `EnvRunnerGroup.remote_env_runners` returns, so code written for in-process runners
    (checkpoints, custom evaluation) keeps working. The calls wait at most `timeout_s` and bypass
    the group's failure handling; `actor` is the Ray actor handle itself.
    """

    def __init__(self, ray, actor, worker_index: int, timeout_s: float):
        self._ray, self.actor, self.worker_index, self._timeout_s = ray, actor, worker_index, timeout_s

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        method = getattr(self.actor, name)

        def call(*args, **kwargs):
            return self._ray.get(method.remote(*args, **kwargs), timeout=self._timeout_s)

        call.__name__ = name
        return call

    def __repr__(self) -> str:
        return f"RemoteEnvRunnerProxy(worker_index={self.worker_index})"
