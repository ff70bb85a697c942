"""`TrainableBase`: Algorithm's base class, a `ray.tune.Trainable` exactly when Ray Tune is loaded.

Tune accepts only real `ray.tune.Trainable` subclasses (`register_trainable` checks
`issubclass`, and Trainable's metaclass is plain `type`, so no `__subclasshook__` can help).
But importing ray.tune costs about a second, which the embedded path must not pay. So:

- `TrainableBase` starts as a subclass of the empty `_Rebasable` placeholder. A placeholder is
  needed because CPython refuses `__bases__` assignment on a class whose base is `object`
  ("deallocator differs"); two plain heap classes have the same layout, so the swap is allowed.
- When ray.tune is imported -- before or after relayrl, in the driver or in a Ray worker --
  `become_tune_trainable()` sets `TrainableBase.__bases__ = (ray.tune.Trainable,)`. CPython then
  recomputes the MRO of every Algorithm subclass: `issubclass(PPO, Trainable)` holds.
  Import order is handled by `install()`: ray.tune already loaded -> re-base now; otherwise
  (ray loaded or not) -> a one-shot meta-path hook re-bases right after a later `import ray.tune`
  finishes. relayrl never imports ray.tune itself: it costs seconds and needs pydantic, and a
  program that imported ray for other reasons may never use Tune. A Tune trial actor is covered
  too: Tune built it, so `_init_tune_trainable` imports ray.tune (firing the hook) before it
  checks the re-basing.
- This is relayrl's one import-time side effect (docs/architecture.md says why).
- The Trainable protocol maps onto the Algorithm: `train()` is Trainable's (it calls `step()`,
  the Algorithm's iteration) when Tune built the algorithm; `save_checkpoint` / `load_checkpoint`
  use the algorithm's checkpoints; `reset(new_config)` keeps `algo.config` an AlgorithmConfig and
  calls `reset_config`; `stop()` calls `cleanup()`. Built outside Tune (`PPO(config)`), nothing
  of Trainable's machinery runs, whether or not ray.tune is loaded.

Nothing here imports ray at import time.
"""
import importlib.abc
import os
import sys
from typing import Any, Dict, Optional, Tuple

# Tune's private entries in a trial's config dict (TRIAL_INFO, STDOUT_FILE, STDERR_FILE).
_TUNE_PRIVATE_PREFIX = "__"


class _Rebasable:
    """Placeholder base: a heap class, so that TrainableBase's bases can be swapped later."""


def split_tune_entries(config: Any) -> Tuple[Any, Dict[str, Any]]:
    """(config without Tune's `__trial_info__`-style entries, those entries)."""
    if not isinstance(config, dict):
        return config, {}
    private = {k: v for k, v in config.items() if isinstance(k, str) and k.startswith(_TUNE_PRIVATE_PREFIX)
               and k.endswith(_TUNE_PRIVATE_PREFIX)}
    if not private:
        return config, {}
    return {k: v for k, v in config.items() if k not in private}, private


def _trainable_cls():
    from ray.tune import Trainable

    return Trainable


def _no_setup(config) -> None:
    """Stands in for `setup` while Trainable.__init__ runs (the Algorithm builds itself afterwards)."""


class _TuneBookkeeping:
    """What Tune's Trainable.__init__ added to an Algorithm: the attribute names. Kept as an object, not
    plain numbers: checkpoints store an algorithm's plain attributes, and Tune's counters (and the
    "built by Tune" mark) must neither travel in a checkpoint nor be overwritten by one."""

    def __init__(self, names):
        self.names = frozenset(names)


class _InitialState:
    """The state right after a Tune-built algorithm's setup (an object: not a checkpointed attribute)."""

    def __init__(self, state):
        self.state = state


