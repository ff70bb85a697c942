"""`Learner`: turns episodes into a train batch (Learner connector) and updates the RLModule(s).

Algorithms subclass it and implement `compute_loss_for_module`; everything else (minibatching,
epochs, gradient clipping, lr schedules, metrics) lives here once.
"""
import copy
import logging
import math
from typing import Any, Callable, Dict, List, Optional

import torch

from relayrl.checkpoints.checkpointable import Checkpointable
from relayrl.core.columns import ALL_MODULES, DEFAULT_MODULE_ID
from relayrl.core.schedules import Scheduler
from relayrl.core.to_device import batch_to_device
from relayrl.learner.device import learner_device
from relayrl.learner.loss_mask import num_real_steps, possibly_masked_mean
from relayrl.learner.minibatches import drop_rows_outside_loss, iterate_minibatches
from relayrl.learner.nonfinite_gradients import FiniteGradientCheck, NonFiniteGradientError, global_grad_norm
from relayrl.learner.optimizers import make_adam
from relayrl.learner.runner_columns import RunnerColumns, finish_on_learner
from relayrl.learner.torch_compile import train_pass_for
from relayrl.learner.torch_threads import limit_torch_threads
from relayrl.learner.weights_version import note_weights_changed
from relayrl.metrics.metrics_logger import MetricsLogger
from relayrl.modules.multi_rl_module import MultiRLModule
from relayrl.modules.rl_module import RLModule
from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec

DEFAULT_OPTIMIZER = "default_optimizer"
NUM_ENV_STEPS_SAMPLED_LIFETIME = "num_env_steps_sampled_lifetime"
NUM_NONFINITE_GRADIENT_SKIPS_LIFETIME = "num_nonfinite_gradient_skips_lifetime"

logger = logging.getLogger("relayrl")


