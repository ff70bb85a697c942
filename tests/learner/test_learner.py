"""Learner: minibatching, gradient clipping, lr schedules, NaN losses, hooks, state, custom losses."""
import copy

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from relayrl import AlgorithmConfig
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.learner.learner import Learner, possibly_masked_mean
from relayrl.learner.learner_group import LearnerGroup
from relayrl.learner.minibatches import drop_rows_outside_loss, iterate_minibatches
from relayrl.modules.rl_module import RLModule
from relayrl.modules.rl_module_spec import RLModuleSpec

OBS = gym.spaces.Box(-10.0, 10.0, (3,), np.float32)
ACT = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)


# -- iterate_minibatches ---------------------------------------------------------------------------------
def _rows_batch(n=10):
    return {DEFAULT_MODULE_ID: {"x": torch.arange(n), "nested": {"y": torch.arange(n) * 10},
                                Columns.INFOS: ["info"] * n}}


def test_minibatches_sizes_without_shuffle():
    batches = list(iterate_minibatches(_rows_batch(10), num_epochs=2, minibatch_size=3, shuffle=False))
    assert len(batches) == 6  # 10 // 3 per epoch
    xs = [b[DEFAULT_MODULE_ID]["x"].tolist() for b in batches]
    assert xs == [[0, 1, 2], [3, 4, 5], [6, 7, 8]] * 2
    for b in batches:
        assert torch.equal(b[DEFAULT_MODULE_ID]["nested"]["y"], b[DEFAULT_MODULE_ID]["x"] * 10)
        assert b[DEFAULT_MODULE_ID][Columns.INFOS] == ["info"] * 10  # infos are not sliced


def test_minibatches_shuffle_each_epoch():
    torch.manual_seed(0)
    batches = list(iterate_minibatches(_rows_batch(12), num_epochs=3, minibatch_size=4, shuffle=True))
    assert len(batches) == 9 and all(len(b[DEFAULT_MODULE_ID]["x"]) == 4 for b in batches)
    epochs = [torch.cat([b[DEFAULT_MODULE_ID]["x"] for b in batches[i:i + 3]]) for i in (0, 3, 6)]
    for rows in epochs:  # each epoch is a permutation of all rows
        assert sorted(rows.tolist()) == list(range(12))
    assert any(rows.tolist() != list(range(12)) for rows in epochs)
    assert epochs[0].tolist() != epochs[1].tolist() or epochs[1].tolist() != epochs[2].tolist()
    for b in batches:  # columns stay aligned
        assert torch.equal(b[DEFAULT_MODULE_ID]["nested"]["y"], b[DEFAULT_MODULE_ID]["x"] * 10)


@pytest.mark.parametrize("minibatch_size", [None, 0, 10, 50])
def test_minibatch_size_none_or_too_big_gives_whole_batch(minibatch_size):
    batches = list(iterate_minibatches(_rows_batch(10), num_epochs=2, minibatch_size=minibatch_size, shuffle=False))
    assert [b[DEFAULT_MODULE_ID]["x"].tolist() for b in batches] == [list(range(10))] * 2


# -- a tiny module and learners -----------------------------------------------------------------------------
class LinearModule(RLModule):
    def setup(self):
        self.net = nn.Linear(3, 1)

    def _forward(self, batch, **kwargs):
        return {"pred": self.net(batch[Columns.OBS]).squeeze(-1)}


class RegressionLearner(Learner):
    """Mean squared error between the module's prediction and batch['target']."""

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        loss = torch.mean((fwd_out["pred"] - batch["target"]) ** 2)
        self.log_stats(module_id, {"mse": loss})
        return loss


def make_learner(learner_cls=RegressionLearner, **training):
    config = AlgorithmConfig().training(**training)
    learner = learner_cls(config=config, module_spec=RLModuleSpec(module_class=LinearModule, observation_space=OBS,
                                                                  action_space=ACT))
    learner.build()
    return learner


