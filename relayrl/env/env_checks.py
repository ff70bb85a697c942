"""One-time checks of a sub-env's API: its first reset() and first step() results.

Env API mistakes (an observation of the wrong shape, gym's old 4-tuple step(), a reset() without its
info dict, a reward that is not a number) otherwise surface as numpy or gymnasium errors deep in the
vector env that name neither the env nor the fix. `install_first_call_checks(env, ...)` makes the
env's next reset() and step() check what they return and raise `EnvAPIError` naming the env, what
it returned and what gymnasium expects. Each check runs once: the first call removes the checking
method from the instance, so from then on `env.step` is the env's own method again (no wrapper
layer, no per-step cost, the env's class and wrapper chain unchanged).

What is rejected follows what breaks sampling, not more: gymnasium's own passive checker only warns
about a float64 observation for a float32 Box or values outside the bounds, and the vector env casts
or passes them, so they pass here too. Rejected: step() results that are not 5-tuples, reset()
results that are not (obs, info dict), observations of the wrong shape or structure or that are not
numeric (or floats for an integer space, which the vector env cannot cast), rewards that are not
real numbers, terminated/truncated that are not booleans, infos that are not dicts.
"""
import inspect
import numbers
from typing import Any, Optional

import gymnasium as gym
import numpy as np

_CHECKED_METHODS = ("reset", "step")
_MAKE_WRAPPERS = (gym.wrappers.PassiveEnvChecker, gym.wrappers.OrderEnforcing, gym.wrappers.TimeLimit)
_OLD_GYM_FIX = ("return `obs, reward, terminated, truncated, info` (terminated: the episode reached a terminal "
                "state; truncated: it was cut short, e.g. by a time limit), or wrap an old gym env with shimmy's "
                "GymV21CompatibilityV0")


class EnvAPIError(ValueError):
    """An env's reset() or step() returned something the gymnasium API does not allow."""


def env_name(env: gym.Env) -> str:
    """'CartPole-v1 (CartPoleEnv)' for a registered env, else the env's class with its module."""
    inner = getattr(env, "unwrapped", env)
    cls = type(inner)
    spec = getattr(env, "spec", None)
    if spec is not None and getattr(spec, "id", None):
        return f"'{spec.id}' ({cls.__name__})"
    return f"{cls.__module__}.{cls.__qualname__}"


def check_env_class(cls: type) -> None:
    """A class given as the env is one a runner can build with env_config: not a wrapper (it needs the env it
    wraps) nor an abstract base class (gym.Env, MultiAgentEnv: no reset() and step() of its own)."""
    from relayrl.env.multi_agent_env import MultiAgentEnv

    name = f"{cls.__module__}.{cls.__qualname__}"
    if issubclass(cls, gym.Wrapper) and _needs_the_wrapped_env(cls):
        raise ValueError(f"The env {name} is a wrapper: it needs the env it wraps. Give a creator that wraps your "
                         f"env, e.g. register_env('my-env', lambda env_config: {cls.__name__}(gym.make('CartPole-v1'), "
                         "...)) and config.environment('my-env').")
    if issubclass(cls, gym.Env) and (cls.step in (gym.Env.step, MultiAgentEnv.step)
                                     or cls.reset in (gym.Env.reset, MultiAgentEnv.reset)):
        raise ValueError(f"The env {name} is an abstract base class (it has no reset() and step() of its own): "
                         "give your env class, which subclasses it, or a gymnasium id such as 'CartPole-v1'.")


def _needs_the_wrapped_env(cls: type) -> bool:
    """A wrapper class built with the env it wraps (gymnasium's own, or one whose first argument is `env`); a
    user's wrapper whose __init__ takes env_config and makes its inner env itself is an env like any other."""
    init = cls.__init__
    if getattr(init, "__module__", "").startswith("gymnasium"):
        return True
    try:
        params = list(inspect.signature(init).parameters)
    except (TypeError, ValueError):
        return False
    return len(params) > 1 and params[1] == "env"


def install_first_call_checks(env: gym.Env, *, where: str = "") -> None:
    """Check the env's next reset() and next step() results once each (see the module docstring).

    `where` says which sub-env this is (e.g. "sub-env 0 of EnvRunner worker_index=1") for the errors.
    An env whose attributes cannot be set is left unchecked.
    """
    label = f"env {env_name(env)}" + (f" ({where})" if where else "")
    # The wrappers gym.make adds change no values but unpack step()'s result themselves, so the checks
    # go below them (else an old 4-tuple step() fails inside gymnasium's wrapper first).
    while isinstance(env, _MAKE_WRAPPERS):
        env = env.env
    _check_reset_signature(env, label)
    checks = {"reset": _check_reset_result, "step": _check_step_result}
    for method_name in _CHECKED_METHODS:
        _check_first_call(env, method_name, checks[method_name], label)


def _check_reset_signature(env, label: str) -> None:
    """gymnasium's vector envs call `reset(seed=..., options=...)`: gym's old `reset(self)` fails there with a
    TypeError that names neither the API nor the fix, so it is refused when the env is made."""
    try:
        params = inspect.signature(env.reset).parameters.values()
    except (TypeError, ValueError):  # a builtin or C method: nothing to read
        return
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    names = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    missing = [name for name in ("seed", "options") if name not in names]
    if missing:
        raise EnvAPIError(
            f"{label}: its reset() takes no {' or '.join(repr(name) for name in missing)} argument, but gymnasium "
            "calls reset(seed=..., options=...). Define `def reset(self, *, seed=None, options=None)` and call "
            "`super().reset(seed=seed)` in it (gym's old API had `reset(self)`), or wrap an old gym env with "
            "shimmy's GymV21CompatibilityV0.")


