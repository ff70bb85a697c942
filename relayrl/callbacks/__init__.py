"""`RLlibCallback` (alias `DefaultCallbacks`), `make_multi_callbacks` and the dispatch relayrl uses.

Subclass `RLlibCallback`, override the hooks you need and pass the class to
`config.callbacks(MyCallbacks)`; per-event callables go in `config.callbacks(on_episode_end=fn)`.
Every hook is keyword-only and takes `**kwargs` (arguments may be added later).

Hooks a class does not override cost nothing: `CallbackDispatch` finds the overridden ones once
(by comparing with `RLlibCallback`'s own functions) and the EnvRunner skips every event that has
no handler. This module imports neither torch nor gymnasium.
"""
import inspect
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

__all__ = ["RLlibCallback", "DefaultCallbacks", "make_multi_callbacks", "CALLBACK_HOOKS", "CallbackDispatch"]

# Every event, in the order RLlib's config.callbacks() lists them (relayrl's subset).
CALLBACK_HOOKS: Tuple[str, ...] = (
    "on_algorithm_init",
    "on_train_result",
    "on_evaluate_start",
    "on_evaluate_offline_start",
    "on_evaluate_end",
    "on_evaluate_offline_end",
    "on_env_runners_recreated",
    "on_checkpoint_loaded",
    "on_environment_created",
    "on_episode_created",
    "on_episode_start",
    "on_episode_step",
    "on_episode_end",
    "on_sample_end",
)


class RLlibCallback:
    """Base class of user callbacks: every hook is a keyword-only no-op."""

    _checkpoint_kind = "callbacks"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)

    # -- Algorithm-side hooks --------------------------------------------------------------------
    def on_algorithm_init(self, *, algorithm, metrics_logger=None, **kwargs) -> None:
        """At the end of the Algorithm's setup."""

    def on_train_result(self, *, algorithm, metrics_logger=None, result: dict, **kwargs) -> None:
        """At the end of `Algorithm.train()`; `result` may be changed in place (train() returns it)."""

    def on_evaluate_start(self, *, algorithm, metrics_logger=None, **kwargs) -> None:
        """Before an evaluation run."""

    def on_evaluate_end(self, *, algorithm, metrics_logger=None, evaluation_metrics: dict, **kwargs) -> None:
        """After an evaluation run; `evaluation_metrics` may be changed in place."""

    def on_evaluate_offline_start(self, *, algorithm, metrics_logger=None, **kwargs) -> None:
        """Before an offline evaluation (the loss on offline data, `Algorithm.evaluate_offline()`)."""

    def on_evaluate_offline_end(self, *, algorithm, metrics_logger=None, evaluation_metrics: dict,
                                **kwargs) -> None:
        """After an offline evaluation; `evaluation_metrics` may be changed in place."""

    def on_env_runners_recreated(self, *, algorithm, env_runner_group, env_runner_indices: List[int],
                                 is_evaluation: bool, **kwargs) -> None:
        """After failed EnvRunners were recreated."""

    def on_checkpoint_loaded(self, *, algorithm, **kwargs) -> None:
        """After an Algorithm's state was restored from a checkpoint."""

    # -- EnvRunner-side hooks ----------------------------------------------------------------------
    def on_environment_created(self, *, env_runner, metrics_logger=None, env, env_context, **kwargs) -> None:
        """After an EnvRunner made its (vector) env; `env_context` is the runner's EnvContext."""

    def on_episode_created(self, *, episode, env_runner=None, metrics_logger=None, env=None, env_index: int,
                           rl_module=None, **kwargs) -> None:
        """A new episode object exists; its sub-env's reset data is not in it yet."""

    def on_episode_start(self, *, episode, env_runner=None, metrics_logger=None, env=None, env_index: int,
                         rl_module=None, **kwargs) -> None:
        """The reset observation and info are in the episode."""

    def on_episode_step(self, *, episode, env_runner=None, metrics_logger=None, env=None, env_index: int,
                        rl_module=None, **kwargs) -> None:
        """After each env step was added to the episode (also the last one)."""

    def on_episode_end(self, *, episode, prev_episode_chunks: Optional[List] = None, env_runner=None,
                       metrics_logger=None, env=None, env_index: int, rl_module=None, **kwargs) -> None:
        """After the final step and the extra env-to-module call on the terminal observation.

        `prev_episode_chunks`: the chunks of this episode that earlier `sample()` calls handed out.
        """

    def on_sample_end(self, *, env_runner=None, metrics_logger=None, samples: List, **kwargs) -> None:
        """At the end of `EnvRunner.sample()`; the episodes in `samples` may be changed in place."""


DefaultCallbacks = RLlibCallback

_BASE_HOOKS: Dict[str, Callable] = {name: RLlibCallback.__dict__[name] for name in CALLBACK_HOOKS}


