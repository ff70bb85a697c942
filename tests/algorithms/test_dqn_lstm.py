"""DQN with use_lstm=True (R2D2-style): the module's stateful API, sequence replay with the sampler's stored state,
burn-in masking, and a bit-identical checkpoint resume."""
import numpy as np
import pytest
import torch
from gymnasium.wrappers import TimeLimit

from relayrl import Algorithm, DefaultModelConfig, DQNConfig
from relayrl.algorithms.dqn.default_dqn_rl_module import DefaultDQNTorchRLModule
from relayrl.algorithms.dqn.sequence_loss import put_initial_states, sequence_q_loss
from relayrl.env.registry import register_env
from relayrl.replay import EpisodeReplayBuffer, PrioritizedEpisodeReplayBuffer
from relayrl.testing import StatelessCartPole

register_env("StatelessCartPole40-dqn-lstm-test", lambda cfg: TimeLimit(StatelessCartPole(cfg), max_episode_steps=40))
CELL = 8


def lstm_dqn(**training):
    training = {"burn_in_len": 2, "train_batch_size": 8, "num_steps_sampled_before_learning_starts": 64,
                "training_intensity": None, "target_network_update_freq": 50, **training}
    return (DQNConfig().environment("StatelessCartPole40-dqn-lstm-test")
            .env_runners(num_envs_per_env_runner=2, rollout_fragment_length=7)
            .training(**training)
            .reporting(min_sample_timesteps_per_iteration=64)
            .rl_module(model_config=DefaultModelConfig(use_lstm=True, lstm_cell_size=CELL, fcnet_hiddens=[8],
                                                       head_fcnet_hiddens=[8], max_seq_len=6))
            .debugging(seed=3, logger_config={"type": "none"}))


def make_module(**model):
    from gymnasium.spaces import Box, Discrete

    cfg = {**dict(use_lstm=True, lstm_cell_size=CELL, fcnet_hiddens=[8], head_fcnet_hiddens=[8], max_seq_len=6,
                  dueling=True, double_q=True, burn_in_len=2), **model}
    return DefaultDQNTorchRLModule(observation_space=Box(-1, 1, (2,), np.float32), action_space=Discrete(2),
                                   model_config=cfg)


