"""PPO's default module with use_lstm=True: the stateful API, state carried and reset by the sampler, and the
Learner's padded sequences giving exactly what the sampler computed (the classic padding bugs)."""
import copy

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.wrappers import TimeLimit

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.testing import StatelessCartPole
from relayrl.testing.learning import sample_and_learner_batch

OBS = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)


def lstm_module(action_space=gym.spaces.Discrete(2), observation_space=OBS, **model_config):
    cfg = dict(use_lstm=True, lstm_cell_size=8, fcnet_hiddens=[6], max_seq_len=4)
    cfg.update(model_config)
    return DefaultPPOTorchRLModule(observation_space=observation_space, action_space=action_space,
                                   inference_only=True, model_config=cfg)


# -- the module's stateful API -------------------------------------------------------------------------
@pytest.mark.parametrize("share", [True, False])
def test_initial_state_is_numpy_zeros_with_rllibs_shapes(share):
    module = lstm_module(vf_share_layers=share)
    assert module.is_stateful() and not module.inference_only  # runners compute the critic's state too
    state = module.get_initial_state()
    leaves = [state] if share else [state["actor"], state["critic"]]
    for leaf in leaves:
        assert set(leaf) == {"h", "c"}
        for value in leaf.values():
            assert isinstance(value, np.ndarray) and value.shape == (1, 8) and not value.any()


def test_a_module_without_lstm_is_not_stateful():
    module = DefaultPPOTorchRLModule(observation_space=OBS, action_space=gym.spaces.Discrete(2), model_config={})
    assert not module.is_stateful() and module.get_initial_state() == {}


@pytest.mark.parametrize("share", [True, False])
def test_one_sequence_equals_steps_with_the_state_carried_and_differs_if_it_is_zeroed(share):
    """The forward pass over (B, T) equals T one-step passes feeding state_out back as state_in."""
    torch.manual_seed(0)
    module = lstm_module(vf_share_layers=share)
    obs = torch.randn(3, 5, 2)
    state0 = module._state_in({Columns.OBS: obs})
    whole = module.forward_train({Columns.OBS: obs, Columns.STATE_IN: state0})
    state, logits, values = state0, [], []
    for t in range(5):
        step = {Columns.OBS: obs[:, t:t + 1], Columns.STATE_IN: state}
        out = module.forward_train(step)
        logits.append(out[Columns.ACTION_DIST_INPUTS])
        values.append(module.compute_values(step))
        state = out[Columns.STATE_OUT]
    torch.testing.assert_close(whole[Columns.ACTION_DIST_INPUTS], torch.cat(logits, 1))
    torch.testing.assert_close(module.compute_values({Columns.OBS: obs, Columns.STATE_IN: state0}), torch.cat(values, 1))
    torch.testing.assert_close(whole[Columns.STATE_OUT], state)
    # The bug this guards against: a state zeroed at step 2 changes the outputs from there on.
    zeroed = module.forward_train({Columns.OBS: obs[:, 2:], Columns.STATE_IN: state0})[Columns.ACTION_DIST_INPUTS]
    assert not torch.allclose(zeroed, whole[Columns.ACTION_DIST_INPUTS][:, 2:], atol=1e-4)


def test_box_actions_and_image_observations():
    box = lstm_module(action_space=gym.spaces.Box(-1.0, 1.0, (3,), np.float32))
    out = box.forward_exploration({Columns.OBS: torch.zeros(2, 1, 2)})
    assert out[Columns.ACTION_DIST_INPUTS].shape == (2, 1, 6) and out[Columns.STATE_OUT]["h"].shape == (2, 1, 8)
    images = gym.spaces.Box(0, 255, (10, 10, 3), np.uint8)
    cnn = lstm_module(observation_space=images)
    assert any(isinstance(layer, torch.nn.Conv2d) for layer in cnn.encoder.tokenizer)  # a CNN, then the LSTM
    out = cnn.forward_train({Columns.OBS: torch.zeros(2, 3, 10, 10, 3, dtype=torch.uint8)})
    assert out[Columns.ACTION_DIST_INPUTS].shape == (2, 3, 2) and out[Columns.EMBEDDINGS].shape == (2, 3, 8)