def regression_batch(n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return {Columns.OBS: x, "target": x @ torch.tensor([1.0, -2.0, 0.5]) + 3.0}


def test_custom_learner_trains_tiny_module():
    torch.manual_seed(0)
    learner = make_learner(lr=0.05, num_epochs=10, minibatch_size=16)
    batch = regression_batch()
    losses = []
    for _ in range(20):
        result = learner.update(batch=batch)
        losses.append(result[DEFAULT_MODULE_ID]["mse"])
    assert losses[-1] < 0.01 * losses[0]
    assert losses == sorted(losses, reverse=True)[:len(losses)] or losses[-1] < losses[0]
    torch.testing.assert_close(learner.module[DEFAULT_MODULE_ID].net.weight.detach(),
                               torch.tensor([[1.0, -2.0, 0.5]]), atol=0.05, rtol=0)
    assert result[DEFAULT_MODULE_ID]["num_module_steps_trained"] == 64


def test_update_counts_minibatch_steps():
    calls = []

    class Counting(RegressionLearner):
        def _update(self, batch):
            calls.append(len(batch[DEFAULT_MODULE_ID][Columns.OBS]))
            return super()._update(batch)

    learner = make_learner(Counting, num_epochs=3, minibatch_size=20)
    learner.update(batch=regression_batch(64))
    assert calls == [20] * 9
    calls.clear()
    learner.update(batch=regression_batch(64), num_epochs=1, minibatch_size=32)
    assert calls == [32, 32]


def test_hooks_called_once_per_update():
    events = []

    class Hooked(RegressionLearner):
        def before_gradient_based_update(self, *, timesteps):
            super().before_gradient_based_update(timesteps=timesteps)
            events.append(("before", timesteps["num_env_steps_sampled_lifetime"]))

        def after_gradient_based_update(self, *, timesteps):
            super().after_gradient_based_update(timesteps=timesteps)
            events.append(("after", timesteps["num_env_steps_sampled_lifetime"]))

        def _update(self, batch):
            events.append("minibatch")
            return super()._update(batch)

    learner = make_learner(Hooked, num_epochs=2, minibatch_size=16)
    learner.update(batch=regression_batch(64), timesteps={"num_env_steps_sampled_lifetime": 123})
    assert events == [("before", 123)] + ["minibatch"] * 8 + [("after", 123)]


# -- gradient clipping ---------------------------------------------------------------------------------------
class GradRecorder(RegressionLearner):
    """Records the (post-processed) gradients just before the optimizer step."""

    def apply_gradients(self, gradients_dict):
        self.recorded = [p.grad.detach().clone() for p in gradients_dict[DEFAULT_MODULE_ID]]
        super().apply_gradients(gradients_dict)


def _big_grad_batch():
    batch = regression_batch(32)
    batch["target"] = batch["target"] * 1000.0
    return batch


def _recorded_grads(**training):
    torch.manual_seed(0)
    learner = make_learner(GradRecorder, **training)
    learner.update(batch=_big_grad_batch())
    return learner.recorded


def test_no_grad_clip_leaves_gradients():
    grads = _recorded_grads()
    assert max(g.abs().max() for g in grads) > 100.0


def test_grad_clip_by_value():
    raw = _recorded_grads()
    grads = _recorded_grads(grad_clip=0.5, grad_clip_by="value")
    for r, g in zip(raw, grads):
        assert g.abs().max() <= 0.5 + 1e-6
        torch.testing.assert_close(g, r.clamp(-0.5, 0.5))


def test_grad_clip_by_norm_clips_each_tensor():
    raw = _recorded_grads()
    grads = _recorded_grads(grad_clip=2.0, grad_clip_by="norm")
    for r, g in zip(raw, grads):
        assert r.norm() > 2.0
        assert g.norm() == pytest.approx(2.0, rel=1e-4)
        torch.testing.assert_close(g, r * (2.0 / r.norm()), rtol=1e-4, atol=1e-6)


def test_grad_clip_by_global_norm():
    raw = _recorded_grads()
    grads = _recorded_grads(grad_clip=3.0, grad_clip_by="global_norm")
    raw_norm = torch.sqrt(sum(r.pow(2).sum() for r in raw))
    total = torch.sqrt(sum(g.pow(2).sum() for g in grads))
    assert raw_norm > 3.0 and total == pytest.approx(3.0, rel=1e-4)
    for r, g in zip(raw, grads):  # one common scale keeps the direction
        torch.testing.assert_close(g, r * (3.0 / raw_norm), rtol=1e-4, atol=1e-6)


def test_grad_clip_larger_than_norm_changes_nothing():
    raw = _recorded_grads()
    for by in ("value", "norm", "global_norm"):
        for r, g in zip(raw, _recorded_grads(grad_clip=1e9, grad_clip_by=by)):
            torch.testing.assert_close(g, r)


# -- learning-rate schedules ---------------------------------------------------------------------------------
@pytest.mark.parametrize("t, lr", [(0, 1e-3), (250, 7.75e-4), (500, 5.5e-4), (1000, 1e-4), (5000, 1e-4)])
def test_lr_schedule_is_interpolated_per_timestep(t, lr):
    learner = make_learner(lr=[[0, 1e-3], [1000, 1e-4]])
    optimizer = learner.get_optimizer()
    assert optimizer.param_groups[0]["lr"] == pytest.approx(1e-3)
    result = learner.update(batch=regression_batch(), timesteps={"num_env_steps_sampled_lifetime": t})
    assert optimizer.param_groups[0]["lr"] == pytest.approx(lr)
    assert result[DEFAULT_MODULE_ID]["default_optimizer_learning_rate"] == pytest.approx(lr)


def test_fixed_lr_and_schedule_steps_over_time():
    learner = make_learner(lr=0.123)
    learner.update(batch=regression_batch(), timesteps={"num_env_steps_sampled_lifetime": 10 ** 6})
    assert learner.get_optimizer().param_groups[0]["lr"] == pytest.approx(0.123)
    learner = make_learner(lr=[[0, 1e-3], [1000, 1e-4]])
    seen = []
    for t in (0, 400, 800, 1200):
        learner.update(batch=regression_batch(), timesteps={"num_env_steps_sampled_lifetime": t})
        seen.append(learner.get_optimizer().param_groups[0]["lr"])
    np.testing.assert_allclose(seen, [1e-3, 6.4e-4, 2.8e-4, 1e-4], rtol=1e-6)


def test_bad_schedule_raises():
    with pytest.raises(ValueError):
        make_learner(lr=[[10, 1e-3], [1000, 1e-4]])


# -- NaN losses ----------------------------------------------------------------------------------------------
def test_nan_loss_raises_floating_point_error():
    learner = make_learner()
    batch = regression_batch()
    batch["target"][3] = float("nan")
    with pytest.raises(FloatingPointError) as info:
        learner.update(batch=batch)
    message = str(info.value)
    assert DEFAULT_MODULE_ID in message and "nan" in message.lower() and "learning rate" in message


def test_inf_loss_raises_floating_point_error():
    learner = make_learner()
    batch = regression_batch()
    batch["target"][0] = float("inf")
    with pytest.raises(FloatingPointError):
        learner.update(batch=batch)


# -- state -----------------------------------------------------------------------------------------------------
def _weights(learner):
    return {k: v.copy() for k, v in learner.get_weights()[DEFAULT_MODULE_ID].items()}


def test_get_state_set_state_round_trip_with_optimizer():
    torch.manual_seed(0)
    batch = regression_batch()
    a = make_learner(lr=0.01, num_epochs=2, minibatch_size=16)
    for _ in range(3):
        a.update(batch=batch)
    state = a.get_state()
    assert set(state) >= {"rl_module", "optimizer"}
    saved = copy.deepcopy(state)
    # Keep training a: the saved state must not change with it (no aliasing of optimizer tensors).
    for _ in range(3):
        a.update(batch=batch)
    for key, value in state["optimizer"].items():
        for pid, pstate in value["state"].items():
            for name, tensor in pstate.items():
                torch.testing.assert_close(tensor, saved["optimizer"][key]["state"][pid][name])

    b = make_learner(lr=0.01, num_epochs=2, minibatch_size=16)
    b.set_state(state)
    a.set_state(state)
    for k, v in _weights(b).items():
        np.testing.assert_array_equal(v, state["rl_module"][DEFAULT_MODULE_ID][k])
    # Same weights + same optimizer moments -> identical next updates (no shuffling).
    a.update(batch=batch)
    b.update(batch=batch)
    for k, v in _weights(a).items():
        np.testing.assert_allclose(v, _weights(b)[k], rtol=1e-6, atol=1e-7)
    # A learner with fresh optimizer state would diverge from a.
    c = make_learner(lr=0.01, num_epochs=2, minibatch_size=16)
    c.set_state({"rl_module": state["rl_module"]})
    c.update(batch=batch)
    assert any(not np.allclose(v, _weights(a)[k]) for k, v in _weights(c).items())


def test_get_weights_are_copies():
    learner = make_learner(lr=0.1)
    before = _weights(learner)
    weights = learner.get_weights()
    learner.update(batch=regression_batch())
    for k, v in weights[DEFAULT_MODULE_ID].items():
        np.testing.assert_array_equal(v, before[k])


# -- masked mean, learner group ------------------------------------------------------------------------------
def test_possibly_masked_mean_ignores_masked_rows_even_if_nan():
    values = torch.tensor([1.0, 2.0, float("nan"), float("inf"), 6.0])
    mask = torch.tensor([True, True, False, False, True])
    assert possibly_masked_mean({Columns.LOSS_MASK: mask})(values).item() == pytest.approx(3.0)
    assert possibly_masked_mean({})(torch.tensor([1.0, 3.0])).item() == 2.0


def test_drop_rows_outside_loss_keeps_masked_in_rows_only():
    mask = torch.tensor([True, False, True, True, False])
    batch = {"x": torch.arange(5), "nested": {"y": torch.arange(5) * 10}, Columns.LOSS_MASK: mask,
             Columns.INFOS: ["a", "b", "c", "d", "e"]}
    out = drop_rows_outside_loss(batch)
    assert Columns.LOSS_MASK not in out
    assert out["x"].tolist() == [0, 2, 3] and out["nested"]["y"].tolist() == [0, 20, 30]
    assert out[Columns.INFOS] == ["a", "c", "d"]


def test_drop_rows_outside_loss_leaves_recurrent_and_unmasked_batches():
    recurrent = {"x": torch.zeros(2, 3), Columns.SEQ_LENS: torch.tensor([3, 1]),
                 Columns.LOSS_MASK: torch.tensor([[True, True, True], [True, False, False]])}
    assert drop_rows_outside_loss(recurrent) is recurrent
    plain = {"x": torch.arange(4)}
    assert drop_rows_outside_loss(plain) is plain


def test_update_trains_only_on_rows_inside_the_loss():
    """Masked-out rows (e.g. PPO's bootstrap steps) neither fill minibatches nor count as trained steps."""
    seen = []

    class Recording(RegressionLearner):
        def _update(self, batch):
            seen.append(batch[DEFAULT_MODULE_ID])
            return super()._update(batch)

    learner = make_learner(Recording, num_epochs=2, minibatch_size=8)
    batch = regression_batch(20)
    batch[Columns.LOSS_MASK] = torch.arange(20) % 5 != 4  # 16 rows inside the loss
    batch["target"][~batch[Columns.LOSS_MASK]] = float("nan")  # would poison any loss that saw them
    result = learner.update(batch=batch)
    assert [len(mb[Columns.OBS]) for mb in seen] == [8, 8, 8, 8]
    assert all(Columns.LOSS_MASK not in mb and torch.isfinite(mb["target"]).all() for mb in seen)
    assert result[DEFAULT_MODULE_ID]["num_module_steps_trained"] == 16


def test_learner_group_local_update_and_weights():
    class RegressionConfig(AlgorithmConfig):
        def get_default_learner_class(self):
            return RegressionLearner

    torch.manual_seed(0)
    config = RegressionConfig().training(lr=0.05, num_epochs=5, minibatch_size=16)
    group = LearnerGroup(config=config, module_spec=RLModuleSpec(module_class=LinearModule, observation_space=OBS,
                                                                 action_space=ACT))
    assert group.is_local and not group.is_remote
    first = group.update(batch=regression_batch())[DEFAULT_MODULE_ID]["mse"]
    for _ in range(5):
        last = group.update_from_batch(regression_batch())[DEFAULT_MODULE_ID]["mse"]
    assert last < first
    weights = group.get_weights()
    assert set(weights) == {DEFAULT_MODULE_ID}
    other = make_learner()
    other.set_weights(weights)
    for k, v in _weights(other).items():
        np.testing.assert_array_equal(v, weights[DEFAULT_MODULE_ID][k])
    assert group.foreach_learner(lambda learner: type(learner).__name__) == ["RegressionLearner"]
    assert isinstance(group.get_module(DEFAULT_MODULE_ID), LinearModule)


def test_update_accepts_numpy_batches():
    calls = []

    class Counting(RegressionLearner):
        def _update(self, batch):
            calls.append(batch[DEFAULT_MODULE_ID][Columns.OBS].shape)
            return super()._update(batch)

    learner = make_learner(Counting, minibatch_size=16)
    batch = {k: v.numpy() for k, v in regression_batch(64).items()}
    result = learner.update(batch=batch)
    assert calls == [(16, 3)] * 4
    assert np.isfinite(result[DEFAULT_MODULE_ID]["mse"])
