"""relayrl.testing.learning.train_until stops at the target or at the env-step budget, whichever comes first."""
from relayrl import PPOConfig
from relayrl.testing.learning import train_until


def _config():
    return (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=1)
            .training(train_batch_size=200, minibatch_size=100, num_epochs=1)
            .debugging(seed=0, logger_config={"type": "none"}))


def test_stops_at_the_budget_when_the_target_is_out_of_reach():
    ret, steps = train_until(_config(), target=1e9, budget=600)
    assert steps == 600 and ret < 1e9


def test_stops_at_the_first_iteration_that_reaches_the_target():
    ret, steps = train_until(_config(), target=-1.0, budget=10_000)
    assert steps == 200 and ret >= -1.0
