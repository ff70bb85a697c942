"""A module joins or leaves a built Learner (Algorithm.add_module / remove_module, algorithms/module_changes.py):
the module (with its target networks where it has the TargetNetworkAPI), its optimizer (only if it trains and has
parameters), the Learner's per-module values (KL coefficients, target-update counters) and the caches that name
modules."""
from relayrl.algorithms.multi_agent_mapping import trains_module
from relayrl.modules.target_network_api import TargetNetworkAPI

# A new module's start value of each per-module entry (Learner.PER_MODULE_STATE), as the Learners' build() sets it.
_START_VALUES = {"curr_kl_coeffs": lambda config: config.kl_coeff,
                 "last_target_update_ts": lambda config: 0, "num_target_updates": lambda config: 0}
_SET_WITH_THE_OPTIMIZER = ("curr_log_alpha",)  # SAC: configure_optimizers_for_module makes it (trained modules)
# Learner dicts keyed by module id (or by (module id, name)) that lose a removed module's entry.
_PER_MODULE_DICTS = ("curr_kl_coeffs", "last_target_update_ts", "num_target_updates", "_last_target_update_ts",
                     "_num_target_updates", "curr_log_alpha", "target_entropy", "_optimizer_params", "_td_errors",
                     "_value_fits", "_lr_schedulers", "_lr_options", "_optimizers", "_params_cache")


def check_learner_takes_modules(learner) -> None:
    """Learners whose per-module values have no known start value (offline MARWIL/CQL) refuse a new module."""
    unknown = [name for name in learner.PER_MODULE_STATE if name not in tuple(_START_VALUES) + _SET_WITH_THE_OPTIMIZER]
    if unknown:
        raise NotImplementedError(f"add_module: {type(learner).__name__} keeps per-module values {unknown} that "
                                  "relayrl does not yet start for a module added while it runs; declare the module "
                                  "in config.multi_agent(policies=...) before building the algorithm.")


def add_module_to_learner(learner, module_id: str, spec, config) -> None:
    module = spec.build().to(learner._device)
    if isinstance(module, TargetNetworkAPI):
        module.make_target_networks()
    module.train()
    learner.module.add_module(module_id, module)
    for name in (name for name in learner.PER_MODULE_STATE if name in _START_VALUES):
        values = getattr(learner, name, None)
        if values is None:
            values = getattr(learner, "_" + name)
        values[module_id] = _START_VALUES[name](config)
    _take_config(learner, config)


def remove_module_from_learner(learner, module_id: str, config) -> None:
    learner.module.remove_module(module_id, raise_err_if_not_found=False)
    for name in _PER_MODULE_DICTS:
        table = getattr(learner, name, None)
        if isinstance(table, dict):
            for key in [key for key in table if key == module_id or (isinstance(key, tuple) and key[0] == module_id)]:
                del table[key]
    learner._gradient_check.forget_parameters()
    _take_config(learner, config)


def _take_config(learner, config) -> None:
    """The new policies / mapping / policies_to_train; a module that trains now and has no optimizer gets one."""
    learner.config = config
    for module_id, module in learner.module.items():
        if module_id in learner._optimizers or not trains_module(config.policies_to_train, module_id):
            continue
        if any(p.requires_grad for p in module.parameters()):
            learner.configure_optimizers_for_module(module_id, config=config)
