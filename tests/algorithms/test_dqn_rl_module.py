"""DQN's default module: dueling aggregation, outputs, target networks and EnvRunner (inference-only) state."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl.algorithms.dqn.default_dqn_rl_module import (
    QF_NEXT_PREDS,
    QF_PREDS,
    DefaultDQNTorchRLModule,
    dueling_q_values,
)
from relayrl.core.columns import Columns
from relayrl.modules.target_network_api import TargetNetworkAPI, update_target_networks

OBS = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
ACT = gym.spaces.Discrete(4)


def make_module(inference_only=False, **model_config):
    model_config = {"fcnet_hiddens": [16], "head_fcnet_hiddens": [8], **model_config}
    torch.manual_seed(0)
    return DefaultDQNTorchRLModule(observation_space=OBS, action_space=ACT, inference_only=inference_only,
                                   model_config=model_config)


def obs_batch(n=5, seed=0):
    return torch.as_tensor(np.random.default_rng(seed).uniform(-1, 1, (n, 3)), dtype=torch.float32)


def test_dueling_aggregation_is_value_plus_centred_advantages():
    values = torch.tensor([[1.0], [-2.0]])
    advantages = torch.tensor([[1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 4.0, 0.0]])
    q = dueling_q_values(values, advantages)
    expected = torch.tensor([[1 + 1 - 3, 1 + 2 - 3, 1 + 3 - 3, 1 + 6 - 3], [-2 - 1, -2 - 1, -2 + 3, -2 - 1.0]])
    torch.testing.assert_close(q, expected)
    # The mean over actions of Q is V: the streams are identifiable.
    torch.testing.assert_close(q.mean(-1, keepdim=True), values)


def test_dueling_module_combines_its_streams():
    module = make_module(dueling=True)
    obs = obs_batch()
    embeddings = module.encoder(obs)
    expected = dueling_q_values(module.vf(embeddings), module.af(embeddings))
    torch.testing.assert_close(module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS], expected)


def test_non_dueling_module_has_a_single_q_head():
    module = make_module(dueling=False)
    assert module.vf is None
    obs = obs_batch()
    q = module.forward_exploration({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
    torch.testing.assert_close(q, module.af(module.encoder(obs)))


def test_forward_train_gives_online_q_of_next_obs_for_double_q():
    module = make_module(double_q=True)
    obs, next_obs = obs_batch(seed=1), obs_batch(seed=2)
    out = module.forward_train({Columns.OBS: obs, Columns.NEXT_OBS: next_obs})
    assert out[QF_PREDS].shape == (5, 4)
    torch.testing.assert_close(out[QF_NEXT_PREDS], module.compute_q_values({Columns.OBS: next_obs})[QF_PREDS])
    plain = make_module(double_q=False).forward_train({Columns.OBS: obs, Columns.NEXT_OBS: next_obs})
    assert QF_NEXT_PREDS not in plain


def test_greedy_action_of_the_inference_distribution_is_argmax_q():
    module = make_module()
    obs = obs_batch(n=20)
    q = module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
    dist = module.get_inference_action_dist_cls().from_logits(q).to_deterministic()
    assert torch.equal(dist.sample(), q.argmax(-1))


def test_target_networks_start_equal_and_frozen_then_follow_hard_and_soft_updates():
    module = make_module()
    assert isinstance(module, TargetNetworkAPI)
    module.make_target_networks()
    obs = obs_batch()
    q = module.compute_q_values({Columns.OBS: obs})[QF_PREDS]
    torch.testing.assert_close(module.forward_target({Columns.OBS: obs})[QF_PREDS], q)
    assert all(not p.requires_grad for _, target in module.get_target_network_pairs() for p in target.parameters())
    assert len(module.get_target_network_pairs()) == 3  # encoder, advantage and value streams

    old_target = {k: v.clone() for k, v in module.state_dict().items() if k.startswith("_target_")}
    with torch.no_grad():
        for p in module.encoder.parameters():
            p.add_(1.0)
    update_target_networks(module, tau=0.25)  # soft: a quarter of the way
    new_main = module.state_dict()
    for key, old in old_target.items():
        main = new_main[key[len("_target_"):]]
        torch.testing.assert_close(new_main[key], 0.25 * main + 0.75 * old)
    update_target_networks(module, tau=1.0)  # hard copy
    torch.testing.assert_close(module.forward_target({Columns.OBS: obs})[QF_PREDS],
                               module.compute_q_values({Columns.OBS: obs})[QF_PREDS])


def test_env_runner_module_gets_online_weights_only():
    learner_module = make_module()
    learner_module.make_target_networks()
    runner_module = make_module(inference_only=True)
    state = learner_module.get_state(inference_only=True)
    assert state and not any(k.startswith("_target_") for k in state)
    runner_module.set_state(learner_module.get_state())  # a full state is filtered too
    obs = obs_batch()
    torch.testing.assert_close(runner_module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS],
                               learner_module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS])
    with pytest.raises(RuntimeError, match="make_target_networks"):
        runner_module.forward_target({Columns.OBS: obs})


def test_learner_state_round_trip_keeps_target_weights():
    a, b = make_module(), make_module()
    for module in (a, b):
        module.make_target_networks()
    with torch.no_grad():
        a._target_af[-1].bias.fill_(3.0)
    b.set_state(a.get_state())
    torch.testing.assert_close(b._target_af[-1].bias, torch.full((4,), 3.0))


@pytest.mark.parametrize("space, match", [
    (gym.spaces.Box(-1.0, 1.0, (2,), np.float32), "Discrete"),
    (gym.spaces.MultiDiscrete([2, 2]), "Discrete"),
])
def test_unsupported_action_spaces_raise_with_a_fix(space, match):
    with pytest.raises(ValueError, match=match):
        DefaultDQNTorchRLModule(observation_space=OBS, action_space=space, model_config={})


def test_image_observations_raise_with_a_fix():
    with pytest.raises(ValueError, match="Fix"):
        DefaultDQNTorchRLModule(observation_space=gym.spaces.Box(0, 255, (8, 8, 3), np.uint8), action_space=ACT,
                                model_config={})


def test_unknown_model_config_key_is_named():
    with pytest.raises(ValueError, match="fcnet_hidens"):
        make_module(fcnet_hidens=[3])
