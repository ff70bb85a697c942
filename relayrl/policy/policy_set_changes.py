"""A policy joins or leaves a running Policy-based algorithm (policy_addition.py, policy_removal.py): the config is
the one record of the policies, as for RLModule algorithms (algorithms/module_changes.py).

The change is made to a copy of `algo.config` (policies, policy_mapping_fn, policies_to_train), then applied to
every runner (its policy map, specs, mapping fn and config copy) and to the runner groups, whose config and
runner class are what a remote runner that Ray restarts is built from (it then takes the broadcast weights).
Checkpoints store that config, so `from_checkpoint` rebuilds the algorithm with the policies it had.
"""
from collections.abc import Callable
from typing import Any

from relayrl.core.columns import DEFAULT_POLICY_ID
from relayrl.core.policy_spec import PolicySpec


def config_policies(config) -> dict[str, PolicySpec]:
    """The config's policies ({default_policy: PolicySpec()} where it names none, as policy_algorithm.py reads it)."""
    return dict(config.policies or {DEFAULT_POLICY_ID: PolicySpec()})


def copy_with_policies(config, policies: dict, mapping_fn, to_train):
    """An unfrozen copy of `config` with these policies; mapping_fn / to_train None: keep the config's (also for
    RLModule algorithms' add_module / remove_module: algorithms/module_changes.py)."""
    new_config = config.copy(copy_frozen=False)
    new_config.multi_agent(policies=policies)
    if mapping_fn is not None:
        new_config.multi_agent(policy_mapping_fn=mapping_fn)
    if to_train is not None:
        new_config.multi_agent(policies_to_train=to_train)
    return new_config


def changed_policy_config(config, policies: dict[str, PolicySpec], mapping_fn, to_train):
    """A checked, frozen copy of `config` with these policies; mapping_fn / to_train None: keep the config's."""
    new_config = copy_with_policies(config, policies, mapping_fn, to_train)
    new_config.validate()
    new_config.freeze()
    return new_config


def runner_specs(algo, config) -> dict[str, PolicySpec]:
    """The specs a runner builds its policies from (the algorithm's default class filled in)."""
    from relayrl.policy.policy_algorithm import policy_class_for, policy_specs

    return policy_specs(config, policy_class_for(algo, config))


def apply_policy_change(algo, new_config, change: Callable[[Any, Any], Any], *, env_runners: bool,
                        eval_env_runners: bool) -> None:
    """`change(runner, runner_config)` on every runner of the chosen groups, then the groups and the algorithm
    take the new config (and the runner class a restarted remote runner is built from)."""
    specs = runner_specs(algo, new_config)
    group = algo.env_runner_group
    if env_runners:
        group.foreach_worker(lambda runner: change(runner, new_config))
        group.use_policies(new_config, specs)
    else:
        change(group.local_worker(), new_config)
    evaluation = getattr(algo, "eval_env_runner_group", None)
    if eval_env_runners and evaluation is not None:
        eval_config = new_config.get_evaluation_config_object()
        eval_config.freeze()
        evaluation.foreach_worker(lambda runner: change(runner, eval_config))
        evaluation.use_policies(eval_config, specs)
    algo.config = new_config


def set_runner_policies(runner, config, specs: dict[str, PolicySpec]) -> None:
    """A runner's record of its policies: its config copy, its specs and the config's mapping fn."""
    runner.config = config
    runner.POLICY_SPECS = specs  # (an instance attribute over the class's; _map reads it)
    if config.policy_mapping_fn is not None:
        runner.POLICY_MAPPING_FN = config.policy_mapping_fn  # (called unbound, as the class's staticmethod)
