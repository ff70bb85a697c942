"""A PPO with use_lstm=True through the Algorithm's API: compute_single_action / compute_actions with state,
bit-identical resume with the ongoing episodes' state, evaluation runners."""
import numpy as np
import torch
from gymnasium.wrappers import TimeLimit

from relayrl import Algorithm, DefaultModelConfig, PPOConfig
from relayrl.env.registry import register_env
from relayrl.testing import StatelessCartPole
from relayrl.testing.compare import assert_same_tree

register_env("StatelessCartPole40-lstm-test", lambda cfg: TimeLimit(StatelessCartPole(cfg), max_episode_steps=40))


def lstm_ppo(**env_runners):
    return (PPOConfig().environment("StatelessCartPole40-lstm-test")
            .env_runners(num_envs_per_env_runner=2, rollout_fragment_length=16, **env_runners)
            .training(train_batch_size=64, minibatch_size=32, num_epochs=2)
            .rl_module(model_config=DefaultModelConfig(use_lstm=True, lstm_cell_size=8, fcnet_hiddens=[8],
                                                       max_seq_len=5, vf_share_layers=True))
            .debugging(seed=11, logger_config={"type": "none"}))


def test_compute_single_action_carries_the_state_and_compute_actions_batches_it():
    algo = lstm_ppo().build_algo()
    try:
        module = algo.env_runner.module
        initial = module.get_initial_state()
        obs = np.float32([0.02, -0.03])
        action, state, extra = algo.compute_single_action(obs, state=initial, explore=False)
        assert set(state) == {"h", "c"} and state["h"].shape == (1, 8) and np.abs(state["h"]).sum() > 0
        # The same as the module's own one-step forward from the initial state.
        batch = {"obs": torch.as_tensor(obs)[None, None],
                 "state_in": {k: torch.as_tensor(v)[None] for k, v in initial.items()}}
        with torch.no_grad():
            out = module.forward_inference(batch)
        # (float32 rounding: the runner's step and the module's forward may order the sums differently)
        np.testing.assert_allclose(state["h"], out["state_out"]["h"][0].numpy(), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(extra["action_dist_inputs"], out["action_dist_inputs"][0, 0].numpy(),
                                   rtol=1e-5, atol=1e-7)
        assert action == int(np.argmax(extra["action_dist_inputs"]))
        # Feeding state_out back gives a different step than starting over.
        _, state2, extra2 = algo.compute_single_action(obs, state=state, explore=False)
        assert not np.allclose(extra2["action_dist_inputs"], extra["action_dist_inputs"])
        # A batch with one state per observation: each row equals its single call.
        actions, states, extras = algo.compute_actions(np.stack([obs, obs]), state=[initial, state], explore=False)
        assert actions.shape == (2,)
        np.testing.assert_allclose(states[0]["h"], state["h"], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(states[1]["h"], state2["h"], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(extras["action_dist_inputs"][1], extra2["action_dist_inputs"], rtol=1e-5, atol=1e-7)
    finally:
        algo.stop()


def test_resume_with_ongoing_episodes_state_is_bit_identical(tmp_path):
    algo = lstm_ppo().build_algo()
    for _ in range(2):
        algo.train()
    # Fragments of 16 with episodes of up to 40 steps: the runner holds ongoing episodes with state.
    assert any(len(ep) == 0 and ep.t_started > 0 for ep in algo.env_runner._episodes)
    path = algo.save(str(tmp_path / "ckpt")).checkpoint.path
    r1 = [algo.train() for _ in range(2)]
    w1 = {k: v.clone() for k, v in algo.learner_group.get_module("default_policy").state_dict().items()}
    restored = Algorithm.from_checkpoint(path)
    r2 = [restored.train() for _ in range(2)]
    w2 = restored.learner_group.get_module("default_policy").state_dict()
    try:
        assert set(w1) == set(w2) and all(torch.equal(w1[k], w2[k]) for k in w1)
        for a, b in zip(r1, r2):
            assert a["env_runners"]["episode_return_mean"] == b["env_runners"]["episode_return_mean"]
            assert a["learners"]["default_policy"]["total_loss"] == b["learners"]["default_policy"]["total_loss"]
        # The ongoing episodes go on from the same recurrent state (episode ids are random, so not compared).
        for a, b in zip(algo.env_runner._episodes, restored.env_runner._episodes):
            assert a.t == b.t
            assert_same_tree(a.get_extra_model_outputs("state_out", -1, neg_index_as_lookback=len(a) == 0),
                             b.get_extra_model_outputs("state_out", -1, neg_index_as_lookback=len(b) == 0))
    finally:
        algo.stop()
        restored.stop()


def test_evaluation_runs_the_stateful_module():
    config = lstm_ppo().evaluation(evaluation_interval=1, evaluation_duration=3,
                                   evaluation_duration_unit="episodes")
    algo = config.build_algo()
    try:
        result = algo.train()
        evaluation = result["evaluation"]["env_runners"]
        assert evaluation["num_episodes"] >= 3 and evaluation["episode_return_mean"] > 0
    finally:
        algo.stop()
