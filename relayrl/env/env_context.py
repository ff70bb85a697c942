"""`EnvContext`: the env_config dict handed to env creators, plus where the env lives."""


class EnvContext(dict):
    """A dict (the user's env_config) that also carries `worker_index`, `num_workers`, `vector_index`."""

    def __init__(self, env_config: dict, worker_index: int = 0, vector_index: int = 0, num_workers: int = 0,
                 remote: bool = False, recreated_worker: bool = False):
        super().__init__(env_config or {})
        self.worker_index = worker_index
        self.vector_index = vector_index
        self.num_workers = num_workers
        self.remote = remote
        self.recreated_worker = recreated_worker

    def copy_with_overrides(self, env_config=None, worker_index=None, vector_index=None, num_workers=None):
        return EnvContext(
            dict(self) if env_config is None else env_config,
            self.worker_index if worker_index is None else worker_index,
            self.vector_index if vector_index is None else vector_index,
            self.num_workers if num_workers is None else num_workers,
            self.remote,
            self.recreated_worker,
        )
