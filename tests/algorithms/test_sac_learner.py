"""SAC's losses against hand computations, its optimisers, target updates and the temperature alpha."""
import math

import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl.algorithms.sac import SACConfig
from relayrl.algorithms.sac.default_sac_rl_module import (
    ACTION_PROBS,
    LOGP_NEXT_RESAMPLED,
    LOGP_RESAMPLED,
    Q_CURR,
    Q_TARGET_NEXT,
    QF_PREDS,
    QF_TWIN_PREDS,
)
from relayrl.algorithms.sac.sac_learner import SACLearner, resolve_target_entropy
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.learner.learner import NUM_ENV_STEPS_SAMPLED_LIFETIME

OBS = gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)
BOX = gym.spaces.Box(-2.0, 2.0, (2,), np.float32)
DISCRETE = gym.spaces.Discrete(3)
MID = DEFAULT_MODULE_ID


def make_learner(action_space, **training):
    training = {"actor_lr": 1e-3, "critic_lr": 2e-3, "alpha_lr": 3e-3, **training}
    config = (SACConfig().environment(observation_space=OBS, action_space=action_space)
              .training(**training).rl_module(model_config={"fcnet_hiddens": [16]}).debugging(seed=0))
    learner = config.build_learner(spaces={"__env_single__": (OBS, action_space)})
    assert isinstance(learner, SACLearner)
    return learner


