"""Each built-in Exploration class: schedules, explore on/off, random phases, bounds, state."""
import math

import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl.exploration import (
    EpsilonGreedy,
    Exploration,
    GaussianNoise,
    OrnsteinUhlenbeckNoise,
    Random,
    SoftQ,
    StochasticSampling,
)
from relayrl.exploration.exploration import make_action_distribution
from relayrl.modules.distributions import TorchCategorical, TorchDiagGaussian

DISCRETE = gym.spaces.Discrete(4)
BOX = gym.spaces.Box(-2.0, 2.0, (2,), np.float32)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def categorical(q_values):
    return make_action_distribution(TorchCategorical, torch.as_tensor(q_values, dtype=torch.float32))


def gaussian(means, log_std=-1.0):
    means = torch.as_tensor(means, dtype=torch.float32)
    return make_action_distribution(TorchDiagGaussian, torch.cat([means, torch.full_like(means, log_std)], -1))


Q = torch.tensor([[0.0, 3.0, 1.0, 2.0]]).repeat(20000, 1)  # argmax 1


# -- EpsilonGreedy --------------------------------------------------------------------------------
def test_epsilon_greedy_schedule_warmup_then_linear_then_held():
    e = EpsilonGreedy(DISCRETE, initial_epsilon=1.0, final_epsilon=0.1, warmup_timesteps=100, epsilon_timesteps=1000)
    assert [e.epsilon(t) for t in (0, 50, 100, 600, 1100, 10_000)] == pytest.approx([1.0, 1.0, 1.0, 0.55, 0.1, 0.1])


def test_epsilon_greedy_piecewise_schedule_as_dqn_option():
    e = EpsilonGreedy(DISCRETE, epsilon_schedule=[(0, 1.0), (10000, 0.02)])
    assert [e.epsilon(t) for t in (0, 5000, 10000, 50000)] == pytest.approx([1.0, 0.51, 0.02, 0.02])


def test_epsilon_greedy_explore_off_is_argmax_and_on_with_eps0_too():
    e = EpsilonGreedy(DISCRETE, initial_epsilon=0.0, final_epsilon=0.0)
    for explore in (False, True):
        actions, logp = e.get_exploration_action(action_distribution=categorical(Q), timestep=0, explore=explore)
        assert (actions == 1).all()
    assert torch.allclose(logp, torch.zeros_like(logp))  # eps 0: the greedy action has probability 1


def test_epsilon_one_gives_uniform_actions_and_uniform_logp():
    e = EpsilonGreedy(DISCRETE, initial_epsilon=1.0)
    actions, logp = e.get_exploration_action(action_distribution=categorical(Q), timestep=0)
    freq = np.bincount(actions.numpy(), minlength=4) / len(actions)
    assert np.allclose(freq, 0.25, atol=0.02)
    assert torch.allclose(logp, torch.full_like(logp, math.log(0.25)))


def test_epsilon_greedy_mixes_by_epsilon_and_never_picks_masked_actions():
    e = EpsilonGreedy(DISCRETE, initial_epsilon=0.5, final_epsilon=0.5)
    masked = Q.clone()
    masked[:, 0] = -float("inf")
    actions, logp = e.get_exploration_action(action_distribution=categorical(masked), timestep=0)
    freq = np.bincount(actions.numpy(), minlength=4) / len(actions)
    assert freq[0] == 0.0
    assert freq[1] == pytest.approx(0.5 + 0.5 / 3, abs=0.02)
    greedy = actions == 1
    assert torch.allclose(logp[greedy], torch.tensor(math.log(0.5 + 0.5 / 3)))
    assert torch.allclose(logp[~greedy], torch.tensor(math.log(0.5 / 3)))