def test_lstm_initializers_reach_both_weights_and_both_biases():
    module = lstm_module(lstm_kernel_initializer="zeros_", lstm_bias_initializer="constant_",
                         lstm_bias_initializer_kwargs={"val": 0.5})
    lstm = module.encoder.lstm
    assert not lstm.weight_ih_l0.any() and not lstm.weight_hh_l0.any()
    assert torch.all(lstm.bias_ih_l0 == 0.5) and torch.all(lstm.bias_hh_l0 == 0.5)


def test_prev_action_and_reward_options_raise_with_a_fix():
    with pytest.raises(ValueError, match="lstm_use_prev_action=True is not supported"):
        lstm_module(lstm_use_prev_action=True)


# -- sampler and Learner together: the classic padding bugs --------------------------------------------
def stateless_cartpole(config):
    return TimeLimit(StatelessCartPole(config), max_episode_steps=40)


def lstm_config(**model_config):
    cfg = dict(use_lstm=True, lstm_cell_size=16, fcnet_hiddens=[16], max_seq_len=5, vf_share_layers=True)
    cfg.update(model_config)
    return (PPOConfig().environment(stateless_cartpole)
            # Fragments of 7 steps, sequences of 5, episodes of 9-40 steps: sequences end inside fragments,
            # episodes end inside sequences, and most fragments start in the middle of an episode.
            .env_runners(num_envs_per_env_runner=3, rollout_fragment_length=7)
            .training(train_batch_size=21, minibatch_size=21)
            .rl_module(model_config=DefaultModelConfig(**cfg)).debugging(seed=3))


def sample_and_batch(config, fragments: int):
    episodes, batch, module = sample_and_learner_batch(config, fragments)
    return episodes, batch[DEFAULT_MODULE_ID], module[DEFAULT_MODULE_ID]


@pytest.mark.parametrize("numpy_inference", [True, False])  # the runner's state fast path, and the pipelines
@pytest.mark.parametrize("share", [True, False])
def test_learner_sequences_recompute_exactly_what_the_sampler_computed(share, numpy_inference):
    """Every real step's logits and log-probs, recomputed by the Learner from whole zero-padded sequences and
    the stored per-sequence state, equal the sampler's, one step at a time. A state zeroed inside a sequence,
    a sequence crossing an episode boundary, a fragment starting mid-episode from the initial state, or a
    state not reset at an episode start would each change them."""
    config = lstm_config(vf_share_layers=share).env_runners(numpy_inference=numpy_inference)
    episodes, batch, module = sample_and_batch(config, fragments=6)
    mid_episode = [ep for ep in episodes if ep.t_started > 0]
    ended = [ep for ep in episodes if ep.is_done]
    assert mid_episode and ended  # the cases the test is about occur
    mask = batch[Columns.LOSS_MASK].bool()
    assert mask.shape == batch[Columns.OBS].shape[:2] and (~mask).any()  # padded sequences of 5
    h_in = batch[Columns.STATE_IN]["h"] if share else batch[Columns.STATE_IN]["actor"]["h"]
    assert (h_in.abs().sum((1, 2)) > 0).any() and (h_in.abs().sum((1, 2)) == 0).any()
    with torch.no_grad():
        out = module.forward_train(batch)
    torch.testing.assert_close(out[Columns.ACTION_DIST_INPUTS][mask], batch[Columns.ACTION_DIST_INPUTS][mask])
    logp = module.get_train_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS]).logp(batch[Columns.ACTIONS])
    torch.testing.assert_close(logp[mask], batch[Columns.ACTION_LOGP][mask])


