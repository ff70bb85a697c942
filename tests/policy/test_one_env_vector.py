"""The one-sub-env fast path of the PolicyRunner's vector env gives what gymnasium's SyncVectorEnv gives."""
import subprocess
import sys

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from relayrl.policy.rollout.one_env_vector import OneEnvSyncVectorEnv


def _vector(num_envs=1, env_id="CartPole-v1"):
    return gym.vector.SyncVectorEnv([lambda: gym.make(env_id)] * num_envs, autoreset_mode=AutoresetMode.SAME_STEP)


def test_same_steps_as_sync_vector_env_across_episode_ends():
    plain, fast = _vector(), OneEnvSyncVectorEnv.adopt(_vector())
    assert type(fast) is OneEnvSyncVectorEnv
    rng = np.random.default_rng(0)
    for a, b in zip(plain.reset(seed=3), fast.reset(seed=3)):
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b
    ends = 0
    for _ in range(300):
        actions = rng.integers(0, 2, size=1)
        ours, theirs = fast.step(actions), plain.step(actions)
        for x, y in zip(ours[:4], theirs[:4]):
            assert x.dtype == y.dtype and np.array_equal(x, y)
        assert ours[4].keys() == theirs[4].keys()
        if "final_obs" in theirs[4]:
            ends += 1
            assert np.array_equal(ours[4]["final_obs"][0], theirs[4]["final_obs"][0])
        ours[0][0, 0] = 123.0  # a fresh array each step: changing it changes nothing inside
        assert fast._observations is not theirs[0]
    assert ends >= 5


def test_applies_only_to_one_box_observation_sub_env():
    assert not OneEnvSyncVectorEnv.applies(_vector(num_envs=2))
    assert not OneEnvSyncVectorEnv.applies(_vector(env_id="FrozenLake-v1"))  # Discrete observations
    assert type(OneEnvSyncVectorEnv.adopt(_vector(num_envs=2))) is gym.vector.SyncVectorEnv


def test_default_policy_optimizer_does_not_import_the_torch_compiler():
    code = ("import sys, gymnasium as gym, torch\n"
            "from relayrl.policy.policy_template import build_policy_class\n"
            "P = build_policy_class('P', 'torch', loss_fn=lambda p, m, d, b: m.from_batch(b)[0].sum())\n"
            "p = P(gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2), {'lr': 1e-3})\n"
            "from relayrl.policy.sample_batch import SampleBatch\n"
            "p.learn_on_batch(SampleBatch({'obs': torch.zeros(3, 4).numpy(), 'actions': torch.zeros(3).long().numpy()}))\n"
            "print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
