"""The Policy API's acting fast paths give what the general code gives: the one-row numpy forward pass
(numpy_forward.py: the batched logits and log-probabilities to float32 precision, the softmax distribution), the
one-env step (rollout/one_env_step.py: exactly) and the trajectory's column stacking."""
import numpy as np
import pytest
import torch

from relayrl.algorithms.algorithm import Algorithm
from relayrl.evaluation.postprocessing import compute_advantages
from relayrl.policy.policy_template import build_policy_class
from relayrl.policy.rollout import one_env_step
from relayrl.policy.rollout.trajectory import _stack


def _pg_loss(policy, model, dist_class, batch):
    logits, _ = model.from_batch(batch)
    return -(dist_class(logits, model).logp(batch["actions"]) * batch["advantages"]).mean()


PG = build_policy_class("PG", "torch", loss_fn=_pg_loss, postprocess_fn=lambda p, b, o=None, e=None:
                        compute_advantages(b, 0.0, p.config["gamma"], use_gae=False, use_critic=False))


class PGAlgo(Algorithm):
    def get_default_policy_class(self, config):
        return PG


def _algo(**extra):
    return PGAlgo(config={"env": "CartPole-v1", "lr": 0.01, "train_batch_size": 100, "seed": 3,
                          "logger_config": {"type": "none"}, **extra})


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_one_row_forward_equals_the_batched_path(activation):
    """NumpyMLP.row (the one-env path) gives the batched call's float32 logits; both samplers (the one-row inverse
    CDF and the batched Gumbel-max) give the same log-probabilities, right to float32 precision."""
    algo = _algo(model={"fcnet_hiddens": [32, 16], "fcnet_activation": activation})
    policy = algo.get_policy()
    fast = policy._numpy_forward()
    rows = np.random.default_rng(0).normal(scale=3.0, size=(400, 1, 4)).astype(np.float32)
    for explore in (True, False):
        for row in rows:
            a, extra_a = fast.compute(row, explore)  # one row: NumpyMLP.row + NumpyCategoricalPolicy.sample_row
            b, extra_b = fast.compute(np.concatenate([row, row]), explore)  # batched: NumpyMLP + Gumbel-max
            assert a.dtype == b.dtype == np.int64 and a.shape == (1,) and b.shape == (2,)
            for key in extra_b:
                assert extra_a[key].dtype == extra_b[key].dtype and extra_a[key].shape == (1,) + extra_b[key].shape[1:]
            logits = extra_a["action_dist_inputs"]
            np.testing.assert_allclose(logits[0], extra_b["action_dist_inputs"][0], rtol=1e-6, atol=1e-6)
            expected = torch.log_softmax(torch.from_numpy(logits).double(), -1)[0]
            assert extra_a["action_logp"][0] == pytest.approx(expected[int(a[0])].item(), rel=1e-6, abs=1e-7)
            assert extra_a["action_prob"][0] == pytest.approx(np.exp(expected[int(a[0])].item()), rel=1e-6, abs=1e-7)
            assert extra_b["action_logp"][1] == pytest.approx(expected[int(b[1])].item(), rel=1e-6, abs=1e-6)
            if not explore:
                assert a[0] == b[0] == int(np.argmax(logits[0]))
    # the hidden buffers are reused, the returned arrays are not
    _, first = fast.compute(rows[0], True)
    _, second = fast.compute(rows[1], True)
    assert not np.shares_memory(first["action_dist_inputs"], second["action_dist_inputs"])
    algo.stop()


def test_both_samplers_draw_the_softmax_distribution():
    """The one-row sampler and the batched one are Categorical samples of the same logits (frequencies)."""
    algo = _algo(model={"fcnet_hiddens": [8]})
    fast = algo.get_policy()._numpy_forward()
    fast.rng = np.random.default_rng(5)
    obs = np.array([[0.3, -1.0, 2.0, 0.5]], np.float32)
    logits = fast.compute(obs, False)[1]["action_dist_inputs"][0].astype(np.float64)
    probs = np.exp(logits - np.logaddexp.reduce(logits))
    one = np.array([fast.compute(obs, True)[0][0] for _ in range(4000)])
    batched = fast.compute(np.repeat(obs, 4000, axis=0), True)[0]
    for actions in (one, batched):
        freq = np.bincount(actions, minlength=len(probs)) / len(actions)
        np.testing.assert_allclose(freq, probs, atol=0.03)
    algo.stop()


def _sample_fragments(monkeypatch, fast: bool, n: int = 6, **extra):
    if not fast:
        monkeypatch.setattr(one_env_step.OneEnvNumpyStep, "applies", staticmethod(lambda runner: False))
    algo = _algo(**extra)
    worker = algo.workers.local_worker()
    batches = []
    for _ in range(n):
        batch = worker.sample()
        batches.append(batch)
        worker.policy.learn_on_batch(batch)
    out = (batches, worker.policy.get_weights(), worker.policy.global_timestep, dict(worker.global_vars),
           worker.get_metrics(), worker._num_finished, [(e.length, e.total_reward) for e in worker._episodes])
    algo.stop()
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("observation_filter", ["NoFilter", "MeanStdFilter"])
def test_one_env_step_equals_the_general_step(monkeypatch, observation_filter):
    """The same rows, weights and counters; with observation_filter="MeanStdFilter" (observation_filters.py) the
    same filtered observations too."""
    extra = {"observation_filter": observation_filter}
    assert one_env_step.OneEnvNumpyStep.applies(_algo(**extra).workers.local_worker())
    fast, general = _sample_fragments(monkeypatch, True, **extra), _sample_fragments(monkeypatch, False, **extra)
    for ours, theirs in zip(fast[0], general[0]):
        assert list(ours.keys()) == list(theirs.keys())  # the same columns in the same order
        for key in theirs.keys():
            if key == "infos":
                assert list(ours[key]) == list(theirs[key])
                continue
            a, b = np.asarray(ours[key]), np.asarray(theirs[key])
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), key
    assert all(np.array_equal(fast[1][k], v) for k, v in general[1].items())
    assert fast[2] == general[2] > 0 and fast[3] == general[3]
    timings = ("duration", "time", "throughput")
    assert [(k, v) for k, v in fast[4].items() if not any(t in k for t in timings)] == \
        [(k, v) for k, v in general[4].items() if not any(t in k for t in timings)]
    assert fast[5] == general[5] > 3 and fast[6] == general[6]  # finished episodes, the ongoing one


