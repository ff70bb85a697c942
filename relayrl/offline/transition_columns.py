"""The offline fast path: transition rows -> the train-batch columns the Learner pipeline would build from them.

Read as RLlib does, each transition row is a one-step episode (obs, next obs, action, reward, done flags, extra
model outputs), and the Learner connector pipeline turns the episodes into the train batch. When that pipeline's
episode-reading part is made of relayrl's default pieces only, the batch is a plain rearrangement of the columns:
this object builds it with a few array operations instead of one episode object per row, and the Learner runs the
pipeline's remaining pieces (NumpyToTensor, GAE) on it (learner/runner_columns.py), exactly as on the episodes'
batch (tests/offline/test_transition_columns.py compares both for BC, MARWIL, CQL and IQL).

It applies when: transition rows (not episode rows; under config.multi_agent(...) they train its one trained
module), the default OfflinePreLearner, and a pipeline
whose pieces up to BatchIndividualItems are (in order) AddOneTsToEpisodesAndTruncate (optional, first),
AddObservationsFromEpisodesToBatch, AddNextObservationsFromEpisodesToTrainBatch (optional),
AddColumnsFromEpisodesToTrainBatch, the recurrent pieces only where they skip the module (stateless),
AgentToModuleMapping (multi-agent; optional), then BatchIndividualItems; and after it only NumpyToTensor and
GeneralAdvantageEstimation. Anything else (a piece of the user's, a recurrent module) takes the general path
through episodes.
"""
from typing import Dict, Optional

import numpy as np

from relayrl.connectors.common.add_observations_from_episodes_to_batch import AddObservationsFromEpisodesToBatch
from relayrl.connectors.common.agent_to_module_mapping import AgentToModuleMapping
from relayrl.connectors.common.batch_individual_items import BatchIndividualItems
from relayrl.connectors.common.numpy_to_tensor import NumpyToTensor
from relayrl.connectors.learner.add_columns_from_episodes_to_train_batch import AddColumnsFromEpisodesToTrainBatch
from relayrl.connectors.learner.add_next_observations_from_episodes_to_train_batch import (
    AddNextObservationsFromEpisodesToTrainBatch,
)
from relayrl.connectors.learner.add_one_ts_to_episodes_and_truncate import AddOneTsToEpisodesAndTruncate
from relayrl.connectors.learner.general_advantage_estimation import GeneralAdvantageEstimation
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.learner.runner_columns import RunnerColumns

_AFTER_BATCHING = (NumpyToTensor, GeneralAdvantageEstimation)


class TransitionColumns:
    """Builds the Learner's train-batch columns from transition columns (see the module docstring)."""

    def __init__(self, *, one_ts: bool, next_obs: bool, module_id: str = DEFAULT_MODULE_ID):
        self.one_ts = one_ts  # AddOneTsToEpisodesAndTruncate first: each row gets its artificial step after it
        self.next_obs = next_obs  # AddNextObservationsFromEpisodesToTrainBatch: a `new_obs` column
        self.module_id = module_id  # the module the rows train

    @classmethod
    def for_learner(cls, learner, module_id: str = DEFAULT_MODULE_ID) -> Optional["TransitionColumns"]:
        """The fast path for this Learner's pipeline and module (the rows train `module_id`), or None where it does
        not apply."""
        pipeline = learner._learner_connector
        if pipeline is None:
            return None
        pieces = [type(piece) for piece in pipeline._active_pieces(learner.module)]
        if BatchIndividualItems not in pieces:
            return None
        cut = pieces.index(BatchIndividualItems)
        front, back = pieces[:cut], pieces[cut + 1:]
        if not all(kind in _AFTER_BATCHING for kind in back):
            return None
        if front and front[-1] is AgentToModuleMapping:  # multi-agent: the batch is keyed by module already
            front = front[:-1]
        one_ts = bool(front) and front[0] is AddOneTsToEpisodesAndTruncate
        if one_ts:
            front = front[1:]
        next_obs = AddNextObservationsFromEpisodesToTrainBatch in front
        expected = [AddObservationsFromEpisodesToBatch, *([AddNextObservationsFromEpisodesToTrainBatch] * next_obs),
                    AddColumnsFromEpisodesToTrainBatch]
        if front != expected:
            return None
        return cls(one_ts=one_ts, next_obs=next_obs, module_id=module_id)

    def __call__(self, columns: Dict[str, np.ndarray], extra: Dict[str, np.ndarray]) -> RunnerColumns:
        """`columns`: obs, new_obs, actions, rewards, terminateds, truncateds (conformed to the spaces); `extra`:
        the extra model outputs. Returns {module id: {column: array}} for Learner.update(batch=...)."""
        obs, next_obs = columns[Columns.OBS], columns[Columns.NEXT_OBS]
        terminateds = columns[Columns.TERMINATEDS].astype(bool)
        batch = {Columns.OBS: obs, Columns.ACTIONS: columns[Columns.ACTIONS],
                 Columns.REWARDS: columns[Columns.REWARDS].astype(np.float32), Columns.TERMINATEDS: terminateds,
                 Columns.TRUNCATEDS: columns[Columns.TRUNCATEDS].astype(bool), **extra}
        if self.next_obs:
            batch[Columns.NEXT_OBS] = next_obs
        if self.one_ts:
            batch = _with_artificial_steps(batch, next_obs)
        return RunnerColumns({self.module_id: batch})


def _with_artificial_steps(batch: Dict[str, np.ndarray], next_obs: np.ndarray) -> Dict[str, np.ndarray]:
    """AddOneTsToEpisodesAndTruncate on one-step episodes: after each row, a step at the next observation with the
    same action and extra outputs, reward 0, terminated and truncated, outside the loss."""
    n = len(next_obs)
    artificial = {
        Columns.OBS: next_obs,
        Columns.REWARDS: np.zeros(n, np.float32),
        Columns.TERMINATEDS: np.ones(n, bool),
        Columns.TRUNCATEDS: np.ones(n, bool),
    }
    out = {column: _interleave(values, artificial.get(column, values)) for column, values in batch.items()}
    out[Columns.TRUNCATEDS] = _interleave(np.zeros(n, bool), np.ones(n, bool))  # the real step: never truncated
    out[Columns.LOSS_MASK] = _interleave(np.ones(n, bool), np.zeros(n, bool))
    return out


def _interleave(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """[first[0], second[0], first[1], second[1], ...]."""
    out = np.empty((2 * len(first),) + first.shape[1:], dtype=np.result_type(first, second))
    out[0::2], out[1::2] = first, second
    return out


__all__ = ["TransitionColumns"]
