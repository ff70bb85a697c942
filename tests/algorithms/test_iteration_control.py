"""train() repeats training_step() until the reporting minima are met (RLlib's iteration control)."""
from relayrl import PPOConfig


def _config(**reporting):
    # SYNC named: every step is an env step (the env's own vector env adds reset steps that are not).
    return (PPOConfig().environment("CartPole-v1")
            .env_runners(num_envs_per_env_runner=2, gym_env_vectorize_mode="SYNC")
            .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
            .reporting(**reporting).debugging(seed=0))


def _one_iteration(**reporting):
    algo = _config(**reporting).build_algo()
    try:
        return algo.train()
    finally:
        algo.stop()


def test_one_training_step_per_iteration_by_default():
    result = _one_iteration()
    assert result["num_training_step_calls_per_iteration"] == 1
    assert result["num_env_steps_sampled_lifetime"] == 64


def test_min_sample_timesteps_loops_training_step():
    result = _one_iteration(min_sample_timesteps_per_iteration=200)
    assert result["num_training_step_calls_per_iteration"] == 4  # 4 x 64 >= 200 > 3 x 64
    assert result["num_env_steps_sampled_lifetime"] == 256


def test_min_train_timesteps_loops_training_step():
    result = _one_iteration(min_train_timesteps_per_iteration=130)
    assert result["num_training_step_calls_per_iteration"] == 3
    assert result["num_env_steps_trained_lifetime"] == 192


def test_min_time_s_loops_until_the_time_has_passed():
    result = _one_iteration(min_time_s_per_iteration=0.3)
    assert result["time_this_iter_s"] >= 0.3
    assert result["num_training_step_calls_per_iteration"] >= 2