class Learner(Checkpointable):
    _checkpoint_kind = "learner"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)
    TOTAL_LOSS_KEY = "total_loss"

    def __init__(self, *, config, module_spec=None, module: Optional[RLModule] = None, spaces=None):
        self.config = config
        self._module_spec = module_spec
        self._module_obj = module
        self._spaces = spaces or {}
        self.metrics = MetricsLogger()
        self._device = torch.device("cpu")
        self._optimizers: Dict[str, Dict[str, torch.optim.Optimizer]] = {}
        self._lr_schedulers: Dict[tuple, Scheduler] = {}
        self._lr_options: Dict[tuple, str] = {}  # (module_id, optimizer name) -> the option its lr follows
        self._config_hooks: Dict[str, List[Callable[[Any, int], None]]] = {}  # see when_config_changes
        self._pending_stats: Dict[tuple, List[torch.Tensor]] = {}
        self._pending_row_stats: Dict[tuple, List[Dict[str, torch.Tensor]]] = {}  # see log_row_stats
        self._learner_connector = None
        self._params_cache: Dict[str, List[torch.nn.Parameter]] = {}
        self._gradient_check = FiniteGradientCheck()
        self._pre_clip_norms: Dict[str, torch.Tensor] = {}  # this minibatch's global norms, for the clipping
        # On a GPU each sync stalls the kernel queue: losses are then checked in the gradient check's sync.
        self._defer_loss_check = False
        self._unchecked_losses: Dict[str, torch.Tensor] = {}
        self._modules_in_update: Optional[List[str]] = None  # set by update(): see modules_in_update()
        cls = type(self)  # clipping by the base methods can reuse the check's norms (subclasses may clip otherwise)
        self._base_clipping = (cls.postprocess_gradients is Learner.postprocess_gradients
                               and cls.postprocess_gradients_for_module is Learner.postprocess_gradients_for_module)
        self._warned_nonfinite = set()  # module ids whose first skipped minibatch was logged as a warning
        self._ddp_module = None  # set by relayrl/distributed/learner_ddp.py in remote Learners (num_learners > 1)
        self._train_pass = self._forward_and_losses  # build() compiles it where the config asks
        self.module: Optional[MultiRLModule] = None

    # -- construction ----------------------------------------------------------------------
    def build(self) -> None:
        limit_torch_threads(self.config, self._spaces)
        self._device = learner_device(self.config)  # first: asking for a missing GPU fails before any work
        self.module = self._make_module().to(self._device)
        self._defer_loss_check = self._device.type != "cpu"
        self.module.train()
        self.configure_optimizers()  # after the move: optimizer states live where the parameters do
        obs_space, act_space = self._spaces.get("__env_single__", (None, None))
        self._learner_connector = self.config.build_learner_connector(
            input_observation_space=obs_space, input_action_space=act_space, device=self._device)
        self._train_pass = train_pass_for(self)

    def _make_module(self) -> MultiRLModule:
        if self._module_obj is not None:
            module = self._module_obj
        elif isinstance(self._module_spec, (RLModuleSpec, MultiRLModuleSpec)):
            module = self._module_spec.build()
        else:
            raise ValueError("A Learner needs `module_spec` (RLModuleSpec) or `module`.")
        return module if isinstance(module, MultiRLModule) else module.as_multi_rl_module()

    @property
    def device(self):
        return self._device

    @property
    def distributed(self) -> bool:
        """True inside a remote Learner that trains with DistributedDataParallel (num_learners > 1)."""
        return self._ddp_module is not None

    # -- optimizers ------------------------------------------------------------------------
    def configure_optimizers(self) -> None:
        for module_id in self.module.keys():
            if not any(p.requires_grad for p in self.module[module_id].parameters()):
                continue  # nothing to optimize: a heuristic module (e.g. RandomRLModule) next to learned ones
            self.configure_optimizers_for_module(module_id, config=self.config)

    def configure_optimizers_for_module(self, module_id: str, config=None) -> None:
        """Default: one Adam over the module's parameters, lr from `config.lr` (float or schedule)."""
        params = self.get_parameters(self.module[module_id])
        optimizer = make_adam(params)
        self.register_optimizer(module_id=module_id, optimizer=optimizer, params=params,
                                lr_or_lr_schedule=(config or self.config).lr, lr_option="lr")

    def register_optimizer(self, *, module_id: str = ALL_MODULES, optimizer_name: str = DEFAULT_OPTIMIZER,
                           optimizer: torch.optim.Optimizer, params=None, lr_or_lr_schedule=None,
                           lr_option: Optional[str] = None) -> None:
        """`lr_option`: the config option whose value the lr follows when reset_config changes it (e.g. "lr")."""
        self._optimizers.setdefault(module_id, {})[optimizer_name] = optimizer
        if lr_option is not None:
            self._lr_options[(module_id, optimizer_name)] = lr_option
        self._gradient_check.forget_parameters()
        if lr_or_lr_schedule is not None:
            scheduler = Scheduler(lr_or_lr_schedule)
            self._lr_schedulers[(module_id, optimizer_name)] = scheduler
            for group in optimizer.param_groups:
                group["lr"] = scheduler.initial()

    def get_optimizer(self, module_id: str = DEFAULT_MODULE_ID, optimizer_name: str = DEFAULT_OPTIMIZER):
        return self._optimizers[module_id][optimizer_name]

    def get_optimizers_for_module(self, module_id: str = ALL_MODULES):
        return list(self._optimizers.get(module_id, {}).items())

    @staticmethod
    def get_parameters(module) -> List[torch.nn.Parameter]:
        return [p for p in module.parameters() if p.requires_grad]

    # -- the update --------------------------------------------------------------------------
    def update(self, *, episodes=None, batch=None, timesteps: Optional[Dict[str, Any]] = None,
               num_epochs: Optional[int] = None, minibatch_size: Optional[int] = None,
               shuffle_batch_per_epoch: Optional[bool] = None, reduce_metrics: bool = True,
               **kwargs) -> Optional[Dict[str, Any]]:
        """Episodes (or a ready batch) -> `num_epochs` passes of minibatch SGD; returns reduced metrics.

        `reduce_metrics=False` returns None and keeps this update's statistics for a later `reduce_results()`
        (which then reports their mean over all updates since the last reduce, and the summed step counts):
        off-policy algorithms run many small updates per iteration and report once."""
        if (episodes is None) == (batch is None):
            raise ValueError("Learner.update() needs exactly one of `episodes` or `batch`.")
        note_weights_changed(self)  # (copies of the weights, e.g. an offline algorithm's acting runner, refresh)
        timesteps = timesteps or {}
        batch = self.build_module_batch(episodes=episodes, batch=batch)
        # Only the modules this update trains (policies_to_train): the others' rows cost forward passes
        # and would report training stats for modules that were not trained (RLlib drops them too).
        batch = {mid: module_batch for mid, module_batch in batch.items()
                 if mid in self.module and self.should_module_be_updated(mid, batch)}  # (removed: remove_module)
        self._modules_in_update = list(batch)
        num_epochs = self.config.num_epochs if num_epochs is None else num_epochs
        minibatch_size = minibatch_size or self.config.minibatch_size
        shuffle = self.config.shuffle_batch_per_epoch if shuffle_batch_per_epoch is None else shuffle_batch_per_epoch
        self.before_gradient_based_update(timesteps=timesteps)
        try:
            for minibatch in (self.iterate_minibatches(batch, num_epochs=num_epochs, minibatch_size=minibatch_size,
                                                       shuffle=shuffle) if batch else ()):
                self._update(minibatch)
        except FloatingPointError:  # a NaN/inf loss or gradient: the stats of the failed update go with it
            self._pending_stats, self._pending_row_stats = {}, {}
            self._modules_in_update = None
            raise
        self.after_gradient_based_update(timesteps=timesteps)
        self._modules_in_update = None
        steps = {module_id: num_real_steps(module_batch) for module_id, module_batch in batch.items()}
        for module_id, n in steps.items():
            self.metrics.log_value((module_id, "num_module_steps_trained"), n, reduce="sum", clear_on_reduce=True)
        self.metrics.log_value((ALL_MODULES, "num_env_steps_trained"), max(steps.values(), default=0),
                               reduce="sum", clear_on_reduce=True)
        if self.config.get("on_nonfinite_gradient", "raise") == "skip":  # lifetime sums: present, 0 until a skip
            for module_id in steps:
                self.metrics.log_value((module_id, NUM_NONFINITE_GRADIENT_SKIPS_LIFETIME), 0, reduce="sum")
        return self.reduce_results() if reduce_metrics else None

    def build_module_batch(self, *, episodes=None, batch=None) -> Dict[str, Dict[str, Any]]:
        """Episodes (through the Learner connector pipeline) or a ready batch -> {module id: batch on this Learner's
        device}: what update() trains on and the offline evaluation evaluates (offline/offline_evaluation.py)."""
        if episodes is not None:
            batch = self._learner_connector(rl_module=self.module, batch={}, episodes=episodes, explore=False,
                                            shared_data={}, metrics=self.metrics)
        return self._as_module_batch(self._finish_runner_columns(batch))

    def _finish_runner_columns(self, batch):
        """Columns the runners built with this pipeline's first part (PPO's remote sampling) get its remaining
        pieces here; any other batch is ready as it is."""
        return finish_on_learner(self, batch) if isinstance(batch, RunnerColumns) else batch

    def reduce_results(self) -> Dict[str, Any]:
        """The metrics of the updates since the last reduce: statistics averaged, step counts summed."""
        self._flush_stats()
        return self.metrics.reduce()

    def update_from_batch(self, batch, **kwargs) -> Dict[str, Any]:
        return self.update(batch=batch, **kwargs)

    def update_from_episodes(self, episodes, **kwargs) -> Dict[str, Any]:
        return self.update(episodes=episodes, **kwargs)

    def iterate_minibatches(self, batch: Dict[str, Dict[str, Any]], *, num_epochs: int,
                            minibatch_size: Optional[int], shuffle: bool):
        """The minibatches of one update (`num_epochs` passes); Learners whose loss needs whole sequences of
        rows (IMPALA's V-trace) cut them otherwise."""
        return iterate_minibatches(batch, num_epochs=num_epochs, minibatch_size=minibatch_size, shuffle=shuffle)

    # Whether the loss reads rows outside it (`loss_mask` False), e.g. IMPALA's bootstrap values; else they go.
    KEEPS_ROWS_OUTSIDE_LOSS = False
    # Whether torch_compile_learner_what_to_compile="complete_update" may compile the loss (learner/torch_compile.py).
    LOSS_COMPILES = True

    def _as_module_batch(self, batch: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
        """Key the batch by module ID (a flat batch belongs to `default_policy`); numpy arrays become tensors
        (otherwise minibatching would not slice them); rows outside the loss (`loss_mask` False) leave
        non-recurrent batches, so minibatches hold only rows that train (unless KEEPS_ROWS_OUTSIDE_LOSS)."""
        if not (batch and all(k in self.module for k in batch)):
            batch = {DEFAULT_MODULE_ID: batch}
        batch = {mid: batch_to_device(module_batch, self._device) for mid, module_batch in batch.items()}
        if self.KEEPS_ROWS_OUTSIDE_LOSS:
            return batch
        return {mid: drop_rows_outside_loss(module_batch) for mid, module_batch in batch.items()}

    def _update(self, batch: Dict[str, Dict[str, Any]]):
        if self._ddp_module is not None:  # DDP runs forward + losses, so backward all-reduces the gradients
            fwd_out, loss_per_module = self._ddp_module(batch)
        else:
            fwd_out, loss_per_module = self._train_pass(batch)
        gradients = self.compute_gradients(loss_per_module)
        if not self._gradients_finite(gradients):
            gradients = self._drop_nonfinite_gradients(gradients)
        gradients = self.postprocess_gradients(gradients)
        self.apply_gradients(gradients)
        return fwd_out, loss_per_module

    def _forward_and_losses(self, batch: Dict[str, Dict[str, Any]]):
        """The training pass whose result backward() differentiates: forward_train, then the losses
        (`_train_pass` runs it, compiled with torch_compile_learner: learner/torch_compile.py)."""
        fwd_out = self.module.forward_train(batch)
        return fwd_out, self.compute_losses(fwd_out=fwd_out, batch=batch)

    def _gradients_finite(self, gradients: Dict[str, Any]) -> bool:
        """One fused check, one sync (relayrl/learner/nonfinite_gradients.py). When the base clipping by global
        norm follows, the check computes the norms it needs and the clipping reuses them. On a GPU the losses'
        check (compute_losses) rides on the same sync: 0 * loss is NaN exactly when the loss is not finite."""
        self._pre_clip_norms = {}
        losses, self._unchecked_losses = self._unchecked_losses, {}
        poison = sum(0.0 * loss for loss in losses.values()) if losses else None
        config = self.config
        if config.grad_clip is not None and config.grad_clip_by == "global_norm" and self._base_clipping:
            norms = self._gradient_check.global_norms(self._optimizers, gradients)
            if norms:
                total = next(iter(norms.values())) if len(norms) == 1 else torch.stack(list(norms.values())).sum()
                if math.isfinite((total if poison is None else total + poison).item()):
                    self._pre_clip_norms = norms
                    return True
                self._check_losses_finite(losses)  # the slow path: a loss (raises) or a gradient is not finite
                poison = None
        finite = self._gradient_check.all_finite(self._optimizers, gradients, poison)
        if not finite:
            self._check_losses_finite(losses)  # a non-finite loss is named as such
        return finite

    def _drop_nonfinite_gradients(self, gradients: Dict[str, Any]) -> Dict[str, Any]:
        """The failure path of the gradient check, before any optimizer stepped: raise (weights and
        optimizer state untouched), or with on_nonfinite_gradient="skip" drop the modules whose gradients
        are not finite from this minibatch's step (their gradients zeroed), count them, and go on."""
        culprits = self._gradient_check.first_nonfinite(self._optimizers, gradients, self._parameter_names)
        if self.config.get("on_nonfinite_gradient", "raise") != "skip":
            raise NonFiniteGradientError.for_culprits(culprits)
        for module_id, culprit in culprits.items():
            for optimizer in self._optimizers.get(module_id, {}).values():
                optimizer.zero_grad(set_to_none=True)
            self.metrics.log_value((module_id, NUM_NONFINITE_GRADIENT_SKIPS_LIFETIME), 1, reduce="sum")
            log = logger.debug if module_id in self._warned_nonfinite else logger.warning
            self._warned_nonfinite.add(module_id)
            log("Skipped a minibatch's update of module `%s`: parameter `%s` (optimizer `%s`) has %s in its gradient "
                "(on_nonfinite_gradient='skip'; later skips of this module are logged at DEBUG level).",
                module_id, culprit.parameter, culprit.optimizer, culprit.kind)
        return {module_id: params for module_id, params in gradients.items() if module_id not in culprits}

    def _parameter_names(self, module_id: str) -> Dict[int, str]:
        """id(parameter) -> name for error messages: the module's named_parameters(). Subclasses whose
        optimizers train parameters outside the module add theirs (SAC's log-alpha)."""
        return {id(param): name for name, param in self.module[module_id].named_parameters()}

    def compute_losses(self, *, fwd_out, batch) -> Dict[str, torch.Tensor]:
        losses = {}
        for module_id in batch:
            if not self.should_module_be_updated(module_id, batch):
                continue
            loss = self.compute_loss_for_module(module_id=module_id, config=self.config, batch=batch[module_id],
                                                fwd_out=fwd_out[module_id])
            losses[module_id] = self._checked_loss(module_id, loss)
        return losses

    def _checked_loss(self, module_id: str, loss: torch.Tensor) -> torch.Tensor:
        """`loss`, checked finite now or (on a GPU) in the gradient check's sync (_gradients_finite)."""
        if self._defer_loss_check:
            self._unchecked_losses[module_id] = loss.detach()
        else:
            self._check_losses_finite({module_id: loss})
        return loss

    @staticmethod
    def _check_losses_finite(losses: Dict[str, torch.Tensor]) -> None:
        for module_id, loss in losses.items():
            value = loss.item()  # one sync; ~0.5 us on CPU where bool(torch.isfinite(loss)) costs ~10 us
            if not math.isfinite(value):
                raise FloatingPointError(
                    f"The loss of module `{module_id}` is {value}; lower the learning rate, set grad_clip, "
                    "or check the env's rewards/observations for NaN or huge values."
                )

    def compute_loss_for_module(self, *, module_id: str, config, batch: Dict[str, Any], fwd_out: Dict[str, Any]):
        raise NotImplementedError(f"{type(self).__name__} must implement compute_loss_for_module().")

    def compute_gradients(self, loss_per_module: Dict[str, torch.Tensor], **kwargs) -> Dict[str, Any]:
        for optimizers in self._optimizers.values():
            for optimizer in optimizers.values():
                optimizer.zero_grad(set_to_none=True)
        losses = list(loss_per_module.values())
        total = losses[0] if len(losses) == 1 else sum(losses)  # sum() would add a `0 +` node to the graph
        total.backward()
        shared = self._optimizers.get(ALL_MODULES)
        if shared is None:
            return {module_id: self._module_parameters(module_id) for module_id in loss_per_module}
        # An optimizer registered for ALL_MODULES (e.g. over modules that share an encoder) steps its own
        # parameters; modules without an optimizer of their own have nothing to step apart from it.
        gradients = {module_id: self._module_parameters(module_id) for module_id in loss_per_module
                     if module_id in self._optimizers}
        gradients[ALL_MODULES] = [p for optimizer in shared.values() for group in optimizer.param_groups
                                  for p in group["params"]]
        return gradients

    def _module_parameters(self, module_id: str) -> List[torch.nn.Parameter]:
        # Walking the module tree every minibatch costs more than a small net's update: cache it.
        params = self._params_cache.get(module_id)
        if params is None:
            params = self._params_cache[module_id] = self.get_parameters(self.module[module_id])
        return params

    def postprocess_gradients(self, gradients_dict: Dict[str, Any]) -> Dict[str, Any]:
        for module_id, params in gradients_dict.items():
            self.postprocess_gradients_for_module(module_id=module_id, config=self.config,
                                                  module_gradients_dict=params)
        return gradients_dict

    def postprocess_gradients_for_module(self, *, module_id: str, config=None, module_gradients_dict=None):
        """Clip gradients per `grad_clip` / `grad_clip_by` (value | norm | global_norm)."""
        config = config or self.config
        params = [p for p in module_gradients_dict if p.grad is not None]
        if config.grad_clip is None or not params:
            return module_gradients_dict
        if config.grad_clip_by == "value":
            torch.nn.utils.clip_grad_value_(params, config.grad_clip)
        elif config.grad_clip_by == "norm":
            for p in params:
                torch.nn.utils.clip_grad_norm_([p], config.grad_clip)
        else:
            norm = clip_grad_global_norm_(params, config.grad_clip,
                                          total_norm=self._pre_clip_norms.pop(module_id, None))
            self.log_stats(module_id, {"gradients_default_optimizer_global_norm": norm})
        return module_gradients_dict

    def apply_gradients(self, gradients_dict: Dict[str, Any]) -> None:
        for module_id in gradients_dict:
            for optimizer in self._optimizers.get(module_id, {}).values():
                step = getattr(optimizer, "step_unhooked", None)  # relayrl's Adam: skips torch's step wrapper
                step() if step is not None else optimizer.step()

    def rl_module_is_compatible(self, module) -> bool:
        """Whether this Learner can train `module` (RLlib's hook; every module by default)."""
        return True

    def should_module_be_updated(self, module_id: str, multi_agent_batch=None) -> bool:
        """Whether this update trains `module_id`: config.multi_agent(policies_to_train=...) (None: all)."""
        from relayrl.algorithms.multi_agent_mapping import trains_module

        return trains_module(self.config.get("policies_to_train"), module_id, multi_agent_batch)

    def modules_in_update(self) -> List[str]:
        """The modules the current update trains: those in its batch that should_module_be_updated() accepts
        (all modules outside an update). Per-module hooks (target networks, KL coefficients, stats) use these."""
        if self._modules_in_update is None:
            return list(self.module.keys())
        return self._modules_in_update

    # -- hooks -------------------------------------------------------------------------------
    def before_gradient_based_update(self, *, timesteps: Dict[str, Any]) -> None:
        """Apply lr schedules for the current lifetime env-step count."""
        t = timesteps.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)
        trained = set(self.modules_in_update())
        for (module_id, name), scheduler in self._lr_schedulers.items():
            lr = scheduler.get(t)
            for group in self._optimizers[module_id][name].param_groups:
                group["lr"] = lr
            if module_id in trained:
                self.metrics.log_value((module_id, f"{name}_learning_rate"), lr, window=1)

    def after_gradient_based_update(self, *, timesteps: Dict[str, Any]) -> None:
        """Algorithms hook in here (PPO adapts its KL coefficient)."""

    # -- metrics -------------------------------------------------------------------------------
    def log_stats(self, module_id: str, stats: Dict[str, Any]) -> None:
        """Collect per-minibatch stats (tensors stay tensors: no sync per minibatch); averaged per update."""
        for key, value in stats.items():
            value = value.detach() if isinstance(value, torch.Tensor) else float(value)
            self._pending_stats.setdefault((module_id, key), []).append(value)

    def log_row_stats(self, module_id: str, rows: Dict[str, torch.Tensor],
                      stats_fn: Callable[[Dict[str, torch.Tensor]], Dict[str, torch.Tensor]]) -> None:
        """Stats computed from this minibatch's per-row tensors when the metrics are reduced, not now.

        `stats_fn` (the same function every call) gets each of `rows` with a leading minibatch axis
        (`[num_minibatches, rows]`: the minibatches since the last reduce, stacked) and returns
        `{key: one value per minibatch}`; each key is then averaged over the minibatches like a `log_stats`
        value. For stats of small, frequent updates (off-policy): their kernels run once per reduce
        instead of once per update.
        """
        self._pending_row_stats.setdefault((module_id, stats_fn), []).append(
            {key: value.detach() for key, value in rows.items()})

    def peek_stat(self, module_id: str, key: str, default=None):
        """The mean so far in this update of a stat collected by `log_stats`."""
        values = self._pending_stats.get((module_id, key))
        return _mean(values) if values else default

    def _flush_stats(self) -> None:
        pending = self._pending_stats
        for (module_id, stats_fn), minibatches in self._pending_row_stats.items():
            by_shape: Dict[tuple, list] = {}  # minibatches of one shape stack (all of them, as a rule)
            for rows in minibatches:
                by_shape.setdefault(tuple((k, tuple(v.shape)) for k, v in rows.items()), []).append(rows)
            for group in by_shape.values():
                with torch.no_grad():
                    stats = stats_fn({key: torch.stack([rows[key] for rows in group]) for key in group[0]})
                for key, values in stats.items():
                    pending.setdefault((module_id, key), []).extend(values.unbind(0))
        for key, values in pending.items():
            self.metrics.log_value(key, _mean(values), window=1)
        self._pending_stats, self._pending_row_stats = {}, {}

    # -- hyper-parameter changes in place (Algorithm.reset_config, Tune's PBT) -------------------
    def when_config_changes(self, option: str, hook: Callable[[Any, int], None]) -> None:
        """Call `hook(new_value, timestep)` when reset_config changes `option`: for state derived from the config
        (e.g. PPO's entropy schedule and adaptive KL coefficients). Register hooks in build()."""
        self._config_hooks.setdefault(option, []).append(hook)

    def apply_hyperparameters(self, config, *, timestep: int = 0) -> None:
        """Put `config`'s hyper-parameters in force without a rebuild (weights, optimiser moments and
        the connector pipeline stay). The loss reads `self.config`; besides that, for each changed option:

        - optimisers registered to follow an option (`register_optimizer(lr_option=...)`; the default ones
          follow `lr`) get its lr or schedule, their param groups its value at `timestep` (always, changed or
          not: a restored optimizer state brings back the lr it was saved with);
        - the hooks registered with `when_config_changes(option, hook)` run;
        - Learner connector pieces that list the option in their CONFIG_OPTIONS (e.g. GAE's gamma and
          lambda_) take the new value.
        """
        old, self.config = self.config, config
        for key, lr_option in self._lr_options.items():  # always: a restored optimizer state brings its old lr
            scheduler = self._lr_schedulers[key] = Scheduler(getattr(config, lr_option))
            for group in self._optimizers[key[0]][key[1]].param_groups:
                group["lr"] = scheduler.get(timestep)
        pieces = list(getattr(self._learner_connector, "connectors", []))
        for option in type(config).options():
            name, value = option.name, getattr(config, option.name)
            try:
                unchanged = bool(getattr(old, name) == value)
            except Exception:
                unchanged = False
            if unchanged:
                continue
            for hook in self._config_hooks.get(name, ()):
                hook(value, timestep)
            for piece in pieces:
                if name in getattr(piece, "CONFIG_OPTIONS", ()):
                    setattr(piece, name, value)

    # -- weights and state ---------------------------------------------------------------------
    def get_weights(self, module_ids=None, inference_only: bool = False) -> Dict[str, Any]:
        ids = list(self.module.keys()) if module_ids is None else list(module_ids)
        return {mid: self.module[mid].get_state(inference_only=inference_only) for mid in ids}

    def set_weights(self, weights: Dict[str, Any]) -> None:
        note_weights_changed(self)
        for mid, state in weights.items():
            self.module[mid].set_state(state)

    def get_state(self, components=None, *, not_components=None, **kwargs) -> Dict[str, Any]:
        """Module weights, optimizer states (Adam moments and step counts), metrics and learner-connector state.

        With `checkpoint_trainable_policies_only`, modules that should_module_be_updated() rejects are left out.
        """
        from relayrl.checkpoints.checkpointable import selected

        module_ids = list(self.module.keys())
        if self.config.get("checkpoint_trainable_policies_only", False):
            module_ids = [mid for mid in module_ids if self.should_module_be_updated(mid)]
        # Deep copies: torch's state_dict() shares the live moment tensors, which later steps update in place.
        parts = {
            "rl_module": lambda: self.get_weights(module_ids=module_ids),
            "optimizer": lambda: {f"{mid}/{name}": copy.deepcopy(opt.state_dict())
                                  for mid, opts in self._optimizers.items() if mid in module_ids or mid == ALL_MODULES
                                  for name, opt in opts.items()},
            "metrics_logger": self.metrics.get_state,
            "learner_connector": lambda: self._learner_connector.get_state() if self._learner_connector else {},
        }
        return {name: get() for name, get in parts.items() if selected(name, components, not_components)}

    # Entries subclasses add to get_state(): {name: one value per module id} (e.g. PPO's KL coefficients).
    PER_MODULE_STATE: tuple = ()

    def check_state(self, state: Dict[str, Any], where) -> None:
        """Raise a CheckpointError naming the part (module, parameter, optimizer) that does not fit this
        Learner: module ids, every weight's name, shape and dtype, optimizer groups and moments."""
        from relayrl.checkpoints.state_checks import check_mapping, check_optimizer_state, check_real

        owner = f"a {type(self).__name__}"
        check_mapping(state, where, owner=owner,
                      known=("rl_module", "optimizer", "metrics_logger", "learner_connector") + self.PER_MODULE_STATE)
        if "rl_module" in state:
            self.module.check_state(state["rl_module"], where / "rl_module")
        optimizers = {f"{mid}/{name}": opt for mid, opts in self._optimizers.items() for name, opt in opts.items()}
        for key, opt_state in check_mapping(state.get("optimizer", {}), where / "optimizer",
                                            known=list(optimizers), owner=owner).items():
            check_optimizer_state(optimizers[key], opt_state, where / "optimizer" / key)
        if "metrics_logger" in state:
            self.metrics.check_state(state["metrics_logger"], where / "metrics_logger")
        if state.get("learner_connector") and self._learner_connector is not None:
            self._learner_connector.check_state(state["learner_connector"], where / "learner_connector")
        for name in self.PER_MODULE_STATE:
            values = check_mapping(state.get(name, {}), where / name, known=list(self.module.keys()), owner=owner)
            for mid, value in values.items():
                check_real(value, where / name / mid)

    def set_state(self, state: Dict[str, Any]) -> None:
        if "rl_module" in state:
            self.set_weights(state["rl_module"])
        for key, opt_state in state.get("optimizer", {}).items():
            mid, name = key.split("/", 1)
            # Copy: load_state_dict keeps the given tensors, which would tie this optimizer to the caller's dict.
            self._optimizers[mid][name].load_state_dict(copy.deepcopy(opt_state))
        if "metrics_logger" in state:
            self.metrics.set_state(state["metrics_logger"])
        if state.get("learner_connector") and self._learner_connector is not None:
            self._learner_connector.set_state(state["learner_connector"])

    def shutdown(self) -> None:
        pass


