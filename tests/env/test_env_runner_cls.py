"""config.env_runners(env_runner_cls=...): RLlib's option for an EnvRunner class of one's own."""
import pytest

from relayrl import PPOConfig
from relayrl.checkpoints import CheckpointError
from relayrl.env.env_runner import EnvRunner


class CountingRunner(EnvRunner):
    samples = 0

    def sample(self, **kwargs):
        CountingRunner.samples += 1
        return super().sample(**kwargs)


def test_the_algorithm_samples_with_the_configured_class_and_a_checkpoint_keeps_it(tmp_path):
    config = (PPOConfig().environment("CartPole-v1")
              .env_runners(env_runner_cls=CountingRunner, num_envs_per_env_runner=1)
              .training(train_batch_size=64, minibatch_size=32, num_epochs=1))
    algo = config.build_algo()
    algo.train()
    assert type(algo.env_runner) is CountingRunner and CountingRunner.samples >= 1
    algo.save(str(tmp_path))
    algo.stop()
    with pytest.raises(CheckpointError, match=r"CountingRunner`.*trusted=\[CountingRunner\]"):  # (a user's class)
        type(algo).from_checkpoint(str(tmp_path))
    restored = type(algo).from_checkpoint(str(tmp_path), trusted=[CountingRunner])
    assert type(restored.env_runner) is CountingRunner
    restored.stop()


def test_a_value_that_is_no_class_is_refused():
    with pytest.raises(ValueError, match="env_runner_cls must be an EnvRunner class or None, got 'EnvRunner'"):
        PPOConfig().env_runners(env_runner_cls="EnvRunner")
