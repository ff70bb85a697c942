"""Atari's standard preprocessing, from gymnasium's own wrappers (with ale-py: `pip install "relayrl[atari]"`).

`wrap_atari_for_new_api_stack(env, dim=84, framestack=4)` gives what DQN/PPO papers train on: no-op
starts (up to 30), frame skip 4 with max-pooling over the last two frames, a `dim`x`dim` grayscale
screen (gymnasium's `AtariPreprocessing`), FIRE after reset for games that need it, and the last
`framestack` screens stacked on the channel axis: (dim, dim, framestack) uint8, channels last, as the
default CNN encoder takes them. `ALE/...` ids get it automatically (`make_atari_env`); switch parts
off through `env_config`: {"atari_preprocessing": False} for the raw env, or "dim", "framestack",
"noop_max", "frame_skip", "episodic_life", "fire_reset" (see docs/atari.md).
"""
from typing import Any, Dict

import gymnasium as gym
import numpy as np

ATARI_KEYS = ("atari_preprocessing", "dim", "framestack", "noop_max", "frame_skip", "episodic_life", "fire_reset")


class FireReset(gym.Wrapper):
    """Press FIRE after each reset (games such as Breakout wait for it); no-op for games without FIRE."""

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        meanings = self.env.unwrapped.get_action_meanings()
        if "FIRE" not in meanings:
            return obs, info
        obs, _, terminated, truncated, info = self.env.step(meanings.index("FIRE"))
        if terminated or truncated:
            obs, info = self.env.reset(**kwargs)
        return obs, info


class StackOnChannels(gym.ObservationWrapper):
    """FrameStackObservation's (k, H, W, 1) stack as one (H, W, k) image: channels last."""

    def __init__(self, env):
        super().__init__(env)
        space = env.observation_space
        k, height, width = space.shape[:3]
        self.observation_space = gym.spaces.Box(0, 255, (height, width, k), np.uint8)

    def observation(self, observation):
        return np.moveaxis(np.asarray(observation)[..., 0], 0, -1)


def wrap_atari_for_new_api_stack(env: gym.Env, dim: int = 84, framestack: int = 4, *, noop_max: int = 30,
                                 frame_skip: int = 4, episodic_life: bool = False, fire_reset: bool = True) -> gym.Env:
    """The standard preprocessing around an ALE env made with frameskip=1 (RLlib's function name and arguments).

    `episodic_life=True` ends an episode at each lost life (gymnasium's terminal_on_life_loss); the returns
    reported are then per life. Off by default, so reported returns are whole games."""
    env = gym.wrappers.AtariPreprocessing(env, noop_max=noop_max, frame_skip=frame_skip, screen_size=dim,
                                          terminal_on_life_loss=episodic_life, grayscale_obs=True,
                                          grayscale_newaxis=True, scale_obs=False)
    if fire_reset:
        env = FireReset(env)
    if framestack and framestack > 1:
        env = StackOnChannels(gym.wrappers.FrameStackObservation(env, framestack))
    return env


def is_atari_id(env_id: Any) -> bool:
    return isinstance(env_id, str) and env_id.startswith("ALE/")


def register_atari_envs() -> None:
    """Make ale-py's `ALE/...` ids known to gymnasium (ale-py registers them only when asked)."""
    try:
        import ale_py
    except ImportError:
        raise ValueError('`ALE/...` envs need ale-py (it ships the game ROMs): pip install "relayrl[atari]"') from None
    gym.register_envs(ale_py)


def make_atari_env(env_id: str, env_config: Dict[str, Any]) -> gym.Env:
    """`gym.make(env_id)` with the standard preprocessing unless env_config says atari_preprocessing=False;
    the other env_config keys go to gym.make."""
    config = dict(env_config)
    settings = {k: config.pop(k) for k in ATARI_KEYS if k in config}
    if not settings.pop("atari_preprocessing", True):
        return gym.make(env_id, **config)
    raw_frameskip(config)
    env = gym.make(env_id, frameskip=1, **config)  # AtariPreprocessing skips frames itself
    return wrap_atari_for_new_api_stack(env, **settings)


def raw_frameskip(config: Dict[str, Any]) -> None:
    """Take gym.make's `frameskip` out of `config` (the env_config of a preprocessed ALE env): 1, as RLlib's Atari
    configs pass it for the raw env under the preprocessing, is what relayrl does already; another value would
    skip frames twice (AtariPreprocessing refuses it), so the error names relayrl's `frame_skip`."""
    if "frameskip" in config and config.pop("frameskip") != 1:
        raise ValueError("env_config 'frameskip' is the raw ALE env's, which the standard preprocessing needs at 1 "
                         "(it skips frames itself): set env_config 'frame_skip' (4 by default) instead, or "
                         "{'atari_preprocessing': False} for the raw env.")


__all__ = ["wrap_atari_for_new_api_stack", "make_atari_env", "register_atari_envs", "is_atari_id", "FireReset",
           "StackOnChannels"]
