"""PPO's loss equals a hand computation; KL coefficient adaptation; the Learner pipeline's GAE on real episodes."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.algorithms.ppo.ppo_learner import PPOLearner
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.env.env_runner import EnvRunner
from relayrl.testing import CountingEnv

OBS = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
ACT = gym.spaces.Discrete(2)
SPACES = {"__env_single__": (OBS, ACT)}


def make_learner(**training):
    config = (PPOConfig().environment(observation_space=OBS, action_space=ACT)
              .training(**training).rl_module(model_config={"fcnet_hiddens": [8]}))
    learner = config.build_learner(spaces=SPACES)
    assert isinstance(learner, PPOLearner)
    return learner


def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def hand_batch(seed=0):
    rng = np.random.default_rng(seed)
    n = 6
    old_logits = rng.normal(size=(n, 2)).astype(np.float32)
    new_logits = (old_logits + rng.normal(scale=0.8, size=(n, 2))).astype(np.float32)
    actions = np.array([0, 1, 1, 0, 1, 0])
    return {
        "obs": rng.normal(size=(n, 2)).astype(np.float32),
        "old_logits": old_logits,
        "new_logits": new_logits,
        "actions": actions,
        # Old log-probs are not those of old_logits: they push ratios far outside [1-clip, 1+clip].
        "logp_old": (log_softmax(old_logits)[np.arange(n), actions] + np.array([0.6, -0.6, 0.0, 0.5, -0.5, 0.1])
                     ).astype(np.float32),
        "advantages": np.array([1.0, -1.0, 0.5, -2.0, 2.0, 3.0], np.float32),
        "value_targets": np.array([0.0, 5.0, -4.0, 0.2, 1.0, 100.0], np.float32),
        "loss_mask": np.array([True, True, True, True, True, False]),
    }


def hand_loss(d, values, *, clip_param, vf_clip_param, vf_loss_coeff, entropy_coeff, kl_coeff):
    new_lp, old_lp = log_softmax(d["new_logits"]), log_softmax(d["old_logits"])
    idx = np.arange(len(d["actions"]))
    ratio = np.exp(new_lp[idx, d["actions"]] - d["logp_old"])
    adv = d["advantages"]
    surrogate = np.minimum(adv * ratio, adv * np.clip(ratio, 1 - clip_param, 1 + clip_param))
    vf = np.minimum((values - d["value_targets"]) ** 2, vf_clip_param)
    entropy = -(np.exp(new_lp) * new_lp).sum(-1)
    kl = (np.exp(old_lp) * (old_lp - new_lp)).sum(-1)
    m = d["loss_mask"]
    total = np.mean((-surrogate + vf_loss_coeff * vf - entropy_coeff * entropy)[m]) + kl_coeff * np.mean(kl[m])
    return {"total_loss": total, "policy_loss": np.mean(-surrogate[m]), "vf_loss": np.mean(vf[m]),
            "entropy": np.mean(entropy[m]), "mean_kl_loss": np.mean(kl[m]), "ratio": ratio}


def _tensors(d):
    return {
        Columns.OBS: torch.from_numpy(d["obs"]),
        Columns.ACTIONS: torch.from_numpy(d["actions"]),
        Columns.ACTION_LOGP: torch.from_numpy(d["logp_old"]),
        Columns.ACTION_DIST_INPUTS: torch.from_numpy(d["old_logits"]),
        Columns.ADVANTAGES: torch.from_numpy(d["advantages"]),
        Columns.VALUE_TARGETS: torch.from_numpy(d["value_targets"]),
        Columns.LOSS_MASK: torch.from_numpy(d["loss_mask"]),
    }


@pytest.mark.parametrize("settings", [
    dict(clip_param=0.2, vf_clip_param=10.0, vf_loss_coeff=0.5, entropy_coeff=0.01, kl_coeff=0.2),
    dict(clip_param=0.3, vf_clip_param=1.0, vf_loss_coeff=1.0, entropy_coeff=0.0, kl_coeff=0.0),
    dict(clip_param=0.1, vf_clip_param=float("inf"), vf_loss_coeff=0.01, entropy_coeff=0.1, kl_coeff=1.0),
])
def test_ppo_loss_equals_hand_computation(settings):
    torch.manual_seed(0)
    learner = make_learner(use_kl_loss=True, **settings)  # hand_loss includes the KL term
    d = hand_batch()
    module = learner.module[DEFAULT_MODULE_ID]
    batch = _tensors(d)
    with torch.no_grad():
        values = module.compute_values(batch).numpy()
    fwd_out = {Columns.ACTION_DIST_INPUTS: torch.from_numpy(d["new_logits"])}
    loss = learner.compute_loss_for_module(module_id=DEFAULT_MODULE_ID, config=learner.config, batch=batch,
                                           fwd_out=fwd_out)
    expected = hand_loss(d, values, **settings)
    # The batch really exercises the clipping.
    assert (expected["ratio"] > 1 + settings["clip_param"]).any() and (expected["ratio"] < 1 - settings["clip_param"]).any()
    assert loss.item() == pytest.approx(expected["total_loss"], rel=1e-5, abs=1e-6)
    stats = {k: learner.peek_stat(DEFAULT_MODULE_ID, k) for k in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss")}
    for key, value in stats.items():
        assert value == pytest.approx(expected[key], rel=1e-5, abs=1e-6), key


@pytest.mark.parametrize("vf_clip_param", [float("inf"), 2.0])
def test_ppo_gradients_equal_the_full_formula_when_terms_are_left_out(vf_clip_param):
    """entropy_coeff=0 and vf_clip_param=inf leave their terms out of the graph: same loss, same gradients."""
    torch.manual_seed(0)
    learner = make_learner(use_kl_loss=False, entropy_coeff=0.0, vf_clip_param=vf_clip_param, vf_loss_coeff=0.5)
    d = hand_batch(2)
    del d["loss_mask"]
    batch = _tensors({**d, "loss_mask": np.ones(6, bool)})
    del batch[Columns.LOSS_MASK]
    module = learner.module[DEFAULT_MODULE_ID]
    logits = torch.from_numpy(d["new_logits"]).requires_grad_()
    loss = learner.compute_loss_for_module(module_id=DEFAULT_MODULE_ID, config=learner.config, batch=batch,
                                           fwd_out={Columns.ACTION_DIST_INPUTS: logits})
    loss.backward()
    got = (loss.detach(), logits.grad.clone(), [p.grad.clone() for p in module.vf.parameters()])
    logits.grad = None
    module.zero_grad()

    log_probs = torch.log_softmax(logits, -1)
    ratio = torch.exp(log_probs.gather(-1, batch[Columns.ACTIONS].unsqueeze(-1)).squeeze(-1)
                      - batch[Columns.ACTION_LOGP])
    adv = batch[Columns.ADVANTAGES]
    surrogate = torch.min(adv * ratio, adv * torch.clamp(ratio, 0.8, 1.2))
    vf = torch.clamp((module.compute_values(batch) - batch[Columns.VALUE_TARGETS]) ** 2, 0, vf_clip_param)
    entropy = -(log_probs.exp() * log_probs).sum(-1)
    full = torch.mean(-surrogate + 0.5 * vf - 0.0 * entropy)
    full.backward()
    torch.testing.assert_close(got[0], full.detach(), rtol=0, atol=1e-6)
    torch.testing.assert_close(got[1], logits.grad, rtol=0, atol=1e-7)
    for mine, theirs in zip(got[2], [p.grad for p in module.vf.parameters()]):
        torch.testing.assert_close(mine, theirs, rtol=0, atol=1e-6)


def test_ppo_loss_without_kl_term():
    learner = make_learner(use_kl_loss=False, vf_loss_coeff=0.0, entropy_coeff=0.0, clip_param=0.2)
    d = hand_batch(1)
    fwd_out = {Columns.ACTION_DIST_INPUTS: torch.from_numpy(d["new_logits"])}
    loss = learner.compute_loss_for_module(module_id=DEFAULT_MODULE_ID, config=learner.config, batch=_tensors(d),
                                           fwd_out=fwd_out)
    expected = hand_loss(d, np.zeros(6), clip_param=0.2, vf_clip_param=10.0, vf_loss_coeff=0.0, entropy_coeff=0.0,
                         kl_coeff=0.0)
    assert loss.item() == pytest.approx(expected["policy_loss"], rel=1e-5)
    assert learner.peek_stat(DEFAULT_MODULE_ID, "mean_kl_loss") == 0.0


def test_ppo_loss_gradient_is_zero_for_clipped_ratios():
    """With A > 0 and ratio > 1 + clip, the surrogate is flat: no policy gradient from that row."""
    learner = make_learner(clip_param=0.2, vf_loss_coeff=0.0, kl_coeff=0.0, entropy_coeff=0.0)
    logits = torch.zeros(1, 2, requires_grad=True)
    batch = {Columns.OBS: torch.zeros(1, 2), Columns.ACTIONS: torch.tensor([0]),
             Columns.ACTION_LOGP: torch.log(torch.tensor([0.5 / 1.5])),  # ratio = 1.5
             Columns.ACTION_DIST_INPUTS: torch.zeros(1, 2), Columns.ADVANTAGES: torch.tensor([1.0]),
             Columns.VALUE_TARGETS: torch.tensor([0.0])}
    loss = learner.compute_loss_for_module(module_id=DEFAULT_MODULE_ID, config=learner.config, batch=batch,
                                           fwd_out={Columns.ACTION_DIST_INPUTS: logits})
    loss.backward()
    assert loss.item() == pytest.approx(-1.2)
    assert logits.grad.abs().max() == 0.0


def test_ppo_loss_requires_gae_columns():
    learner = make_learner()
    batch = _tensors(hand_batch())
    del batch[Columns.ADVANTAGES]
    with pytest.raises(KeyError, match="advantages"):
        learner.compute_loss_for_module(module_id=DEFAULT_MODULE_ID, config=learner.config, batch=batch,
                                        fwd_out={Columns.ACTION_DIST_INPUTS: torch.zeros(6, 2)})


@pytest.mark.parametrize("kl, factor", [(0.05, 1.5), (0.021, 1.5), (0.004, 0.5), (0.01, 1.0), (0.019, 1.0),
                                        (0.006, 1.0)])
def test_kl_coeff_adapts(kl, factor):
    learner = make_learner(use_kl_loss=True, kl_coeff=0.2, kl_target=0.01)
    learner.log_stats(DEFAULT_MODULE_ID, {"mean_kl_loss": torch.tensor(kl)})
    learner.after_gradient_based_update(timesteps={})
    assert learner.curr_kl_coeffs[DEFAULT_MODULE_ID] == pytest.approx(0.2 * factor)


def test_kl_coeff_adapts_from_the_update_mean_and_is_reported():
    learner = make_learner(use_kl_loss=True, kl_coeff=0.2, kl_target=0.01)
    for kl in (0.01, 0.05):  # mean 0.03 > 0.02
        learner.log_stats(DEFAULT_MODULE_ID, {"mean_kl_loss": torch.tensor(kl)})
    learner.after_gradient_based_update(timesteps={})
    assert learner.curr_kl_coeffs[DEFAULT_MODULE_ID] == pytest.approx(0.3)
    learner._flush_stats()
    result = learner.metrics.reduce()
    assert result[DEFAULT_MODULE_ID]["curr_kl_coeff"] == pytest.approx(0.3)
    # State round trip keeps the adapted coefficient.
    other = make_learner(use_kl_loss=True, kl_coeff=0.2)
    other.set_state(learner.get_state())
    assert other.curr_kl_coeffs[DEFAULT_MODULE_ID] == pytest.approx(0.3)


def test_kl_coeff_fixed_without_kl_loss():
    learner = make_learner(use_kl_loss=False, kl_coeff=0.2)
    learner.log_stats(DEFAULT_MODULE_ID, {"mean_kl_loss": torch.tensor(1.0)})
    learner.after_gradient_based_update(timesteps={})
    assert learner.curr_kl_coeffs[DEFAULT_MODULE_ID] == 0.2


def test_entropy_coeff_schedule():
    learner = make_learner(entropy_coeff=[[0, 0.1], [100, 0.0]])
    learner.before_gradient_based_update(timesteps={"num_env_steps_sampled_lifetime": 50})
    assert learner._entropy_coeff == pytest.approx(0.05)


# -- the Learner pipeline on real episodes ----------------------------------------------------------------------
def _episodes(truncate, gamma=0.9):
    config = (PPOConfig().environment(CountingEnv, env_config={"episode_len": 5, "truncate": truncate})
              .env_runners(num_envs_per_env_runner=2, rollout_fragment_length=7)
              .training(gamma=gamma, lambda_=0.8, train_batch_size=14, minibatch_size=7)
              .rl_module(model_config={"fcnet_hiddens": [8]}))
    runner = EnvRunner(config=config)
    learner = config.build_learner(spaces=runner.get_spaces())
    return runner.sample(), learner


@pytest.mark.parametrize("truncate", [False, True])
def test_learner_pipeline_gae_matches_reference(truncate):
    torch.manual_seed(0)
    episodes, learner = _episodes(truncate)
    # 2 finished episodes of 5 steps and 2 ongoing chunks of 2 steps.
    assert sorted(len(e) for e in episodes) == [2, 2, 5, 5]
    module = learner.module[DEFAULT_MODULE_ID]
    expected_adv, expected_targets = [], []
    for e in episodes:
        obs = torch.from_numpy(np.asarray(e.get_observations(), np.float32))
        with torch.no_grad():
            v = module.compute_values({Columns.OBS: obs}).numpy().astype(np.float64)
        adv, tgt = _reference(e.get_rewards().astype(np.float64), v[:-1], v[-1], e.is_terminated, 0.9, 0.8)
        expected_adv.append(adv)
        expected_targets.append(tgt)
    batch = learner._learner_connector(rl_module=learner.module, batch={}, episodes=episodes, explore=False,
                                       shared_data={}, metrics=learner.metrics)[DEFAULT_MODULE_ID]
    mask = batch[Columns.LOSS_MASK].numpy().astype(bool)
    assert mask.sum() == 14 and len(mask) == 18
    adv = np.concatenate(expected_adv)
    np.testing.assert_allclose(batch[Columns.VALUE_TARGETS].numpy()[mask], np.concatenate(expected_targets),
                               rtol=1e-4, atol=1e-4)
    # Advantages are standardised over the real rows.
    np.testing.assert_allclose(batch[Columns.ADVANTAGES].numpy()[mask], (adv - adv.mean()) / adv.std(),
                               rtol=1e-3, atol=1e-3)
    # Columns the loss needs, aligned with the rows.
    assert batch[Columns.ACTIONS].shape == (18,) and batch[Columns.ACTION_LOGP].shape == (18,)
    assert batch[Columns.OBS].shape == (18, 2)


def _reference(rewards, values, bootstrap, terminated, gamma, lambda_):
    next_values = np.append(values[1:], 0.0 if terminated else bootstrap)
    deltas = rewards + gamma * next_values - values
    adv = np.zeros(len(rewards))
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = deltas[t] + gamma * lambda_ * running
        adv[t] = running
    return adv, adv + values


def test_learner_update_from_episodes_reports_ppo_stats():
    torch.manual_seed(0)
    episodes, learner = _episodes(False)
    before = {k: v.copy() for k, v in learner.get_weights()[DEFAULT_MODULE_ID].items()}
    result = learner.update(episodes=episodes, timesteps={"num_env_steps_sampled_lifetime": 14})
    stats = result[DEFAULT_MODULE_ID]
    for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "total_loss", "curr_kl_coeff"):
        assert np.isfinite(stats[key]), key
    assert stats["num_module_steps_trained"] == 14  # real steps only, not the artificial bootstrap steps
    after = learner.get_weights()[DEFAULT_MODULE_ID]
    assert any(not np.array_equal(before[k], after[k]) for k in before)