def clip_grad_global_norm_(params: List[torch.nn.Parameter], max_norm: float,
                           total_norm: Optional[torch.Tensor] = None) -> torch.Tensor:
    """torch.nn.utils.clip_grad_norm_ (L2, same kernels and numbers) for gradients on one device and dtype,
    without its grouping and wrapper layers, which cost more than the clipping for a small net.
    `total_norm`: the gradients' global norm if already computed (the non-finite gradient check's).
    Returns the global norm before clipping."""
    grads = [p.grad for p in params]
    if total_norm is None:
        total_norm = global_grad_norm(grads)
        if total_norm is None:  # several devices or dtypes
            return torch.nn.utils.clip_grad_norm_(params, max_norm)
    with torch.no_grad():
        torch._foreach_mul_(grads, torch.clamp(max_norm / (total_norm + 1e-6), max=1.0))
    return total_norm


def _mean(values: list) -> float:
    """The mean of logged stat values: 0-d tensors (one stack, one sync) or plain numbers."""
    if all(isinstance(v, torch.Tensor) for v in values):
        return float(torch.stack(values).float().mean())
    return float(torch.tensor([float(v) for v in values], dtype=torch.float32).mean())  # float32, as tensors


TorchLearner = Learner  # RLlib's name for its torch Learner base class (relayrl's Learner is torch)

__all__ = ["Learner", "TorchLearner", "possibly_masked_mean", "DEFAULT_OPTIMIZER"]  # (loss_mask.py's, re-exported)
