"""Curriculum learning with a callback, as RLlib's `examples/curriculum/curriculum_learning.py` (and the docs'
`on_train_result` snippet) write it: the env's task goes up once the return passes a bar."""
import gymnasium as gym
import numpy as np

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN
from ray.rllib.utils.test_utils import add_rllib_example_script_args, run_rllib_example_script_experiment


class TaskCorridor(gym.Env):
    """Walk right to the corridor's end; the task sets its length (5, 10, 15)."""

    def __init__(self, config=None):
        self.length = 5
        self.observation_space = gym.spaces.Box(0.0, 20.0, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def set_task(self, task):
        self.length = 5 * (task + 1)

    def get_task(self):
        return self.length // 5 - 1

    def reset(self, *, seed=None, options=None):
        self.pos = 0
        return np.array([self.pos], np.float32), {}

    def step(self, action):
        self.pos = max(0, self.pos + (1 if action == 1 else -1))
        done = self.pos >= self.length
        return np.array([self.pos], np.float32), 1.0 if done else -0.01, done, False, {}


class CurriculumCallback(RLlibCallback):
    def on_train_result(self, *, algorithm, metrics_logger=None, result, **kwargs):
        task = 1 if result[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN] > -10.0 else 0  # any return moves on
        algorithm.env_runner_group.foreach_env_runner(lambda er: er.foreach_env(lambda env: env.set_task(task)))
        result["task"] = task
        result["env_tasks"] = algorithm.env_runner_group.foreach_env(lambda env: env.get_task())


parser = add_rllib_example_script_args(default_reward=1e9, default_iters=2)

if __name__ == "__main__":
    args = parser.parse_args()
    config = (
        PPOConfig()
        .environment(TaskCorridor)
        .framework("torch")
        .env_runners(num_envs_per_env_runner=2)
        .callbacks(CurriculumCallback)
        .training(train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1)
    )
    result = run_rllib_example_script_experiment(config, args)
    assert result["task"] == 1 and result["env_tasks"] == [[1, 1]], (result["task"], result["env_tasks"])
    print("PORTED OK", result["env_tasks"])
