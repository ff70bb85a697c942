"""A module joins or leaves a built Learner (Algorithm.add_module / remove_module, algorithms/module_changes.py):
the module, its optimizer (only if it trains and has parameters) and the caches that name modules."""
from relayrl.algorithms.multi_agent_mapping import trains_module


def add_module_to_learner(learner, module_id: str, spec, config) -> None:
    module = spec.build().to(learner._device)
    module.train()
    learner.module.add_module(module_id, module)
    _take_config(learner, config)


def remove_module_from_learner(learner, module_id: str, config) -> None:
    learner.module.remove_module(module_id, raise_err_if_not_found=False)
    learner._optimizers.pop(module_id, None)
    for table in (learner._lr_schedulers, learner._lr_options):
        for key in [key for key in table if key[0] == module_id]:
            del table[key]
    learner._params_cache.pop(module_id, None)
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
