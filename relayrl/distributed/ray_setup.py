"""Connecting to Ray: start a local instance on first need, or use the cluster the user connected to."""
import logging
import math

from relayrl.env.registry import share_registered_envs_with_ray

logger = logging.getLogger("relayrl")

_started_here = False  # True once relayrl itself started a (fixed-size, local) Ray instance


def ensure_ray_initialized():
    """`ray.init()` unless Ray is already initialised (a user's `ray.init(address=...)` is kept); returns ray."""
    global _started_here
    try:
        import ray
    except ImportError as error:  # pragma: no cover - ray is an optional dependency
        raise ImportError("num_env_runners > 0 runs EnvRunners as Ray actors: install Ray with "
                          "`pip install 'relayrl[ray]'` or set num_env_runners=0 to sample in this process"
                          ) from error
    if not ray.is_initialized():
        ray.init(include_dashboard=False)
        _started_here = True
    share_registered_envs_with_ray()  # the actors about to be made look env names up in Tune's registry
    return ray


def check_resources(ray, *, num_actors: int, num_cpus: float, num_gpus: float, what: str) -> float:
    """The CPUs each of `num_actors` new actors asks Ray for: `num_cpus`, or, on the local instance relayrl started
    (it cannot grow) when they need more CPUs than it has, an equal share of its free CPUs, with a warning (RLlib
    example scripts ask for 5 runners on any machine; they share the cores and the run goes on, slower). Actors that
    cannot fit at all wait in Ray's queue for ever: fail fast on relayrl's instance (no free CPU to share, or too
    few GPUs); on a user's cluster (which may autoscale) only warn."""
    local = _started_here and ray.is_initialized()
    total, free = ray.cluster_resources(), ray.available_resources()
    if local and num_actors and num_cpus * num_actors > total.get("CPU", 0.0) + 1e-9:
        share = math.floor(free.get("CPU", 0.0) / num_actors * 10_000) / 10_000  # Ray's resolution: 0.0001
        if share > 0:
            logger.warning("%s: %d actors x %s CPU = %s CPU, more than the %s CPUs of the local Ray instance relayrl "
                           "started: each asks for %s CPU instead, and they share the cores. Set "
                           "num_cpus_per_env_runner yourself, use fewer runners, or start Ray with more CPUs "
                           "(ray.init(num_cpus=...)).", what, num_actors, num_cpus, num_cpus * num_actors,
                           total.get("CPU", 0.0), share)
            num_cpus = share
    for name, per_actor in (("CPU", num_cpus), ("GPU", num_gpus)):
        needed = per_actor * num_actors
        fix = (f"Lower num_{name.lower()}s_per_env_runner (fractions such as 0.5 are allowed), use fewer runners, "
               "or start Ray yourself with more resources (ray.init(num_cpus=...)).")
        if needed > total.get(name, 0.0) + 1e-9:
            message = (f"{what}: {num_actors} actors x {per_actor} {name} = {needed} {name}, but the Ray "
                       f"cluster has {total.get(name, 0.0)} {name}. {fix}")
            if local:
                raise ValueError(message)
            logger.warning("%s The actors that do not fit wait until the cluster grows.", message)
        elif needed > free.get(name, 0.0) + 1e-9:  # e.g. training and evaluation runners together
            logger.warning("%s: %d actors x %s %s = %s %s, but only %s %s are free now; the actors that do not fit "
                           "wait until others finish. %s", what, num_actors, per_actor, name, needed, name,
                           free.get(name, 0.0), name, fix)
    return num_cpus
