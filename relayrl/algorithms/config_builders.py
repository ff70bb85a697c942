"""Builders an AlgorithmConfig offers: connector pipelines, RLModule specs, learners, the algorithm.

Kept apart from the option table in algorithm_config.py so the config file holds only options.
"""
import dataclasses

from relayrl.core.global_seed import seed_everything


class ConfigBuildersMixin:
    """Methods that turn a validated config into runtime objects."""

    # -- connector pipelines (RLlib's documented signatures) --------------------------------
    def build_env_to_module_connector(self, env=None, spaces=None, device=None):
        from relayrl.connectors.builders import build_env_to_module_pipeline

        return build_env_to_module_pipeline(self, env, spaces, device)

    def build_module_to_env_connector(self, env=None, spaces=None):
        from relayrl.connectors.builders import build_module_to_env_pipeline

        return build_module_to_env_pipeline(self, env, spaces)

    def build_learner_connector(self, input_observation_space, input_action_space, device=None):
        from relayrl.connectors.builders import build_learner_pipeline

        return build_learner_pipeline(self, input_observation_space, input_action_space, device)

    # -- modules ----------------------------------------------------------------------------
    def get_default_rl_module_spec(self):
        """The algorithm's default module (algorithm configs override this)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no default RLModule; pass one via "
            "config.rl_module(rl_module_spec=RLModuleSpec(module_class=...))."
        )

    def get_rl_module_spec(self, spaces=None, inference_only: bool = False):
        """The user's spec (if any) merged over the default one, with spaces and model config filled in."""
        from relayrl.core.columns import DEFAULT_MODULE_ID
        from relayrl.modules.rl_module_spec import RLModuleSpec

        user_spec = self.rl_module_spec
        if user_spec is not None and not isinstance(user_spec, RLModuleSpec):
            raise TypeError(f"config.rl_module(rl_module_spec=...) must be an RLModuleSpec, got {user_spec!r}.")
        return self._module_spec(user_spec, DEFAULT_MODULE_ID, spaces, inference_only)

    def get_multi_rl_module_spec(self, *, spaces=None, inference_only: bool = False, env=None):
        """Multi-agent: a MultiRLModuleSpec with one spec per policy. A user MultiRLModuleSpec's per-module
        specs (`rl_module_specs[module_id]`) are merged over the algorithm's default module; a PolicySpec's
        spaces, else those of the agents mapping to the module (`spaces[module_id]`), fill in the spaces."""
        from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec

        user = self.rl_module_spec
        per_module = dict(getattr(user, "rl_module_specs", None) or {})
        specs = {module_id: _extra_module_spec(module_id, spec, inference_only)
                 for module_id, spec in per_module.items() if module_id not in (self.policies or {})}
        for module_id, policy in (self.policies or {}).items():
            module_user_spec = per_module.get(module_id, user if isinstance(user, RLModuleSpec) else None)
            module_spaces = dict(spaces or {})
            if policy.observation_space is not None or policy.action_space is not None:
                obs, act = module_spaces.get(module_id, (None, None))
                module_spaces[module_id] = (policy.observation_space or obs, policy.action_space or act)
            specs[module_id] = self._module_spec(module_user_spec, module_id, module_spaces, inference_only,
                                                 from_config_spaces=False)
            if _is_old_stack_policy(policy.policy_class):  # e.g. RandomPolicy as an evaluation opponent
                specs[module_id] = _policy_module_spec(policy, specs[module_id], inference_only)
        cls = getattr(user, "multi_rl_module_class", None) if isinstance(user, MultiRLModuleSpec) else None
        return MultiRLModuleSpec(multi_rl_module_class=cls, rl_module_specs=specs, inference_only=inference_only)

    def _module_spec(self, user_spec, module_id, spaces, inference_only: bool, from_config_spaces: bool = True):
        from relayrl.modules.rl_module_spec import RLModuleSpec

        spec = RLModuleSpec() if user_spec is not None and user_spec.module_class else self.get_default_rl_module_spec()
        if user_spec is not None:
            spec.update(user_spec)
        spaces = spaces or {}
        module_spaces = spaces.get(module_id)
        obs_space, act_space = module_spaces or spaces.get("__env_single__", (None, None))
        # The module's own spaces (the env-to-module pipeline's output, e.g. FlattenObservations' one-hot) started
        # from the config's; the config's spaces stand in only where there are none.
        from_config_spaces = from_config_spaces and module_spaces is None
        if spec.observation_space is None:
            spec.observation_space = (self.observation_space if from_config_spaces else None) or obs_space
        if spec.action_space is None:
            spec.action_space = (self.action_space if from_config_spaces else None) or act_space
        if spec.model_config is None:
            spec.model_config = self.model_config_for(spec.observation_space)
        spec.inference_only = inference_only
        return spec

    def get_module_spec_for_learner(self, spaces=None):
        """The spec the Learners build: one module, or (multi-agent) one per policy."""
        if self.is_multi_agent:
            return self.get_multi_rl_module_spec(spaces=spaces)
        return self.get_rl_module_spec(spaces=spaces)

    def get_default_learner_class(self):
        raise NotImplementedError(f"{type(self).__name__} has no default Learner class.")

    @property
    def learner_class(self):
        """The configured Learner subclass, else the algorithm's default."""
        return self._values.get("learner_class") or self.get_default_learner_class()

    @learner_class.setter
    def learner_class(self, value) -> None:
        self._set_options({"learner_class": value})

    def build_learner_group(self, *, env=None, spaces=None, rl_module_spec=None):
        """A LearnerGroup for these spaces; with `debugging(seed=...)` its weights are the same on every call."""
        seed_everything(self.seed)  # as the Algorithm does at its start
        return self._learner_group_for_algorithm(spaces=spaces, rl_module_spec=rl_module_spec)

    def _learner_group_for_algorithm(self, *, spaces, rl_module_spec=None):
        """The Algorithm's path: it seeded the generators at its start, so seeding again here would change the
        random stream (and so the results) of every seeded run."""
        from relayrl.learner.learner_group import LearnerGroup

        return LearnerGroup(config=self, module_spec=rl_module_spec or self.get_module_spec_for_learner(spaces),
                            spaces=spaces)

    def build_learner(self, *, env=None, spaces=None):
        """A built Learner for these spaces; with `debugging(seed=...)` its weights are the same on every call."""
        seed_everything(self.seed)  # as the Algorithm does at its start
        learner = self.learner_class(config=self, module_spec=self.get_module_spec_for_learner(spaces), spaces=spaces)
        learner.build()
        return learner

    # -- the algorithm --------------------------------------------------------------------------
    def build_algo(self, env=None, logger_creator=None, use_copy: bool = True):
        """Validate, then build the Algorithm (invalid settings raise here, before anything starts)."""
        config = self.copy(copy_frozen=False) if use_copy else self
        if env is not None:
            config.environment(env)
        from relayrl.algorithms.resolved_defaults import forget_resolved_defaults

        checked = config.copy(copy_frozen=False)
        forget_resolved_defaults(checked)  # as the Algorithm does: what an earlier build picked is picked afresh
        checked.validate()
        if config.algo_class is None:
            raise ValueError(f"{type(self).__name__} has no algorithm class; use e.g. PPOConfig().")
        return config.algo_class(config=config, logger_creator=logger_creator)

    def build(self, env=None, logger_creator=None, use_copy: bool = True):
        """RLlib's older name for `build_algo`."""
        return self.build_algo(env=env, logger_creator=logger_creator, use_copy=use_copy)


