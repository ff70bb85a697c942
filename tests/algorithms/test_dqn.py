"""DQN's training_step: learning starts, training_intensity, priorities, weight sync, result keys, counters."""
import numpy as np
import pytest
import torch

from relayrl.algorithms.dqn.dqn import DQN
from relayrl.algorithms.dqn.dqn_config import RLLIB_DQN_DEFAULTS, DQNConfig
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.modules.rl_module import RLModule
from relayrl.modules.rl_module_spec import RLModuleSpec
from relayrl.modules.target_network_api import TargetNetworkAPI, make_target_network
from relayrl.replay import EpisodeReplayBuffer, PrioritizedEpisodeReplayBuffer
from relayrl.testing import CorridorEnv

BATCH = 8


class RecordingBuffer(EpisodeReplayBuffer):
    """A user buffer type (passed as a class) that records the priority updates it receives."""

    def __init__(self, capacity=1000, **kwargs):
        super().__init__(capacity, **kwargs)
        self.priority_updates = []

    def update_priorities(self, priorities, indices) -> None:
        self.priority_updates.append((np.asarray(priorities), np.asarray(indices)))


def make_algo(**training):
    training = {"train_batch_size_per_learner": BATCH, "num_steps_sampled_before_learning_starts": 20,
                "replay_buffer_config": {"type": RecordingBuffer, "capacity": 1000},
                "n_step": 1, "training_intensity": None, **training}  # one update per env step (RLlib's)
    config = (DQNConfig().environment(CorridorEnv).training(**training).env_runners(num_envs_per_env_runner=1)
              .rl_module(model_config={"fcnet_hiddens": [8], "head_fcnet_hiddens": [8]})
              .reporting(min_sample_timesteps_per_iteration=0)  # one training_step per train()
              .debugging(seed=0, logger_config={"type": "none"}))
    return config.build_algo()


def trained_steps(algo):
    return algo._counters.get("num_env_steps_trained_lifetime", 0)


def test_no_update_before_learning_starts_then_one_per_training_step():
    algo = make_algo(num_steps_sampled_before_learning_starts=20)
    try:
        for _ in range(19):
            algo.training_step()
        assert algo._counters["num_env_steps_sampled_lifetime"] == 19
        assert trained_steps(algo) == 0 and not algo.local_replay_buffer.priority_updates
        algo.training_step()
        assert trained_steps(algo) == BATCH
        for _ in range(5):
            algo.training_step()
        assert trained_steps(algo) == 6 * BATCH
    finally:
        algo.stop()


@pytest.mark.parametrize("intensity, updates_per_10_steps", [(4.0, 5), (16.0, 20), (0.8, 1)])
def test_training_intensity_sets_trained_per_sampled_steps(intensity, updates_per_10_steps):
    algo = make_algo(training_intensity=intensity, num_steps_sampled_before_learning_starts=10)
    try:
        for _ in range(10):  # learning starts with the 10th sampled step
            algo.training_step()
        start = trained_steps(algo)
        for _ in range(10):
            algo.training_step()
        assert (trained_steps(algo) - start) // BATCH == updates_per_10_steps
        sampled = algo._counters["num_env_steps_sampled_lifetime"]
        # Over the learning phase trained/sampled env steps stays at the intensity (fractions carry over).
        assert trained_steps(algo) / (sampled - 9) == pytest.approx(intensity, rel=0.15)
    finally:
        algo.stop()


def test_td_errors_go_back_to_the_buffer_as_priorities():
    algo = make_algo()
    try:
        for _ in range(25):
            algo.training_step()
        updates = algo.local_replay_buffer.priority_updates
        assert len(updates) == 6
        priorities, indices = updates[-1]
        assert priorities.shape == indices.shape == (BATCH,)
        assert indices.min() >= 0 and indices.max() < 25
        assert np.abs(priorities).sum() > 0
    finally:
        algo.stop()


def test_default_buffer_is_uniform_and_rllibs_is_prioritized():
    config = (DQNConfig().environment(CorridorEnv).rl_module(model_config={"fcnet_hiddens": [8]})
              .debugging(logger_config={"type": "none"}))
    for settings, expected in (({}, EpisodeReplayBuffer), (RLLIB_DQN_DEFAULTS, PrioritizedEpisodeReplayBuffer)):
        algo = config.copy().update_from_dict(settings).build_algo()
        try:
            buffer = algo.local_replay_buffer
            assert type(buffer) is expected and buffer.capacity == 50000
            if expected is PrioritizedEpisodeReplayBuffer:
                assert (buffer.alpha, buffer.beta) == (0.6, 0.4)
        finally:
            algo.stop()