# -- the module ------------------------------------------------------------------------------------------------
def test_module_state_api_and_shapes():
    module = make_module()
    assert module.is_stateful()
    initial = module.get_initial_state()
    assert set(initial) == {"h", "c"} and initial["h"].shape == (1, CELL) and not initial["h"].any()
    torch.manual_seed(0)
    obs = torch.randn(3, 7, 2)
    state = {k: torch.randn(3, 1, CELL) for k in ("h", "c")}
    with torch.no_grad():
        whole = module.forward_train({"obs": obs, "state_in": state})
        assert whole["qf_preds"].shape == (3, 7, 2) and whole["state_out"]["h"].shape == (3, 1, CELL)
        # The runners' one step at a time, each feeding state_out back, gives the same Q-values and final state.
        step_state, q_steps = state, []
        for t in range(7):
            out = module.forward_exploration({"obs": obs[:, t:t + 1], "state_in": step_state})
            assert out["action_dist_inputs"].shape == (3, 1, 2)
            q_steps.append(out["action_dist_inputs"])
            step_state = out["state_out"]
        torch.testing.assert_close(torch.cat(q_steps, 1), whole["qf_preds"], rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(step_state["c"], whole["state_out"]["c"], rtol=1e-5, atol=1e-6)
        # Without state_in: the initial state.
        no_state = module.forward_inference({"obs": obs})
        zeros = {k: torch.zeros(3, 1, CELL) for k in ("h", "c")}
        torch.testing.assert_close(no_state["action_dist_inputs"],
                                   module.forward_inference({"obs": obs, "state_in": zeros})["action_dist_inputs"])
        module.make_target_networks()
        target = module.forward_target({"obs": obs, "state_in": state})
        torch.testing.assert_close(target["qf_preds"], whole["qf_preds"])  # fresh targets copy the online net


def test_burn_in_must_be_shorter_than_max_seq_len():
    with pytest.raises(ValueError, match="burn_in_len=6"):
        lstm_dqn(burn_in_len=6).validate()
    with pytest.raises(ValueError, match="burn_in_len=6"):
        make_module(burn_in_len=6)


# -- sequence replay -------------------------------------------------------------------------------------------
def sampled_chunks(num_samples=12):
    """Episode chunks from a real sampler (fragments of 7 steps, episodes up to 40: chunks start mid-episode),
    and for every observation the (episode id, t) it belongs to and the state the sampler had before that step."""
    algo = lstm_dqn().build_algo()
    try:
        chunks = [algo.env_runner.sample(num_timesteps=14) for _ in range(num_samples)]
        initial = algo.env_runner.module.get_initial_state()
    finally:
        algo.stop()
    recorded = {}  # obs bytes -> (episode id, t, state before the step)
    last_state = {}
    for batch in chunks:
        for ep in batch:
            outs = ep.get_extra_model_outputs("state_out")
            for j in range(len(ep)):
                t = ep.t_started + j
                before = initial if t == 0 else last_state[ep.id_]
                recorded[np.asarray(ep.get_observations(j), np.float32).tobytes()] = (ep.id_, t, before)
                last_state[ep.id_] = {k: np.asarray(v[j]) for k, v in outs.items()}
    return chunks, recorded


@pytest.mark.parametrize("buffer_class", [EpisodeReplayBuffer, PrioritizedEpisodeReplayBuffer])
def test_sequences_stay_in_one_episode_and_start_from_the_recorded_state(buffer_class):
    chunks, recorded = sampled_chunks()
    buffer = buffer_class(capacity=10_000, seed=0)
    for batch in chunks:
        buffer.add(batch)
    seq_len, n_step = 6, 2
    batch = buffer.sample(64, batch_length_T=seq_len, n_step=n_step, gamma=0.9)
    assert batch["obs"].shape == (64, seq_len + n_step, 2) and batch["actions"].shape == (64, seq_len)
    starts_mid_episode = 0
    for row in range(64):
        mask = batch["loss_mask"][row]
        num = int(mask.sum())
        assert num >= 1 and mask[:num].all() and not mask[num:].any()  # padding only at the end
        ids_t = [recorded[batch["obs"][row, k].tobytes()][:2] for k in range(num)]
        episode_id, t0 = ids_t[0]
        assert ids_t == [(episode_id, t0 + k) for k in range(num)]  # one episode, consecutive steps
        if num < seq_len:  # the episode ended (or has not gone on yet): zero padding past its next obs
            assert not batch["obs"][row, num + 1:].any() and not batch["actions"][row, num:].any()
        # The state before the sequence's first step is what the sampler had there.
        expected = recorded[batch["obs"][row, 0].tobytes()][2]
        if batch["state_is_initial"][row]:
            assert t0 == 0
        else:
            starts_mid_episode += t0 > 0
            for key in ("h", "c"):
                np.testing.assert_array_equal(batch["state_in"][key][row], expected[key])
    assert starts_mid_episode > 10  # the check above ran on many rows


def test_sequence_sampling_needs_a_stateful_modules_episodes():
    algo = lstm_dqn().rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[8])).build_algo()
    try:
        buffer = EpisodeReplayBuffer(capacity=1000)
        buffer.add(algo.env_runner.sample(num_timesteps=20))
        with pytest.raises(ValueError, match="stateful RLModule"):
            buffer.sample(4, batch_length_T=5)
        assert buffer.sample(4)["obs"].shape == (4, 2)  # single transitions still work
    finally:
        algo.stop()


# -- burn-in ---------------------------------------------------------------------------------------------------
class _Recorder:
    def keep_td_errors(self, *args):
        pass

    def log_stats(self, *args):
        pass


def _grads(module, config, batch):
    module.zero_grad()
    fwd = module.forward_train(batch)
    sequence_q_loss(_Recorder(), "default_policy", module, config, batch, fwd).backward()
    return {name: p.grad.clone() for name, p in module.named_parameters() if p.grad is not None}