def test_epsilon_greedy_info_and_state_round_trip():
    e = EpsilonGreedy(DISCRETE, initial_epsilon=1.0, final_epsilon=0.0, epsilon_timesteps=100)
    e.get_exploration_action(action_distribution=categorical(Q[:2]), timestep=40)
    assert e.get_info() == {"cur_epsilon": pytest.approx(0.6)}
    state = e.get_state()
    assert state["last_timestep"] == 40 and isinstance(state["cur_epsilon"], float)
    fresh = EpsilonGreedy(DISCRETE, initial_epsilon=1.0, final_epsilon=0.0, epsilon_timesteps=100)
    fresh.set_state(state)
    assert fresh.get_info() == e.get_info()


def test_epsilon_greedy_rejects_box_and_bad_values():
    with pytest.raises(TypeError, match="Discrete"):
        EpsilonGreedy(BOX)
    with pytest.raises(ValueError, match="initial_epsilon"):
        EpsilonGreedy(DISCRETE, initial_epsilon=1.5)


# -- SoftQ ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("temperature", [1.0, 0.5])
def test_soft_q_frequencies_follow_softmax(temperature):
    e = SoftQ(DISCRETE, temperature=temperature)
    actions, logp = e.get_exploration_action(action_distribution=categorical(Q), timestep=0)
    expected = torch.softmax(Q[0] / temperature, -1).numpy()
    assert np.allclose(np.bincount(actions.numpy(), minlength=4) / len(actions), expected, atol=0.015)
    assert torch.allclose(logp, torch.log(torch.as_tensor(expected))[actions], atol=1e-5)
    greedy, _ = e.get_exploration_action(action_distribution=categorical(Q), timestep=0, explore=False)
    assert (greedy == 1).all()


# -- StochasticSampling and Random ----------------------------------------------------------------
def test_stochastic_sampling_samples_then_deterministic_when_not_exploring():
    e = StochasticSampling(DISCRETE)
    actions, logp = e.get_exploration_action(action_distribution=categorical(Q), timestep=0)
    expected = torch.softmax(Q[0], -1).numpy()
    assert np.allclose(np.bincount(actions.numpy(), minlength=4) / len(actions), expected, atol=0.015)
    actions, logp = e.get_exploration_action(action_distribution=categorical(Q), timestep=0, explore=False)
    assert (actions == 1).all() and (logp == 0).all()


def test_stochastic_sampling_random_timesteps_uniform_then_policy():
    e = StochasticSampling(DISCRETE, random_timesteps=100)
    sharp = torch.tensor([[0.0, 50.0, 0.0, 0.0]]).repeat(8000, 1)
    actions, logp = e.get_exploration_action(action_distribution=categorical(sharp), timestep=99)
    assert np.allclose(np.bincount(actions.numpy(), minlength=4) / len(actions), 0.25, atol=0.02)
    assert torch.allclose(logp, torch.full_like(logp, math.log(0.25)))
    actions, _ = e.get_exploration_action(action_distribution=categorical(sharp), timestep=100)
    assert (actions == 1).all()


def test_stochastic_sampling_random_box_actions_in_normalized_bounds():
    e = StochasticSampling(BOX, random_timesteps=10)
    actions, logp = e.get_exploration_action(action_distribution=gaussian(torch.full((5000, 2), 5.0)), timestep=0)
    assert actions.min() >= -1 and actions.max() <= 1 and actions.min() < -0.9 and actions.max() > 0.9
    assert torch.allclose(logp, torch.full_like(logp, -2 * math.log(2.0)))
    raw = StochasticSampling(BOX, random_timesteps=10, policy_config={"normalize_actions": False})
    actions, _ = raw.get_exploration_action(action_distribution=gaussian(torch.zeros(5000, 2)), timestep=0)
    assert actions.min() < -1.5 and actions.max() > 1.5 and actions.abs().max() <= 2


def test_random_explores_uniformly_and_is_deterministic_without_explore():
    e = Random(DISCRETE)
    actions, _ = e.get_exploration_action(action_distribution=categorical(Q), timestep=10**9)
    assert np.allclose(np.bincount(actions.numpy(), minlength=4) / len(actions), 0.25, atol=0.02)
    actions, _ = e.get_exploration_action(action_distribution=categorical(Q), timestep=0, explore=False)
    assert (actions == 1).all()


