"""Which spaces the default MLP modules handle, with errors that name the fix."""
import math

import gymnasium as gym


def flat_obs_dim(space: gym.Space, module_name: str) -> int:
    """Input size of an MLP for a 1-D Box observation space; anything else raises with the remedy."""
    if isinstance(space, gym.spaces.Box) and len(space.shape) == 1:
        return int(space.shape[0])
    if isinstance(space, gym.spaces.Box) and len(space.shape) == 0:
        return 1
    hint = {
        gym.spaces.Discrete: "add the FlattenObservations connector (one-hot) with "
        "config.env_runners(env_to_module_connector=lambda env, spaces, device: FlattenObservations())",
        gym.spaces.Dict: "add the FlattenObservations connector or give your own RLModule via config.rl_module(rl_module_spec=...)",
        gym.spaces.Tuple: "add the FlattenObservations connector or give your own RLModule via config.rl_module(rl_module_spec=...)",
    }.get(type(space))
    if isinstance(space, gym.spaces.Box):
        hint = ("image-like observations need a conv model; flatten them with FlattenObservations or give "
                "your own RLModule via config.rl_module(rl_module_spec=RLModuleSpec(module_class=...))")
    raise ValueError(
        f"{module_name} cannot handle observation space {space}: the default model is an MLP over a 1-D Box. "
        f"Fix: {hint or 'give your own RLModule via config.rl_module(rl_module_spec=...)'}."
    )


def check_action_space(space: gym.Space, module_name: str, *, allow_discrete=True, allow_box=True) -> None:
    if allow_discrete and isinstance(space, gym.spaces.Discrete):
        return
    if allow_box and isinstance(space, gym.spaces.Box) and len(space.shape) == 1:
        if not (space.bounded_below.all() and space.bounded_above.all()):
            return  # unbounded Box: actions are used as sampled
        return
    supported = " or ".join(n for n, ok in (("Discrete", allow_discrete), ("1-D Box", allow_box)) if ok)
    raise ValueError(
        f"{module_name} cannot handle action space {space}: it supports {supported} actions. "
        "Fix: wrap the env to expose a supported action space, or give your own RLModule via "
        "config.rl_module(rl_module_spec=RLModuleSpec(module_class=...))."
    )


def action_dim(space: gym.Space) -> int:
    return int(space.n) if isinstance(space, gym.spaces.Discrete) else int(math.prod(space.shape))
