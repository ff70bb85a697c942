"""DQN: sample with exploration into a replay buffer, then replayed Q-learning updates.

`training_step` is generic over off-policy algorithms (SAC subclasses DQN and keeps it):

1. sample `rollout_fragment_length` steps per env (exploring) and add the episodes to the buffer;
2. once `num_steps_sampled_before_learning_starts` env steps were sampled, run K learner updates,
   each on a fresh buffer sample (n-step, gamma, beta), and feed the learner's per-row TD errors back
   as priorities. K = 1 per training_step without `training_intensity`; with it, K keeps
   trained / sampled env steps at `training_intensity` (fractions carry over to later steps);
3. the Learner updates target networks after its updates (`target_network_update_freq`, `tau`);
4. sync the new weights to the EnvRunners.

A stateful module (use_lstm) replays sequences instead of transitions: each update samples
`train_batch_size` sequences of `max_seq_len` steps (RLlib's batch_size_B x batch_length_T), and
`training_intensity` counts the steps of those sequences (docs/stateful_modules.md).
"""
from typing import Any, Dict, Optional

from relayrl.algorithms.algorithm import Algorithm
from relayrl.algorithms.dqn.dqn_config import DQNConfig
from relayrl.metrics import (
    LEARNER_RESULTS,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_TRAINED_LIFETIME,
)

REPLAY_BUFFER_RESULTS = "replay_buffer"


