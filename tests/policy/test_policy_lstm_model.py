"""The Policy API's recurrent default model: `"model": {"use_lstm": True}` (catalog.py, lstm_wrapper.py,
torch_sequences.py, rnn_sequencing.py): shapes, state flow through the runners, sequence training."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from examples.policy_gradient_custom_policy import MyAlgo, MyTorchPolicy, policy_gradient_loss
from relayrl.policy.models.catalog import ModelCatalog
from relayrl.policy.models.lstm_wrapper import LSTMWrapper
from relayrl.policy.postprocessing import Postprocessing
from relayrl.policy.rnn_sequencing import add_seq_lens, chop_into_sequences, sequence_lengths
from relayrl.policy.sample_batch import SampleBatch, concat_samples
from relayrl.testing.example_envs import StatelessCartPole

OBS = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
ACT = gym.spaces.Discrete(2)
LSTM = {"use_lstm": True, "lstm_cell_size": 8, "fcnet_hiddens": [16], "max_seq_len": 4}


def _model(**options) -> LSTMWrapper:
    torch.manual_seed(0)
    return ModelCatalog.get_model_v2(OBS, ACT, 2, {**LSTM, **options}, framework="torch")


def test_use_lstm_builds_the_wrapper_with_zero_state_and_no_numpy_fast_path():
    policy = MyTorchPolicy(OBS, ACT, {"model": LSTM})
    assert isinstance(policy.model, LSTMWrapper)
    assert policy.is_recurrent() and policy.num_state_tensors() == 2
    h, c = policy.get_initial_state()
    assert h.shape == c.shape == (8,) and not h.any() and not c.any()
    obs = np.zeros((5, 3), np.float32)
    state = [np.zeros((5, 8), np.float32)] * 2
    actions, state_out, extra = policy.compute_actions(obs, state)
    assert actions.shape == (5,) and [s.shape for s in state_out] == [(5, 8), (5, 8)]
    assert extra[SampleBatch.ACTION_DIST_INPUTS].shape == (5, 2)
    assert policy.model.value_function().shape == (5,)
    assert policy._numpy_forward() is None  # the numpy MLP path would drop the LSTM
    assert MyTorchPolicy(OBS, ACT, {})._numpy_forward() is not None


@pytest.mark.parametrize("options", [{}, {"lstm_use_prev_action": True, "lstm_use_prev_reward": True}])
def test_forward_on_sequences_equals_step_by_step(options):
    """Unpadded rows with seq_lens, and RLlib's padded layout, give the outputs, values and final states of
    running the model one step at a time from each sequence's initial state."""
    model = _model(**options)
    seq_lens = np.array([4, 2, 3], np.int32)
    rng = np.random.default_rng(0)
    n = int(seq_lens.sum())
    obs = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    prev_actions = rng.integers(0, 2, n)
    prev_rewards = rng.normal(size=n).astype(np.float32)
    h0, c0 = (rng.normal(size=(3, 8)).astype(np.float32) for _ in range(2))

    def inputs(rows):
        return {"obs": torch.from_numpy(obs[rows]), "prev_actions": torch.from_numpy(prev_actions[rows]),
                "prev_rewards": torch.from_numpy(prev_rewards[rows])}

    with torch.no_grad():
        logits, (h, c) = model(inputs(slice(None)), [torch.from_numpy(h0), torch.from_numpy(c0)], seq_lens)
        values = model.value_function()
        expected_logits, expected_values, expected_h = [], [], []
        start = 0
        for i, length in enumerate(seq_lens):
            state = [torch.from_numpy(h0[i:i + 1]), torch.from_numpy(c0[i:i + 1])]
            for row in range(start, start + length):
                out, state = model(inputs(slice(row, row + 1)), state, np.ones(1, np.int32))
                expected_logits.append(out)
                expected_values.append(model.value_function())
            expected_h.append(state[0])
            start += length
        padded, initial, padded_lens = chop_into_sequences(
            feature_columns=[obs, prev_actions, prev_rewards], state_columns=[np.zeros((n, 8), np.float32)] * 2,
            max_seq_len=4, episode_ids=np.repeat([7, 8, 9], seq_lens))
        padded_logits, _ = model({"obs": torch.from_numpy(padded[0]), "prev_actions": torch.from_numpy(padded[1]),
                                  "prev_rewards": torch.from_numpy(padded[2])},
                                 [torch.from_numpy(h0), torch.from_numpy(c0)], padded_lens)
    assert logits.shape == (n, 2) and values.shape == (n,) and h.shape == c.shape == (3, 8)
    torch.testing.assert_close(logits, torch.cat(expected_logits), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(values, torch.cat(expected_values), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(h, torch.cat(expected_h), atol=1e-6, rtol=1e-5)
    assert list(padded_lens) == [4, 2, 3] and padded_logits.shape == (3 * 4, 2)
    real = (np.arange(4)[None] < seq_lens[:, None]).reshape(-1)
    torch.testing.assert_close(padded_logits[torch.from_numpy(real)], logits, atol=1e-6, rtol=1e-5)


def test_sequences_split_at_trajectories_and_max_seq_len():
    assert list(sequence_lengths(11, 4, episode_ids=[1] * 6 + [2] * 5)) == [4, 2, 4, 1]
    assert list(sequence_lengths(6, 4, episode_ids=[1] * 6, unroll_ids=[0, 0, 0, 5, 5, 5])) == [3, 3]
    state = np.arange(11, dtype=np.float32)[:, None]
    batch = SampleBatch({"obs": np.zeros((11, 3), np.float32), "eps_id": [1] * 6 + [2] * 5,
                         "state_in_0": state, "state_in_1": -state})
    sequences = add_seq_lens(batch, 4)
    assert sequences.count == 11 and len(sequences["obs"]) == 11  # the rows are not padded
    assert list(sequences["seq_lens"]) == [4, 2, 4, 1]
    assert list(sequences["state_in_0"][:, 0]) == [0, 4, 6, 10] and list(sequences["state_in_1"][:, 0]) == [0, -4, -6, -10]
    with pytest.raises(KeyError, match="state_in_0"):
        add_seq_lens(SampleBatch({"obs": np.zeros((3, 3))}), 4)


def _lstm_algo(**config):
    return MyAlgo(config={"env": StatelessCartPole, "lr": 0.0004, "train_batch_size": 200, "seed": 0,
                          "model": {**LSTM, "lstm_use_prev_action": True, "lstm_use_prev_reward": True},
                          "logger_config": {"type": "none"}, **config})


@pytest.mark.parametrize("num_envs", [1, 2])
def test_state_flows_through_the_runner_and_resets_at_episode_starts(num_envs):
    algo = _lstm_algo(num_envs_per_env_runner=num_envs)
    try:
        runner = algo.workers.local_worker()
        batch = concat_samples([runner.sample(), runner.sample()])  # episodes go on across the cut
        policy = algo.get_policy()
    finally:
        algo.stop()
    assert {f"state_in_{i}" for i in range(2)} | {f"state_out_{i}" for i in range(2)} <= set(batch)
    starts = batch["t"] == 0
    assert starts.sum() >= 2 and not batch["state_in_0"][starts].any() and not batch["state_in_1"][starts].any()
    assert batch["state_out_0"][starts].any()  # the model does change the state
    checked = 0
    for eps_id in np.unique(batch["eps_id"]):
        rows = np.flatnonzero(batch["eps_id"] == eps_id)
        rows = rows[np.argsort(batch["t"][rows])]
        assert (np.diff(batch["t"][rows]) == 1).all()
        for key in ("0", "1"):
            np.testing.assert_array_equal(batch["state_out_" + key][rows[:-1]], batch["state_in_" + key][rows[1:]])
        checked += len(rows) - 1
    assert checked > 150
    # state_out at t is the model's update of state_in at t (with that step's obs, prev action and reward)
    with torch.no_grad():
        _, (h, c) = policy.model({k: torch.as_tensor(batch[k]) for k in ("obs", "prev_actions", "prev_rewards")},
                                 [torch.as_tensor(batch["state_in_0"]), torch.as_tensor(batch["state_in_1"])])
    np.testing.assert_allclose(h.numpy(), batch["state_out_0"], atol=1e-5)
    np.testing.assert_allclose(c.numpy(), batch["state_out_1"], atol=1e-5)


def test_learn_on_batch_trains_on_sequences_and_the_pg_loss_sees_only_real_rows():
    algo = _lstm_algo()
    try:
        batch = algo.workers.local_worker().sample()
        policy = algo.get_policy()
        seen = {}

        def recording_loss(policy, model, dist_class, train_batch):
            seen["rows"] = len(train_batch[SampleBatch.ACTIONS])
            seen["seq_lens"] = train_batch[SampleBatch.SEQ_LENS].numpy().copy()
            loss = policy_gradient_loss(policy, model, dist_class, train_batch)
            seen["loss"] = float(loss.detach())
            return loss

        policy._loss = recording_loss
        weights = policy.get_weights()
        # the seed's loss, unrolled by hand from each episode's zero state over all of its steps
        with torch.no_grad():
            expected = []
            for eps_id in np.unique(batch["eps_id"]):
                rows = batch["eps_id"] == eps_id
                state = [torch.as_tensor(batch[f"state_in_{i}"][rows][:1]) for i in range(2)]
                logits, _ = policy.model({k: torch.as_tensor(batch[k][rows])
                                          for k in ("obs", "prev_actions", "prev_rewards")}, state,
                                         np.array([rows.sum()], np.int32))
                logp = policy.dist_class(logits, policy.model).logp(torch.as_tensor(batch["actions"][rows]))
                expected.append(logp * torch.as_tensor(batch[Postprocessing.ADVANTAGES][rows]))
            expected_loss = -float(torch.cat(expected).mean())
        policy.learn_on_batch(batch)
    finally:
        algo.stop()
    assert seen["rows"] == batch.count  # no padded rows reach the loss
    assert seen["seq_lens"].sum() == batch.count and seen["seq_lens"].max() <= LSTM["max_seq_len"]
    assert len(seen["seq_lens"]) > batch.count / LSTM["max_seq_len"]  # cut at episodes and at max_seq_len
    assert seen["loss"] == pytest.approx(expected_loss, rel=1e-5)
    assert any(not np.array_equal(weights[k], v) for k, v in policy.get_weights().items())


@pytest.mark.parametrize("options, match", [
    ({"max_seq_len": 0}, "max_seq_len=0"), ({"max_seq_len": -3}, "max_seq_len=-3"),
    ({"max_seq_len": 2.5}, "max_seq_len=2.5"), ({"lstm_cell_size": 0}, "lstm_cell_size=0"),
    ({"custom_model": "anything"}, "custom_model"), ({"use_attention": True}, "use_attention"),
])
def test_bad_lstm_options_raise_clear_errors(options, match):
    with pytest.raises(ValueError, match=match):
        _model(**options)


def test_an_unknown_framework_names_what_works():
    with pytest.raises(ValueError, match="'torch' or 'tf2'"):
        ModelCatalog.get_model_v2(OBS, ACT, 2, LSTM, framework="jax")


def test_missing_state_or_prev_action_raise_clear_errors():
    model = _model(lstm_use_prev_action=True)
    with pytest.raises(ValueError, match="state"):
        model({"obs": torch.zeros(2, 3), "prev_actions": torch.zeros(2)}, [])
    with pytest.raises(KeyError, match="prev_actions"):
        model({"obs": torch.zeros(2, 3)}, [torch.zeros(2, 8), torch.zeros(2, 8)])
    with pytest.raises(ValueError, match="seq_lens"):
        model({"obs": torch.zeros(5, 3), "prev_actions": torch.zeros(5)}, [torch.zeros(2, 8)] * 2, np.array([2, 2]))


def _steps_to(threshold: float, budget: int, model: dict, seed: int = 0):
    """Env steps at which the seed's PG policy's mean return first reaches `threshold` (None within `budget`),
    and the best mean return seen."""
    algo = MyAlgo(config={"env": StatelessCartPole, "lr": 0.01, "train_batch_size": 200, "seed": seed,
                          "model": model, "logger_config": {"type": "none"}})
    best = 0.0
    try:
        while True:
            result = algo.train()
            steps = result["num_env_steps_sampled_lifetime"]
            best = max(best, result["env_runners"]["episode_return_mean"])
            if best >= threshold:
                return steps, best
            if steps >= budget:
                return None, best
    finally:
        algo.stop()


@pytest.mark.slow
def test_the_lstm_learns_stateless_cartpole_where_the_mlp_does_not():
    """StatelessCartPole hides the velocities: the seed's PG policy with the LSTM (seed 0) reaches a mean return
    of 80 at ~62,000 env steps (measured), the same policy with the MLP stays near 55 (best 54.9 over 200,000
    steps). 36 s at a load average of ~2."""
    fc = {"fcnet_hiddens": [32]}
    lstm_steps, lstm_best = _steps_to(80.0, 80_000, {**fc, "use_lstm": True, "lstm_cell_size": 32,
                                                     "max_seq_len": 20, "lstm_use_prev_action": True})
    mlp_steps, mlp_best = _steps_to(80.0, 80_000, fc)
    assert lstm_steps is not None, f"the LSTM's best mean return within 80,000 env steps: {lstm_best:.1f}"
    assert mlp_steps is None and mlp_best < 70, f"the MLP reached {mlp_best:.1f} at {mlp_steps} env steps"


def test_multi_agent_sequences_split_per_agent_and_the_state_flows_per_agent():
    from relayrl.testing.multi_agent_example_envs import MultiAgentStatelessCartPole

    assert list(sequence_lengths(6, 20, episode_ids=[3] * 6, agent_indices=[0, 0, 0, 1, 1, 1])) == [3, 3]
    algo = MyAlgo(config={"env": MultiAgentStatelessCartPole, "env_config": {"num_agents": 2}, "seed": 0,
                          "train_batch_size": 200, "model": LSTM, "logger_config": {"type": "none"},
                          "multiagent": {"policies": {"default_policy"},
                                         "policy_mapping_fn": lambda agent_id, *args, **kwargs: "default_policy"}})
    try:
        batch = algo.workers.local_worker().sample()
        batch = getattr(batch, "policy_batches", {"default_policy": batch})["default_policy"]
        checked = 0
        for eps_id in np.unique(batch["eps_id"]):
            for agent in (0, 1):
                rows = np.flatnonzero((batch["eps_id"] == eps_id) & (batch["agent_index"] == agent))
                rows = rows[np.argsort(batch["t"][rows])]
                np.testing.assert_array_equal(batch["state_out_0"][rows[:-1]], batch["state_in_0"][rows[1:]])
                checked += max(len(rows) - 1, 0)
        assert checked > 100 and set(np.unique(batch["agent_index"])) == {0, 1}
        assert algo.get_policy().learn_on_batch(batch)["num_grad_updates"] == 1
    finally:
        algo.stop()


def test_a_custom_recurrent_model_still_trains_on_rows_with_their_own_state():
    """Only models with trains_on_sequences (the use_lstm wrapper) get seq_lens; a custom recurrent model keeps
    getting one recorded state per row, as before."""
    from torch import nn

    from relayrl.policy.models.modelv2 import TorchModelV2
    from relayrl.policy.policy_template import build_policy_class

    seen = {}

    class Memory(TorchModelV2, nn.Module):
        def __init__(self, obs_space, action_space, num_outputs, model_config, name):
            TorchModelV2.__init__(self, obs_space, action_space, num_outputs, model_config, name)
            nn.Module.__init__(self)
            self.linear = nn.Linear(3 + 1, num_outputs)

        def get_initial_state(self):
            return [torch.zeros(1)]

        def forward(self, input_dict, state, seq_lens):
            seen["rows"], seen["states"], seen["seq_lens"] = len(input_dict["obs_flat"]), len(state[0]), seq_lens
            return self.linear(torch.cat([input_dict["obs_flat"], state[0]], 1)), [state[0] + 1]

    ModelCatalog.register_custom_model("lstm_test_memory", Memory)
    policy = build_policy_class("MemoryPG", "torch", loss_fn=policy_gradient_loss)(
        OBS, ACT, {"model": {"custom_model": "lstm_test_memory"}})
    batch = SampleBatch({"obs": np.zeros((6, 3), np.float32), "actions": np.zeros(6, np.int64),
                         "advantages": np.ones(6, np.float32), "eps_id": [1] * 6,
                         "state_in_0": np.arange(6, dtype=np.float32)[:, None]})
    policy.learn_on_batch(batch)
    assert seen == {"rows": 6, "states": 6, "seq_lens": None}


def test_ppo_policy_with_the_lstm_averages_over_every_real_row():
    """PPO's loss masks RLlib's padded layout; the LSTM's unpadded batch (sum(seq_lens) rows) needs no mask,
    also when the rows happen to divide evenly by the number of sequences."""
    from relayrl.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy, _masked_mean

    rows = torch.arange(10, dtype=torch.float32)
    unpadded = {SampleBatch.SEQ_LENS: torch.tensor([4, 6])}
    assert float(_masked_mean(unpadded, torch.zeros(10, 2), [torch.zeros(2, 8)])(rows)) == pytest.approx(4.5)
    padded = {SampleBatch.SEQ_LENS: torch.tensor([3, 5])}  # 2 x 5 rows, the first sequence padded by 2
    assert float(_masked_mean(padded, torch.zeros(10, 2), [torch.zeros(2, 8)])(rows)) == pytest.approx(
        (0 + 1 + 2 + 5 + 6 + 7 + 8 + 9) / 8)

    class PPOPolicyAlgo(MyAlgo):
        def get_default_policy_class(self, config):
            return PPOTorchPolicy

    algo = PPOPolicyAlgo(config={"env": StatelessCartPole, "train_batch_size": 200, "seed": 0, "model": LSTM,
                                 "logger_config": {"type": "none"}})
    try:
        policy = algo.get_policy()
        weights = policy.get_weights()
        algo.train()
        assert isinstance(policy.model, LSTMWrapper) and policy.num_grad_updates > 0
        assert any(not np.array_equal(weights[k], v) for k, v in policy.get_weights().items())
    finally:
        algo.stop()
