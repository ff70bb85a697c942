"""PPO: sample a train batch, run the PPO Learner's minibatch epochs, sync the weights back."""
from relayrl.algorithms.algorithm import Algorithm
from relayrl.algorithms.ppo import remote_train_columns
from relayrl.algorithms.ppo.ppo_config import PPOConfig


class PPO(Algorithm):
    @classmethod
    def get_default_config(cls) -> PPOConfig:
        return PPOConfig()

    @classmethod
    def get_default_policy_class(cls, config):
        """RLlib's old API stack (`config.api_stack(enable_rl_module_and_learner=False, ...)`): PPO runs
        PPOTorchPolicy through the Policy API (docs/policy_api.md); the new stack (the default): None."""
        if config.enable_rl_module_and_learner and config.enable_env_runner_and_connector_v2:
            return None
        from relayrl.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy

        return PPOTorchPolicy

    def training_step(self) -> None:
        if self.learner_group is None:  # the old API stack: PPOTorchPolicy (get_default_policy_class)
            return _policy_training_step(self)
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


def _policy_training_step(algo):
    """RLlib's old-stack PPO step: sample a train batch, standardize its advantages, `num_epochs` passes of
    minibatch SGD (train_one_step), sync the weights, adapt each policy's KL coefficient."""
    from relayrl.policy.execution import (
        LEARNER_STATS_KEY,
        standardize_fields,
        synchronous_parallel_sample,
        train_one_step,
    )

    batch = synchronous_parallel_sample(worker_set=algo.workers, max_env_steps=algo.config.train_batch_size)
    results = train_one_step(algo, standardize_fields(batch, ["advantages"]))
    algo.workers.sync_weights(global_vars={"timestep": algo._counters.get("num_env_steps_sampled_lifetime", 0)})
    for policy_id, info in results.items():
        kl = info.get(LEARNER_STATS_KEY, info).get("kl")
        if kl is not None:
            algo.get_policy(policy_id).update_kl(kl)
    return results
