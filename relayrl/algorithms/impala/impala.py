"""IMPALA: asynchronous actors, a learner thread fed by a bounded queue, V-trace (docs/impala.md).

Both ways of running build train batches the same way: an EnvRunner samples and turns its episodes
into train-batch columns (`sample_train_batch`), and batches of at least train_batch_size_per_learner
env steps go through the learner queue (APPO: its circular buffer) to the Learner.

- Embedded (`num_env_runners=0`, the default): one process, one thread. Each `training_step`
  samples one train batch, queues it and runs the updates it allows (IMPALA: one; APPO: each batch
  circular_buffer_iterations_per_batch times, so the buffer is empty between steps), sending the
  weights every `broadcast_interval` updates. Sequential on purpose: on small nets sampling and
  learning both hold the GIL most of the time (docs/impala.md has the measurement), and one thread
  keeps runs repeatable and checkpoints bit-identical.
- Remote runners: `AsyncSampler` keeps up to `max_requests_in_flight_per_env_runner` requests in
  flight per runner and takes whatever is ready, never waiting for the slowest runner. A
  `LearnerThread` trains from the queue (`learner_queue_size`; a full queue makes the driver wait).
  Every `broadcast_interval` updates the weights are `ray.put` once and sent to every runner.
"""
import queue
from typing import Any, Dict, List

from relayrl.algorithms.algorithm import Algorithm
from relayrl.algorithms.impala.async_sampling import (
    AsyncSampler,
    LearnerThread,
    TrainBatchPacker,
    sample_train_batch,
)
from relayrl.algorithms.impala.impala_config import IMPALAConfig
from relayrl.metrics import (
    ENV_RUNNER_RESULTS,
    LEARNER_RESULTS,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_TRAINED_LIFETIME,
)

NUM_WEIGHT_BROADCASTS = "num_weight_broadcasts"