def test_one_env_step_does_not_apply_with_several_envs_or_a_step_callback():
    from relayrl.callbacks import DefaultCallbacks

    class OnStep(DefaultCallbacks):
        def on_episode_step(self, **kwargs):
            pass

    for algo in (_algo(num_envs_per_env_runner=2), _algo(callbacks=OnStep)):
        assert not one_env_step.OneEnvNumpyStep.applies(algo.workers.local_worker())
        algo.stop()
    algo = _algo()
    algo.get_policy().config["_disable_numpy_forward"] = True
    assert not one_env_step.OneEnvNumpyStep.applies(algo.workers.local_worker())
    algo.stop()


@pytest.mark.parametrize("values", [
    [1.0, 2.5, -3.0], [True, False], [np.int64(1), np.int64(0)], [np.zeros((), np.int64), np.int64(1)],
    [np.ones(3, np.float32), np.zeros(3, np.float32)], [np.float32(1.5), 2.0], [1, 2.5],
    [np.ones((2, 2)), np.zeros((2, 2))]])
def test_stacking_rows_as_np_stack(values):
    expected = np.stack([np.asarray(v) for v in values])
    stacked = _stack(values)
    assert stacked.dtype == expected.dtype and stacked.shape == expected.shape and np.array_equal(stacked, expected)


def test_stacking_ragged_rows_keeps_objects():
    stacked = _stack([np.ones(2), np.ones(3)])
    assert stacked.dtype == object and len(stacked) == 2 and stacked[1].shape == (3,)


def _fused_adam(policy, config):
    return torch.optim.Adam(policy.model.parameters(), lr=0.01, fused=True)


def _logits_now(policy, obs):
    with torch.no_grad():
        logits, _ = policy.model({"obs": torch.from_numpy(obs)}, [], None)
    return logits.numpy()


def test_the_numpy_forward_follows_a_fused_optimizers_steps():
    """torch's fused optimizers update the weights without bumping their version counters; the fast path
    must still act with the weights after each learn_on_batch (it did not: the policy acted with its first
    weights for ever)."""
    fused = PG.with_updates(name="FusedPG", optimizer_fn=_fused_adam)

    class FusedAlgo(Algorithm):
        def get_default_policy_class(self, config):
            return fused

    algo = FusedAlgo(config={"env": "CartPole-v1", "train_batch_size": 100, "seed": 3,
                             "logger_config": {"type": "none"}})
    policy = algo.get_policy()
    obs = np.random.default_rng(0).normal(size=(1, 4)).astype(np.float32)
    assert policy._numpy_forward() is not None
    for _ in range(3):
        algo.train()
        _, _, extra = policy.compute_actions(obs)
        np.testing.assert_allclose(extra["action_dist_inputs"], _logits_now(policy, obs), rtol=1e-5, atol=1e-6)
    algo.stop()


def test_the_numpy_forward_follows_an_overriding_update_of_a_fused_optimizer():
    """The numpy MLP reads views of the parameters: an update the policy's own methods do not see (an overriding
    learn_on_batch stepping a fused optimizer) is seen all the same."""
    class OwnUpdate(PG.with_updates(name="OwnUpdatePG", optimizer_fn=_fused_adam)):
        def learn_on_batch(self, samples):
            return super().learn_on_batch(samples)

    class OwnAlgo(Algorithm):
        def get_default_policy_class(self, config):
            return OwnUpdate

    algo = OwnAlgo(config={"env": "CartPole-v1", "train_batch_size": 100, "seed": 3,
                           "logger_config": {"type": "none"}})
    policy = algo.get_policy()
    assert policy._numpy_forward() is not None
    obs = np.random.default_rng(0).normal(size=(1, 4)).astype(np.float32)
    for _ in range(2):
        algo.train()
        _, _, extra = policy.compute_actions(obs)
        np.testing.assert_allclose(extra["action_dist_inputs"], _logits_now(policy, obs), rtol=1e-5, atol=1e-6)
    algo.stop()


def test_the_default_optimizer_is_fused_and_the_numpy_forward_follows_it():
    algo = _algo()
    policy = algo.get_policy()
    assert all(group["fused"] for group in policy._optimizers[0].param_groups)
    obs = np.random.default_rng(1).normal(size=(1, 4)).astype(np.float32)
    for _ in range(2):
        algo.train()
        _, _, extra = policy.compute_actions(obs)
        np.testing.assert_allclose(extra["action_dist_inputs"], _logits_now(policy, obs), rtol=1e-5, atol=1e-6)
    algo.stop()
