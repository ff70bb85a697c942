"""Which spaces the default MLP modules handle, with errors that name the fix."""
import math

import gymnasium as gym

_FLATTEN = ("add the FlattenObservations connector: config.env_runners(env_to_module_connector=lambda env, "
            "spaces, device: FlattenObservations()) with `from relayrl.connectors.env_to_module.flatten_observations "
            "import FlattenObservations`")
_OWN_MODULE = ("give your own RLModule via config.rl_module(rl_module_spec=RLModuleSpec(module_class=MyModule)) "
               "(see examples/custom_rl_module.py)")


def flat_obs_dim(space: gym.Space, module_name: str) -> int:
    """Input size of an MLP for a 1-D Box observation space; anything else raises with the remedy."""
    if isinstance(space, gym.spaces.Box) and len(space.shape) == 1:
        return int(space.shape[0])
    if isinstance(space, gym.spaces.Box) and len(space.shape) == 0:
        return 1
    if isinstance(space, gym.spaces.Box):
        what = f"{len(space.shape)}-D (image-like) Box observations need a conv model"
        hint = f"{_FLATTEN} to feed them to the MLP, or {_OWN_MODULE}"
    elif isinstance(space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)):
        what = f"{type(space).__name__} observations must be one-hot encoded first"
        hint = f"{_FLATTEN} (it one-hot encodes them), or {_OWN_MODULE}"
    elif isinstance(space, (gym.spaces.Dict, gym.spaces.Tuple)):
        what = f"nested ({type(space).__name__}) observations must be flattened first"
        hint = f"{_FLATTEN}, or {_OWN_MODULE}"
    else:
        what = f"{type(space).__name__} observations are not supported"
        hint = _OWN_MODULE
    raise ValueError(
        f"{module_name} cannot handle the observation space {space}: the default model is an MLP over a 1-D Box "
        f"and {what}. Fix: {hint}."
    )


def check_action_space(space: gym.Space, module_name: str, *, allow_discrete=True, allow_box=True) -> None:
    if allow_discrete and isinstance(space, gym.spaces.Discrete):
        return
    if allow_box and isinstance(space, gym.spaces.Box) and len(space.shape) == 1:
        return
    supported = " or ".join(n for n, ok in (("Discrete", allow_discrete), ("1-D Box", allow_box)) if ok)
    raise ValueError(
        f"{module_name} cannot handle the action space {space}: it supports {supported} actions. "
        f"Fix: wrap the env (gymnasium.ActionWrapper) to expose a supported action space, or {_OWN_MODULE}."
    )


def action_dim(space: gym.Space) -> int:
    return int(space.n) if isinstance(space, gym.spaces.Discrete) else int(math.prod(space.shape))
