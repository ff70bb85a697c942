"""algo.stop() returns once Ray has the remote runners' CPUs back. Before, Ray gave them back ~0.1 s after the kill,
so an algorithm built right after stop() (restoring into a new one, the next config of a sweep) saw them taken and
warned that its runners had to wait for others to finish."""
import ray

from relayrl import PPOConfig


def test_a_new_algorithm_right_after_stop_finds_the_cpus_free(caplog):
    config = (PPOConfig().environment("CartPole-v1")
              .env_runners(num_env_runners=2, num_envs_per_env_runner=1, rollout_fragment_length=50)
              .training(train_batch_size=100, minibatch_size=50, num_epochs=1)
              .debugging(logger_config={"type": "none"}))
    algo = config.build_algo()
    algo.stop()
    assert ray.available_resources().get("CPU", 0.0) == ray.cluster_resources()["CPU"]
    with caplog.at_level("WARNING", logger="relayrl"):
        again = config.build_algo()
    again.stop()
    assert "are free now" not in caplog.text
