"""SAC's squashed-Gaussian distribution and default module: log-probs, shapes, targets, state for EnvRunners."""
import gymnasium as gym
import numpy as np
import pytest
import torch
from torch.distributions import Normal, TransformedDistribution
from torch.distributions.transforms import TanhTransform

from relayrl.algorithms.sac.default_sac_rl_module import (
    ACTION_PROBS,
    LOGP_RESAMPLED,
    Q_CURR,
    Q_TARGET_NEXT,
    QF_PREDS,
    QF_TWIN_PREDS,
    DefaultSACTorchRLModule,
)
from relayrl.core.columns import Columns
from relayrl.modules.squashed_gaussian import TanhSquashedGaussian, tanh_log_det_jacobian

OBS = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
BOX = gym.spaces.Box(-2.0, 2.0, (2,), np.float32)
DISCRETE = gym.spaces.Discrete(4)


def reference(logits):
    mean, log_std = torch.chunk(logits.double(), 2, dim=-1)
    base = Normal(mean, log_std.clamp(-20, 2).exp())
    return TransformedDistribution(base, [TanhTransform()])


def test_logp_of_samples_matches_torch_transformed_distribution():
    torch.manual_seed(0)
    logits = torch.randn(64, 4) * torch.tensor([1.0, 1.0, 0.5, 0.5])
    dist = TanhSquashedGaussian(logits)
    actions, logp = dist.rsample_with_logp()
    assert actions.shape == (64, 2) and logp.shape == (64,)
    assert actions.abs().max() < 1
    expected = reference(logits).log_prob(actions.double()).sum(-1)
    np.testing.assert_allclose(logp.double().numpy(), expected.numpy(), rtol=1e-3, atol=1e-3)
    # logp(actions) inverts tanh and agrees with the pre-tanh computation away from the bounds.
    inside = actions.abs().max(-1).values < 0.999
    np.testing.assert_allclose(dist.logp(actions)[inside].numpy(), logp[inside].detach().numpy(), rtol=1e-3,
                               atol=1e-3)


def test_tanh_correction_is_stable_where_the_naive_formula_overflows():
    pre_tanh = torch.tensor([0.0, 1.0, 10.0, 30.0, -30.0])
    stable = tanh_log_det_jacobian(pre_tanh)
    naive = torch.log(1 - torch.tanh(pre_tanh) ** 2)
    assert torch.isfinite(stable).all()
    assert not torch.isfinite(naive[3:]).any()  # float32: 1 - tanh(30)^2 == 0
    np.testing.assert_allclose(stable[:2].numpy(), naive[:2].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stable[3].item(), 2 * (np.log(2) - 30), rtol=1e-6)


def test_reparameterised_logp_has_gradients_and_deterministic_sample_is_tanh_mean():
    logits = torch.tensor([[0.3, -0.4, 0.0, -1.0]], requires_grad=True)
    dist = TanhSquashedGaussian(logits)
    actions, logp = dist.rsample_with_logp()
    (actions.sum() + logp.sum()).backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all()
    np.testing.assert_allclose(dist.deterministic_sample().detach().numpy(), np.tanh([[0.3, -0.4]]), rtol=1e-6)


def make_module(action_space, twin_q=True, inference_only=False):
    return DefaultSACTorchRLModule(observation_space=OBS, action_space=action_space, inference_only=inference_only,
                                   model_config={"fcnet_hiddens": [16, 16], "fcnet_activation": "relu",
                                                 "head_fcnet_hiddens": [], "twin_q": twin_q})


def train_batch(action_space, n=5, seed=0):
    rng = np.random.default_rng(seed)
    actions = (rng.uniform(-1, 1, (n, 2)).astype(np.float32) if isinstance(action_space, gym.spaces.Box)
               else rng.integers(0, action_space.n, n))
    return {Columns.OBS: torch.as_tensor(rng.normal(size=(n, 3)), dtype=torch.float32),
            Columns.NEXT_OBS: torch.as_tensor(rng.normal(size=(n, 3)), dtype=torch.float32),
            Columns.ACTIONS: torch.as_tensor(actions)}


