"""Algorithm.compute_single_action / compute_actions: the local runner's pipelines, explore switch, bounds."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import Columns, PPOConfig, RLModule, RLModuleSpec, ValueFunctionAPI
from relayrl.connectors import MeanStdFilter
from relayrl.exploration import Exploration
from relayrl.testing.envs import CountingEnv


class Recorder(Exploration):
    def __init__(self, action_space, **kwargs):
        super().__init__(action_space, **kwargs)
        self.calls = []

    def get_exploration_action(self, *, action_distribution, timestep, explore=True):
        self.calls.append((explore, timestep))
        return action_distribution.deterministic_sample(), None


@pytest.fixture(scope="module")
def cartpole_algo():
    algo = PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=2).debugging(seed=0).build_algo()
    yield algo
    algo.stop()


def module_logits(algo, observations):
    with torch.no_grad():
        out = algo.get_module().forward_inference({"obs": torch.as_tensor(np.asarray(observations, np.float32))})
    return out["action_dist_inputs"].numpy()


def test_explore_false_is_deterministic_and_equals_the_modules_argmax(cartpole_algo):
    obs = np.array([0.01, -0.2, 0.03, 0.3], np.float32)
    actions = {cartpole_algo.compute_single_action(obs, explore=False) for _ in range(20)}
    assert len(actions) == 1
    batch = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    greedy = cartpole_algo.compute_actions(batch, explore=False)
    assert greedy.shape == (64,)
    assert (greedy == module_logits(cartpole_algo, batch).argmax(-1)).all()
    assert cartpole_algo.compute_single_action(batch[5], explore=False) == greedy[5]


def test_explore_true_samples_from_the_policy(cartpole_algo):
    obs = np.zeros(4, np.float32)
    sampled = [int(cartpole_algo.compute_single_action(obs, explore=True)) for _ in range(400)]
    p1 = torch.softmax(torch.as_tensor(module_logits(cartpole_algo, obs[None])[0]), -1)[1].item()
    assert np.mean(sampled) == pytest.approx(p1, abs=0.08)


def test_full_fetch_dict_input_and_errors(cartpole_algo):
    obs = np.zeros(4, np.float32)
    action, state_out, extra = cartpole_algo.compute_single_action(obs, full_fetch=True, explore=False)
    assert state_out == [] and extra["action_dist_inputs"].shape == (2,)
    assert action == extra["action_dist_inputs"].argmax()
    assert extra["action_logp"] == 0.0 and extra["action_prob"] == 1.0
    assert cartpole_algo.compute_single_action(input_dict={"obs": obs}, explore=False) == action
    actions = cartpole_algo.compute_actions({"agent_0": obs, "agent_1": obs + 1.0}, explore=False)
    assert set(actions) == {"agent_0", "agent_1"}
    actions, states, extras = cartpole_algo.compute_actions({"a": obs}, full_fetch=True)
    assert set(states) == {"a"} and "action_dist_inputs" in extras["a"]
    with pytest.raises(ValueError, match="shape"):
        cartpole_algo.compute_single_action(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="unknown module_id 'other'"):
        cartpole_algo.compute_single_action(obs, policy_id="other")
    with pytest.raises(ValueError, match="needs an observation"):
        cartpole_algo.compute_single_action()


def test_inference_does_not_disturb_ongoing_episodes(cartpole_algo):
    runner = cartpole_algo.env_runner
    runner.sample(num_timesteps=6)
    before = [(e.id_, len(e), np.asarray(e.get_observations()).copy()) for e in runner._episodes]
    steps = runner.num_env_steps_sampled_lifetime
    for _ in range(3):
        cartpole_algo.compute_single_action(np.ones(4, np.float32))
    after = [(e.id_, len(e), np.asarray(e.get_observations())) for e in runner._episodes]
    assert [(i, n) for i, n, _ in before] == [(i, n) for i, n, _ in after]
    assert all(np.array_equal(a[2], b[2]) for a, b in zip(before, after))
    assert runner.num_env_steps_sampled_lifetime == steps


def test_mean_std_filter_is_applied_and_not_updated():
    config = (PPOConfig().environment("CartPole-v1").debugging(seed=0)
              .env_runners(num_envs_per_env_runner=2,
                           env_to_module_connector=lambda env, spaces, device: MeanStdFilter()))
    algo = config.build_algo()
    try:
        runner = algo.env_runner
        runner.sample(num_timesteps=200)
        filter_ = runner._env_to_module[MeanStdFilter][0]
        state = filter_.get_state()
        rng = np.random.default_rng(1)
        raw = rng.normal(scale=[1.0, 2.0, 0.1, 2.0], size=(32, 4)).astype(np.float32)
        actions = algo.compute_actions(raw, explore=False)
        single = [algo.compute_single_action(o, explore=False) for o in raw[:5]]
        assert filter_.get_state() == state  # statistics unchanged by inference
        normalized = np.stack([filter_.normalize(o) for o in raw])
        assert (actions == module_logits(algo, normalized).argmax(-1)).all()
        assert single == list(actions[:5])
        assert filter_.update_stats is True
    finally:
        algo.stop()


def box_algo(**env_runners):
    config = (PPOConfig().environment(CountingEnv, env_config={"continuous": True, "action_low": -2.0,
                                                               "action_high": 6.0})
              .env_runners(num_envs_per_env_runner=1, **env_runners).debugging(seed=0))
    return config.build_algo()


def test_box_actions_are_unsquashed_and_clipped_to_the_env_bounds():
    algo = box_algo()
    try:
        obs = np.array([3.0, 0.0], np.float32)
        mean = module_logits(algo, obs[None])[0][:1]
        action = algo.compute_single_action(obs, explore=False)
        expected = np.clip(-2.0 + (mean + 1.0) * 4.0, -2.0, 6.0)  # [-1, 1] -> [-2, 6]
        assert action.shape == (1,) and np.allclose(action, expected, atol=1e-5)
        raw = algo.compute_single_action(obs, explore=False, unsquash_action=False)
        assert np.allclose(raw, mean, atol=1e-6)
        clipped = algo.compute_single_action(np.array([3.0, 0.0], np.float32), explore=False,
                                             unsquash_action=False, clip_action=True)
        assert np.allclose(clipped, np.clip(mean, -2.0, 6.0))
        explored = np.stack([algo.compute_single_action(obs, explore=True) for _ in range(200)])
        assert explored.min() >= -2.0 and explored.max() <= 6.0 and explored.std() > 0
        env_space = gym.spaces.Box(-2.0, 6.0, (1,), np.float32)
        assert all(env_space.contains(a) for a in explored)
    finally:
        algo.stop()


def test_box_gaussian_noise_through_compute_single_action():
    algo = box_algo(exploration_config={"type": "GaussianNoise", "random_timesteps": 0, "stddev": 0.5})
    try:
        obs = np.array([1.0, 0.0], np.float32)
        deterministic = algo.compute_single_action(obs, explore=False)
        noisy = np.stack([algo.compute_single_action(obs, explore=True) for _ in range(100)])
        assert not np.allclose(noisy, deterministic) and noisy.min() >= -2.0 and noisy.max() <= 6.0
        assert algo.env_runner.exploration.get_info()["cur_scale"] == 1.0
    finally:
        algo.stop()


@pytest.mark.parametrize("config_explore, call_explore, expected", [
    (True, None, True), (True, False, False), (False, None, False), (False, True, True)])
def test_compute_single_action_explore_table(config_explore, call_explore, expected):
    config = (PPOConfig().environment("CartPole-v1")
              .env_runners(num_envs_per_env_runner=1, explore=config_explore, exploration_config={"type": Recorder}))
    algo = config.build_algo()
    try:
        algo.compute_single_action(np.zeros(4, np.float32), explore=call_explore)
        algo.compute_single_action(np.zeros(4, np.float32), explore=call_explore, timestep=123)
        calls = algo.env_runner.exploration.calls
        assert calls == [(expected, 0), (expected, 123)]  # timestep: the runner's count unless given
    finally:
        algo.stop()


class CounterStateModule(RLModule, ValueFunctionAPI):
    """Recurrent toy: state h -> h + 1; logits [-h, h] (so the greedy action is 1 iff h > 0)."""

    def setup(self):
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def get_initial_state(self):
        return {"h": torch.zeros(1)}

    def _forward(self, batch, **kwargs):
        h = batch[Columns.STATE_IN]["h"]  # [B, 1]
        obs = batch[Columns.OBS]  # [B, T, obs]
        logits = torch.cat([-h, h], -1).unsqueeze(1).expand(obs.shape[:-1] + (2,)) + 0.0 * self.dummy
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.STATE_OUT: {"h": h + 1.0}}

    def compute_values(self, batch, embeddings=None):
        return batch[Columns.OBS][..., 0] * 0.0


def test_state_in_and_state_out_of_a_recurrent_module():
    config = (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=1)
              .rl_module(rl_module_spec=RLModuleSpec(module_class=CounterStateModule)))
    algo = config.build_algo()
    try:
        obs = np.zeros(4, np.float32)
        action, state_out, extra = algo.compute_single_action(obs, state={"h": np.array([2.0])}, explore=False)
        assert action == 1 and np.allclose(state_out["h"], [3.0])
        action, state_out, _ = algo.compute_single_action(obs, state={"h": np.array([-3.0])}, explore=False)
        assert action == 0 and np.allclose(state_out["h"], [-2.0])
        action, state_out, _ = algo.compute_single_action(obs, full_fetch=True, explore=False)  # initial state
        assert np.allclose(state_out["h"], [1.0])
        actions, states, _ = algo.compute_actions({"a": obs, "b": obs}, state={"a": {"h": [5.0]}, "b": {"h": [-5.0]}},
                                                  explore=False)
        assert actions == {"a": 1, "b": 0} and np.allclose(states["b"]["h"], [-4.0])
    finally:
        algo.stop()
