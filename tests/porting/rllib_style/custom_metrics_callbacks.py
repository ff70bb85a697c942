"""Callbacks and custom metrics, as RLlib's `examples/metrics/custom_metrics_in_env_runners.py` writes them."""
import math

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.algorithms.callbacks import make_multi_callbacks
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS
from ray.rllib.utils.test_utils import add_rllib_example_script_args, run_rllib_example_script_experiment


class PoleAngleCallback(RLlibCallback):
    def on_episode_start(self, *, episode, **kwargs):
        episode.custom_data["pole_angles"] = []

    def on_episode_step(self, *, episode, **kwargs):
        episode.custom_data["pole_angles"].append(abs(float(episode.get_observations(-1)[2])))

    def on_episode_end(self, *, episode, metrics_logger, **kwargs):
        metrics_logger.log_value("pole_angle_max_abs", max(episode.custom_data["pole_angles"]), reduce="mean",
                                 window=100)
        metrics_logger.log_value("num_episodes_seen", 1, reduce="sum")


class TrainResultCallback(RLlibCallback):
    def on_train_result(self, *, algorithm, metrics_logger=None, result, **kwargs):
        result["callback_saw_iteration"] = result["training_iteration"]


parser = add_rllib_example_script_args(default_reward=450.0, default_iters=3)

if __name__ == "__main__":
    args = parser.parse_args()
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .framework("torch")
        .callbacks(make_multi_callbacks([PoleAngleCallback, TrainResultCallback]))
        .training(train_batch_size_per_learner=256, minibatch_size=128, num_epochs=1)
    )
    result = run_rllib_example_script_experiment(config, args)
    env_runner_results = result[ENV_RUNNER_RESULTS]
    assert 0 < env_runner_results["pole_angle_max_abs"] < math.pi, env_runner_results
    assert env_runner_results["num_episodes_seen"] >= env_runner_results["num_episodes"] > 0
    assert result["callback_saw_iteration"] == result["training_iteration"]
    print("PORTED OK", round(env_runner_results["pole_angle_max_abs"], 4), env_runner_results["num_episodes_seen"])
