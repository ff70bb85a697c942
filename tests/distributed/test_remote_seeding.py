"""A seeded run with remote EnvRunners repeats: each actor seeds its random, numpy and torch generators from
config.seed and its worker_index, as RLlib's EnvRunner does. Before, the actors sampled their actions from
unseeded generators, so two runs with the same seed trained on other episodes (other returns, other weights)."""
import torch

from relayrl import PPOConfig


def _one_run(seed):
    algo = (PPOConfig().environment("CartPole-v1")
            .env_runners(num_env_runners=2, num_envs_per_env_runner=1, rollout_fragment_length=100)
            .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
            .debugging(seed=seed, logger_config={"type": "none"})).build_algo()
    try:
        returns = [algo.train()["env_runners"]["episode_return_mean"] for _ in range(2)]
        weights = torch.cat([p.detach().flatten() for p in algo.get_module().parameters()])
        seeds = algo.env_runner_group.foreach_env_runner(lambda runner: int(torch.initial_seed()),
                                                         local_env_runner=False)
    finally:
        algo.stop()
    return returns, weights, seeds


def test_a_seeded_run_with_remote_runners_repeats():
    returns, weights, seeds = _one_run(3)
    again_returns, again_weights, _ = _one_run(3)
    assert returns == again_returns
    assert torch.equal(weights, again_weights)
    assert sorted(seeds) == [3 + 1000, 3 + 2000]  # each runner its own stream