class TrainableBase(_Rebasable):
    """The Trainable side of `Algorithm`; see the module docstring."""

    # -- Tune's construction -----------------------------------------------------------------------
    def _init_tune_trainable(self, tune_entries: Dict[str, Any], storage) -> None:
        """Run ray.tune.Trainable.__init__ for its bookkeeping (trial info, trial dir, log files,
        counters) without letting it call setup(): the Algorithm builds itself from its
        AlgorithmConfig right after."""
        trainable = _trainable_cls()
        if not isinstance(self, trainable):
            raise RuntimeError("Tune built a relayrl Algorithm, but relayrl.tune did not make it a "
                               "ray.tune.Trainable; import relayrl.tune (or ray.tune) before building.")
        before = set(vars(self))
        self.setup = _no_setup  # an instance attribute shadows the method while Trainable.__init__ runs
        try:
            trainable.__init__(self, config=dict(tune_entries), storage=storage)
        finally:
            del self.setup
        self._tune_bookkeeping = _TuneBookkeeping(set(vars(self)) - before - {"config"})

    @property
    def _built_by_tune(self) -> bool:
        return isinstance(self.__dict__.get("_tune_bookkeeping"), _TuneBookkeeping)

    def _tune_trainable_call(self, name: str, *args):
        """ray.tune.Trainable's own `name` method (for methods the Algorithm also defines)."""
        return getattr(_trainable_cls(), name)(self, *args)

    # -- counters: Algorithm's own (Trainable's `_iteration` is Tune's bookkeeping) ------------------
    @property
    def iteration(self) -> int:
        """Number of completed train() calls."""
        return self.__dict__.get("_algorithm_iteration", 0)

    @iteration.setter
    def iteration(self, value: int) -> None:
        self.__dict__["_algorithm_iteration"] = value

    @property
    def training_iteration(self) -> int:
        return self.iteration

    # -- the Trainable protocol -----------------------------------------------------------------------
    def train(self) -> Dict[str, Any]:
        """One training iteration; returns the result dict (RLlib's keys).

        Built by Tune: ray.tune.Trainable.train, which calls `step()` and adds Tune's fields."""
        if self._built_by_tune:
            return _trainable_cls().train(self)
        return self.step()

    def stop(self) -> None:
        """Close envs and release learners; the algorithm is unusable afterwards."""
        if self._built_by_tune:
            _trainable_cls().stop(self)  # stops Tune's monitor, calls cleanup(), closes log files
        else:
            self.cleanup()

    def save_checkpoint(self, checkpoint_dir: str) -> str:
        """Tune's hook: write this algorithm's checkpoint into `checkpoint_dir`."""
        self.save_to_path(checkpoint_dir)
        return checkpoint_dir

    def load_checkpoint(self, checkpoint) -> None:
        """Tune's hook: restore weights, optimiser states, counters and connector states.

        The hyper-parameters in force stay those of `self.config`: after a PBT exploit Tune calls
        `reset(new_config)` and then this, and the perturbed values must survive the restore.
        """
        if isinstance(checkpoint, dict):  # Tune passes a dict only for dict checkpoints (not ours)
            raise TypeError("relayrl algorithms save directory checkpoints; got a dict checkpoint")
        self._load_keeping_config(lambda: self.restore_from_path(os.fspath(checkpoint)))

    def _load_keeping_config(self, load) -> None:
        """Run `load()` (a set_state); then put back the config, its hyper-parameters (optimiser
        states carry their own lr) and Tune's bookkeeping (checkpoints carry stale copies)."""
        config = self.config
        names = self._tune_bookkeeping.names if self._built_by_tune else ()
        tune_counters = {name: self.__dict__[name] for name in names if name in self.__dict__}
        load()
        for name in names:
            if name in tune_counters:
                self.__dict__[name] = tune_counters[name]
            else:
                self.__dict__.pop(name, None)
        if self.config is not config:
            self.config = config
        self._apply_hyperparameters(config)

    def _remember_initial_state(self) -> None:
        """Called once the algorithm is built under Tune: a reused actor's next trial starts from here."""
        self._tune_initial_state = _InitialState(self.get_state())

    def reset(self, new_config, storage=None) -> bool:
        """Tune's reuse of this actor for another trial (reuse_actors=True, PBT exploits).

        Trainable.reset stores the raw dict as `self.config`; the Algorithm keeps its
        AlgorithmConfig (the new one if reset_config accepted the change, else the old one)."""
        current = self.config
        self._config_before_reset = current
        try:
            accepted = _trainable_cls().reset(self, new_config, storage)
        finally:
            del self._config_before_reset
            if isinstance(self.config, dict):
                self.config = current
        if accepted:
            # A new trial starts from the freshly built state (weights, optimisers, counters, RNGs,
            # episodes), with the new hyper-parameters; a PBT exploit then restores the donor's checkpoint.
            initial = self.__dict__.get("_tune_initial_state")
            if initial is not None:
                self._load_keeping_config(lambda: self.set_state(initial.state))
        return accepted

    def get_auto_filled_metrics(self, *args, **kwargs) -> dict:
        filled = _trainable_cls().get_auto_filled_metrics(self, *args, **kwargs)
        if hasattr(filled.get("config"), "to_dict"):
            filled["config"] = filled["config"].to_dict()  # results carry plain data
        return filled

    @classmethod
    def default_resource_request(cls, config):
        """Tune's resources for one trial: 1 CPU for the algorithm in the trial's process, plus
        one placement-group bundle per remote EnvRunner and per remote Learner."""
        from ray.tune import PlacementGroupFactory

        from relayrl.tune.resources import resource_bundles

        return PlacementGroupFactory(resource_bundles(cls, config))


