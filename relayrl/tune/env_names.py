"""Env names in Ray Tune's registry: where RLlib code registers its envs (`ray.tune.registry.register_env`) and how a
name reaches Ray's other processes (EnvRunner actors, Tune trials), which read the registry from Ray's key-value
store. relayrl/env/registry.py calls these only when this process uses Ray; nothing here imports Ray before then."""
import sys
from typing import Callable, Mapping, Optional


def register_with_tune(creators: Mapping[str, Callable]) -> None:
    """Put `creators` ({name: creator}) into Tune's registry (Tune keeps names given before `ray.init()` until then)."""
    from ray.tune.registry import register_env

    for name, creator in creators.items():
        register_env(name, creator)


def uses_ray() -> bool:
    """Tune imported, or Ray initialised in this process (a driver or a worker): Tune's registry can be read."""
    ray = sys.modules.get("ray")
    return "ray.tune.registry" in sys.modules or (ray is not None and getattr(ray, "is_initialized", bool)())


def creator_from_tune(name: str) -> Optional[Callable]:
    """The creator Tune's registry holds for `name`, or None."""
    from ray.tune.registry import ENV_CREATOR, _global_registry

    return _global_registry.get(ENV_CREATOR, name) if _global_registry.contains(ENV_CREATOR, name) else None