def _is_old_stack_policy(policy_class) -> bool:
    from relayrl.policy.policy import Policy

    return isinstance(policy_class, type) and issubclass(policy_class, Policy)


def _policy_module_spec(policy, spec, inference_only: bool):
    """An old-stack Policy class among RLModules: a PolicyRLModule acting with it, in the module's spaces."""
    from relayrl.modules.policy_rl_module import POLICY_CLASS, POLICY_CONFIG, PolicyRLModule
    from relayrl.modules.rl_module_spec import RLModuleSpec

    return RLModuleSpec(module_class=PolicyRLModule, observation_space=spec.observation_space,
                        action_space=spec.action_space, inference_only=inference_only,
                        model_config={POLICY_CLASS: policy.policy_class, POLICY_CONFIG: policy.config})


def _extra_module_spec(module_id, spec, inference_only: bool):
    """A module of the user's MultiRLModuleSpec that no policy maps to (e.g. an encoder its policies share, which
    the MultiRLModule subclass calls itself): built as given, so it must name its module class and spaces."""
    if spec.module_class is None or spec.observation_space is None or spec.action_space is None:
        raise ValueError(
            f"The MultiRLModuleSpec has a spec for `{module_id}`, which is not among the policies of "
            "config.multi_agent(policies=...): no agent maps to it, so its spec must give module_class, "
            "observation_space and action_space (or add it to the policies).")
    return dataclasses.replace(spec, inference_only=inference_only)
