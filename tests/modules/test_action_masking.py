"""ActionMaskingTorchRLModule: PPO's default module on {"action_mask", "observations"}; forbidden actions get
float32's minimum as their logit, so sampling, the greedy action and the loss never pick them."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.core.columns import Columns
from relayrl.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from relayrl.modules.action_masking import FLOAT_MIN
from relayrl.modules.rl_module_spec import RLModuleSpec
from relayrl.testing.example_envs import ActionMaskEnv

INNER = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
ACTIONS = gym.spaces.Discrete(5)
SPACE = gym.spaces.Dict({"action_mask": gym.spaces.Box(0.0, 1.0, (5,), np.float32), "observations": INNER})


def module(**model_config):
    return ActionMaskingTorchRLModule(observation_space=SPACE, action_space=ACTIONS,
                                      model_config={"fcnet_hiddens": [8], **model_config})


def batch(mask, n=64, time_axis=False):
    obs = torch.zeros((n, 4)).uniform_(-1, 1)
    masks = torch.as_tensor(np.tile(mask, (n, 1)), dtype=torch.float32)
    if time_axis:
        obs, masks = obs[:, None], masks[:, None]
    return {Columns.OBS: {"action_mask": masks, "observations": obs}}


def test_forbidden_actions_are_never_sampled_nor_greedy():
    m = module()
    with torch.no_grad():
        m.pi[-1].bias.copy_(torch.tensor([0.0, 50.0, 0.0, 0.0, 0.0]))  # the unmasked policy wants action 1
    mask = np.array([1, 0, 0, 1, 1], np.float32)
    with torch.no_grad():
        logits = m.forward_exploration(batch(mask, n=512))[Columns.ACTION_DIST_INPUTS]
        greedy = m.forward_inference(batch(mask))[Columns.ACTION_DIST_INPUTS].argmax(-1)
    assert torch.all(logits[:, [1, 2]] <= FLOAT_MIN / 2) and torch.isfinite(logits).all()
    sampled = m.get_exploration_action_dist_cls().from_logits(logits).sample()
    assert set(sampled.tolist()) <= {0, 3, 4} and len(set(sampled.tolist())) == 3
    assert set(greedy.tolist()) <= {0, 3, 4}
    # the loss sees a forbidden action's probability as 0, with a finite log-prob and entropy
    dist = m.get_train_action_dist_cls().from_logits(logits)
    assert torch.isfinite(dist.entropy()).all() and torch.isfinite(dist.logp(sampled)).all()


def test_values_and_the_training_pass_read_the_bare_observations():
    m = module()
    b = batch(np.ones(5, np.float32))
    out = m.forward_train(b)
    assert out[Columns.ACTION_DIST_INPUTS].shape == (64, 5)
    values = m.compute_values(b)
    assert values.shape == (64,)
    torch.testing.assert_close(values, m.compute_values(b, embeddings=out.get(Columns.EMBEDDINGS)))


def test_an_lstm_module_masks_too():
    m = module(use_lstm=True, lstm_cell_size=8, max_seq_len=4)
    mask = np.array([0, 0, 1, 0, 0], np.float32)
    with torch.no_grad():
        out = m.forward_exploration(batch(mask, n=8, time_axis=True))
    assert out[Columns.ACTION_DIST_INPUTS].argmax(-1).eq(2).all()


@pytest.mark.parametrize("observation_space, action_space, message", [
    (INNER, ACTIONS, "needs observations"),
    (gym.spaces.Dict({"observations": INNER}), ACTIONS, "needs observations"),
    (SPACE, gym.spaces.Box(-1, 1, (5,)), "masks Discrete actions"),
    (SPACE, gym.spaces.Discrete(3), "shape \\(5,\\), but there are 3 actions"),
])
def test_wrong_spaces_name_the_layout(observation_space, action_space, message):
    with pytest.raises(ValueError, match=message):
        ActionMaskingTorchRLModule(observation_space=observation_space, action_space=action_space)


@pytest.mark.parametrize("model_config", [{}, {"use_lstm": True, "lstm_cell_size": 16, "max_seq_len": 8}],
                         ids=["mlp", "lstm"])
def test_ppo_trains_and_evaluates_on_an_env_that_raises_on_a_forbidden_action(model_config):
    """ActionMaskEnv raises ValueError when it gets an action its mask forbids."""
    config = (PPOConfig()
              .environment(ActionMaskEnv, env_config={"action_space": ACTIONS, "observation_space": INNER,
                                                      "max_episode_len": 20})
              .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                                     model_config={"fcnet_hiddens": [16], **model_config}))
              .training(train_batch_size=256, minibatch_size=64, num_epochs=2)
              .evaluation(evaluation_interval=1, evaluation_duration=5)
              .debugging(seed=0))
    algo = config.build_algo()
    try:
        for _ in range(2):
            result = algo.train()
        assert result["num_env_steps_sampled_lifetime"] >= 512
        assert np.isfinite(result["learners"]["default_policy"]["total_loss"])
        assert result["evaluation"]["env_runners"]["num_episodes"] >= 5
    finally:
        algo.stop()