class IMPALA(Algorithm):
    STATE_ATTRIBUTES = ("_updates_since_broadcast", "_num_updates")

    @classmethod
    def get_default_config(cls) -> IMPALAConfig:
        return IMPALAConfig()

    def setup(self, config) -> None:
        super().setup(config)
        self._updates_since_broadcast = 0
        self._num_updates = 0  # the weights' version the EnvRunners see (their samples carry it)
        self._learner_queue = self._make_learner_queue(config)
        self._sampler = self._learner_thread = None
        if self.env_runner_group.is_remote:
            self._sampler = AsyncSampler(self)
            self._learner_thread = LearnerThread(self.learner_group, self._learner_queue)

    def _make_learner_queue(self, config):
        """IMPALA's bounded FIFO queue (APPO: a circular buffer)."""
        return queue.Queue(maxsize=config.learner_queue_size)

    def _updates_per_batch(self) -> int:
        """Updates the embedded step runs per new train batch (APPO: each batch is used up to K times)."""
        return 1

    # -- the step ------------------------------------------------------------------------------
    def training_step(self) -> None:
        if self._sampler is None:
            self._embedded_step()
        else:
            self._async_step()

    def _embedded_step(self) -> None:
        packer, runner = TrainBatchPacker(self.config.train_batch_size_per_learner), self.env_runner
        with self.metrics.log_time(("timers", "env_runner_sampling_timer"), window=1):
            while not packer.pending or packer.pending < packer.size:
                batch, steps, runner_metrics, _ = sample_train_batch(runner)
                packer.add(batch, steps)
                self.metrics.merge_and_log_n_dicts([runner_metrics], key=ENV_RUNNER_RESULTS)
        with self.metrics.log_time(("timers", "learner_update_timer"), window=1):
            batches = packer.take()  # one train batch (more if a sample() overshot twice over)
            updates_to_come = len(batches) * self._updates_per_batch()
            for batch, steps in batches:
                self._count(NUM_ENV_STEPS_SAMPLED_LIFETIME, steps)
                self._learner_queue.put((batch, steps, self._timesteps()))
                for _ in range(self._updates_per_batch()):  # the queue is empty again afterwards
                    batch, steps, timesteps = self._learner_queue.get()
                    result = self.learner_group.update(batch=batch, timesteps=timesteps)
                    updates_to_come -= 1
                    self._log_learner_results([(result, steps)], updates_to_come=updates_to_come)

    def _async_step(self) -> None:
        with self.metrics.log_time(("timers", "env_runner_sampling_timer"), window=1):
            batches, runner_metrics = self._sampler.collect()
        self.metrics.merge_and_log_n_dicts(runner_metrics, key=ENV_RUNNER_RESULTS)
        for batch, steps in batches:
            self._count(NUM_ENV_STEPS_SAMPLED_LIFETIME, steps)
            with self.metrics.log_time(("timers", "learner_queue_put_timer"), window=1):
                self._learner_thread.put(batch, steps, self._timesteps())
        self._log_learner_results(self._learner_thread.take_results())
        self.metrics.log_dict(self._learner_thread.stats(), key=(LEARNER_RESULTS, "__all_modules__"), window=1)

    def _timesteps(self) -> Dict[str, int]:
        return {NUM_ENV_STEPS_SAMPLED_LIFETIME: self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0),
                NUM_ENV_STEPS_TRAINED_LIFETIME: self._counters.get(NUM_ENV_STEPS_TRAINED_LIFETIME, 0)}

    def _log_learner_results(self, results: List[tuple], updates_to_come: int = 0) -> None:
        for result, steps in results:
            self.metrics.log_dict(result, key=LEARNER_RESULTS, window=1)
            self._count(NUM_ENV_STEPS_TRAINED_LIFETIME, steps)
        if results:
            self._after_updates(len(results), updates_to_come)

    # -- the driver's local EnvRunner (remote runners) -------------------------------------------------------
    @property
    def env_runner(self):
        """With remote runners the broadcasts reach only them; the local EnvRunner (compute_single_action, the
        connector states evaluation runners copy, a checkpoint's `env_runner`) takes the Learner's weights and the
        merged connector states when it is read after an update."""
        runner = self.env_runner_group.local_env_runner
        if runner is not None and self.__dict__.get("_local_runner_stale"):
            weights, _ = self._learner_thread.weights()
            self._refresh_local_env_runner(runner, weights)
        return runner

    def _refresh_local_env_runner(self, runner, weights) -> None:
        self._local_runner_stale = False
        runner.set_state({"rl_module": weights, **self._sampler.merged_connector_states_sent()})

    def _after_updates(self, num_updates: int, updates_to_come: int = 0) -> None:
        """Count updates; send the weights once `broadcast_interval` of them happened since the last time.

        `updates_to_come`: updates the embedded step runs before its runner samples again. A broadcast due
        now that another due broadcast in those updates would overwrite unseen is skipped (not counted):
        the runner samples with the same weights, one weights copy fewer (APPO: one per step)."""
        self._num_updates += num_updates
        self._local_runner_stale = self._sampler is not None
        self._updates_since_broadcast += num_updates
        if self._updates_since_broadcast >= self.config.broadcast_interval:
            self._updates_since_broadcast = 0
            if updates_to_come >= self.config.broadcast_interval:
                return
            self.sync_weights()
            self.metrics.log_value(NUM_WEIGHT_BROADCASTS, 1, reduce="sum")

    def _count(self, key: str, steps: int) -> None:
        self._counters[key] = self._counters.get(key, 0) + steps

    def sync_weights(self) -> None:
        if self._sampler is None:
            super().sync_weights()
            self.env_runner.weights_seq_no = self._num_updates
            return
        with self.metrics.log_time(("timers", "synch_weights"), window=1):
            self._sampler.broadcast_weights(self._learner_thread.weights())

    # -- state and lifetime ----------------------------------------------------------------------
    def get_state(self, components=None, *, not_components=None, **kwargs) -> Dict[str, Any]:
        if self._learner_thread is None:
            return super().get_state(components, not_components=not_components, **kwargs)
        with self._learner_thread.pause():  # not in the middle of an update
            if self.env_runner_group.local_env_runner is not None:  # the checkpoint's env_runner: the weights saved
                self._refresh_local_env_runner(self.env_runner_group.local_env_runner,
                                               self.learner_group.get_weights(inference_only=True))
            return super().get_state(components, not_components=not_components, **kwargs)

    def cleanup(self) -> None:
        if self._learner_thread is not None:
            self._learner_thread.stop()
        super().cleanup()


__all__ = ["IMPALA"]
