"""The CPU's separate no-grad pass for double Q's online Q(new_obs) trains the same weights as one pass over both."""
import gymnasium as gym
import torch

from relayrl.algorithms.dqn import DQNConfig, default_dqn_rl_module
from relayrl.algorithms.dqn.default_dqn_rl_module import QF_NEXT_PREDS, QF_PREDS
from relayrl.core.columns import Columns


def _weights_after_updates(num_updates: int, separate: bool, monkeypatch):
    monkeypatch.setattr(default_dqn_rl_module, "separate_next_q_pass", lambda obs: separate)
    config = (DQNConfig().environment("CartPole-v1")
              .training(num_steps_sampled_before_learning_starts=0, train_batch_size=32)
              .debugging(seed=3, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        while len(algo.local_replay_buffer) < 300:
            episodes, _ = algo.sample_episodes(max_env_steps=1)
            algo.local_replay_buffer.add(episodes)
        for _ in range(num_updates):
            algo.update_from_replay_buffer()
        module = algo.learner_group._learner.module["default_policy"]
        assert module.uses_double_q
        return {k: v.detach().clone() for k, v in module.state_dict().items()}
    finally:
        algo.stop()


def test_separate_next_q_pass_trains_the_same_weights(monkeypatch):
    joint = _weights_after_updates(30, separate=False, monkeypatch=monkeypatch)
    separate = _weights_after_updates(30, separate=True, monkeypatch=monkeypatch)
    assert joint.keys() == separate.keys()
    initial = _weights_after_updates(0, separate=True, monkeypatch=monkeypatch)
    assert any(not torch.equal(initial[k], joint[k]) for k in joint)  # the updates did change the weights
    for key in joint:  # only the weight gradients' summation order differs
        torch.testing.assert_close(separate[key], joint[key], rtol=1e-5, atol=1e-6)


def test_separate_pass_keeps_q_next_out_of_the_graph():
    module = default_dqn_rl_module.DefaultDQNTorchRLModule(
        observation_space=gym.spaces.Box(-1, 1, (3,)), action_space=gym.spaces.Discrete(2),
        model_config={"fcnet_hiddens": [8]})
    out = module.forward_train({Columns.OBS: torch.zeros(4, 3), Columns.NEXT_OBS: torch.ones(4, 3)})
    assert out[QF_PREDS].requires_grad and not out[QF_NEXT_PREDS].requires_grad