def hand_batch(action_space, n=8, seed=0):
    rng = np.random.default_rng(seed)
    actions = (rng.uniform(-1, 1, (n, 2)).astype(np.float32) if isinstance(action_space, gym.spaces.Box)
               else rng.integers(0, action_space.n, n))
    return {
        Columns.OBS: rng.normal(size=(n, 3)).astype(np.float32),
        Columns.NEXT_OBS: rng.normal(size=(n, 3)).astype(np.float32),
        Columns.ACTIONS: actions,
        Columns.REWARDS: rng.normal(size=n).astype(np.float32),
        Columns.TERMINATEDS: np.array([False, True] * (n // 2)),
        "n_step": rng.integers(1, 4, n),
        "weights": rng.uniform(0.5, 1.5, n).astype(np.float32),
        "indices": np.arange(n),
    }


def torch_batch(batch):
    return {k: torch.as_tensor(v) for k, v in batch.items()}


def huber(x):
    return np.where(np.abs(x) <= 1, 0.5 * x ** 2, np.abs(x) - 0.5)


def losses_of(learner, batch, seed=0):
    """forward_train outputs (numpy) and the per-optimiser losses of one loss computation."""
    torch.manual_seed(seed)
    fwd_out = learner.module[MID].forward_train(batch)
    learner.compute_loss_for_module(module_id=MID, config=learner.config, batch=batch, fwd_out=fwd_out)
    names = {"qf": "qf_loss", "qf_twin": "qf_twin_loss", "policy": "actor_loss", "alpha": "alpha_loss"}
    losses = {k: learner.peek_stat(MID, stat) for k, stat in names.items() if learner.peek_stat(MID, stat) is not None}
    return {k: v.detach().numpy() for k, v in fwd_out.items()}, losses


def test_target_entropy_auto():
    assert resolve_target_entropy(gym.spaces.Box(-1, 1, (3,)), "auto") == -3.0
    assert resolve_target_entropy(gym.spaces.Discrete(4), "auto") == pytest.approx(0.98 * math.log(4))
    assert resolve_target_entropy(gym.spaces.Discrete(4), -0.5) == -0.5
    assert make_learner(BOX).target_entropy[MID] == -2.0


def test_box_critic_actor_and_alpha_losses_match_hand_computation():
    learner = make_learner(BOX, gamma=0.9, initial_alpha=0.5)
    batch = hand_batch(BOX)
    out, losses = losses_of(learner, torch_batch(batch))
    alpha = 0.5
    next_v = out[Q_TARGET_NEXT] - alpha * out[LOGP_NEXT_RESAMPLED]
    y = batch["rewards"] + 0.9 ** batch["n_step"] * (1 - batch["terminateds"]) * next_v
    for name, key in (("qf", QF_PREDS), ("qf_twin", QF_TWIN_PREDS)):
        assert losses[name] == pytest.approx(np.mean(batch["weights"] * huber(out[key] - y)), rel=1e-5)
    assert losses["policy"] == pytest.approx(np.mean(alpha * out[LOGP_RESAMPLED] - out[Q_CURR]), rel=1e-5)
    assert losses["alpha"] == pytest.approx(-np.mean(math.log(alpha) * (out[LOGP_RESAMPLED] - 2.0)), rel=1e-5)
    # Per-row TD errors for the buffer: the mean of both critics' |TD|, with the batch's indices.
    indices, td = learner.get_td_errors()[MID]
    np.testing.assert_array_equal(indices, batch["indices"])
    np.testing.assert_allclose(td, 0.5 * (np.abs(out[QF_PREDS] - y) + np.abs(out[QF_TWIN_PREDS] - y)), rtol=1e-5)


def test_box_target_uses_min_of_target_q_nets_on_the_next_policy_action():
    learner = make_learner(BOX)
    module = learner.module[MID]
    batch = torch_batch(hand_batch(BOX))
    torch.manual_seed(3)
    out = module.forward_train(batch)
    torch.manual_seed(3)  # the same noise: recompute a' ~ pi(s') by hand (drawn after the noise for s)
    torch.randn(8, 2)
    mean, log_std = torch.chunk(module.pi(module.pi_encoder(batch["new_obs"])), 2, -1)
    next_actions = torch.tanh(mean + log_std.clamp(-20, 2).exp() * torch.randn_like(mean))
    x = torch.cat([batch["new_obs"], next_actions], -1)
    q1 = module._target_qf(module._target_qf_encoder(x)).squeeze(-1)
    q2 = module._target_qf_twin(module._target_qf_twin_encoder(x)).squeeze(-1)
    np.testing.assert_allclose(out[Q_TARGET_NEXT].numpy(), torch.min(q1, q2).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_discrete_losses_use_expectations_over_the_policy():
    learner = make_learner(DISCRETE, gamma=0.95, initial_alpha=0.2, td_error_loss_fn="mse")
    module = learner.module[MID]
    batch = hand_batch(DISCRETE)
    out, losses = losses_of(learner, torch_batch(batch))
    with torch.no_grad():
        obs, next_obs = torch.as_tensor(batch["obs"]), torch.as_tensor(batch["new_obs"])
        logp = torch.log_softmax(module.pi(module.pi_encoder(obs)), -1).numpy()
        logp_next = torch.log_softmax(module.pi(module.pi_encoder(next_obs)), -1).numpy()
        q = torch.min(module.qf(module.qf_encoder(obs)), module.qf_twin(module.qf_twin_encoder(obs))).numpy()
        q1_taken = module.qf(module.qf_encoder(obs)).numpy()[np.arange(8), batch["actions"]]
        qt_next = torch.min(module._target_qf(module._target_qf_encoder(next_obs)),
                            module._target_qf_twin(module._target_qf_twin_encoder(next_obs))).numpy()
    alpha, p, p_next = 0.2, np.exp(logp), np.exp(logp_next)
    v_next = (p_next * (qt_next - alpha * logp_next)).sum(-1)
    y = batch["rewards"] + 0.95 ** batch["n_step"] * (1 - batch["terminateds"]) * v_next
    # abs=1e-6: the policy and alpha losses are sums over actions that nearly cancel for some weights, where
    # float32 rounding alone is a large part of a small result.
    assert losses["qf"] == pytest.approx(np.mean(batch["weights"] * 0.5 * (q1_taken - y) ** 2), rel=1e-5, abs=1e-6)
    assert losses["policy"] == pytest.approx(np.mean((p * (alpha * logp - q)).sum(-1)), rel=1e-5, abs=1e-6)
    expected_alpha = -np.mean(math.log(alpha) * ((p * logp).sum(-1) + 0.98 * math.log(3)))
    assert losses["alpha"] == pytest.approx(expected_alpha, rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(out[ACTION_PROBS], p, rtol=1e-5)


def test_three_optimisers_with_their_own_learning_rates():
    learner = make_learner(BOX, actor_lr=1e-4, critic_lr=2e-4, alpha_lr=3e-4)
    lrs = {name: opt.param_groups[0]["lr"] for name, opt in learner.get_optimizers_for_module(MID)}
    assert lrs == {"qf": 2e-4, "qf_twin": 2e-4, "policy": 1e-4, "alpha": 3e-4}
    module = learner.module[MID]
    assert {id(p) for p in learner.get_optimizer(MID, "policy").param_groups[0]["params"]} == \
        {id(p) for p in list(module.pi_encoder.parameters()) + list(module.pi.parameters())}
    assert learner.get_optimizer(MID, "alpha").param_groups[0]["params"] == [learner.curr_log_alpha[MID]]


def test_each_loss_only_reaches_its_own_optimisers_parameters():
    learner = make_learner(BOX, initial_alpha=0.5)
    batch = torch_batch(hand_batch(BOX))
    module = learner.module[MID]
    torch.manual_seed(0)
    fwd_out = module.forward_train(batch)
    # The critic loss by hand, from the same forward pass.
    next_v = fwd_out[Q_TARGET_NEXT] - 0.5 * fwd_out[LOGP_NEXT_RESAMPLED]
    y = batch["rewards"] + 0.99 ** batch["n_step"].float() * (1 - batch["terminateds"].float()) * next_v
    critic_loss = (batch["weights"] * torch.nn.functional.huber_loss(fwd_out[QF_PREDS], y, reduction="none")).mean()
    qf_params = list(module.qf_encoder.parameters()) + list(module.qf.parameters())
    expected = torch.autograd.grad(critic_loss, qf_params, retain_graph=True)
    loss = learner.compute_loss_for_module(module_id=MID, config=learner.config, batch=batch, fwd_out=fwd_out)
    learner.compute_gradients({MID: loss})
    for param, grad in zip(qf_params, expected):  # nothing from the actor loss, which also uses Q
        torch.testing.assert_close(param.grad, grad)
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in module.pi.parameters())
    # alpha's gradient is d/dlog_alpha of -log_alpha * (logp + target_entropy): -mean(logp) + 2.
    expected_alpha_grad = -(fwd_out[LOGP_RESAMPLED].detach() - 2.0).mean()
    torch.testing.assert_close(learner.curr_log_alpha[MID].grad, expected_alpha_grad)


def test_soft_target_update_with_tau():
    learner = make_learner(BOX, tau=0.1, target_network_update_freq=0)
    module = learner.module[MID]
    before = [t.detach().clone() for _, target in module.get_target_network_pairs() for t in target.parameters()]
    learner.update(batch=hand_batch(BOX), timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: 10})
    mains = [p.detach() for main, _ in module.get_target_network_pairs() for p in main.parameters()]
    targets = [t.detach() for _, target in module.get_target_network_pairs() for t in target.parameters()]
    for old, main, new in zip(before, mains, targets):
        torch.testing.assert_close(new, 0.9 * old + 0.1 * main)
    assert not torch.equal(targets[0], mains[0])


def test_target_update_waits_for_target_network_update_freq_env_steps():
    learner = make_learner(BOX, tau=1.0, target_network_update_freq=100)
    module = learner.module[MID]
    main, target = module.get_target_network_pairs()[0]
    learner.update(batch=hand_batch(BOX), timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: 50})
    assert not torch.equal(next(main.parameters()), next(target.parameters()))
    learner.update(batch=hand_batch(BOX), timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: 100})
    assert torch.equal(next(main.parameters()), next(target.parameters()))