class DQN(Algorithm):
    STATE_ATTRIBUTES = ("_updates_owed",)  # checkpointed beside the Algorithm's own state

    @classmethod
    def get_default_config(cls) -> DQNConfig:
        return DQNConfig()

    def setup(self, config) -> None:
        super().setup(config)
        self.local_replay_buffer = self._make_replay_buffer(config)
        self._updates_owed = 0.0  # fractional learner updates carried over (training_intensity)
        self._learner_results_pending = False  # updates ran since the Learners' metrics were last reduced
        self._sequence_len = self._replay_sequence_len()

    def _replay_sequence_len(self) -> int:
        """max_seq_len for a stateful module (replay sequences), else 1 (single transitions)."""
        if self.config.is_multi_agent:
            return 1
        module = self.get_module()
        stateful = module.is_stateful() if module is not None else bool(self.config.model_config.get("use_lstm"))
        return int(self.config.model_config.get("max_seq_len", 20)) if stateful else 1

    @staticmethod
    def _make_replay_buffer(config):
        from relayrl.replay import make_replay_buffer

        defaults = {"batch_size_B": config.total_train_batch_size}
        if config.seed is not None:
            defaults["seed"] = config.seed
        return make_replay_buffer(dict(config.effective_replay_buffer_config), multi_agent=config.is_multi_agent,
                                  **defaults)

    # -- the step ------------------------------------------------------------------------------
    def training_step(self) -> None:
        episodes, steps = self.sample_episodes(max_env_steps=1)  # one sample() call
        self.local_replay_buffer.add(episodes)
        sampled = self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)
        if sampled < self.config.num_steps_sampled_before_learning_starts:
            return
        num_updates = self.num_updates_for(steps)
        if num_updates == 0:
            return
        with self.metrics.log_time(("timers", "learner_update_timer"), window=1):
            for _ in range(num_updates):
                self.update_from_replay_buffer(reduce_metrics=False)
        self._learner_results_pending = True
        self.sync_weights()

    def num_updates_for(self, sampled_steps: int) -> int:
        """Learner updates owed after sampling `sampled_steps` (see the module docstring)."""
        intensity = self.config.training_intensity
        if intensity is None:
            return 1
        self._updates_owed += sampled_steps * intensity / (self.config.total_train_batch_size * self._sequence_len)
        num_updates = int(self._updates_owed)
        self._updates_owed -= num_updates
        return num_updates

    def update_from_replay_buffer(self, *, reduce_metrics: bool = True) -> Optional[Dict[str, Any]]:
        """One learner update on a buffer sample; priorities updated from its TD errors. Returns the Learners'
        reduced metrics, or None with `reduce_metrics=False` (training_step's updates: the iteration's result
        reduces them once, see _compile_result)."""
        cfg = self.config
        batch_size = cfg.total_train_batch_size
        buffer = self.local_replay_buffer
        extra = {"batch_length_T": self._sequence_len} if self._sequence_len > 1 else self._modules_to_sample(buffer)
        train_batch = buffer.sample(batch_size, n_step=cfg.n_step, gamma=cfg.gamma, beta=self._replay_beta(cfg),
                                    **extra)
        timesteps = {NUM_ENV_STEPS_SAMPLED_LIFETIME: self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)}
        # One minibatch: the whole sample. A minibatch size counts timesteps; a sequence's columns hold up to
        # max_seq_len + n_step of them (obs runs n_step past the trained steps).
        rows_steps = 1 if self._sequence_len == 1 else self._sequence_len + cfg.n_step_max
        results = self.learner_group.update(batch=train_batch, timesteps=timesteps, num_epochs=1,
                                            minibatch_size=batch_size * rows_steps,
                                            shuffle_batch_per_epoch=False,
                                            reduce_metrics=reduce_metrics)
        self._counters[NUM_ENV_STEPS_TRAINED_LIFETIME] = (self._counters.get(NUM_ENV_STEPS_TRAINED_LIFETIME, 0)
                                                          + batch_size * self._sequence_len)
        if self._replay_prioritized:
            self._update_priorities()
        return results

    def _modules_to_sample(self, buffer) -> Dict[str, Any]:
        """Multi-agent: sample only the modules that exist (remove_module) and train (policies_to_train); the
        others' rows would be dropped."""
        to_train, known = self.config.policies_to_train, self.config.policies or {}
        if not hasattr(buffer, "module_buffer") or (to_train is None and set(buffer.module_ids) <= set(known)):
            return {}
        from relayrl.algorithms.multi_agent_mapping import trains_module

        return {"modules_to_sample": [m for m in buffer.module_ids if m in known and trains_module(to_train, m)]}

    @property
    def _replay_prioritized(self) -> bool:
        """Whether the buffer takes priorities (a uniform buffer's update_priorities does nothing: the learner's
        TD errors are not even fetched)."""
        from relayrl.replay import EpisodeReplayBuffer

        prioritized = getattr(self.local_replay_buffer, "is_prioritized", None)  # multi-agent: its module buffers'
        if prioritized is not None:
            return prioritized
        update = getattr(type(self.local_replay_buffer), "update_priorities", None)
        return update is not EpisodeReplayBuffer.update_priorities

    def _replay_beta(self, cfg):
        cached = self.__dict__.get("_beta_cache")
        if cached is None or cached[0] is not cfg.replay_buffer_config:  # the dict changes with the config
            cached = self._beta_cache = (cfg.replay_buffer_config, cfg.effective_replay_buffer_config.get("beta"))
        return cached[1]

    def _update_priorities(self) -> None:
        buffer = self.local_replay_buffer
        per_module = hasattr(buffer, "module_buffer")  # a multi-agent buffer: each module's rows in its own buffer
        for td_errors_per_module in self.learner_group.foreach_learner(lambda learner: learner.get_td_errors()):
            for module_id, (indices, td_errors) in td_errors_per_module.items():
                if indices is None:
                    continue
                if per_module:
                    buffer.update_priorities(td_errors, indices, module_id=module_id)
                else:
                    buffer.update_priorities(td_errors, indices)

    def _compile_result(self, elapsed: float, calls: int) -> Dict[str, Any]:
        # Logged once per iteration, not per update: a DQN update is short and reducing the Learner's
        # metrics costs a good part of one. Learner stats are the mean over the iteration's updates
        # (step counts summed), reduced here once.
        if self._learner_results_pending:
            self.metrics.log_dict(self.learner_group.reduce_results(), key=LEARNER_RESULTS, window=1)
            self._learner_results_pending = False
        self._log_replay_buffer_stats()
        return super()._compile_result(elapsed, calls)

    def _log_replay_buffer_stats(self) -> None:
        buffer = self.local_replay_buffer
        stats = {"num_env_steps_stored": len(buffer)}
        if hasattr(buffer, "get_num_episodes"):
            stats["num_episodes_stored"] = buffer.get_num_episodes()
        if hasattr(buffer, "get_added_timesteps"):
            stats["num_env_steps_added_lifetime"] = buffer.get_added_timesteps()
        for key, value in stats.items():
            self.metrics.log_value((REPLAY_BUFFER_RESULTS, key), value, window=1)


__all__ = ["DQN"]
