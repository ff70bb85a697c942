"""Which spaces the default MLP modules handle, with errors that name the fix."""
import math

import gymnasium as gym

_FLATTEN = ("add the FlattenObservations connector: config.env_runners(env_to_module_connector=lambda env, "
            "spaces, device: FlattenObservations()) (FlattenObservations(multi_agent=True) in a multi-agent config) "
            "with `from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations`")
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


def check_action_space(space: gym.Space, module_name: str, *, allow_discrete=True, allow_box=True,
                       allow_multi_discrete=False) -> None:
    if allow_discrete and isinstance(space, gym.spaces.Discrete):
        return
    if allow_box and isinstance(space, gym.spaces.Box) and len(space.shape) == 1:
        return
    if allow_multi_discrete and multi_discrete_sizes(space) is not None:
        return
    kinds = (("Discrete", allow_discrete), ("1-D Box", allow_box),
             ("1-D MultiDiscrete or Tuple-of-Discrete", allow_multi_discrete))
    supported = " or ".join(n for n, ok in kinds if ok)
    raise ValueError(
        f"{module_name} cannot handle the action space {space}: it supports {supported} actions. "
        f"Fix: wrap the env (gymnasium.ActionWrapper) to expose a supported action space, or {_OWN_MODULE}."
    )


def multi_discrete_sizes(space: gym.Space):
    """The choice counts of a 1-D MultiDiscrete space or a Tuple of Discrete spaces (starting at 0); else None."""
    if isinstance(space, gym.spaces.MultiDiscrete) and len(space.shape) == 1 and not space.start.any():
        return [int(n) for n in space.nvec]
    if (isinstance(space, gym.spaces.Tuple) and space.spaces
            and all(isinstance(s, gym.spaces.Discrete) and s.start == 0 for s in space.spaces)):
        return [int(s.n) for s in space.spaces]
    return None


def action_dim(space: gym.Space) -> int:
    """The size of the distribution's logits per action component: n (Discrete), the sum of the choice counts
    (MultiDiscrete, Tuple of Discrete), or the flat size (Box)."""
    if isinstance(space, gym.spaces.Discrete):
        return int(space.n)
    sizes = multi_discrete_sizes(space)
    return sum(sizes) if sizes is not None else int(math.prod(space.shape))
