"""`DotSideEnv`: the smallest image task for the default CNN: is the dot on the left or the right?

Observations are (42, 42, 1) uint8 images (0 background, 255 a 3x3 dot) placed at random; action 0
says "left half", 1 "right half"; reward 1 for the right answer, 0 otherwise; 10 steps per episode
(a new dot each step), so the best return is 10 and a random policy's is 5.

`DotSideContinuousEnv`: the same images with a Box action in [-1, 1] (negative says left, positive right);
the reward is the action's value signed by the side (+a on the right, -a on the left), so the best return
is 10 and a random policy's is 0: the image task for SAC's Box-action CNN module.
"""
import gymnasium as gym
import numpy as np


class DotSideEnv(gym.Env):
    observation_space = gym.spaces.Box(0, 255, (42, 42, 1), np.uint8)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, config=None):
        self.size = 42
        self.episode_len = int((config or {}).get("episode_len", 10))
        self._t, self._side = 0, 0

    def _observation(self) -> np.ndarray:
        image = np.zeros((self.size, self.size, 1), np.uint8)
        self._side = int(self.np_random.integers(2))
        half = self.size // 2
        x = int(self.np_random.integers(0, half - 3)) + self._side * half
        y = int(self.np_random.integers(0, self.size - 3))
        image[y:y + 3, x:x + 3, 0] = 255
        return image

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._t = 0
        return self._observation(), {}

    def step(self, action):
        reward = 1.0 if int(action) == self._side else 0.0
        self._t += 1
        return self._observation(), reward, False, self._t >= self.episode_len, {}


class DotSideContinuousEnv(DotSideEnv):
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def step(self, action):
        value = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], -1.0, 1.0))
        reward = value if self._side == 1 else -value
        self._t += 1
        return self._observation(), reward, False, self._t >= self.episode_len, {}