@pytest.mark.parametrize("target_entropy, direction", [(5.0, 1), (-20.0, -1)])
def test_alpha_moves_towards_the_target_entropy(target_entropy, direction):
    learner = make_learner(BOX, target_entropy=target_entropy, alpha_lr=1e-2)
    for _ in range(5):
        results = learner.update(batch=hand_batch(BOX))
    alpha = math.exp(learner.curr_log_alpha[MID].item())
    assert (alpha - 1.0) * direction > 0.01
    assert results[MID]["alpha_value"] == pytest.approx(alpha, rel=0.1)
    for key in ("qf_loss", "actor_loss", "alpha_loss", "log_alpha", "target_entropy", "qf_mean", "alpha_value"):
        assert key in results[MID]


def test_state_round_trip_restores_alpha_and_weights():
    learner = make_learner(DISCRETE)
    for _ in range(2):
        learner.update(batch=hand_batch(DISCRETE))
    state = learner.get_state()
    other = make_learner(DISCRETE, initial_alpha=3.0)
    other.set_state(state)
    assert other.curr_log_alpha[MID].item() == pytest.approx(learner.curr_log_alpha[MID].item())
    for key, value in learner.module[MID].state_dict().items():
        torch.testing.assert_close(other.module[MID].state_dict()[key], value)


def test_a_seeded_config_builds_the_same_learner_whatever_ran_before():
    """debugging(seed=...) fixes the weights of config.build_learner() and build_learner_group(), as it fixes an
    Algorithm's: before, they came from whatever torch's generator held (tests run in another order differed)."""
    def weights(build):
        torch.manual_seed(np.random.randint(1_000_000))  # whatever ran before
        learner = build()
        learner = getattr(learner, "_learner", None) or learner
        return [p.detach().clone() for p in learner.module[MID].parameters()]

    config = (SACConfig().environment(observation_space=OBS, action_space=DISCRETE)
              .rl_module(model_config={"fcnet_hiddens": [16]}).debugging(seed=5))
    spaces = {"__env_single__": (OBS, DISCRETE)}
    first, second = (weights(lambda: config.build_learner(spaces=spaces)) for _ in range(2))
    assert all(torch.equal(a, b) for a, b in zip(first, second))
    group = weights(lambda: config.build_learner_group(spaces=spaces))
    assert all(torch.equal(a, b) for a, b in zip(first, group))