def test_runner_gets_the_learners_weights_after_an_update():
    algo = make_algo(lr=0.01)
    try:
        for _ in range(22):
            algo.training_step()
        learner_state = algo.learner_group.get_weights()[DEFAULT_MODULE_ID]
        runner_state = algo.env_runner.module.get_state()
        assert set(runner_state) == {k for k in learner_state if not k.startswith("_target_")}
        for key, value in runner_state.items():
            np.testing.assert_array_equal(value, learner_state[key])
    finally:
        algo.stop()


def test_train_result_has_rllib_keys():
    algo = make_algo()
    try:
        result = None
        for _ in range(30):
            result = algo.train()
        stats = result["learners"][DEFAULT_MODULE_ID]
        for key in ("qf_loss", "qf_mean", "td_error_mean", "num_target_updates", "total_loss"):
            assert key in stats, key
        assert result["replay_buffer"]["num_env_steps_stored"] == 30
        assert result["num_env_steps_sampled_lifetime"] == 30
        assert result["num_env_steps_trained_lifetime"] == 11 * BATCH
        assert "env_runners" in result and "timers" in result
    finally:
        algo.stop()


def test_target_network_updates_follow_sampled_steps():
    algo = make_algo(target_network_update_freq=5, num_steps_sampled_before_learning_starts=1)
    try:
        for _ in range(21):
            algo.training_step()
        learner = algo.learner_group.foreach_learner(lambda learner: learner)[0]
        assert learner._num_target_updates[DEFAULT_MODULE_ID] == 4  # at 5, 10, 15 and 20 sampled steps
    finally:
        algo.stop()


def test_same_seed_gives_same_weights():
    weights = []
    for _ in range(2):
        algo = make_algo()
        try:
            for _ in range(30):
                algo.training_step()
            weights.append(algo.learner_group.get_weights()[DEFAULT_MODULE_ID])
        finally:
            algo.stop()
    for key in weights[0]:
        np.testing.assert_array_equal(weights[0][key], weights[1][key])


def test_dqn_exports():
    from relayrl.algorithms.dqn import DQN as lazy_dqn
    from relayrl.algorithms.dqn import DQNConfig as lazy_config

    assert lazy_dqn is DQN and lazy_config is DQNConfig
    assert DQNConfig().algo_class is DQN
    assert torch.get_num_threads() >= 1


class TinyQNet(RLModule, TargetNetworkAPI):
    """docs/dqn.md's custom module: a linear Q-function whose get_state does not filter target weights."""

    def setup(self):
        self.q = torch.nn.Linear(self.observation_space.shape[0], self.action_space.n)

    def _forward(self, batch, **kwargs):
        return {"action_dist_inputs": self.q(batch["obs"])}

    def _forward_train(self, batch, **kwargs):
        return {"qf_preds": self.q(batch["obs"])}

    def compute_q_values(self, batch):
        return {"qf_preds": self.q(batch["obs"])}

    def make_target_networks(self):
        self._target_q = make_target_network(self.q)

    def get_target_network_pairs(self):
        return [(self.q, self._target_q)]

    def forward_target(self, batch, **kwargs):
        return {"qf_preds": self._target_q(batch["obs"])}


def test_custom_module_with_the_target_network_api_trains():
    config = (DQNConfig().environment(CorridorEnv)
              .training(train_batch_size_per_learner=BATCH, num_steps_sampled_before_learning_starts=10,
                        target_network_update_freq=5, n_step=1, training_intensity=None)
              .env_runners(num_envs_per_env_runner=1)
              .rl_module(rl_module_spec=RLModuleSpec(module_class=TinyQNet))
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        for _ in range(20):
            algo.training_step()
        learner_q = algo.learner_group.get_weights()[DEFAULT_MODULE_ID]
        assert "_target_q.weight" in learner_q
        np.testing.assert_array_equal(algo.env_runner.module.get_state()["q.weight"], learner_q["q.weight"])
        assert trained_steps(algo) == 11 * BATCH
    finally:
        algo.stop()


def test_rllib_reporting_and_greedy_evaluation_defaults():
    config = (DQNConfig().environment(CorridorEnv).training(num_steps_sampled_before_learning_starts=5000, n_step=1)
              .env_runners(num_envs_per_env_runner=1)
              .rl_module(model_config={"fcnet_hiddens": [8], "head_fcnet_hiddens": [8]})
              .evaluation(evaluation_interval=1, evaluation_duration=2)
              .debugging(seed=0, logger_config={"type": "none"}))
    assert config.min_sample_timesteps_per_iteration == 1000
    algo = config.reporting(min_sample_timesteps_per_iteration=50).build_algo()
    try:
        assert algo.evaluation_config.explore is False
        result = algo.train()
        assert result["num_env_steps_sampled_lifetime"] == 50
        assert result["evaluation"]["env_runners"]["num_episodes"] == 2
    finally:
        algo.stop()
