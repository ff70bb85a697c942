"""The envs of the feature matrix (tests/integration/): each kind of env a user brings, in a discrete-action and a
continuous-action version. They live in the package, not in tests/, so that Ray's workers and Tune's trials
import them as they would a user's own module.

- `GymMakeEnv`: a user's env class wrapping `gym.make(env_config["env_id"])`;
- `make_registered_env`: a creator for `register_env` (the same gym.make);
- `SpacesKindEnv`: observations of one kind (`env_config["obs"]`: "discrete", "dict" or "image") and actions
  `env_config["actions"]` ("discrete" or "box"); reward +1 (discrete) or the action's value signed (box) when
  the action agrees with a hidden bit the observation shows; 8 steps an episode;
- `BoxPursuitParallelEnv`: a two-agent PettingZoo ParallelEnv with Box actions (PettingZoo's own continuous
  envs need packages relayrl does not install: Box2D, pymunk, MPE2); `rps_parallel_env` / `box_pursuit_env`:
  creators of PettingZoo envs through relayrl's ParallelPettingZooEnv;
- `policy_of_agent`: the matrix's policy_mapping_fn (agent 0 / "player_0" / "pursuer_0" -> "p0", ...).
"""
import gymnasium as gym
import numpy as np


class GymMakeEnv(gym.Env):
    """A user's env class around gym.make (the way RLlib examples wrap envs)."""

    def __init__(self, config=None):
        self.env = gym.make((config or {}).get("env_id", "CartPole-v1"))
        self.observation_space, self.action_space = self.env.observation_space, self.env.action_space

    def reset(self, *, seed=None, options=None):
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        return self.env.step(action)

    def close(self):
        self.env.close()


def make_registered_env(config):
    """The creator the matrix registers with relayrl.register_env."""
    return gym.make(config.get("env_id", "CartPole-v1"))


def _action_space(kind: str) -> gym.Space:
    return gym.spaces.Discrete(2) if kind == "discrete" else gym.spaces.Box(-1.0, 1.0, (1,), np.float32)


class SpacesKindEnv(gym.Env):
    """See the module docstring."""

    def __init__(self, config=None):
        config = config or {}
        self.obs_kind = config.get("obs", "discrete")
        self.action_space = _action_space(config.get("actions", "discrete"))
        self.observation_space = {
            "discrete": gym.spaces.Discrete(4),
            "dict": gym.spaces.Dict({"position": gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
                                     "flag": gym.spaces.Discrete(2)}),
            "image": gym.spaces.Box(0, 255, (12, 12, 1), np.uint8),
        }[self.obs_kind]
        self.t, self.bit = 0, 0

    def _observation(self):
        self.bit = int(self.np_random.integers(2))
        if self.obs_kind == "discrete":
            return 2 * self.bit + int(self.np_random.integers(2))
        if self.obs_kind == "dict":
            return {"position": self.np_random.uniform(-1, 1, 2).astype(np.float32), "flag": self.bit}
        image = np.zeros((12, 12, 1), np.uint8)
        image[:, 6 * self.bit:6 * self.bit + 6] = 255
        return image

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._observation(), {}

    def step(self, action):
        self.t += 1
        if isinstance(self.action_space, gym.spaces.Discrete):
            reward = float(int(action) == self.bit)
        else:
            reward = float(np.asarray(action).reshape(-1)[0]) * (1.0 if self.bit else -1.0)
        return self._observation(), reward, self.t >= 8, False, {}


try:
    from pettingzoo import ParallelEnv
except ImportError:  # pettingzoo is an extra: the class exists only with it
    ParallelEnv = None

if ParallelEnv is not None:
    class BoxPursuitParallelEnv(ParallelEnv):
        """Two agents on a line, each moving by its Box action toward a target; reward -distance; 8 steps."""

        metadata = {"name": "box_pursuit_v0"}

        def __init__(self):
            self.possible_agents = ["pursuer_0", "pursuer_1"]
            self.agents = []
            self._rng = np.random.default_rng(0)
            self.positions, self.t = {}, 0

        def observation_space(self, agent):
            return gym.spaces.Box(-2.0, 2.0, (2,), np.float32)

        def action_space(self, agent):
            return gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

        def _obs(self, agent):
            return np.array([self.positions[agent], self.target], np.float32)

        def reset(self, seed=None, options=None):
            if seed is not None:
                self._rng = np.random.default_rng(seed)
            self.agents, self.t = list(self.possible_agents), 0
            self.target = float(self._rng.uniform(-1, 1))
            self.positions = {agent: float(self._rng.uniform(-1, 1)) for agent in self.agents}
            return {agent: self._obs(agent) for agent in self.agents}, {agent: {} for agent in self.agents}

        def step(self, actions):
            self.t += 1
            for agent, action in actions.items():
                self.positions[agent] = float(np.clip(self.positions[agent] + 0.5 * float(np.ravel(action)[0]), -2, 2))
            obs = {agent: self._obs(agent) for agent in self.agents}
            rewards = {agent: -abs(self.positions[agent] - self.target) for agent in self.agents}
            done = self.t >= 8
            terminations = {agent: False for agent in self.agents}
            truncations = {agent: done for agent in self.agents}
            infos = {agent: {} for agent in self.agents}
            if done:
                self.agents = []
            return obs, rewards, terminations, truncations, infos


def rps_parallel_env(config=None):
    from pettingzoo.classic import rps_v2

    from relayrl.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    return ParallelPettingZooEnv(rps_v2.parallel_env(num_actions=3, max_cycles=8))


def box_pursuit_env(config=None):
    from relayrl.env.wrappers.pettingzoo_env import ParallelPettingZooEnv

    return ParallelPettingZooEnv(BoxPursuitParallelEnv())


def policy_of_agent(agent_id, episode=None, **kwargs) -> str:
    return f"p{str(agent_id)[-1]}"


__all__ = ["GymMakeEnv", "make_registered_env", "SpacesKindEnv", "rps_parallel_env", "box_pursuit_env",
           "policy_of_agent"] + (["BoxPursuitParallelEnv"] if ParallelEnv is not None else [])
