"""IMPALA and APPO with use_lstm=True: the default module's LSTM through the asynchronous path (padded
sequences, V-trace over them, minibatches of whole chunks)."""
import pytest
import torch
from gymnasium.wrappers import TimeLimit

from relayrl import APPOConfig, DefaultModelConfig, IMPALAConfig
from relayrl.algorithms.impala.impala_learner import _chunk_cuts
from relayrl.testing import StatelessCartPole


def stateless_cartpole(config):
    return TimeLimit(StatelessCartPole(config), max_episode_steps=60)


@pytest.mark.parametrize("config_class", [IMPALAConfig, APPOConfig])
@pytest.mark.parametrize("minibatch_size", [None, 40])
def test_trains_with_an_lstm(config_class, minibatch_size):
    config = (config_class().environment(stateless_cartpole)
              .env_runners(num_envs_per_env_runner=3, rollout_fragment_length=20)
              .training(minibatch_size=minibatch_size)
              .reporting(min_time_s_per_iteration=0, min_sample_timesteps_per_iteration=300)
              .rl_module(model_config=DefaultModelConfig(use_lstm=True, lstm_cell_size=8, fcnet_hiddens=[8],
                                                         max_seq_len=6, vf_share_layers=False))
              .debugging(seed=5))
    algo = config.build_algo()
    try:
        before = {k: v.clone() for k, v in algo.learner_group.get_module("default_policy").state_dict().items()}
        for _ in range(2):
            result = algo.train()
        after = algo.learner_group.get_module("default_policy").state_dict()
        losses = result["learners"]["default_policy"]
        assert all(torch.isfinite(torch.as_tensor(v)) for k, v in losses.items() if k.endswith("loss"))
        assert any(not torch.equal(before[k], after[k]) for k in before if k.startswith("encoder.lstm"))
        assert algo.env_runner.module.is_stateful()
    finally:
        algo.stop()


def test_recurrent_minibatches_cut_between_whole_chunks():
    # Sequences of 4: chunk A fills sequences 0-1 (its artificial step ends sequence 1's real rows),
    # chunk B is sequence 2, chunk C sequences 3-4.
    mask = torch.tensor([[1, 1, 1, 1], [1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 0]], dtype=torch.bool)
    assert _chunk_cuts(mask, 8) == [0, 2, 5]  # 2 sequences (8 steps) per minibatch, whole chunks
    assert _chunk_cuts(mask, 4) == [0, 2, 3, 5]
