"""PPO: sample a train batch, run the PPO Learner's minibatch epochs, sync the weights back."""
from relayrl.algorithms.algorithm import Algorithm
from relayrl.algorithms.ppo.ppo_config import PPOConfig


class PPO(Algorithm):
    @classmethod
    def get_default_config(cls) -> PPOConfig:
        return PPOConfig()

    def training_step(self) -> None:
        episodes, steps = self.sample_episodes(max_env_steps=self.config.total_train_batch_size)
        self.update_learners(episodes, steps)
        self.sync_weights()
