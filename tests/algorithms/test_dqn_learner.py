"""DQN's loss against hand computations (double Q, n-step, Huber/MSE, importance weights); target updates."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl.algorithms.dqn.default_dqn_rl_module import QF_PREDS
from relayrl.algorithms.dqn.dqn_config import DQNConfig
from relayrl.algorithms.dqn.dqn_learner import DQNLearner
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.ops.q_learning import q_learning_targets, td_error_loss

OBS = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
ACT = gym.spaces.Discrete(3)
SPACES = {"__env_single__": (OBS, ACT)}
B = 8


def make_learner(**training):
    torch.manual_seed(0)
    training = {"n_step": 1, **training}  # RLlib's: one-step targets unless a test sets n_step
    config = (DQNConfig().environment(observation_space=OBS, action_space=ACT).training(**training)
              .rl_module(model_config={"fcnet_hiddens": [16], "head_fcnet_hiddens": [16]}))
    learner = config.build_learner(spaces=SPACES)
    assert isinstance(learner, DQNLearner)
    return learner


def replay_batch(seed=0, n_step=None):
    rng = np.random.default_rng(seed)
    batch = {
        "obs": rng.uniform(-1, 1, (B, 3)).astype(np.float32),
        "actions": rng.integers(0, 3, B),
        "rewards": rng.normal(size=B).astype(np.float32),
        "new_obs": rng.uniform(-1, 1, (B, 3)).astype(np.float32),
        "terminateds": np.array([False, True, False, False, True, False, False, False]),
        "truncateds": np.zeros(B, bool),
        "weights": rng.uniform(0.2, 1.0, B).astype(np.float32),
        "indices": np.arange(100, 100 + B),
    }
    if n_step is not None:
        batch["n_step"] = np.asarray(n_step)
    return batch


def tensors(batch):
    return {k: torch.as_tensor(v) for k, v in batch.items()}


def hand_loss(learner, batch, *, gamma, double_q, kind, use_weights=True):
    """The DQN loss written out with numpy from the module's own Q-values."""
    module = learner.module[DEFAULT_MODULE_ID]
    with torch.no_grad():
        q = module.compute_q_values({Columns.OBS: torch.as_tensor(batch["obs"])})[QF_PREDS].numpy()
        q_next_online = module.compute_q_values({Columns.OBS: torch.as_tensor(batch["new_obs"])})[QF_PREDS].numpy()
        q_next_target = module.forward_target({Columns.OBS: torch.as_tensor(batch["new_obs"])})[QF_PREDS].numpy()
    rows = np.arange(B)
    best = q_next_online.argmax(1) if double_q else q_next_target.argmax(1)
    n = batch.get("n_step", 1)
    y = batch["rewards"] + gamma ** n * (1 - batch["terminateds"]) * q_next_target[rows, best]
    td = q[rows, batch["actions"]] - y
    if kind == "huber":
        per_row = np.where(np.abs(td) < 1, 0.5 * td ** 2, np.abs(td) - 0.5)
    else:
        per_row = 0.5 * td ** 2
    if use_weights:
        per_row = per_row * batch["weights"]
    return per_row.mean(), td


def loss_of(learner, batch):
    module_batch = tensors(batch)
    fwd_out = learner.module[DEFAULT_MODULE_ID].forward_train(module_batch)
    return learner.compute_loss_for_module(module_id=DEFAULT_MODULE_ID, config=learner.config, batch=module_batch,
                                           fwd_out=fwd_out).detach()


def scramble_targets(learner):
    """Make the target net differ from the online net, so double Q and plain max pick differently."""
    module = learner.module[DEFAULT_MODULE_ID]
    torch.manual_seed(123)
    with torch.no_grad():
        for _, target in module.get_target_network_pairs():
            for p in target.parameters():
                p.add_(torch.randn_like(p))


@pytest.mark.parametrize("double_q", [True, False])
@pytest.mark.parametrize("kind", ["huber", "mse"])
def test_loss_matches_hand_computation(double_q, kind):
    learner = make_learner(double_q=double_q, td_error_loss_fn=kind, gamma=0.9)
    scramble_targets(learner)
    batch = replay_batch()
    expected, expected_td = hand_loss(learner, batch, gamma=0.9, double_q=double_q, kind=kind)
    assert float(loss_of(learner, batch)) == pytest.approx(float(expected), rel=1e-5)
    _, td_errors = learner.get_td_errors()[DEFAULT_MODULE_ID]
    np.testing.assert_allclose(td_errors, expected_td, rtol=1e-5, atol=1e-6)


def test_double_q_and_plain_max_give_different_targets_when_nets_differ():
    batch = replay_batch(seed=3)
    learners = {dq: make_learner(double_q=dq) for dq in (True, False)}
    for learner in learners.values():
        scramble_targets(learner)
    losses = {dq: float(loss_of(learner, batch)) for dq, learner in learners.items()}
    assert losses[True] != pytest.approx(losses[False])


def test_per_row_n_step_discounts_the_bootstrap():
    learner = make_learner(gamma=0.5)
    n_step = np.array([1, 2, 3, 4, 5, 1, 2, 3])
    batch = replay_batch(n_step=n_step)
    expected, _ = hand_loss(learner, batch, gamma=0.5, double_q=True, kind="huber")
    assert float(loss_of(learner, batch)) == pytest.approx(float(expected), rel=1e-5)
    # Ignoring n_step (gamma**1 everywhere) would give another loss.
    ones = dict(batch, n_step=np.ones(B, np.int64))
    assert float(loss_of(learner, ones)) != pytest.approx(float(expected), rel=1e-3)