def _check_first_call(env, method_name: str, check, label: str) -> None:
    own = vars(env).get(method_name) if hasattr(env, "__dict__") else None
    original = getattr(env, method_name)

    def first_call(*args, **kwargs):
        _restore(env, method_name, own)
        result = original(*args, **kwargs)
        check(env, result, label)
        return result

    try:
        setattr(env, method_name, first_call)
    except (AttributeError, TypeError):  # __slots__ or a custom __setattr__: leave the env unchecked
        pass


def _restore(env, method_name: str, own) -> None:
    if own is not None:
        setattr(env, method_name, own)
    else:
        vars(env).pop(method_name, None)


# -- the checks --------------------------------------------------------------------------------------
def _check_reset_result(env, result, label: str) -> None:
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
        if isinstance(result, tuple) and len(result) == 2:
            problem = f"(obs, {describe_value(result[1])}): its info is not a dict"
        else:
            problem = describe_value(result)
        raise EnvAPIError(
            f"{label}: reset() returned {problem}. gymnasium expects reset(*, seed=None, options=None) to "
            "return a tuple (observation, info) with info a dict: return `obs, {}` (gym's old API returned "
            "only the observation).")
    _check_observation(result[0], env.observation_space, f"{label}: reset() returned an observation")


def _check_step_result(env, result, label: str) -> None:
    if not isinstance(result, tuple) or len(result) != 5:
        if isinstance(result, tuple) and len(result) == 4:
            raise EnvAPIError(
                f"{label}: step() returned 4 values {describe_value(result)}: gym's old API "
                f"(obs, reward, done, info). gymnasium expects 5: (obs, reward, terminated, truncated, info); "
                f"{_OLD_GYM_FIX}.")
        raise EnvAPIError(f"{label}: step() returned {describe_value(result)}. gymnasium expects a tuple of 5: "
                          f"(obs, reward, terminated, truncated, info).")
    obs, reward, terminated, truncated, info = result
    _check_observation(obs, env.observation_space, f"{label}: step() returned an observation")
    if not _is_real_scalar(reward):
        raise EnvAPIError(f"{label}: step() returned the reward {describe_value(reward)}. gymnasium expects a "
                          "real number (float or int, a numpy scalar will do): return e.g. `float(reward)`.")
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if not _is_bool_scalar(flag):
            raise EnvAPIError(f"{label}: step() returned {name}={describe_value(flag)}. gymnasium expects a bool "
                              f"(third and fourth of (obs, reward, terminated, truncated, info)).")
    if not isinstance(info, dict):
        raise EnvAPIError(f"{label}: step() returned the info {describe_value(info)}. gymnasium expects a dict "
                          "(return {} if there is nothing to report).")


def _check_observation(obs, space: gym.Space, what: str) -> None:
    problem = observation_problem(obs, space)
    if problem:
        raise EnvAPIError(f"{what} {describe_value(obs)}, but the observation_space is {space}: {problem}. Return "
                          "observations that fit env.observation_space (or declare the space they have).")


def observation_problem(obs, space: gym.Space) -> Optional[str]:
    """What makes `obs` unusable for `space` (None if it is usable); only spaces the vector env batches as arrays."""
    if isinstance(space, gym.spaces.Dict):
        if not isinstance(obs, dict) or set(obs) != set(space.spaces):
            keys = sorted(obs) if isinstance(obs, dict) else None
            return f"expected a dict with keys {sorted(space.spaces)}, got keys {keys}"
        for key, sub_space in space.spaces.items():
            problem = observation_problem(obs[key], sub_space)
            if problem:
                return f"[{key!r}]: {problem}"
        return None
    if isinstance(space, gym.spaces.Tuple):
        if not isinstance(obs, (tuple, list)) or len(obs) != len(space.spaces):
            return f"expected a tuple of {len(space.spaces)}"
        for i, (item, sub_space) in enumerate(zip(obs, space.spaces)):
            problem = observation_problem(item, sub_space)
            if problem:
                return f"[{i}]: {problem}"
        return None
    if not isinstance(space, (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)):
        return None  # other spaces (Text, Graph, custom): gymnasium's own handling
    try:
        array = np.asarray(obs)
    except Exception as error:  # ragged lists and the like
        return f"it is not an array of numbers ({error})"
    if array.dtype.kind not in "biuf":
        return f"it is not numeric (dtype {array.dtype})"
    shape = () if isinstance(space, gym.spaces.Discrete) else space.shape
    if array.shape != shape:
        return f"its shape is {array.shape}, the space's {shape}"
    if not np.can_cast(array.dtype, space.dtype, casting="same_kind"):
        return f"its dtype {array.dtype} cannot be cast to the space's {space.dtype}"
    return None


def _is_real_scalar(value: Any) -> bool:
    if isinstance(value, (numbers.Real, np.bool_)):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf"


def _is_bool_scalar(value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, numbers.Integral):
        return value in (0, 1)
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind == "b"


def describe_value(value: Any) -> str:
    """A value as the env-API errors show it: an array by shape and dtype, anything else by a short repr and type."""
    if isinstance(value, np.ndarray):
        return f"array(shape={value.shape}, dtype={value.dtype})"
    if isinstance(value, tuple):
        return "(" + ", ".join(describe_value(item) for item in value) + ")"
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{text} ({type(value).__name__})"
