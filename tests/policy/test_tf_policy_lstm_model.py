"""`"use_lstm": True` for TF template policies (tf_lstm_wrapper.py): the torch wrapper's layouts and sequence
training, eager and traced. Skipped without TensorFlow (CI installs it)."""
import gymnasium as gym
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from examples.policy_gradient_tf_policy import MyAlgo, policy_gradient_loss  # noqa: E402
from relayrl.policy.models.catalog import ModelCatalog  # noqa: E402
from relayrl.policy.models.tf_lstm_wrapper import TFLSTMWrapper  # noqa: E402
from relayrl.policy.postprocessing import Postprocessing  # noqa: E402
from relayrl.policy.rnn_sequencing import chop_into_sequences  # noqa: E402
from relayrl.policy.sample_batch import SampleBatch  # noqa: E402
from relayrl.testing.example_envs import StatelessCartPole  # noqa: E402

OBS = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
ACT = gym.spaces.Discrete(2)
LSTM = {"use_lstm": True, "lstm_cell_size": 8, "fcnet_hiddens": [16], "max_seq_len": 4,
        "lstm_use_prev_action": True, "lstm_use_prev_reward": True}


def test_tf_forward_on_sequences_equals_step_by_step():
    model = ModelCatalog.get_model_v2(OBS, ACT, 2, LSTM, framework="tf2")
    assert isinstance(model, TFLSTMWrapper) and [s.shape for s in model.get_initial_state()] == [(8,), (8,)]
    seq_lens = np.array([4, 2, 3], np.int32)
    rng = np.random.default_rng(0)
    n = int(seq_lens.sum())
    columns = {"obs": rng.uniform(-1, 1, (n, 3)).astype(np.float32), "prev_actions": rng.integers(0, 2, n),
               "prev_rewards": rng.normal(size=n).astype(np.float32)}
    h0, c0 = (rng.normal(size=(3, 8)).astype(np.float32) for _ in range(2))
    logits, (h, c) = model(columns, [h0, c0], seq_lens)
    values = model.value_function().numpy()
    expected, expected_values, expected_h = [], [], []
    start = 0
    for i, length in enumerate(seq_lens):
        state = [h0[i:i + 1], c0[i:i + 1]]
        for row in range(start, start + length):
            out, state = model({k: v[row:row + 1] for k, v in columns.items()}, state, np.ones(1, np.int32))
            expected.append(out.numpy())
            expected_values.append(model.value_function().numpy())
        expected_h.append(state[0].numpy())
        start += length
    np.testing.assert_allclose(logits.numpy(), np.concatenate(expected), atol=1e-6)
    np.testing.assert_allclose(values, np.concatenate(expected_values), atol=1e-6)
    np.testing.assert_allclose(h.numpy(), np.concatenate(expected_h), atol=1e-6)
    padded, _, padded_lens = chop_into_sequences(feature_columns=list(columns.values()), state_columns=[],
                                                 max_seq_len=4, episode_ids=np.repeat([1, 2, 3], seq_lens))
    padded_logits, _ = model(dict(zip(columns, padded)), [h0, c0], padded_lens)
    real = (np.arange(4)[None] < seq_lens[:, None]).reshape(-1)
    assert padded_logits.shape == (12, 2)
    np.testing.assert_allclose(padded_logits.numpy()[real], logits.numpy(), atol=1e-6)


@pytest.mark.parametrize("eager_tracing", [False, True])
def test_tf_learn_on_batch_trains_on_sequences_and_the_pg_loss_sees_only_real_rows(eager_tracing):
    algo = MyAlgo(config={"env": StatelessCartPole, "framework": "tf2", "lr": 0.01, "train_batch_size": 200,
                          "seed": 0, "eager_tracing": eager_tracing, "model": LSTM, "logger_config": {"type": "none"}})
    try:
        batch = algo.workers.local_worker().sample()
        policy = algo.get_policy()
        assert policy._numpy_forward() is None and policy.num_state_tensors() == 2
        starts = batch["t"] == 0
        assert not batch["state_in_0"][starts].any() and batch["state_out_0"][starts].any()
        for eps_id in np.unique(batch["eps_id"]):
            rows = np.flatnonzero(batch["eps_id"] == eps_id)
            np.testing.assert_array_equal(batch["state_out_1"][rows[:-1]], batch["state_in_1"][rows[1:]])
        seen = {}

        def recording_loss(policy, model, dist_class, train_batch):
            logits, _ = model.from_batch(train_batch)
            seen["logit_rows"] = logits.shape[0] if logits.shape[0] is not None else "symbolic"
            return policy_gradient_loss(policy, model, dist_class, train_batch)

        policy._loss = recording_loss
        expected = []
        for eps_id in np.unique(batch["eps_id"]):  # the seed's loss, unrolled by hand over whole episodes
            rows = batch["eps_id"] == eps_id
            logits, _ = policy.model({k: batch[k][rows] for k in ("obs", "prev_actions", "prev_rewards")},
                                     [batch["state_in_0"][rows][:1], batch["state_in_1"][rows][:1]],
                                     np.array([rows.sum()], np.int32))
            logp = policy.dist_class(logits, policy.model).logp(batch["actions"][rows]).numpy()
            expected.append(logp * batch[Postprocessing.ADVANTAGES][rows])
        expected_loss = -float(np.concatenate(expected).mean())
        grads, _ = policy.compute_gradients(batch)
        weights = policy.get_weights()
        policy.learn_on_batch(batch)
    finally:
        algo.stop()
    if not eager_tracing:
        assert seen["logit_rows"] == batch.count  # no padded rows reach the loss
    names = list(policy.model.trainable_variables(as_dict=True))
    grads = dict(zip(names, grads))
    assert grads["lstm/0"] is not None and np.abs(grads["lstm/0"]).sum() > 0  # gradients flow through the unroll
    assert all(np.isfinite(g).all() for g in grads.values() if g is not None)
    assert any(not np.array_equal(weights[k], v) for k, v in policy.get_weights().items())
    # the same loss value through the policy's batch of sequences (its row-mean over the real steps)
    train_batch = policy._as_sequences(batch)
    assert train_batch.count == batch.count and len(train_batch[SampleBatch.SEQ_LENS]) > batch.count / 4
    policy.set_weights(weights)
    loss = policy_gradient_loss(policy, policy.model, policy.dist_class,
                                SampleBatch({k: v for k, v in train_batch.items() if k != "infos"}))
    assert float(loss) == pytest.approx(expected_loss, rel=1e-5)


def test_tf_ppo_masked_mean_takes_every_row_of_the_unpadded_layout():
    from relayrl.algorithms.ppo.ppo_tf_policy import _masked_mean

    rows = tf.range(10, dtype=tf.float32)
    state = [tf.zeros((2, 8))]
    unpadded = {SampleBatch.SEQ_LENS: tf.constant([4, 6])}
    assert float(_masked_mean(unpadded, tf.zeros((10, 2)), state)(rows)) == pytest.approx(4.5)
    padded = {SampleBatch.SEQ_LENS: tf.constant([3, 5])}
    assert float(_masked_mean(padded, tf.zeros((10, 2)), state)(rows)) == pytest.approx(38 / 8)
    unpadded_odd = {SampleBatch.SEQ_LENS: tf.constant([4, 3])}  # 7 rows: not a multiple of 2 sequences
    assert float(_masked_mean(unpadded_odd, tf.zeros((7, 2)), state)(rows[:7])) == pytest.approx(3.0)