def test_q_learning_targets_by_hand():
    rewards = torch.tensor([1.0, 2.0, 3.0])
    terminateds = torch.tensor([False, True, False])
    next_q_target = torch.tensor([[1.0, 5.0], [2.0, 0.0], [4.0, -1.0]])
    next_q_online = torch.tensor([[9.0, 0.0], [0.0, 1.0], [0.0, 1.0]])  # picks actions 0, 1, 1
    n_step = torch.tensor([1, 2, 3])
    double = q_learning_targets(rewards, terminateds, next_q_target, gamma=0.5, n_step=n_step,
                                next_q_online=next_q_online)
    torch.testing.assert_close(double, torch.tensor([1 + 0.5 * 1.0, 2.0, 3 + 0.125 * -1.0]))
    plain = q_learning_targets(rewards, terminateds, next_q_target, gamma=0.5, n_step=2)
    torch.testing.assert_close(plain, torch.tensor([1 + 0.25 * 5.0, 2.0, 3 + 0.25 * 4.0]))


def test_huber_is_quadratic_near_zero_and_linear_beyond():
    td = torch.tensor([-3.0, -0.5, 0.0, 0.5, 3.0])
    torch.testing.assert_close(td_error_loss(td, "huber"), torch.tensor([2.5, 0.125, 0.0, 0.125, 2.5]))
    torch.testing.assert_close(td_error_loss(td, "mse"), torch.tensor([4.5, 0.125, 0.0, 0.125, 4.5]))
    with pytest.raises(ValueError, match="huber"):
        td_error_loss(td, "l1")


def test_importance_weights_scale_each_rows_loss():
    learner = make_learner()
    batch = replay_batch()
    weighted = float(loss_of(learner, batch))
    unweighted, _ = hand_loss(learner, batch, gamma=0.99, double_q=True, kind="huber", use_weights=False)
    assert weighted == pytest.approx(float(hand_loss(learner, batch, gamma=0.99, double_q=True, kind="huber")[0]),
                                     rel=1e-5)
    no_weights = {k: v for k, v in batch.items() if k != "weights"}
    assert float(loss_of(learner, no_weights)) == pytest.approx(float(unweighted), rel=1e-5)
    assert weighted < float(unweighted)  # all weights are < 1


def test_update_returns_rllib_stats_and_td_errors_with_buffer_indices():
    learner = make_learner()
    results = learner.update(batch=replay_batch(), timesteps={"num_env_steps_sampled_lifetime": 10}, num_epochs=1,
                             minibatch_size=B)
    stats = results[DEFAULT_MODULE_ID]
    for key in ("qf_loss", "qf_mean", "qf_max", "qf_min", "td_error_mean", "total_loss", "num_target_updates"):
        assert np.isfinite(stats[key]), key
    indices, td_errors = learner.get_td_errors()[DEFAULT_MODULE_ID]
    np.testing.assert_array_equal(indices, np.arange(100, 100 + B))
    assert td_errors.shape == (B,) and np.abs(td_errors).sum() > 0


def _target_differs(learner):
    module = learner.module[DEFAULT_MODULE_ID]
    obs = torch.as_tensor(replay_batch()["obs"])
    with torch.no_grad():
        return not torch.allclose(module.forward_target({Columns.OBS: obs})[QF_PREDS],
                                  module.compute_q_values({Columns.OBS: obs})[QF_PREDS])


def test_hard_target_update_every_target_network_update_freq_sampled_steps():
    learner = make_learner(target_network_update_freq=100, tau=1.0, lr=0.01)
    batch = replay_batch()
    updates_seen = []
    for sampled in (50, 99, 100, 150, 199, 200, 260):
        learner.update(batch=batch, timesteps={"num_env_steps_sampled_lifetime": sampled}, num_epochs=1,
                       minibatch_size=B)
        updates_seen.append(learner._num_target_updates[DEFAULT_MODULE_ID])
        if sampled in (100, 200):
            assert not _target_differs(learner), "a hard update copies the online weights"
        else:
            assert _target_differs(learner)
    assert updates_seen == [0, 0, 1, 1, 1, 2, 2]


def test_soft_target_update_moves_targets_by_tau():
    learner = make_learner(target_network_update_freq=0, tau=0.1, lr=0.05)
    module = learner.module[DEFAULT_MODULE_ID]
    before = {k: v.clone() for k, v in module.state_dict().items()}
    learner.update(batch=replay_batch(), timesteps={"num_env_steps_sampled_lifetime": 1}, num_epochs=1,
                   minibatch_size=B)
    after = module.state_dict()
    for key, old_target in before.items():
        if not key.startswith("_target_"):
            continue
        main = after[key[len("_target_"):]]
        torch.testing.assert_close(after[key], 0.1 * main + 0.9 * old_target)
    assert learner._num_target_updates[DEFAULT_MODULE_ID] == 1


def test_target_networks_are_not_optimised():
    learner = make_learner()
    module = learner.module[DEFAULT_MODULE_ID]
    optimised = {id(p) for group in learner.get_optimizer().param_groups for p in group["params"]}
    targets = [p for _, target in module.get_target_network_pairs() for p in target.parameters()]
    assert targets and not any(id(p) in optimised for p in targets)


def test_learner_state_keeps_target_update_bookkeeping():
    learner = make_learner(target_network_update_freq=10)
    learner.update(batch=replay_batch(), timesteps={"num_env_steps_sampled_lifetime": 30}, num_epochs=1,
                   minibatch_size=B)
    other = make_learner(target_network_update_freq=10)
    other.set_state(learner.get_state())
    assert other._last_target_update_ts == {DEFAULT_MODULE_ID: 30}
    assert other._num_target_updates == {DEFAULT_MODULE_ID: 1}