def test_burn_in_steps_do_not_change_the_gradients():
    chunks, _ = sampled_chunks(6)
    buffer = EpisodeReplayBuffer(capacity=10_000, seed=1)
    for batch in chunks:
        buffer.add(batch)
    config = lstm_dqn()
    module = make_module()
    module.make_target_networks()
    numpy_batch = buffer.sample(16, batch_length_T=6, n_step=1, gamma=0.9)

    def as_tensors(value):
        return {k: as_tensors(v) for k, v in value.items()} if isinstance(value, dict) else torch.as_tensor(value)

    base = put_initial_states(module, as_tensors(numpy_batch))
    grads = _grads(module, config, base)
    # Other rewards and actions inside the burn-in window (steps 0, 1): the loss there is masked out.
    changed = {**base, "rewards": base["rewards"].clone(), "actions": base["actions"].clone()}
    changed["rewards"][:, :2] += 100.0
    changed["actions"][:, :2] = 1 - changed["actions"][:, :2]
    for name, grad in _grads(module, config, changed).items():
        torch.testing.assert_close(grad, grads[name], rtol=0, atol=0)
    # The same change after the burn-in does change them (the check above can fail).
    after = {**base, "rewards": base["rewards"].clone()}
    after["rewards"][:, 2:] += 100.0
    assert any(not torch.equal(g, grads[n]) for n, g in _grads(module, config, after).items())
    # No gradient reaches the burn-in steps' inputs: the LSTM only warms up there.
    obs = base["obs"].clone().requires_grad_(True)
    module.zero_grad()
    fwd = module.forward_train({**base, "obs": obs})
    sequence_q_loss(_Recorder(), "default_policy", module, config, {**base, "obs": obs}, fwd).backward()
    assert not obs.grad[:, :2].any() and obs.grad[:, 2:].abs().sum() > 0


# -- the algorithm ---------------------------------------------------------------------------------------------
def test_dqn_lstm_trains_and_resumes_bit_identically(tmp_path):
    algo = lstm_dqn(store_buffer_in_checkpoints=True).build_algo()
    for _ in range(3):
        result = algo.train()
    learner = result["learners"]["default_policy"]
    assert np.isfinite(learner["qf_loss"]) and learner["num_module_steps_trained"] > 0
    path = algo.save(str(tmp_path / "ckpt")).checkpoint.path
    r1 = [algo.train() for _ in range(2)]
    w1 = {k: v.clone() for k, v in algo.learner_group.get_module("default_policy").state_dict().items()}
    restored = Algorithm.from_checkpoint(path)
    r2 = [restored.train() for _ in range(2)]
    w2 = restored.learner_group.get_module("default_policy").state_dict()
    try:
        assert set(w1) == set(w2) and all(torch.equal(w1[k], w2[k]) for k in w1)
        for a, b in zip(r1, r2):
            assert a["learners"]["default_policy"]["qf_loss"] == b["learners"]["default_policy"]["qf_loss"]
    finally:
        algo.stop()
        restored.stop()


def test_compute_single_action_carries_the_state_and_multi_agent_is_refused():
    algo = lstm_dqn().build_algo()
    try:
        initial = algo.env_runner.module.get_initial_state()
        obs = np.float32([0.02, -0.03])
        action, state, extra = algo.compute_single_action(obs, state=initial, explore=False)
        assert state["h"].shape == (1, CELL) and np.abs(state["h"]).sum() > 0
        assert action == int(np.argmax(extra["action_dist_inputs"]))
        _, _, extra2 = algo.compute_single_action(obs, state=state, explore=False)
        assert not np.allclose(extra2["action_dist_inputs"], extra["action_dist_inputs"])
    finally:
        algo.stop()
    with pytest.raises(ValueError, match="Multi-agent DQN with use_lstm"):
        lstm_dqn().multi_agent(policies={"a", "b"}, policy_mapping_fn=lambda aid, *a, **k: "a").validate()


def test_one_update_is_one_gradient_step_on_all_sampled_sequences():
    algo = lstm_dqn().build_algo()
    try:
        algo.train()
        learner = algo.learner_group._learner
        seen = []
        original = learner._update
        learner._update = lambda batch: (seen.append(batch["default_policy"]["obs"].shape), original(batch))[1]
        algo.update_from_replay_buffer()
        assert seen == [(8, 6 + 3, 2)]  # train_batch_size sequences: max_seq_len steps + n_step (3) more obs
    finally:
        algo.stop()