@pytest.mark.parametrize("twin_q", [True, False])
def test_box_forward_train_outputs(twin_q):
    module = make_module(BOX, twin_q=twin_q)
    module.make_target_networks()
    batch = train_batch(BOX)
    out = module.forward_train(batch)
    assert out[Columns.ACTION_DIST_INPUTS].shape == (5, 4)
    assert out[QF_PREDS].shape == out[Q_CURR].shape == out[Q_TARGET_NEXT].shape == out[LOGP_RESAMPLED].shape == (5,)
    assert (QF_TWIN_PREDS in out) == twin_q
    assert not out[Q_TARGET_NEXT].requires_grad and out[Q_CURR].requires_grad
    # qf_preds is Q1 on the batch's actions.
    x = torch.cat([batch[Columns.OBS], batch[Columns.ACTIONS]], -1)
    np.testing.assert_allclose(out[QF_PREDS].detach().numpy(), module.qf(module.qf_encoder(x)).squeeze(-1).detach(),
                               rtol=1e-5, atol=1e-6)


def test_discrete_forward_train_outputs_per_action_values():
    module = make_module(DISCRETE)
    module.make_target_networks()
    batch = train_batch(DISCRETE)
    out = module.forward_train(batch)
    assert out[Q_CURR].shape == out[Q_TARGET_NEXT].shape == out[ACTION_PROBS].shape == (5, 4)
    np.testing.assert_allclose(out[ACTION_PROBS].sum(-1).detach().numpy(), np.ones(5), rtol=1e-5)
    q1 = module.qf(module.qf_encoder(batch[Columns.OBS]))
    q2 = module.qf_twin(module.qf_twin_encoder(batch[Columns.OBS]))
    np.testing.assert_allclose(out[Q_CURR].numpy(), torch.min(q1, q2).detach().numpy(), rtol=1e-5)
    taken = q1.gather(-1, batch[Columns.ACTIONS].long().unsqueeze(-1)).squeeze(-1)
    np.testing.assert_allclose(out[QF_PREDS].detach().numpy(), taken.detach().numpy(), rtol=1e-5)


def test_targets_start_equal_and_frozen():
    module = make_module(BOX)
    module.make_target_networks()
    for main, target in module.get_target_network_pairs():
        for p, t in zip(main.parameters(), target.parameters()):
            assert torch.equal(p, t) and not t.requires_grad


def test_inference_only_module_has_just_the_policy_and_takes_learner_weights():
    learner_module = make_module(BOX)
    learner_module.make_target_networks()
    runner_module = make_module(BOX, inference_only=True)
    assert not hasattr(runner_module, "qf")
    weights = learner_module.get_state(inference_only=True)
    assert weights and all(k.startswith(("pi_encoder.", "pi.")) for k in weights)
    full = learner_module.get_state()  # the same arrays as the full state's policy part, in its order
    assert list(weights) == [k for k in full if k.startswith(("pi_encoder.", "pi."))]
    for key, value in weights.items():
        np.testing.assert_array_equal(value, full[key])
        value[...] = 7.0  # copies: the module keeps its weights
    assert not any(np.all(v == 7.0) for v in learner_module.get_state(inference_only=True).values())
    runner_module.set_state(learner_module.get_state())
    obs = {Columns.OBS: torch.randn(3, 3)}
    np.testing.assert_allclose(runner_module.forward_inference(obs)[Columns.ACTION_DIST_INPUTS].detach().numpy(),
                               learner_module.forward_inference(obs)[Columns.ACTION_DIST_INPUTS].detach().numpy())


@pytest.mark.parametrize("space", [gym.spaces.MultiDiscrete([2, 3]), gym.spaces.Box(-1, 1, (2, 2))])
def test_unsupported_action_space_names_the_fix(space):
    with pytest.raises(ValueError, match="Discrete and 1-D Box"):
        make_module(space)
