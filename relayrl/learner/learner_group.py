"""`LearnerGroup`: the Learner(s) of an algorithm behind one API.

num_learners=0 (default): one Learner in this process. num_learners=1: one Learner in a Ray actor.
num_learners>1: that many Ray actors training data-parallel with torch DDP, each on an equal shard
of every train batch (relayrl/distributed/learner_actors.py; docs/learners.md).
"""
from typing import Any, Callable, Dict, Hashable, List, Optional

from relayrl.checkpoints.checkpointable import Checkpointable
from relayrl.modules.partial_module_state import partial_module_states_allowed


class LearnerGroup(Checkpointable):
    def __init__(self, *, config, module_spec=None, spaces=None):
        self.config = config
        self._module_spec = module_spec
        self._learner = None  # the local Learner (num_learners=0)
        self._remote = None  # the Learner actors (num_learners>0)
        self._module_copy = None  # a local module for get_module() with remote Learners
        if getattr(config, "num_learners", 0):
            from relayrl.distributed.learner_actors import RemoteLearners  # imports ray

            self._remote = RemoteLearners(config=config, module_spec=module_spec, spaces=spaces)
        else:
            self._learner = config.learner_class(config=config, module_spec=module_spec, spaces=spaces)
            self._learner.build()

    @property
    def is_local(self) -> bool:
        return self._remote is None

    @property
    def is_remote(self) -> bool:
        return self._remote is not None

    @property
    def num_learners(self) -> int:
        return 0 if self._remote is None else self._remote.num_learners

    def update(self, *, episodes=None, batch=None, timesteps=None, num_epochs=None, minibatch_size=None,
               shuffle_batch_per_epoch=None, **kwargs) -> Dict[str, Any]:
        """Train on `episodes` or a ready `batch`; with remote Learners, minibatch_size counts over all of them."""
        target = self._learner if self._remote is None else self._remote
        return target.update(episodes=episodes, batch=batch, timesteps=timesteps, num_epochs=num_epochs,
                             minibatch_size=minibatch_size, shuffle_batch_per_epoch=shuffle_batch_per_epoch,
                             **kwargs)

    def reduce_results(self) -> Dict[str, Any]:
        """The Learners' metrics since their last reduce (after updates with `reduce_metrics=False`)."""
        if self._remote is None:
            return self._learner.reduce_results()
        from relayrl.distributed.learner_actors import reduce_learner_results

        return reduce_learner_results(self._remote.foreach_learner(lambda learner: learner.reduce_results()))

    def update_from_episodes(self, episodes, **kwargs) -> Dict[str, Any]:
        return self.update(episodes=episodes, **kwargs)

    def update_from_batch(self, batch, **kwargs) -> Dict[str, Any]:
        return self.update(batch=batch, **kwargs)

    def foreach_learner(self, func: Callable, **kwargs) -> List[Any]:
        """func(learner) on every Learner (in its actor when remote); the results in Learner order."""
        if self._remote is None:
            return [func(self._learner)]
        return self._remote.foreach_learner(func)

    def get_weights(self, module_ids=None, inference_only: bool = False) -> Dict[str, Any]:
        if self._remote is None:
            return self._learner.get_weights(module_ids=module_ids, inference_only=inference_only)
        return self._remote.call_first("get_weights", module_ids=module_ids, inference_only=inference_only)

    def set_weights(self, weights: Dict[str, Any]) -> None:
        if self._remote is None:
            self._learner.set_weights(weights)
        else:
            self._remote.call_all("set_weights", weights)

    def weights_version(self) -> Hashable:
        """A token that changes whenever the (first) Learner's module weights may have changed
        (relayrl/learner/weights_version.py): a copy of them is refreshed only when it differs."""
        if self._remote is None:
            from relayrl.learner.weights_version import weights_version

            return weights_version(self._learner)
        return self._remote.call_first("weights_version")

    def get_state(self, components=None, *, not_components=None, **kwargs) -> Dict[str, Any]:
        """{"learner": the (first) Learner's state}; components like "learner/rl_module" select inside it."""
        from relayrl.checkpoints.checkpointable import selected, sub_components

        if not selected("learner", components, not_components):
            return {}
        inner = sub_components("learner", components), sub_components("learner", not_components)
        if self._remote is None:
            state = self._learner.get_state(inner[0], not_components=inner[1])
        else:
            state = self._remote.call_first("get_state", inner[0], not_components=inner[1])
        # Filter again: Learner subclasses add their own entries after super().get_state().
        return {"learner": {k: v for k, v in state.items() if selected(k, inner[0], inner[1])}}

    def check_state(self, state: Dict[str, Any], where) -> None:
        """The Learner's check (the first remote Learner's, with remote Learners; they are identical)."""
        from relayrl.checkpoints.errors import CheckpointError
        from relayrl.checkpoints.state_checks import check_mapping

        check_mapping(state, where, known=("learner",), required=("learner",), owner="a LearnerGroup")
        if self._remote is None:
            self._learner.check_state(state["learner"], where / "learner")
            return
        try:
            self._remote.call_first("check_state", state["learner"], where / "learner",
                                    partial_modules=partial_module_states_allowed())
        except CheckpointError:
            raise
        except Exception as error:  # Ray wraps the actor's CheckpointError in its own error type
            cause = getattr(error, "cause", None)
            raise (cause if isinstance(cause, CheckpointError) else error) from None

    def set_state(self, state: Dict[str, Any]) -> None:
        if self._remote is None:
            self._learner.set_state(state["learner"])
        else:
            self._remote.call_all("set_state", state["learner"], partial_modules=partial_module_states_allowed())

    def get_module(self, module_id: Optional[str] = None):
        """The (Multi)RLModule; with remote Learners a local copy holding the first Learner's weights."""
        if self._remote is None:
            module = self._learner.module
        else:
            if self._module_copy is None:
                from relayrl.modules.multi_rl_module import MultiRLModule

                module = self._module_spec.build()
                self._module_copy = module if isinstance(module, MultiRLModule) else module.as_multi_rl_module()
            module = self._module_copy
            for mid, state in self.get_weights().items():
                module[mid].set_state(state)
        return module if module_id is None else module[module_id]

    def shutdown(self) -> None:
        if self._remote is None:
            self._learner.shutdown()
        else:
            self._remote.shutdown()
