"""IMPALA's asynchronous data flow with remote EnvRunners: requests in flight, compact batches, a learner thread.

    EnvRunner actors --(sample -> train-batch columns, metrics, connector states)--> AsyncSampler
      (up to max_requests_in_flight_per_env_runner each; the driver takes what is ready)
    AsyncSampler --(batches of >= train_batch_size_per_learner env steps)--> LearnerThread queue
      (learner_queue_size; a full queue makes the driver wait)
    LearnerThread --(every broadcast_interval updates: weights, ray.put once)--> each EnvRunner's next request
"""
import queue
import threading
import time
import weakref
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from relayrl.algorithms.impala.impala_learner import WEIGHTS_SEQ_NO, build_impala_learner_pipeline
from relayrl.algorithms.train_batch_columns import concatenate_train_batches
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.env.connector_state_sync import state_sync_mode

# EnvRunner -> its Learner pipeline (inside the actor). Weak keys: an entry goes with its runner, so a later runner
# never gets a stopped one's pipeline (keyed by id(), a new runner at a reused address did, built for another config).
_TRAIN_BATCH_PIPELINES: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def sample_train_batch(runner) -> Tuple[Dict[str, Dict[str, np.ndarray]], int, Dict[str, Any], Optional[dict]]:
    """Runs inside an EnvRunner actor: one sample() turned into train-batch columns right there, so only
    compact arrays cross the object store. Returns (batch, env steps, metrics, connector states or None)."""
    episodes = runner.sample()
    steps = sum(len(e) for e in episodes)
    batch = train_batch_pipeline(runner)(rl_module=runner.module, batch={}, episodes=episodes, explore=False,
                                         shared_data={})
    if Columns.LOSS_MASK in batch:  # one module's columns: key them by module id, as multi-module batches are
        batch = {DEFAULT_MODULE_ID: batch}
    seq_no = runner.weights_seq_no
    for module_batch in batch.values():
        # Shaped like the loss mask: (rows,), or (sequences, max_seq_len) for a recurrent module.
        module_batch[WEIGHTS_SEQ_NO] = np.full(np.shape(module_batch[Columns.LOSS_MASK]), seq_no, np.int64)
    states = runner.get_connector_states() if _has_connector_state(runner) else None
    return batch, steps, runner.get_metrics(), states


def train_batch_pipeline(runner):
    """The Learner connector pipeline this EnvRunner turns its episodes into train-batch columns with (made on
    first use, in the runner's process): its user pieces are the ones that run on IMPALA's and APPO's data."""
    pipeline = _TRAIN_BATCH_PIPELINES.get(runner)
    if pipeline is None:
        obs_space, act_space = runner.get_spaces()["__env_single__"]
        pipeline = build_impala_learner_pipeline(runner.config, obs_space, act_space)
        if "NumpyToTensor" in [piece.name for piece in pipeline.connectors]:
            pipeline.remove("NumpyToTensor")  # numpy crosses the object store without a copy
        _TRAIN_BATCH_PIPELINES[runner] = pipeline
    return pipeline


def _has_connector_state(runner) -> bool:
    """A remote runner whose pipelines keep state (e.g. MeanStdFilter): the driver merges and broadcasts it."""
    from relayrl.env.env_runner_group import _has_state

    return hasattr(runner, "get_connector_states") and (_has_state(runner._env_to_module)
                                                        or _has_state(runner._module_to_env))


class AsyncSampler:
    """The driver side of asynchronous sampling: keeps requests in flight, packs batches, broadcasts weights."""

    def __init__(self, algo):
        self.algo = algo
        self.group = algo.env_runner_group
        self.config = algo.config
        self._packer = TrainBatchPacker(algo.config.train_batch_size_per_learner)
        self._connector_states: Dict[int, dict] = {}  # worker_index -> its latest connector states
        self.env_steps_by_runner: Dict[int, int] = {}  # worker_index -> env steps it delivered (lifetime)
        self.wait_s = 0.0  # seconds collect() waited for ready results (lifetime; the driver idled)

    def collect(self) -> Tuple[List[Tuple[dict, int]], List[dict]]:
        """Train batches of >= train_batch_size_per_learner env steps ready now, and the runners' metrics."""
        self.group.probe_unhealthy_env_runners()
        self.group.require_healthy_runners()  # none left to restart: the iteration cannot sample (never "train on nothing")
        self.group.foreach_env_runner_async(sample_train_batch)
        # Wait for at least one result: with nothing ready there is nothing to do, and spinning would take the
        # GIL from the learner thread (and a core from the runners).
        start = time.perf_counter()
        results = self.group.fetch_ready_async_reqs(timeout_seconds=self.config.timeout_s_sampler_manager,
                                                    wait_for_one=True, sampling=True)
        self.wait_s += time.perf_counter() - start
        metrics = []
        for worker_index, (batch, steps, runner_metrics, states) in results:
            self._packer.add(batch, steps)
            self.env_steps_by_runner[worker_index] = self.env_steps_by_runner.get(worker_index, 0) + steps
            metrics.append(runner_metrics)
            if states is not None:
                self._connector_states[worker_index] = states
        self.algo.metrics.log_value((ENV_RUNNERS, "mean_num_episode_lists_received"), len(results))
        return self._packer.take(), metrics

    def broadcast_weights(self, weights_and_seq_no: Tuple[Dict[str, Any], int]) -> None:
        """Weights (and the connector states per merge / broadcast_env_runner_states) to every runner: `ray.put`
        once; each runner's next request carries them (EnvRunnerGroup.broadcast_state_async)."""
        weights, seq_no = weights_and_seq_no
        to_runners, to_restarted = self._connector_states_to_send()
        self.group.broadcast_state_async({"rl_module": weights, **to_runners}, seq_no=seq_no,
                                         restart_connector_states=to_restarted)

    def merged_connector_states_sent(self) -> Dict[str, Any]:
        """The driver's connector states: merged from the runners' (or, with merge_env_runner_states=False, the
        local runner's own, when broadcast); {} before the first sync or without stateful pieces."""
        return dict(self.group.connector_sync.base)

    def _connector_states_to_send(self) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """(for the runners, for restarted runners) per connector_state_sync.py: the merged states, the local
        runner's (merge_env_runner_states=False), or for the runners none (broadcast_env_runner_states=False: the
        merge stays on the driver, and only a restarted runner starts from it)."""
        local = self.group.local_env_runner
        if local is None:
            return {}, {}
        merge, broadcast = state_sync_mode(self.config)
        sync = self.group.connector_sync
        if merge:
            if self._connector_states:
                states, self._connector_states = self._connector_states, {}
                sync.merge(self.group.stateful_pipelines(local), states, broadcast=broadcast)
            merged = dict(sync.base)  # (sent again when nothing new came: the same object for restarted runners,
            return (merged if broadcast else {}), merged  # so the weights are put once)
        self._connector_states = {}
        reference = self.group.local_connector_states()
        if broadcast:
            sync.take_reference(reference)
            return reference, reference
        return {}, reference


