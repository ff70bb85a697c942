"""`APPOWithSharedDataActor` (RLlib's example class): APPO plus one Ray actor that every EnvRunner and every
connector piece of the train-batch pipeline can reach, for data that must travel beside the episodes (e.g. the
example script's "special rewards", put by a callback on the EnvRunner and read by a Learner connector piece).

Each EnvRunner, and each piece of the Learner connector pipeline that turns its episodes into train batches,
gets the actor's handle as `_shared_data_actor`, also EnvRunners that are restarted after a failure. relayrl's
IMPALA and APPO build the train batches inside each EnvRunner (relayrl/algorithms/impala/async_sampling.py),
so those are the pipelines that get it. The actor holds the data in flight between sampling and learning;
it is not part of checkpoints.
"""
from relayrl.algorithms.appo import APPO
from relayrl.algorithms.impala.async_sampling import train_batch_pipeline
from relayrl.distributed.shared_data_actor import SharedDataActor, start_shared_data_actor, stop_shared_data_actor

__all__ = ["APPOWithSharedDataActor", "SharedDataActor"]


class APPOWithSharedDataActor(APPO):
    def setup(self, config) -> None:
        super().setup(config)
        self.shared_data_actor = start_shared_data_actor()
        self._share_with(self.env_runner_group)
        if self.eval_env_runner_group is not None:
            self._share_with(self.eval_env_runner_group)
        actor = self.shared_data_actor

        def share_with_learner(learner):
            for piece in learner._learner_connector.connectors if learner._learner_connector else ():
                piece._shared_data_actor = actor

        self.learner_group.foreach_learner(share_with_learner)

    def _share_with(self, group, env_runner_indices=None) -> None:
        actor = self.shared_data_actor

        def share(env_runner):
            env_runner._shared_data_actor = actor
            for piece in train_batch_pipeline(env_runner).connectors:
                piece._shared_data_actor = actor

        group.foreach_env_runner(share, remote_worker_ids=env_runner_indices)

    def _on_env_runners_recreated(self, *, env_runner_group, env_runner_indices) -> None:
        super()._on_env_runners_recreated(env_runner_group=env_runner_group, env_runner_indices=env_runner_indices)
        self._share_with(env_runner_group, env_runner_indices)  # restarted runners get the handle too

    def cleanup(self) -> None:
        super().cleanup()
        stop_shared_data_actor(self.shared_data_actor)