def overrides_hook(cls_or_obj: Any, hook: str) -> bool:
    """Whether a callbacks class (or instance) overrides `hook` of RLlibCallback."""
    cls = cls_or_obj if isinstance(cls_or_obj, type) else type(cls_or_obj)
    fn = getattr(cls, hook, None)
    return fn is not None and fn is not _BASE_HOOKS[hook]


def _check_callback_classes(classes: Sequence) -> None:
    for cls in classes:
        if not (isinstance(cls, type) and issubclass(cls, RLlibCallback)):
            raise TypeError(f"callbacks classes must be RLlibCallback subclasses, got {cls!r}.")


def make_multi_callbacks(callback_class_list: Sequence[type]) -> type:
    """A RLlibCallback class whose instances run an instance of each given class, in list order."""
    classes = list(callback_class_list)
    _check_callback_classes(classes)

    class _MultiCallbacks(RLlibCallback):
        IS_CALLBACK_CONTAINER = True

        def __init__(self):
            super().__init__()
            self._callback_list = [cls() for cls in classes]

    def forwarder(hook: str) -> Callable:
        def forward(self, **kwargs):
            for callback in self._callback_list:
                getattr(callback, hook)(**kwargs)

        forward.__name__ = forward.__qualname__ = hook
        return forward

    # Only hooks some class overrides get a forwarder, so the others stay free.
    for hook in CALLBACK_HOOKS:
        if any(overrides_hook(cls, hook) for cls in classes):
            setattr(_MultiCallbacks, hook, forwarder(hook))
    _MultiCallbacks.__name__ = _MultiCallbacks.__qualname__ = (
        "MultiCallbacks[" + ", ".join(cls.__name__ for cls in classes) + "]")
    return _MultiCallbacks


# The old API stack's keyword names of the EnvRunner-side hooks (`worker`, `base_env`, `policies`): a handler written
# for them (seed 000: `on_episode_start(self, *, worker, base_env, policies, episode, env_index, **kwargs)`) gets
# them next to today's, taken from today's.
_OLD_KEYWORDS = {"worker": "env_runner", "base_env": "env", "policies": "rl_module"}


def with_old_keywords(handler: Callable) -> Callable:
    """`handler` itself, or (if it names an old keyword) a function calling it with the old keywords added and only
    the keywords it takes (unless it takes **kwargs)."""
    try:
        params = inspect.signature(handler).parameters
    except (TypeError, ValueError):  # a builtin or C callable: called as it is
        return handler
    if not any(name in params for name in _OLD_KEYWORDS):
        return handler
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())

    def call(**kwargs):
        for old, new in _OLD_KEYWORDS.items():
            if old not in kwargs and new in kwargs:
                kwargs[old] = _policies(kwargs[new]) if old == "policies" else kwargs[new]
        handler(**(kwargs if takes_any else {k: v for k, v in kwargs.items() if k in params}))

    return call


def _policies(rl_module) -> Dict[str, Any]:
    """The old stack's `policies` (policy id -> policy) as today's modules by module id."""
    from relayrl.core.columns import DEFAULT_MODULE_ID

    if rl_module is None:
        return {}
    return dict(rl_module.items()) if hasattr(rl_module, "items") else {DEFAULT_MODULE_ID: rl_module}


def _as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


class CallbackDispatch:
    """The callbacks of one Algorithm or EnvRunner, built from a config.

    `handlers(hook)` is the tuple of things to call for an event (empty when nothing listens):
    the overridden methods of the callbacks objects in order, then the config's callables for
    that event in list order. `objects` holds the instances of `config.callbacks_class`.
    """

    def __init__(self, config: Any = None):
        spec = getattr(config, "callbacks_class", RLlibCallback) if config is not None else RLlibCallback
        classes = _as_list(spec) or [RLlibCallback]
        self._configured_list = isinstance(spec, (list, tuple))
        _check_callback_classes(classes)
        self.objects: List[RLlibCallback] = [cls() for cls in classes]
        self._handlers: Dict[str, Tuple[Callable, ...]] = {}
        for hook in CALLBACK_HOOKS:
            methods = [getattr(obj, hook) for obj in self.objects if overrides_hook(obj, hook)]
            functions = _as_list(getattr(config, hook, None)) if config is not None else []
            self._handlers[hook] = tuple(map(with_old_keywords, methods + functions))

    @property
    def callbacks(self):
        """RLlib's `algo.callbacks`: the instance, or a list of them when a list of classes was configured."""
        return list(self.objects) if self._configured_list else self.objects[0]

    def handlers(self, hook: str) -> Tuple[Callable, ...]:
        return self._handlers[hook]

    def __call__(self, hook: str, **kwargs) -> None:
        for handler in self._handlers[hook]:
            handler(**kwargs)
