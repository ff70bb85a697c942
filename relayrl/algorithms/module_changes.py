"""RLlib's `Algorithm.add_module` / `remove_module` (and the old stack's `add_policy` / `remove_policy`): a
module joins or leaves a running multi-agent algorithm (RLlib's league / self-play flow).

The config is the one source of truth: the change is made to a copy of `algo.config` (policies, the module's
spec in `rl_module_spec`, the mapping fn, policies_to_train), checked, then applied to the Learners (module plus an
optimizer if it trains) and to every EnvRunner (module, exploration, their config copies; their ongoing episodes
restart so that the new mapping applies at once). Checkpoints store that config, so `from_checkpoint` rebuilds
the algorithm with the module. Everything that can fail is done before anything changes.
"""
import contextlib
import dataclasses
from typing import Any, Callable, Collection, Dict, Optional, Union

from relayrl.core.policy_spec import PolicySpec

ShouldUpdate = Optional[Union[Collection[str], Callable[..., bool]]]
_CHANGED = ("policies", "policy_mapping_fn", "policies_to_train", "rl_module_spec")


class AlgorithmModuleChanges:
    def add_module(self, module_id: str, module_spec, *, config_overrides: Optional[Dict[str, Any]] = None,
                   new_agent_to_module_mapping_fn: Optional[Callable] = None,
                   new_should_module_be_updated: ShouldUpdate = None, add_to_learners: bool = True,
                   add_to_env_runners: bool = True, add_to_eval_env_runners: bool = True):
        """Add module `module_id` built from `module_spec` (an RLModuleSpec; missing spaces come from the env) to
        the Learners and the (evaluation) EnvRunners. `new_agent_to_module_mapping_fn` / `new_should_module_be_updated`
        replace `policy_mapping_fn` / `policies_to_train` (None: keep them). Returns the new MultiRLModuleSpec."""
        from relayrl.modules.rl_module_spec import RLModuleSpec

        _require_module_algorithm(self, "add_module")
        if not isinstance(module_id, str) or not module_id:
            raise ValueError(f"add_module: module_id must be a non-empty str, got {module_id!r}.")
        if module_id in (self.config.policies or {}):
            raise ValueError(f"add_module({module_id!r}): a module with that id exists already (the modules are "
                             f"{sorted(self.config.policies)}); pick another id, or remove_module({module_id!r}) "
                             "first.")
        if isinstance(module_spec, type):  # RLlib accepts the module class alone in some examples
            module_spec = RLModuleSpec(module_class=module_spec)
        if not isinstance(module_spec, RLModuleSpec):
            raise TypeError(f"add_module({module_id!r}): module_spec must be an RLModuleSpec, got {module_spec!r}.")
        if config_overrides:
            raise ValueError(f"add_module({module_id!r}, config_overrides={config_overrides!r}): relayrl's Learners "
                             "use one config for every module; leave config_overrides out (set the options on "
                             "the algorithm with algo.reset_config(...) if all modules may share them).")
        policies = {**self.config.policies, module_id: PolicySpec(observation_space=module_spec.observation_space,
                                                                 action_space=module_spec.action_space)}
        new_config = _changed_config(self.config, policies, new_agent_to_module_mapping_fn,
                                     new_should_module_be_updated,
                                     _spec_with(self.config, policies, module_id, dataclasses.replace(module_spec)))
        self._apply_module_change(new_config, module_id, added=True, learners=add_to_learners,
                                  env_runners=add_to_env_runners, eval_env_runners=add_to_eval_env_runners)
        return new_config.rl_module_spec

    def remove_module(self, module_id: str, *, new_agent_to_module_mapping_fn: Optional[Callable] = None,
                      new_should_module_be_updated: ShouldUpdate = None, remove_from_learners: bool = True,
                      remove_from_env_runners: bool = True, remove_from_eval_env_runners: bool = True):
        """Remove module `module_id` from the Learners and the (evaluation) EnvRunners; the mapping fn must no longer
        return it (pass `new_agent_to_module_mapping_fn`). Returns the new MultiRLModuleSpec."""
        from relayrl.modules.rl_module_spec import MultiRLModuleSpec

        _require_module_algorithm(self, "remove_module")
        known = sorted(self.config.policies or {})
        if module_id not in known:
            raise ValueError(f"remove_module({module_id!r}): no such module; the modules are {known}.")
        if len(known) == 1:
            raise ValueError(f"remove_module({module_id!r}): it is the only module; an algorithm needs one.")
        policies = {mid: spec for mid, spec in self.config.policies.items() if mid != module_id}
        user_spec = self.config.rl_module_spec
        if isinstance(user_spec, MultiRLModuleSpec) and module_id in user_spec.rl_module_specs:
            user_spec = dataclasses.replace(user_spec, rl_module_specs={
                mid: spec for mid, spec in user_spec.rl_module_specs.items() if mid != module_id})
        to_train = new_should_module_be_updated
        if to_train is None and isinstance(self.config.policies_to_train, (list, tuple, set)):
            to_train = [mid for mid in self.config.policies_to_train if mid != module_id]
        new_config = _changed_config(self.config, policies, new_agent_to_module_mapping_fn, to_train, user_spec)
        self._apply_module_change(new_config, module_id, added=False, learners=remove_from_learners,
                                  env_runners=remove_from_env_runners, eval_env_runners=remove_from_eval_env_runners)
        return new_config.get_multi_rl_module_spec(spaces=self.env_runner_group.get_spaces(), inference_only=False)

    def add_policy(self, policy_id: str, policy_cls=None, policy=None, *, observation_space=None, action_space=None,
                   config=None, policy_state=None, policy_mapping_fn=None, policies_to_train=None, module_spec=None,
                   **kwargs):
        """The old stack's name, for RLModule algorithms: `add_module(policy_id, module_spec, ...)`, then
        `policy_state` (the module's weights) set if given. A Policy class or object has no place here."""
        from relayrl.modules.rl_module_spec import RLModuleSpec

        if getattr(self, "_policy_based", False):  # the old stack's Policies (relayrl/policy/policy_addition.py)
            from relayrl.policy.policy_addition import add_policy_to_policy_algorithm

            if module_spec is not None:
                raise ValueError(f"add_policy({policy_id!r}): {type(self).__name__} runs old-stack Policies; give "
                                 "policy_cls or policy, not module_spec.")
            unknown = sorted(set(kwargs) - {"add_to_env_runners", "add_to_eval_env_runners", "evaluation_workers"})
            if unknown:
                raise TypeError(f"add_policy() got unexpected keyword arguments {unknown}.")
            return add_policy_to_policy_algorithm(
                self, policy_id, policy_cls, policy, observation_space=observation_space, action_space=action_space,
                config=config, policy_state=policy_state, policy_mapping_fn=policy_mapping_fn,
                policies_to_train=policies_to_train, add_to_env_runners=kwargs.get("add_to_env_runners", True),
                add_to_eval_env_runners=bool(kwargs.get("add_to_eval_env_runners",
                                                        kwargs.get("evaluation_workers", True))))
        if policy_cls is not None or policy is not None:
            raise ValueError(f"add_policy({policy_id!r}): {type(self).__name__} runs RLModules, not old-stack "
                             "Policies; pass module_spec=RLModuleSpec(...) (or nothing: the algorithm's default "
                             "module) instead of policy_cls / policy.")
        unknown = sorted(set(kwargs) - {"evaluation_workers", "add_to_learners", "add_to_env_runners",
                                        "add_to_eval_env_runners", "workers", "module_spec"})
        if unknown:
            raise TypeError(f"add_policy() got unexpected keyword arguments {unknown}.")
        spec = module_spec or RLModuleSpec()
        if observation_space is not None or action_space is not None:
            spec = dataclasses.replace(spec, observation_space=observation_space or spec.observation_space,
                                       action_space=action_space or spec.action_space)
        eval_runners = kwargs.get("add_to_eval_env_runners", kwargs.get("evaluation_workers", True))
        result = self.add_module(policy_id, spec, config_overrides=config,
                                 new_agent_to_module_mapping_fn=policy_mapping_fn,
                                 new_should_module_be_updated=policies_to_train,
                                 add_to_learners=kwargs.get("add_to_learners", True),
                                 add_to_env_runners=kwargs.get("add_to_env_runners", True),
                                 add_to_eval_env_runners=bool(eval_runners))
        if policy_state is not None:
            self.set_weights({policy_id: policy_state})
        return result

    def remove_policy(self, policy_id: str = "default_policy", *, policy_mapping_fn=None, policies_to_train=None,
                      remove_from_learners: bool = True, remove_from_env_runners: bool = True,
                      remove_from_eval_env_runners: bool = True, evaluation_workers: bool = True, **kwargs):
        """The old stack's name, for RLModule algorithms: `remove_module(policy_id, ...)`."""
        if kwargs:
            raise TypeError(f"remove_policy() got unexpected keyword arguments {sorted(kwargs)}.")
        if getattr(self, "_policy_based", False):  # the old stack's Policies (relayrl/policy/policy_removal.py)
            from relayrl.policy.policy_removal import remove_policy_from_policy_algorithm

            return remove_policy_from_policy_algorithm(
                self, policy_id, policy_mapping_fn=policy_mapping_fn, policies_to_train=policies_to_train,
                remove_from_env_runners=remove_from_env_runners,
                remove_from_eval_env_runners=remove_from_eval_env_runners and evaluation_workers)
        return self.remove_module(policy_id, new_agent_to_module_mapping_fn=policy_mapping_fn,
                                  new_should_module_be_updated=policies_to_train,
                                  remove_from_learners=remove_from_learners,
                                  remove_from_env_runners=remove_from_env_runners,
                                  remove_from_eval_env_runners=remove_from_eval_env_runners and evaluation_workers)

    # -- applying a checked change --------------------------------------------------------------------
    def _apply_module_change(self, new_config, module_id: str, **where) -> None:
        thread = getattr(self, "_learner_thread", None)  # IMPALA / APPO: no update runs meanwhile
        with thread.pause() if thread is not None else contextlib.nullcontext():
            self._change_modules(new_config, module_id, **where)
        if thread is not None:
            self._local_runner_stale = True  # (IMPALA's local runner takes the Learner's weights when next read)

    def _change_modules(self, new_config, module_id: str, *, added: bool, learners: bool, env_runners: bool,
                        eval_env_runners: bool) -> None:
        from relayrl.learner.module_changes import (
            add_module_to_learner,
            check_learner_takes_modules,
            remove_module_from_learner,
        )
        from relayrl.env.module_changes import change_runner_module, check_mapping_fn, spaces_with_modules

        group = self.env_runner_group
        if group.local_env_runner is not None:
            check_mapping_fn(group.local_env_runner, new_config)
            spaces = spaces_with_modules(group.local_env_runner, new_config.policies)
        else:
            policies = new_config.policies
            spaces = group.foreach_env_runner(lambda runner: spaces_with_modules(runner, policies),
                                              local_env_runner=False)[0]
        # The config must rebuild these modules alone (from_checkpoint, a restarted runner): a module whose spaces
        # came from the agents mapping to it keeps them, as the new mapping fn may map no agent to it.
        new_config.multi_agent(policies=_policies_with_spaces(new_config.policies, spaces))
        multi_spec = new_config.get_multi_rl_module_spec(spaces=spaces)
        learner_spec = multi_spec.rl_module_specs.get(module_id)
        if added:
            learner_spec.build()  # a spec that cannot build fails here, before anything changed
            if learners:
                self.learner_group.foreach_learner(check_learner_takes_modules)
        updates = {name: new_config._values[name] for name in _CHANGED}
        eval_group = getattr(self, "eval_env_runner_group", None) if eval_env_runners else None
        eval_config = None if eval_group is None else new_config.get_evaluation_config_object()
        if learners:
            if added:
                self.learner_group.foreach_learner(
                    lambda learner: add_module_to_learner(learner, module_id, learner_spec, new_config))
            else:
                self.learner_group.foreach_learner(
                    lambda learner: remove_module_from_learner(learner, module_id, new_config))
            self.learner_group.config = new_config
            self.learner_group._module_spec = multi_spec
            self.learner_group._module_copy = None  # (remote Learners: get_module()'s local copy is rebuilt)
        if env_runners:
            self.env_runner_group.foreach_env_runner(
                lambda runner: change_runner_module(runner, module_id, updates, added))
            self.env_runner_group.config = new_config
            if getattr(group, "_actors", None) is not None:  # a remote runner restarted later is built with it
                group._actors.config = new_config
            if added and learners:
                self.env_runner_group.sync_weights(from_worker_or_learner_group=self.learner_group)
        if eval_group is not None:  # (evaluation_config's overrides, e.g. its own mapping fn, stay)
            eval_updates = {name: eval_config._values[name] for name in _CHANGED}
            eval_group.foreach_env_runner(lambda runner: change_runner_module(runner, module_id, eval_updates, added))
            eval_group.config = eval_config
            if added and learners:
                eval_group.sync_weights(from_worker_or_learner_group=self.learner_group)
        buffer = getattr(self, "local_replay_buffer", None)
        if not added and learners and callable(getattr(buffer, "drop_module", None)):
            buffer.drop_module(module_id)  # its transitions would never be sampled again
        new_config.freeze()
        self.config = new_config


