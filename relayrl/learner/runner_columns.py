"""Train columns built on the EnvRunners with the first part of a Learner pipeline (up to BatchIndividualItems),
and the Learner running the rest of its pipeline on them (PPO's remote sampling)."""
from relayrl.connectors.common.batch_individual_items import BatchIndividualItems


class RunnerColumns(dict):
    """{module_id: {column: rows}} built by the runners with the Learner pipeline's first part: Learner.update
    runs the pieces after BatchIndividualItems on it (`finish_on_learner`)."""


def cut_after_batching(pipeline) -> None:
    """Keep the pipeline's pieces up to BatchIndividualItems (the runners' part: numpy, no tensors)."""
    del pipeline.connectors[_batching_end(pipeline):]


def finish_on_learner(learner, columns: RunnerColumns) -> dict:
    """The Learner pipeline's pieces after BatchIndividualItems (PPO's: to tensors, GAE) on the runners'
    columns; returns the module-keyed train batch."""
    pipeline = learner._learner_connector
    batch = dict(columns)
    for piece in pipeline.connectors[_batching_end(pipeline):]:
        batch = piece(rl_module=learner.module, batch=batch, episodes=[], explore=False, shared_data={},
                      metrics=learner.metrics)
    return batch


def _batching_end(pipeline) -> int:
    return next(i for i, piece in enumerate(pipeline.connectors) if isinstance(piece, BatchIndividualItems)) + 1
