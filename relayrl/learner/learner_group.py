"""`LearnerGroup`: the Learner(s) of an algorithm behind one API (local by default; Ray actors to scale out)."""
from typing import Any, Callable, Dict, List, Optional


class LearnerGroup:
    def __init__(self, *, config, module_spec=None, spaces=None):
        self.config = config
        learner_cls = config.learner_class
        self._learner = learner_cls(config=config, module_spec=module_spec, spaces=spaces)
        self._learner.build()

    @property
    def is_local(self) -> bool:
        return True

    @property
    def is_remote(self) -> bool:
        return False

    def update(self, *, episodes=None, batch=None, timesteps=None, num_epochs=None, minibatch_size=None,
               shuffle_batch_per_epoch=None, **kwargs) -> Dict[str, Any]:
        return self._learner.update(episodes=episodes, batch=batch, timesteps=timesteps, num_epochs=num_epochs,
                                    minibatch_size=minibatch_size, shuffle_batch_per_epoch=shuffle_batch_per_epoch,
                                    **kwargs)

    def update_from_episodes(self, episodes, **kwargs) -> Dict[str, Any]:
        return self.update(episodes=episodes, **kwargs)

    def update_from_batch(self, batch, **kwargs) -> Dict[str, Any]:
        return self.update(batch=batch, **kwargs)

    def foreach_learner(self, func: Callable, **kwargs) -> List[Any]:
        return [func(self._learner)]

    def get_weights(self, module_ids=None, inference_only: bool = False) -> Dict[str, Any]:
        return self._learner.get_weights(module_ids=module_ids, inference_only=inference_only)

    def set_weights(self, weights: Dict[str, Any]) -> None:
        self._learner.set_weights(weights)

    def get_state(self, components=None, *, not_components=None, **kwargs) -> Dict[str, Any]:
        return {"learner": self._learner.get_state()}

    def set_state(self, state: Dict[str, Any]) -> None:
        self._learner.set_state(state["learner"])

    def get_module(self, module_id: Optional[str] = None):
        return self._learner.module if module_id is None else self._learner.module[module_id]

    def shutdown(self) -> None:
        self._learner.shutdown()
