"""PPO with remote EnvRunners: compact train-batch columns cross the object store, not episodes.

Each runner runs the first part of PPO's Learner pipeline on its own sample (each chunk's bootstrap step, then
observations, actions, rewards, flags and log-probs joined into arrays by BatchIndividualItems), as IMPALA's
runners do. The driver joins the runners' arrays without touching an episode, and the Learner runs the rest
of its pipeline (numpy -> tensors, GAE) on the joined batch: GAE's value pass and the advantage
standardisation see the whole batch, as they do with episodes, so training is the same (tested bit for bit).

Used where that holds: remote runners, one agent, a module without recurrent state (recurrent batches are cut
into per-episode sequences on the Learner), and the default Learner pipeline (no `learner_connector` pieces of
the user's, whose position relative to the split is unknown). A user's own training_step that calls
`sample_episodes` gets episodes as before.
"""
import weakref
from typing import List, Tuple

from relayrl.algorithms.train_batch_columns import concatenate_train_batches
from relayrl.connectors.learner.add_one_ts_to_episodes_and_truncate import AddOneTsToEpisodesAndTruncate
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.learner.runner_columns import RunnerColumns, cut_after_batching

# EnvRunner -> the pipeline's first part (inside the actor); weak keys: an entry goes with its runner (keyed by
# id(), a later runner at a freed runner's address got that one's pipeline, as async_sampling.py's did).
_RUNNER_PIPELINES: "weakref.WeakKeyDictionary[object, object]" = weakref.WeakKeyDictionary()


def applies(algo) -> bool:
    config = algo.config
    return (algo.env_runner_group.is_remote and not config.is_multi_agent and config.learner_connector is None
            and config.add_default_connectors_to_learner_pipeline and not _stateful(algo))


def _stateful(algo) -> bool:
    return bool(algo.learner_group.foreach_learner(
        lambda learner: any(module.is_stateful() for module in learner.module.values()))[0])


def sample_columns(runner) -> Tuple[dict, int, dict]:
    """Runs inside an EnvRunner actor: one sample() -> (train-batch columns, env steps, the runner's metrics)."""
    episodes = runner.sample()
    steps = sum(len(e) for e in episodes)
    pipeline = _RUNNER_PIPELINES.get(runner)
    if pipeline is None:
        obs_space, act_space = runner.get_spaces()["__env_single__"]
        pipeline = runner.config.build_learner_connector(obs_space, act_space)
        pipeline.prepend(AddOneTsToEpisodesAndTruncate())
        cut_after_batching(pipeline)
        _RUNNER_PIPELINES[runner] = pipeline
    batch = pipeline(rl_module=runner.module, batch={}, episodes=episodes, explore=False, shared_data={})
    if DEFAULT_MODULE_ID not in batch:  # a single RLModule's columns: key them as the Learner's batches are
        batch = {DEFAULT_MODULE_ID: batch}
    return batch, steps, runner.get_metrics()


def sample(algo, max_env_steps: int) -> Tuple[RunnerColumns, int, List[dict]]:
    """At least `max_env_steps` env steps from the remote runners as one batch of columns (runner order)."""
    batches, steps, metrics = algo.env_runner_group.sample_train_columns(max_env_steps=max_env_steps,
                                                                           func=sample_columns)
    return RunnerColumns(concatenate_train_batches(batches) if batches else {}), steps, metrics
