"""The callbacks a Policy-based algorithm calls, with the old API stack's keyword arguments.

Episode hooks get both the old names (`worker`, `base_env`, `policies`, `episode`, `env_index`) and the new
ones (`env_runner`, `metrics_logger`, `env`), so callbacks written for either signature (with **kwargs) run.
`on_postprocess_trajectory` and `on_learn_on_batch` exist only on this stack: they are looked up on the
callbacks objects by name.
"""
from relayrl.callbacks import CallbackDispatch

OLD_STACK_HOOKS = ("on_postprocess_trajectory", "on_learn_on_batch")


class PolicyCallbacks:
    def __init__(self, config):
        self.dispatch = CallbackDispatch(config)
        self._old = {hook: tuple(getattr(obj, hook) for obj in self.dispatch.objects if callable(getattr(obj, hook, None)))
                     for hook in OLD_STACK_HOOKS}
        handlers = self.dispatch.handlers
        self.episode_start, self.episode_step = handlers("on_episode_start"), handlers("on_episode_step")
        self.episode_end, self.sample_end = handlers("on_episode_end"), handlers("on_sample_end")
        self.episode_created = handlers("on_episode_created")

    def on_postprocess_trajectory(self, **kwargs) -> None:
        for handler in self._old["on_postprocess_trajectory"]:
            handler(**kwargs)

    def on_learn_on_batch(self, **kwargs) -> None:
        for handler in self._old["on_learn_on_batch"]:
            handler(**kwargs)

    @property
    def wants_postprocess(self) -> bool:
        return bool(self._old["on_postprocess_trajectory"])


def episode_kwargs(runner, episode, env_index: int) -> dict:
    return {"worker": runner, "base_env": runner.env, "policies": runner.policy_map, "episode": episode,
            "env_index": env_index, "env_runner": runner, "metrics_logger": runner.metrics, "env": runner.env}