def test_the_bootstrap_value_of_a_cut_fragment_continues_the_episodes_state():
    """The value of a fragment's last observation (the artificial step GAE bootstraps from) equals the value
    of an LSTM run from the episode's start through every observation up to it."""
    config = lstm_config(vf_share_layers=True).env_runners(rollout_fragment_length=3).training(
        train_batch_size=9, minibatch_size=9)  # short fragments: the state they start from still matters
    algo = config.build_algo()
    try:
        runner, module = algo.env_runner, algo.learner_group._learner.module[DEFAULT_MODULE_ID]
        whole = {}  # episode id -> all observations so far
        for _ in range(4):
            for chunk in runner.sample():
                observations = list(chunk.get_observations(slice(0, len(chunk) + 1)))
                whole[chunk.id_] = whole.get(chunk.id_, [])[:-1] + observations
                if chunk.is_done or chunk.t_started == 0:
                    continue
                # A fragment cut mid-episode: its bootstrap value from the Learner's batch ...
                batch = algo.learner_group._learner._learner_connector(
                    rl_module=algo.learner_group._learner.module, batch={}, episodes=[copy.deepcopy(chunk)])
                b = batch[DEFAULT_MODULE_ID]
                with torch.no_grad():
                    values = module.compute_values(b)
                bootstrap = values.reshape(-1)[len(chunk)]  # row-major: the step right after the last real one
                # ... equals the value after running the whole episode from its start.
                obs = torch.as_tensor(np.stack(whole[chunk.id_]))[None]
                with torch.no_grad():
                    reference = module.compute_values({Columns.OBS: obs})[0, -1]
                torch.testing.assert_close(bootstrap, reference, rtol=1e-4, atol=1e-5)
                # The bug it guards against: the fragment's state lost (started from the initial state).
                with torch.no_grad():
                    lost = module.compute_values({Columns.OBS: obs[:, -len(chunk) - 1:]})[0, -1]
                assert abs(float(lost - reference)) > 1e-4
                return
        pytest.fail("no fragment was cut in the middle of an episode")
    finally:
        algo.stop()


def test_sampled_state_resets_at_episode_starts_and_is_carried_otherwise():
    algo = lstm_config().build_algo()
    try:
        runner = algo.env_runner
        chunks = runner.sample() + runner.sample()
        starts = [ep for ep in chunks if ep.t_started == 0 and len(ep)]
        assert starts
        module = runner.module
        for ep in starts:  # the first state_out comes from the initial state and the first observation
            first = {Columns.OBS: torch.as_tensor(ep.get_observations(0))[None, None],
                     Columns.STATE_IN: {k: torch.as_tensor(v)[None] for k, v in module.get_initial_state().items()}}
            with torch.no_grad():
                expected = module.forward_inference(first)[Columns.STATE_OUT]["h"][0]
            np.testing.assert_allclose(ep.get_extra_model_outputs(Columns.STATE_OUT, 0)["h"], expected.numpy(),
                                       rtol=1e-5, atol=1e-6)
    finally:
        algo.stop()


def test_two_chunks_of_one_episode_are_padded_apart_in_nested_columns_too():
    """A separate critic's state_out column is {"actor": {"h", "c"}, "critic": {...}}: its rows are split by
    chunk like every other column (a sequence running from one chunk into the next would shift the batch)."""
    from relayrl.connectors.common.add_time_dim_to_batch_and_zero_pad import _pad_chunks

    rows = np.arange(7, dtype=np.float32)[:, None]
    nested = {"actor": {"h": rows, "c": rows}, "critic": {"h": rows, "c": rows}}
    padded, lens = _pad_chunks(nested, [2, 5], seq_len=3)
    np.testing.assert_array_equal(lens, [2, 3, 2])
    np.testing.assert_array_equal(padded["critic"]["h"][..., 0], [[0, 1, 0], [2, 3, 4], [5, 6, 0]])
    flat, flat_lens = _pad_chunks(rows, [2, 5], seq_len=3)
    np.testing.assert_array_equal(flat_lens, [2, 3, 2])
    np.testing.assert_array_equal(flat[..., 0], [[0, 1, 0], [2, 3, 4], [5, 6, 0]])
