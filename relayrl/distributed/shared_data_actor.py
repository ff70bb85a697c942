"""A key-value store in one Ray actor that other actors call (RLlib's example `SharedDataActor`): data that travels
beside the episodes, e.g. a callback's values on an EnvRunner read by a Learner connector piece.

Ray is imported when the actor is started, not when this module is imported (relayrl imports ray only here and in
relayrl/tune)."""


class SharedDataActor:
    """`put.remote(key, value)`, `get.remote(key, delete=False)` on the handle `start_shared_data_actor` returns."""

    def __init__(self):
        self.storage = {}

    def put(self, key, value) -> None:
        self.storage[key] = value

    def get(self, key, delete: bool = False):
        return self.storage.pop(key, None) if delete else self.storage.get(key)


def start_shared_data_actor():
    """A new SharedDataActor in Ray (which must be initialised): its handle."""
    import ray

    return ray.remote(SharedDataActor).remote()


def stop_shared_data_actor(handle) -> None:
    import ray

    ray.kill(handle)
