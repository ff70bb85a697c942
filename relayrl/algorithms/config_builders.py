"""Builders an AlgorithmConfig offers: connector pipelines, RLModule specs, learners, the algorithm.

Kept apart from the option table in algorithm_config.py so the config file holds only options.
"""


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
        spec = RLModuleSpec() if user_spec is not None and user_spec.module_class else self.get_default_rl_module_spec()
        if user_spec is not None:
            spec.update(user_spec)
        spaces = spaces or {}
        obs_space, act_space = spaces.get(DEFAULT_MODULE_ID, spaces.get("__env_single__", (None, None)))
        if spec.observation_space is None:
            spec.observation_space = self.observation_space or obs_space
        if spec.action_space is None:
            spec.action_space = self.action_space or act_space
        if spec.model_config is None:
            spec.model_config = self.model_config_for(spec.observation_space)
        spec.inference_only = inference_only
        return spec

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
        from relayrl.learner.learner_group import LearnerGroup

        return LearnerGroup(config=self, module_spec=rl_module_spec or self.get_rl_module_spec(spaces=spaces),
                            spaces=spaces)

    def build_learner(self, *, env=None, spaces=None):
        learner = self.learner_class(config=self, module_spec=self.get_rl_module_spec(spaces=spaces), spaces=spaces)
        learner.build()
        return learner

    # -- the algorithm --------------------------------------------------------------------------
    def build_algo(self, env=None, logger_creator=None, use_copy: bool = True):
        """Validate, then build the Algorithm (invalid settings raise here, before anything starts)."""
        config = self.copy(copy_frozen=False) if use_copy else self
        if env is not None:
            config.environment(env)
        config.validate()
        if config.algo_class is None:
            raise ValueError(f"{type(self).__name__} has no algorithm class; use e.g. PPOConfig().")
        return config.algo_class(config=config, logger_creator=logger_creator)

    def build(self, env=None, logger_creator=None, use_copy: bool = True):
        """RLlib's older name for `build_algo`."""
        return self.build_algo(env=env, logger_creator=logger_creator, use_copy=use_copy)
