"""APPO: IMPALA's data flow (asynchronous sampling, learner queue, broadcasts) with APPO's loss, a target
policy and, by default, a circular buffer that serves each batch up to K times."""
import queue

from relayrl.algorithms.appo.appo_config import APPOConfig
from relayrl.algorithms.appo.circular_buffer import CircularBuffer
from relayrl.algorithms.impala.impala import IMPALA


class APPO(IMPALA):
    @classmethod
    def get_default_config(cls) -> APPOConfig:
        return APPOConfig()

    def _make_learner_queue(self, config):
        if config.use_circular_buffer:
            return CircularBuffer(config.circular_buffer_num_batches, config.circular_buffer_iterations_per_batch,
                                  seed=config.seed)
        return queue.Queue(maxsize=config.learner_queue_size)

    def _updates_per_batch(self) -> int:
        return self.config.circular_buffer_iterations_per_batch if self.config.use_circular_buffer else 1


__all__ = ["APPO"]