# -- making TrainableBase a ray.tune.Trainable ------------------------------------------------------

def is_tune_trainable() -> bool:
    """True once TrainableBase (and so every relayrl Algorithm) derives from ray.tune.Trainable."""
    return TrainableBase.__bases__ != (_Rebasable,)


def become_tune_trainable() -> None:
    """Re-base TrainableBase onto ray.tune.Trainable and let Tune take an AlgorithmConfig as a
    `param_space` (Tune converts any registered `_Config` with to_dict())."""
    trainable = _trainable_cls()
    if TrainableBase.__bases__ != (trainable,):
        TrainableBase.__bases__ = (trainable,)
    from ray.tune.tune import _Config

    from relayrl.algorithms.algorithm_config import AlgorithmConfig
    from relayrl.env.registry import share_registered_envs_with_ray

    _Config.register(AlgorithmConfig)
    _register_algorithm_names()
    share_registered_envs_with_ray()  # Tune's trials run in other processes
    from relayrl.tune.result_key_checks import install as install_result_key_checks

    install_result_key_checks()


def _register_algorithm_names() -> None:
    """`tune.Tuner("PPO")`: every algorithm of relayrl's registry (and those registered later) by name."""
    from ray.tune.registry import register_trainable

    from relayrl.algorithms import registry

    def register(entry) -> None:
        register_trainable(entry.name, registry.get_algorithm_class(entry.name))

    def register_all() -> None:
        for name in registry.algorithm_names():
            register(registry.ALGORITHMS[name])

    register_all()
    registry.on_register(register)
    # Tune keeps a name registered while Ray is up only in that Ray session's key-value store: after
    # ray.shutdown() and a new ray.init() in this process, "PPO" would be an unknown trainable. Register
    # again on every ray.init() (Tune flushes its own registry through the same hook list).
    import ray._private.worker as ray_worker

    hooks = getattr(ray_worker, "_post_init_hooks", None)
    if hooks is not None and not any(getattr(h, "__name__", "") == "_relayrl_register_all" for h in hooks):
        register_all.__name__ = "_relayrl_register_all"
        hooks.append(register_all)


class _TuneImportHook(importlib.abc.MetaPathFinder):
    """Calls become_tune_trainable() right after `ray.tune` finishes importing (any import path)."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "ray.tune":
            return None
        sys.meta_path.remove(self)  # one shot; also keeps the lookup below from finding us again
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _AfterExecLoader(spec.loader)
        return spec


class _AfterExecLoader(importlib.abc.Loader):
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            become_tune_trainable()
        except Exception as error:  # never break the user's `import ray.tune`
            import warnings

            warnings.warn(f"relayrl could not make Algorithm a ray.tune.Trainable: {error!r}", stacklevel=2)

    def __getattr__(self, name):
        return getattr(self._loader, name)


_hook: Optional[_TuneImportHook] = None


def install() -> None:
    """Called when relayrl's algorithm module loads: re-base now if ray.tune is loaded, else wait for it
    (never import it: `import ray` alone does not mean Tune will be used)."""
    global _hook
    if is_tune_trainable():
        return
    if "ray.tune" in sys.modules:
        become_tune_trainable()
    elif _hook is None or _hook not in sys.meta_path:
        _hook = _TuneImportHook()
        sys.meta_path.insert(0, _hook)