def _require_module_algorithm(algo, method: str) -> None:
    if algo.learner_group is None:
        raise NotImplementedError(f"{method}: {type(algo).__name__} runs old-stack Policies; adding or removing "
                                  "them while it runs is not supported (declare them in config.multi_agent(...)).")
    if algo.learner_group.num_learners > 1:
        raise NotImplementedError(f"{method}: with num_learners={algo.learner_group.num_learners} the Learners train "
                                  "one DistributedDataParallel model, which does not take new modules while it runs; "
                                  "use num_learners<=1, or declare the module in config.multi_agent(policies=...) "
                                  "and fill it with algo.set_weights(...).")
    if not algo.config.is_multi_agent:
        raise ValueError(f"{method}: {type(algo).__name__} is single-agent; modules are added to multi-agent "
                         "algorithms (config.multi_agent(policies=..., policy_mapping_fn=...)).")


def _spec_with(config, policies, module_id: str, module_spec):
    """config.rl_module_spec as a MultiRLModuleSpec that also holds `module_spec` under `module_id`: a single
    RLModuleSpec (which stood for every module) is kept for each existing module."""
    from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec

    user = config.rl_module_spec
    if isinstance(user, MultiRLModuleSpec):
        return dataclasses.replace(user, rl_module_specs={**user.rl_module_specs, module_id: module_spec})
    specs = {mid: user for mid in policies if mid != module_id} if isinstance(user, RLModuleSpec) else {}
    return MultiRLModuleSpec(rl_module_specs={**specs, module_id: module_spec})


def _policies_with_spaces(policies, spaces) -> Dict[str, PolicySpec]:
    """`policies` with each PolicySpec's missing spaces filled in from `spaces` (module id: (obs, action))."""
    filled = {}
    for module_id, spec in policies.items():
        obs, act = spaces.get(module_id, (None, None))
        if (spec.observation_space is None and obs is not None) or (spec.action_space is None and act is not None):
            spec = dataclasses.replace(spec, observation_space=spec.observation_space or obs,
                                       action_space=spec.action_space or act)
        filled[module_id] = spec
    return filled


def _changed_config(config, policies, mapping_fn, to_train, rl_module_spec):
    from relayrl.policy.policy_set_changes import copy_with_policies

    new_config = copy_with_policies(config, policies, mapping_fn, to_train)
    new_config.rl_module(rl_module_spec=rl_module_spec)
    new_config.validate()
    return new_config


__all__ = ["AlgorithmModuleChanges"]
