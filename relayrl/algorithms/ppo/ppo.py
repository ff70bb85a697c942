"""PPO: sample a train batch, run the PPO Learner's minibatch epochs, sync the weights back."""
from relayrl.algorithms.algorithm import Algorithm
from relayrl.algorithms.ppo import remote_train_columns
from relayrl.algorithms.ppo.ppo_config import PPOConfig


class PPO(Algorithm):
    @classmethod
    def get_default_config(cls) -> PPOConfig:
        return PPOConfig()

    def training_step(self) -> None:
        max_env_steps = self.config.total_train_batch_size
        if self._samples_remote_train_columns():  # remote runners send train columns, not episodes
            with self.metrics.log_time(("timers", "env_runner_sampling_timer"), window=1):
                batch, steps, runner_metrics = remote_train_columns.sample(self, max_env_steps)
            self.log_sampled(runner_metrics, steps)
            self.update_learners(None, steps, batch=batch)
        else:
            episodes, steps = self.sample_episodes(max_env_steps=max_env_steps)
            self.update_learners(episodes, steps)
        self.sync_weights()

    def _samples_remote_train_columns(self) -> bool:
        if getattr(self, "_remote_train_columns", None) is None:  # decided once: the conditions do not change
            self._remote_train_columns = remote_train_columns.applies(self)
        return self._remote_train_columns
