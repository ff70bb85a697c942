"""VPG (vanilla policy gradient), RLlib's example of a custom algorithm: a config class with its own option, the
default module and Learner it builds, and an Algorithm whose `training_step()` samples whole episodes, updates
the Learners and syncs the weights back. For learning about custom algorithms, not for training."""
from relayrl.algorithms.algorithm import Algorithm
from relayrl.algorithms.algorithm_config import AlgorithmConfig
from relayrl.algorithms.options import POSITIVE_INT, Option
from relayrl.modules.rl_module_spec import RLModuleSpec


class VPGConfig(AlgorithmConfig):
    """`VPGConfig().environment("CartPole-v1").training(num_episodes_per_train_batch=10, lr=5e-4)`."""

    SUPPORTS_MULTI_AGENT = True  # the training_step and loss work per module, on single- and multi-agent episodes

    # A new option is one record: its builder argument (training(...)), attribute, check and docs derive from it.
    _OPTIONS = (
        Option("num_episodes_per_train_batch", 10, "Complete episodes per update (the batch size in timesteps "
               "varies with the episodes' lengths).", "training", POSITIVE_INT, mutable=True),
    )
    _DEFAULTS = {"batch_mode": "complete_episodes"}  # the loss needs whole episodes

    def __init__(self, algo_class=None):
        super().__init__(algo_class=algo_class or VPG)

    def get_default_rl_module_spec(self):
        from relayrl.examples.rl_modules.classes.vpg_torch_rlm import VPGTorchRLModule

        return RLModuleSpec(module_class=VPGTorchRLModule, model_config={"hidden_dim": 64})

    def get_default_learner_class(self):
        from relayrl.examples.learners.classes.vpg_torch_learner import VPGTorchLearner

        return VPGTorchLearner


class VPG(Algorithm):
    @classmethod
    def get_default_config(cls) -> VPGConfig:
        return VPGConfig()

    def training_step(self) -> None:
        episodes, runner_metrics = self._sample_episodes()
        steps = sum(map(len, episodes))
        self.log_sampled(runner_metrics, steps)  # the runners' metrics into the results, the steps into the counters
        # Two ways to smooth a custom metric over iterations: a window and an exponential moving average.
        self.metrics.log_value("episode_timesteps_sampled_mean_win100", steps, reduce="mean", window=100)
        self.metrics.log_value("episode_timesteps_sampled_ema", steps, ema_coeff=0.1)
        self.update_learners(episodes, steps)
        self.sync_weights()

    def _sample_episodes(self):
        """`num_episodes_per_train_batch` complete episodes, split over the remote EnvRunners (or sampled by the
        local one if there are none), and each runner's metrics."""
        group = self.env_runner_group
        per_runner = max(1, self.config.num_episodes_per_train_batch // max(group.num_remote_env_runners(), 1))
        results = group.foreach_env_runner(
            lambda env_runner: (env_runner.sample(num_episodes=per_runner), env_runner.get_metrics()),
            local_env_runner=group.num_remote_env_runners() == 0, sampling=True)
        episodes = [episode for runner_episodes, _ in results for episode in runner_episodes]
        return episodes, [metrics for _, metrics in results]


