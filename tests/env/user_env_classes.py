"""Env classes written as users write them: valid gymnasium envs (and a MultiAgentEnv) that relayrl's own test envs
are not, each changing one thing. Shared by the tests that run them through the RLModule stack
(test_user_env_classes.py, test_user_env_nested_spaces.py) and the Policy API's runners
(tests/policy/test_policy_runner_user_envs.py); docs/vector_envs.md, "Env classes you write"."""
import time

import gymnasium as gym
import numpy as np

from relayrl.env.multi_agent_env import MultiAgentEnv

LENGTH = 5  # every env below: an episode is LENGTH steps, observation t (the step count), reward 1 per step


class CountingEnv(gym.Env):
    """Box(3,) float32 observations [t, t, t], Discrete(2) actions, reward 1, terminated after LENGTH steps.
    Subclasses change one thing each, as a user's env would."""
    metadata = {"render_modes": []}

    def __init__(self, env_config=None):
        self.env_config = env_config
        self.observation_space = gym.spaces.Box(-10, 10, (3,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.t = 0
        self.reset_seeds = []

    def obs(self):
        return np.full(3, self.t, np.float32)

    def reward(self):
        return 1.0

    def done(self):
        return self.t >= LENGTH, False

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.reset_seeds.append(seed)
        self.t = 0
        return self.obs(), {}

    def step(self, action):
        self.t += 1
        return (self.obs(), self.reward(), *self.done(), {})


# -- 1. observations that differ from the space --------------------------------------------------------------------
class Float64Obs(CountingEnv):
    def obs(self):
        return np.full(3, self.t, np.float64)


class ListObs(CountingEnv):
    def obs(self):
        return [float(self.t)] * 3


class TupleObs(CountingEnv):
    def obs(self):
        return (self.t,) * 3


class IntObs(CountingEnv):
    def obs(self):
        return np.full(3, self.t, np.int64)


class DiscreteObs(CountingEnv):
    def __init__(self, env_config=None):
        super().__init__(env_config)
        self.observation_space = gym.spaces.Discrete(LENGTH + 1)

    def obs(self):
        return np.int64(self.t) if self.env_config.get("numpy") else self.t


class WrongShapeObs(CountingEnv):
    def obs(self):
        return np.zeros(4, np.float32)


class WrongShapeLaterObs(CountingEnv):
    """Right for two steps, then one too long: past the first-call checks."""

    def obs(self):
        return np.zeros(3 if self.t < 2 else 4, np.float32)


# -- 2. rewards and flags as numpy values ----------------------------------------------------------------------------
class Float32Reward(CountingEnv):
    def reward(self):
        return np.float32(1.0)


class ZeroDimArrayReward(CountingEnv):
    def reward(self):
        return np.array(1.0)


class IntReward(CountingEnv):
    def reward(self):
        return 1


class NumpyBoolFlags(CountingEnv):
    def done(self):
        return np.bool_(self.t >= LENGTH), np.bool_(False)


# -- 4. render_mode, metadata, gym's old reset() ---------------------------------------------------------------------
class RendersFrames(CountingEnv):
    """Reads render_mode from env_config in __init__ (relayrl passes it there, as RLlib); no render_fps."""
    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, env_config=None):
        super().__init__(env_config)
        self.render_mode = env_config.get("render_mode")

    def render(self):
        return np.full((16, 16, 3), 40 * self.t, np.uint8)


class OldGymReset(CountingEnv):
    def reset(self):
        self.t = 0
        return self.obs(), {}


# -- 5. episodes cut by a TimeLimit or by the env itself ----------------------------------------------------------
class NeverEnds(CountingEnv):
    def done(self):
        return False, False


class TruncatesItself(CountingEnv):
    def done(self):
        return False, self.t >= LENGTH


gym.register("relayrl_test/NeverEnds-v0", entry_point=NeverEnds, max_episode_steps=7)


# -- 6. wrappers, slow and failing constructors ----------------------------------------------------------------
class CartPoleWithBonus(gym.Wrapper):
    """A user's Wrapper subclass that makes the env it wraps from env_config."""

    def __init__(self, env_config=None):
        super().__init__(gym.make("CartPole-v1", max_episode_steps=env_config.get("max_steps", 500)))

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward + 1.0, terminated, truncated, info


class SlowToMake(CountingEnv):
    def __init__(self, env_config=None):
        time.sleep(0.5)  # (e.g. a simulator loading its assets)
        super().__init__(env_config)


class ChecksItsConfig(CountingEnv):
    def __init__(self, env_config=None):
        bad_here = (env_config.vector_index >= env_config.get("bad_from", 0)
                    and env_config.worker_index >= env_config.get("bad_on_worker", 0))
        if env_config.get("size", 1) < 0 and bad_here:
            raise ValueError(f"size must be >= 0, got size={env_config['size']}")
        super().__init__(env_config)


# -- multi-agent -----------------------------------------------------------------------------------------------------
class TwoCounters(MultiAgentEnv):
    """Two agents observing the step count, "a" as float64 arrays and "b" as lists; numpy rewards and flags."""

    def __init__(self, config=None):
        self.possible_agents = ["a", "b"]
        self.agents = list(self.possible_agents)
        self.observation_spaces = {x: gym.spaces.Box(-10, 10, (3,), np.float32) for x in self.agents}
        self.action_spaces = {x: gym.spaces.Discrete(2) for x in self.agents}
        if config.get("size", 1) < 0 and config.vector_index == 1:
            raise ValueError(f"size must be >= 0, got size={config['size']}")
        self.env_config, self.reset_seeds = config, []
        super().__init__()

    def obs(self):
        return {"a": np.full(3, self.t, np.float64), "b": [float(self.t)] * 3}

    def reset(self, *, seed=None, options=None):
        self.t = 0
        self.reset_seeds.append(seed)
        return self.obs(), {}

    def step(self, actions):
        self.t += 1
        return (self.obs(), {"a": np.float32(1.0), "b": 1}, {"__all__": np.bool_(self.t >= LENGTH)},
                {"__all__": np.bool_(False)}, {})


# -- nested observation spaces ------------------------------------------------------------------------------------
class DictObs(CountingEnv):
    """Dict(pos=Box(3,) float32, count=Discrete) observations: pos as float64 arrays, count as a Python int."""

    def __init__(self, env_config=None):
        super().__init__(env_config)
        self.observation_space = gym.spaces.Dict(pos=gym.spaces.Box(-10, 10, (3,), np.float32),
                                                 count=gym.spaces.Discrete(LENGTH + 1))

    def obs(self):
        return {"pos": np.full(3, self.t, np.float64), "count": self.t}


class TupleOfListAndInt(CountingEnv):
    """Tuple((Box(2,) float32, Discrete)) observations as a list: ([t, t] as Python floats, t as a Python int)."""

    def __init__(self, env_config=None):
        super().__init__(env_config)
        self.observation_space = gym.spaces.Tuple((gym.spaces.Box(-10, 10, (2,), np.float32),
                                                   gym.spaces.Discrete(LENGTH + 1)))

    def obs(self):
        return [[float(self.t)] * 2, self.t]
