"""PPO learns CartPole with two remote EnvRunners as it does in-process (slow: a full learning run)."""
import pytest

from relayrl import PPOConfig


@pytest.mark.slow
def test_ppo_cartpole_with_two_remote_env_runners_reaches_450():
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=2, num_cpus_per_env_runner=0.5)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    try:
        best = float("-inf")
        while True:
            result = algo.train()
            best = max(best, result["env_runners"]["episode_return_mean"])
            assert result["num_healthy_env_runners"] == 2
            if best >= 450 or result["num_env_steps_sampled_lifetime"] >= 300_000:
                break
        assert best >= 450, f"mean return {best} after {result['num_env_steps_sampled_lifetime']} env steps"
        print(f"reached {best} after {result['num_env_steps_sampled_lifetime']} env steps")
    finally:
        algo.stop()
