"""A stateful (LSTM) module on remote EnvRunners: the runners carry the recurrent state and send episodes whose
padded sequences the Learner recomputes exactly; weights reach the runners whole (critic LSTM included)."""
import numpy as np
import torch
from gymnasium.wrappers import TimeLimit

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.testing import StatelessCartPole


def stateless_cartpole(config):
    return TimeLimit(StatelessCartPole(config), max_episode_steps=40)


def test_ppo_with_an_lstm_on_remote_runners():
    config = (PPOConfig().environment(stateless_cartpole)
              .env_runners(num_env_runners=1, num_envs_per_env_runner=2, rollout_fragment_length=16)
              .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
              .rl_module(model_config=DefaultModelConfig(use_lstm=True, lstm_cell_size=8, fcnet_hiddens=[8],
                                                         max_seq_len=5, vf_share_layers=False))
              .debugging(seed=2))
    algo = config.build_algo()
    try:
        result = algo.train()
        assert result["num_env_steps_sampled_lifetime"] >= 64
        # The remote runners act with the Learner's weights, critic LSTM included (the runners compute its state).
        learner = algo.learner_group._learner
        weights = learner.module[DEFAULT_MODULE_ID].get_state()
        remote = algo.env_runner_group.foreach_env_runner(lambda runner: runner.module.get_state(),
                                                          local_env_runner=False)
        assert len(remote) == 1 and any(k.startswith("vf_encoder.lstm") for k in remote[0])
        for state in remote:
            assert all(np.array_equal(state[k], weights[k]) for k in state)
        # Episodes from a remote runner: the Learner's sequences give back the sampler's logits.
        episodes = algo.env_runner_group.foreach_env_runner(lambda runner: runner.sample(),
                                                            local_env_runner=False)[0]
        batch = learner._learner_connector(rl_module=learner.module, batch={}, episodes=episodes)[DEFAULT_MODULE_ID]
        with torch.no_grad():
            out = learner.module[DEFAULT_MODULE_ID].forward_train(batch)
        mask = batch[Columns.LOSS_MASK].bool()
        torch.testing.assert_close(out[Columns.ACTION_DIST_INPUTS][mask], batch[Columns.ACTION_DIST_INPUTS][mask])
    finally:
        algo.stop()