# -- GaussianNoise / OrnsteinUhlenbeckNoise --------------------------------------------------------
def test_gaussian_noise_scale_schedule():
    e = GaussianNoise(BOX, random_timesteps=100, initial_scale=1.0, final_scale=0.0, scale_timesteps=1000)
    assert [e.scale(t) for t in (0, 100, 600, 1100, 5000)] == pytest.approx([1.0, 1.0, 0.5, 0.0, 0.0])


def test_gaussian_noise_random_phase_then_noise_with_decaying_std_clipped_to_bounds():
    e = GaussianNoise(BOX, random_timesteps=100, stddev=0.1, initial_scale=1.0, final_scale=0.1,
                      scale_timesteps=1000)
    means = torch.full((20000, 2), 0.5)
    random, _ = e.get_exploration_action(action_distribution=gaussian(means), timestep=50)
    assert random.abs().max() <= 1 and random.std() > 0.5  # uniform in [-1, 1]
    noisy, logp = e.get_exploration_action(action_distribution=gaussian(means), timestep=100)
    assert (noisy - 0.5).std().item() == pytest.approx(0.1, rel=0.05) and (logp == 0).all()
    late, _ = e.get_exploration_action(action_distribution=gaussian(means), timestep=10_000)
    assert (late - 0.5).std().item() == pytest.approx(0.01, rel=0.05)
    edge, _ = e.get_exploration_action(action_distribution=gaussian(torch.full((1000, 2), 0.99)), timestep=100)
    assert edge.max() <= 1.0 and (edge == 1.0).any()
    det, _ = e.get_exploration_action(action_distribution=gaussian(torch.full((3, 2), 3.0)), timestep=100,
                                      explore=False)
    assert (det == 3.0).all()  # explore=False: the mean itself, no noise (the env side clips)
    assert e.get_info() == {"cur_scale": pytest.approx(e.scale(100))}


def test_ou_noise_is_time_correlated_and_resets_per_env_on_episode_start():
    e = OrnsteinUhlenbeckNoise(BOX, random_timesteps=0, ou_base_scale=1.0, initial_scale=1.0, final_scale=1.0)
    means = torch.zeros(4, 2)
    steps = [e.get_exploration_action(action_distribution=gaussian(means), timestep=t)[0] for t in range(200)]
    noise = torch.stack(steps)[:, :, 0]  # [time, env]
    lag1 = np.corrcoef(noise[:-1].flatten().numpy(), noise[1:].flatten().numpy())[0, 1]
    assert lag1 > 0.6  # an OU process with theta 0.15 stays close to its last value
    assert noise.abs().max() <= 1.0
    e.on_episode_start(env_index=2)
    assert (e.ou_state[2] == 0).all() and (e.ou_state[1] != 0).any()
    state = e.get_state()
    fresh = OrnsteinUhlenbeckNoise(BOX, random_timesteps=0)
    fresh.set_state(state)
    assert torch.equal(fresh.ou_state, e.ou_state) and fresh.last_timestep == 199


def test_gaussian_noise_needs_box():
    with pytest.raises(TypeError, match="Box"):
        GaussianNoise(DISCRETE)


def test_base_class_requires_get_exploration_action():
    with pytest.raises(NotImplementedError, match="get_exploration_action"):
        Exploration(DISCRETE).get_exploration_action(action_distribution=categorical(Q), timestep=0)
    assert Exploration(DISCRETE).get_state() == {"last_timestep": 0}


def test_epsilon_greedy_rng_state_round_trip_repeats_the_actions():
    e = EpsilonGreedy(DISCRETE, initial_epsilon=0.5, final_epsilon=0.5)
    state = e.get_state()
    first, _ = e.get_exploration_action(action_distribution=categorical(Q[:200]), timestep=0)
    other = EpsilonGreedy(DISCRETE, initial_epsilon=0.5, final_epsilon=0.5)
    other.set_state(state)
    again, _ = other.get_exploration_action(action_distribution=categorical(Q[:200]), timestep=0)
    assert torch.equal(first, again)
