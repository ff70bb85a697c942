"""`ALE/...` ids with gym_env_vectorize_mode="VECTOR_ENTRY_POINT": ale-py's `AtariVectorEnv`.

ale-py steps all sub-envs in C++ threads and does the standard preprocessing itself (no-op starts, frame skip
with max-pooling, grayscale resize, FIRE reset, frame stacking). relayrl's `env_config` keys for Atari
(atari_wrappers.ATARI_KEYS) map onto its arguments, so a config gives the same observations in either mode:
`(dim, dim, framestack)` uint8, channels last. Rewards reach the runner unclipped (`clip_rewards` clips
them there and the reported returns stay game scores, as with SYNC). `ALE/...-v5` ids keep gymnasium's
sticky actions (repeat_action_probability=0.25). gym.make's `frameskip` is the raw env's, as with SYNC (1 is
dropped, another value refused: atari_wrappers.raw_frameskip). Other env_config keys go to AtariVectorEnv as keyword
arguments; the mode picked for you (resolved_defaults/vector_mode.py) keeps SYNC for a key it has no argument
for. {"atari_preprocessing": False} (raw frames) has no vector form: SYNC is used then.
"""
import re
from typing import Any, Dict, Optional

import gymnasium as gym
import numpy as np

# relayrl's env_config key -> AtariVectorEnv's argument (dim sets both image sides).
_ARGUMENTS = {"framestack": "stack_num", "noop_max": "noop_max", "frame_skip": "frameskip",
              "episodic_life": "episodic_life", "fire_reset": "use_fire_reset"}


def atari_vector_env_available() -> bool:
    try:
        from ale_py.vector_env import AtariVectorEnv  # noqa: F401
    except ImportError:
        return False
    return True


def why_no_atari_vector_env(env_config: Dict[str, Any]) -> Optional[str]:
    """Why this config cannot use AtariVectorEnv (None: it can)."""
    if not atari_vector_env_available():
        return 'ale-py with its vector env is not installed (pip install "relayrl[atari]")'
    if not env_config.get("atari_preprocessing", True):
        return "env_config atari_preprocessing=False asks for raw frames, which AtariVectorEnv does not give"
    return None


def keys_it_does_not_take(env_config: Dict[str, Any]) -> list:
    """env_config keys that AtariVectorEnv has no argument for (e.g. gym.make's render_mode, max_episode_steps, or the
    ALE's mode and difficulty): SYNC passes them to gym.make, the vector env would refuse them with a TypeError."""
    import inspect

    from ale_py.vector_env import AtariVectorEnv

    from relayrl.env.wrappers.atari_wrappers import ATARI_KEYS

    taken = set(inspect.signature(AtariVectorEnv.__init__).parameters) | set(ATARI_KEYS)
    return sorted(key for key in env_config if key not in taken)


def game_of(env_id: str) -> str:
    """"ALE/SpaceInvaders-v5" -> "space_invaders" (ale-py's ROM name)."""
    name = env_id.split("/", 1)[1].rsplit("-v", 1)[0]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def make_atari_vector_env(env_id: str, env_config: Dict[str, Any], num_envs: int) -> gym.vector.VectorEnv:
    from ale_py.vector_env import AtariVectorEnv

    from relayrl.env.wrappers.atari_wrappers import raw_frameskip

    config = dict(env_config)
    config.pop("atari_preprocessing", None)
    raw_frameskip(config)  # (not AtariVectorEnv's frameskip: RLlib's {"frameskip": 1} kept SYNC's frame_skip of 4)
    kwargs = {"reward_clipping": False}  # the runner clips (clip_rewards); reported returns stay game scores
    if env_id.endswith("-v5"):
        kwargs["repeat_action_probability"] = 0.25  # gymnasium's v5 ids: sticky actions
    if "dim" in config:
        kwargs["img_height"] = kwargs["img_width"] = config.pop("dim")
    for key, argument in _ARGUMENTS.items():
        if key in config:
            kwargs[argument] = config.pop(key)
    kwargs.update(config)
    kwargs["stack_num"] = max(1, int(kwargs.get("stack_num", 4) or 1))  # framestack 0 or None: one screen
    try:
        env = AtariVectorEnv(game_of(env_id), num_envs, **kwargs)
    except TypeError as err:
        raise TypeError(f"ale-py's AtariVectorEnv for {env_id!r} failed: {err}. Check env_config={env_config!r}, "
                        "or use gym_env_vectorize_mode='SYNC'.") from None
    return _channels_last(env)


def _channels_last(env: gym.vector.VectorEnv) -> gym.vector.VectorEnv:
    """AtariVectorEnv's (num_envs, stack, H, W) screens as (num_envs, H, W, stack): the layout of relayrl's SYNC
    Atari envs, which the default CNN encoder takes."""
    stack, height, width = env.single_observation_space.shape
    single = gym.spaces.Box(0, 255, (height, width, stack), np.uint8)
    batched = gym.spaces.Box(0, 255, (env.num_envs, height, width, stack), np.uint8)
    return gym.wrappers.vector.TransformObservation(
        env, lambda obs: np.ascontiguousarray(np.moveaxis(obs, 1, -1)), observation_space=batched,
        single_observation_space=single)
