"""RLlib's example envs (relayrl.examples.envs.classes): each keeps its spaces and RLlib's behaviour."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl.examples.envs.classes import (
    ActionMaskEnv,
    CartPoleWithDictObservationSpace,
    RandomEnv,
    SimpleCorridor,
    StatelessCartPole,
)


@pytest.mark.parametrize("cls", [ActionMaskEnv, CartPoleWithDictObservationSpace, RandomEnv, SimpleCorridor,
                                 StatelessCartPole])
def test_observations_lie_in_the_observation_space(cls):
    env = cls({})
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and isinstance(info, dict)
    for _ in range(5):
        action = int(np.argmax(obs["action_mask"])) if cls is ActionMaskEnv else env.action_space.sample()
        obs, reward, terminated, truncated, _ = env.step(action)
        assert env.observation_space.contains(obs) and np.isscalar(reward)
        if terminated or truncated:
            obs, _ = env.reset()


def test_simple_corridor_ends_at_its_length():
    env = SimpleCorridor({"corridor_length": 3})
    env.reset(seed=0)
    steps = [env.step(1) for _ in range(3)]
    assert [s[2] for s in steps] == [False, False, True]


def test_stateless_cartpole_hides_the_velocities():
    env = StatelessCartPole()
    obs, _ = env.reset(seed=0)
    assert obs.shape == (2,)


def test_action_mask_env_refuses_a_masked_action():
    env = ActionMaskEnv({"action_space": gym.spaces.Discrete(4)})
    obs, _ = env.reset(seed=1)
    mask = obs["action_mask"]
    assert mask.any()
    if mask.all():
        pytest.skip("this seed allows every action")
    with pytest.raises(ValueError, match="Invalid action"):
        env.step(int(np.argmin(mask)))
