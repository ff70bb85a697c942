"""SAC end to end (short runs): config defaults and errors, results, weight sync, action bounds, Discrete."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl.algorithms.dqn import DQN, DQNConfig
from relayrl.algorithms.registry import get_config_class
from relayrl.algorithms.sac import SAC, SACConfig
from relayrl.algorithms.sac.sac_config import RLLIB_SAC_DEFAULTS
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.testing import CountingEnv

SMALL = {"fcnet_hiddens": [16, 16]}


def small_config(env="Pendulum-v1", **training):
    training = {"num_steps_sampled_before_learning_starts": 20, "train_batch_size_per_learner": 16, **training}
    return (SACConfig().environment(env).training(**training).rl_module(model_config=SMALL)
            .reporting(min_sample_timesteps_per_iteration=40).debugging(seed=0))


def test_relayrl_defaults_and_rllibs_restored():
    config = SACConfig()
    assert isinstance(config, DQNConfig) and issubclass(SAC, DQN)
    assert config.lr is None and config.twin_q and config.initial_alpha == 1.0 and config.target_entropy == "auto"
    assert (config.actor_lr, config.critic_lr, config.alpha_lr) == (1e-3, 3e-3, 3e-3)
    assert config.tau == 0.005 and config.n_step == 3 and config.train_batch_size_per_learner == 64
    assert config.training_intensity == 16 and config.num_envs_per_env_runner == 1
    assert config.num_steps_sampled_before_learning_starts == 1000
    assert config.effective_replay_buffer_config == {"type": "EpisodeReplayBuffer", "capacity": 1_000_000}
    # A partial dict keeps the default type; naming RLlib's prioritized type fills in RLlib's alpha and beta.
    assert SACConfig().training(replay_buffer_config={"capacity": 10}).effective_replay_buffer_config == {
        "type": "EpisodeReplayBuffer", "capacity": 10}
    assert SACConfig().training(replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer"}
                                ).effective_replay_buffer_config == {
        "type": "PrioritizedEpisodeReplayBuffer", "capacity": 1_000_000, "alpha": 0.6, "beta": 0.4}
    assert config.normalize_actions and not config.clip_actions
    assert config.model_config["twin_q"] is True
    assert get_config_class("sac") is SACConfig
    assert SACConfig.from_dict(config.to_dict()).to_dict() == config.to_dict()

    rllib = SACConfig().update_from_dict(RLLIB_SAC_DEFAULTS)
    assert (rllib.actor_lr, rllib.critic_lr, rllib.alpha_lr) == (3e-5, 3e-4, 3e-4)
    assert rllib.n_step == 1 and rllib.training_intensity is None
    assert rllib.num_steps_sampled_before_learning_starts == 1500
    assert rllib.train_batch_size_per_learner == rllib.total_train_batch_size == 256
    assert rllib.effective_replay_buffer_config == {"type": "PrioritizedEpisodeReplayBuffer", "capacity": 1_000_000,
                                                    "alpha": 0.6, "beta": 0.4}


def test_config_errors_name_the_fix():
    with pytest.raises(ValueError, match="actor_lr, critic_lr and alpha_lr"):
        SACConfig().environment("Pendulum-v1").training(lr=1e-3).validate()
    with pytest.raises(ValueError, match="target_entropy must be"):
        SACConfig().training(target_entropy="high")
    with pytest.raises(ValueError, match="initial_alpha must be"):
        SACConfig().training(initial_alpha=0.0)
    with pytest.raises(TypeError, match="actor_lr"):
        SACConfig().training(actor_lrr=1e-3)
    with pytest.raises(ValueError, match="Discrete and 1-D Box"):
        SACConfig().environment(observation_space=gym.spaces.Box(-1, 1, (2,)),
                                action_space=gym.spaces.MultiDiscrete([2, 2])).validate()


class MultiDiscreteEnv(CountingEnv):
    def __init__(self, config=None):
        super().__init__(config)
        self.action_space = gym.spaces.MultiDiscrete([2, 3])


def test_multidiscrete_env_gets_a_clear_error():
    with pytest.raises(ValueError, match="MultiDiscrete.*Discrete and 1-D Box"):
        small_config(env=MultiDiscreteEnv).build_algo()


def test_pendulum_trains_and_syncs_weights():
    algo = small_config().build_algo()
    try:
        for _ in range(3):
            result = algo.train()
        learner_stats = result["learners"][DEFAULT_MODULE_ID]
        for key in ("qf_loss", "qf_twin_loss", "actor_loss", "alpha_loss", "alpha_value", "log_alpha",
                    "target_entropy", "qf_mean"):
            assert np.isfinite(learner_stats[key]), key
        assert learner_stats["target_entropy"] == -1.0
        assert result["num_env_steps_sampled_lifetime"] >= 120
        assert result["num_env_steps_trained_lifetime"] > 0
        # The EnvRunner's policy has the learner's weights; it has no Q networks.
        runner_module = algo.env_runner.module
        learner_module = algo.learner_group.get_module(DEFAULT_MODULE_ID)
        assert not hasattr(runner_module, "qf")
        for key, value in runner_module.state_dict().items():
            torch.testing.assert_close(value, learner_module.state_dict()[key])
    finally:
        algo.stop()


def test_box_actions_reach_the_env_within_its_bounds():
    config = small_config(env=CountingEnv).environment(env_config={"continuous": True, "action_low": 3.0,
                                                                   "action_high": 5.0})
    algo = config.build_algo()
    try:
        algo.train()
        received = algo.env_runner.foreach_env(lambda env: np.array(env.unwrapped.actions_received, np.float32))
        actions = np.concatenate(received)
        assert actions.size >= 40 and actions.min() >= 3.0 and actions.max() <= 5.0
        assert actions.max() - actions.min() > 0.1  # stochastic actions spread over the range
        episodes = algo.env_runner.sample(explore=True)
        module_actions = np.concatenate([e.get_actions() for e in episodes])
        assert np.abs(module_actions).max() <= 1.0  # the module's own actions stay in [-1, 1]
    finally:
        algo.stop()


def test_explore_false_takes_the_squashed_mean():
    algo = small_config().build_algo()
    try:
        module = algo.env_runner.module
        obs = torch.randn(4, 3)
        with torch.no_grad():
            mean = module.forward_inference({"obs": obs})["action_dist_inputs"][:, :1]
        dist = module.get_inference_action_dist_cls().from_logits(
            module.forward_inference({"obs": obs})["action_dist_inputs"])
        torch.testing.assert_close(dist.to_deterministic().sample(), torch.tanh(mean))
    finally:
        algo.stop()


def test_discrete_cartpole_trains():
    algo = small_config(env="CartPole-v1").build_algo()
    try:
        for _ in range(3):
            result = algo.train()
        stats = result["learners"][DEFAULT_MODULE_ID]
        assert stats["target_entropy"] == pytest.approx(0.98 * np.log(2))
        assert np.isfinite(stats["qf_loss"]) and np.isfinite(stats["actor_loss"])
    finally:
        algo.stop()


def test_checkpoint_restores_alpha_targets_and_optimisers(tmp_path):
    algo = small_config(initial_alpha=0.5).build_algo()
    try:
        for _ in range(2):
            algo.train()
        algo.save_to_path(str(tmp_path))
        restored = SAC.from_checkpoint(str(tmp_path))
    finally:
        algo.stop()
    try:
        old, new = algo.learner_group._learner, restored.learner_group._learner
        assert new.curr_log_alpha[DEFAULT_MODULE_ID].item() == old.curr_log_alpha[DEFAULT_MODULE_ID].item() != \
            pytest.approx(np.log(0.5))
        old_state, new_state = old.module[DEFAULT_MODULE_ID].state_dict(), new.module[DEFAULT_MODULE_ID].state_dict()
        assert any(k.startswith("_target_") for k in new_state)
        for key, value in old_state.items():
            assert torch.equal(new_state[key], value), key
        for name in ("qf", "qf_twin", "policy", "alpha"):
            old_opt = old.get_optimizer(DEFAULT_MODULE_ID, name).state_dict()["state"]
            new_opt = new.get_optimizer(DEFAULT_MODULE_ID, name).state_dict()["state"]
            assert torch.equal(old_opt[0]["exp_avg"], new_opt[0]["exp_avg"]), name
        assert np.isfinite(restored.train()["learners"][DEFAULT_MODULE_ID]["qf_loss"])
    finally:
        restored.stop()


def test_reset_config_changes_the_three_learning_rates_and_target_entropy_in_place():
    algo = small_config(actor_lr=1e-4, critic_lr=2e-4, alpha_lr=3e-4).build_algo()
    try:
        algo.train()
        learner = algo.learner_group._learner
        weights_before = learner.module[DEFAULT_MODULE_ID].state_dict()["pi.0.weight"].clone()
        assert algo.reset_config({"actor_lr": 1e-3, "critic_lr": 2e-3, "alpha_lr": 3e-3, "target_entropy": -0.5})
        lrs = {name: opt.param_groups[0]["lr"] for name, opt in learner.get_optimizers_for_module(DEFAULT_MODULE_ID)}
        assert lrs == {"qf": 2e-3, "qf_twin": 2e-3, "policy": 1e-3, "alpha": 3e-3}
        assert learner.target_entropy[DEFAULT_MODULE_ID] == -0.5
        assert torch.equal(learner.module[DEFAULT_MODULE_ID].state_dict()["pi.0.weight"], weights_before)
        result = algo.train()
        assert result["learners"][DEFAULT_MODULE_ID]["policy_learning_rate"] == pytest.approx(1e-3)
        assert not algo.reset_config({"twin_q": False})  # a different model needs a rebuild
    finally:
        algo.stop()