ENV_RUNNERS = "env_runners"


class TrainBatchPacker:
    """Sampled batches in, train batches of at least `size` env steps out (RLlib's "packages")."""

    def __init__(self, size: int):
        self.size = size
        self._pending: List[Tuple[dict, int]] = []

    @property
    def pending(self) -> int:
        return sum(steps for _, steps in self._pending)

    def add(self, batch: dict, steps: int) -> None:
        self._pending.append((batch, steps))

    def take(self) -> List[Tuple[dict, int]]:
        packed = []
        while self.pending >= self.size:
            taken, total = [], 0
            while total < self.size:
                batch, steps = self._pending.pop(0)
                taken.append(batch)
                total += steps
            packed.append((concatenate_train_batches(taken), total))
        return packed


class LearnerThread:
    """Trains on batches from a bounded queue in a thread of its own (torch releases the GIL in its kernels).

    `put` blocks while the queue is full (back-pressure: the runners' next requests wait in Ray).
    Errors in the thread are raised in the driver at the next call.
    """

    def __init__(self, learner_group, learner_queue):
        self.learner_group = learner_group
        self._queue = learner_queue  # a bounded queue.Queue, or APPO's CircularBuffer
        self._results: List[Tuple[dict, int]] = []
        self._lock = threading.Lock()  # held during an update: weights are read between updates
        self._error: Optional[BaseException] = None
        self._stopping = False
        self.num_updates = 0
        self.num_batches_waited = 0  # puts that found the queue full and waited (lifetime)
        self.update_s = 0.0  # seconds spent in updates (lifetime)
        self._thread = threading.Thread(target=self._run, name="relayrl-learner-thread", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None or self._stopping:
                    return
                batch, steps, timesteps = item
                with self._lock:
                    start = time.perf_counter()
                    result = self.learner_group.update(batch=batch, timesteps=timesteps)
                    self.update_s += time.perf_counter() - start
                    self.num_updates += 1
                with self._lock:
                    self._results.append((result, steps))
            except BaseException as error:  # raised in the driver by _raise_error
                self._error = error
                return
            finally:
                self._queue.task_done()

    def _raise_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise RuntimeError(f"IMPALA's learner thread failed: {type(error).__name__}: {error}") from error

    def put(self, batch: dict, steps: int, timesteps: Dict[str, int]) -> None:
        self._raise_error()
        if self._queue.full():
            self.num_batches_waited += 1
        while True:
            try:
                self._queue.put((batch, steps, timesteps), timeout=1.0)
                break
            except queue.Full:
                self._raise_error()
                if not self._thread.is_alive():
                    raise RuntimeError("IMPALA's learner thread is not running.") from None

    def take_results(self) -> List[Tuple[dict, int]]:
        self._raise_error()
        with self._lock:
            results, self._results = self._results, []
        return results

    def weights(self) -> Tuple[Dict[str, Any], int]:
        """The module weights between two updates, and how many updates made them."""
        with self._lock:
            return self.learner_group.get_weights(inference_only=True), self.num_updates

    def stats(self) -> Dict[str, float]:
        return {"learner_queue_size": self._queue.qsize(), "num_batches_waited_lifetime": self.num_batches_waited,
                "num_learner_thread_updates_lifetime": self.num_updates}

    def pause(self):
        """A context in which no update runs (e.g. while the Learner's state is read for a checkpoint)."""
        return self._lock

    def stop(self) -> None:
        """Finish the update in progress and end the thread (batches still queued are not trained on)."""
        self._stopping = True
        try:
            self._queue.put_nowait(None)  # wakes a thread waiting for a batch
        except queue.Full:
            pass
        self._thread.join(timeout=60)
