"""AlgorithmConfig.validate(): the checks that run before an algorithm is built, each naming the option and the fix.

A mixin of AlgorithmConfig (algorithm_config.py), as the builder methods are (config_builders.py); subclasses add
their own checks by overriding validate() and calling super().validate().
"""
from __future__ import annotations

import math

from relayrl.algorithms.offline_evaluation_options import check_offline_evaluation_values
from relayrl.algorithms.offline_options import check_offline_values
from relayrl.algorithms.options import is_search_space, short_repr


class ConfigValidationMixin:
    def validate(self) -> None:
        """Raise ValueError for anything that would fail later; call before building."""
        self._validate_values()
        if self.env is None and (self.observation_space is None or self.action_space is None):
            raise ValueError("no environment set: call config.environment('CartPole-v1') or "
                             "config.environment(MyEnvClass) (or set observation_space and "
                             "action_space)")
        self._validate_batch_sizes()
        self._validate_multi_agent()
        self._validate_evaluation()
        if self.soft_horizon and self.horizon is None:
            raise ValueError("soft_horizon=True needs a horizon: config.env_runners(horizon=N, soft_horizon=True)")
        self._validate_model_and_exploration()
        self._validate_offline()
        from relayrl.algorithms.result_logger import check_logger_config

        check_logger_config(self.logger_config)

    def _validate_multi_agent(self) -> None:
        if not self.is_multi_agent:
            return
        if not self.SUPPORTS_MULTI_AGENT:
            name = type(self).__name__.replace("Config", "")
            if self.TRAINS_ONE_MODULE_OFFLINE:
                from relayrl.algorithms.offline_multi_agent import offline_module_id

                offline_module_id(self)  # one trained module, which the single-agent rows train
            elif self.READS_OFFLINE_DATA:
                raise ValueError(f"{name} trains one single-agent module from offline data: multi-agent offline "
                                 "input (config.multi_agent(policies=...)) is not supported yet. Train one module "
                                 "per agent with a single-agent config, each from its agent's rows (recordings "
                                 "name them in the `module_id` column).")
            else:
                raise ValueError(f"{name} does not train multi-agent configs (config.multi_agent(policies=...)) "
                                 "yet; use one of relayrl's algorithms (PPO, IMPALA, APPO, DQN, SAC), or a "
                                 "single-agent env.")
        self._validate_policy_spec_configs()
        to_train = self.policies_to_train
        if to_train is not None and not callable(to_train):
            unknown = [m for m in to_train if m not in self.policies]
            if unknown:
                raise ValueError(f"policies_to_train names {unknown}, which are not among the policies "
                                 f"{list(self.policies)}.")

    # Whether a PolicySpec's `config` sets its policy's settings (the Policy API's algorithms).
    APPLIES_POLICY_SPEC_CONFIG = False

    def _validate_policy_spec_configs(self) -> None:
        """An RLModule policy's PolicySpec(config={...}) would be ignored (one set of settings trains every module):
        refuse it rather than train with other settings than the user asked for."""
        from relayrl.algorithms.config_builders import _is_old_stack_policy

        if self.APPLIES_POLICY_SPEC_CONFIG:
            return
        for module_id, spec in self.policies.items():
            if spec.config and not _is_old_stack_policy(spec.policy_class):
                raise ValueError(
                    f"policies[{module_id!r}] = PolicySpec(config={spec.config!r}): {type(self).__name__} trains "
                    "every RLModule policy with the algorithm's settings, so per-policy settings would be ignored. "
                    "Drop config= (set the values with config.training(...) for all policies); give a policy its own "
                    "model with config.rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"
                    f"{module_id!r}: RLModuleSpec(model_config={{...}})}})).")

    # Whether the algorithm trains from offline data (`input_`): BC, MARWIL, CQL, IQL set it.
    READS_OFFLINE_DATA = False
    # Whether, under config.multi_agent(...), the single-agent rows train its one trained module (BC, MARWIL).
    TRAINS_ONE_MODULE_OFFLINE = False

    @property
    def is_offline(self) -> bool:
        """Whether this config trains from offline files (`input_` is not 'sampler'; RLlib's property)."""
        from relayrl.algorithms.offline_options import is_offline_input

        return is_offline_input(self.input_)

    def _validate_offline(self) -> None:
        check_offline_values(self)
        name = type(self).__name__.replace("Config", "")
        check_offline_evaluation_values(self, name)
        if self.is_offline and not self.READS_OFFLINE_DATA:
            raise ValueError(f"{name} samples from its env and does not train from offline data (input_="
                             f"{self.input_!r}): use BC, MARWIL, CQL or IQL for offline files, or keep "
                             "input_='sampler' (record with config.offline_data(output=...)).")
        if self.READS_OFFLINE_DATA and not self.is_offline:
            raise ValueError(f"{name} trains from offline data: set config.offline_data(input_=[...paths of "
                             "parquet files or folders...]) (command line: --input DIR; docs/offline.md).")
        evaluation_env = self.env if self.env is not None else (self.evaluation_config or {}).get("env")
        if self.READS_OFFLINE_DATA and self.evaluation_interval and evaluation_env is None:
            raise ValueError(f"{name} evaluates in an env (evaluation_interval={self.evaluation_interval}), but "
                             "none is set: config.environment('CartPole-v1') (the env gives the spaces too), "
                             "evaluation_config={'env': ...}, or no evaluation.")

    def _validate_evaluation(self) -> None:
        if self.evaluation_duration == "auto" and not self.evaluation_parallel_to_training:
            raise ValueError("evaluation_duration='auto' requires evaluation_parallel_to_training=True "
                             "(it means: evaluate for as long as the parallel training step runs); set "
                             "an int evaluation_duration or config.evaluation("
                             "evaluation_parallel_to_training=True)")
        if self.evaluation_config:
            # Unknown keys and bad values raise here rather than when the algorithm is built.
            self.overrides(**dict(self.evaluation_config))
            self._refuse_evaluation_videos()

    def _refuse_evaluation_videos(self) -> None:
        """Evaluation runners record no videos (env/wrappers/video_recorder.py): a value for them alone was dropped
        without a word, so it is refused, naming the ways to get videos of evaluation episodes."""
        for key, value in dict(self.evaluation_config).items():
            try:
                name = self._option_table.resolve(key, owner="evaluation_config").name
            except ValueError:
                continue  # (a legacy key: overrides() took it)
            if name == "record_video_every_n_episodes" and value and value != self.record_video_every_n_episodes:
                raise ValueError(
                    f"evaluation_config={{{key!r}: {value!r}}}: relayrl records videos of training episodes only; "
                    "evaluation runners record none. For videos of evaluation episodes run `relayrl evaluate "
                    "CHECKPOINT --video-dir DIR`, or render them in a callback (RLlib's EnvRenderCallback: "
                    "relayrl.examples.envs.env_rendering_and_recording; docs/results.md, 'Videos of the agent'); "
                    "for training videos set config.environment(record_video_every_n_episodes=N).")

    def _validate_model_and_exploration(self) -> None:
        """Bad model_config / exploration_config values raise here, naming the key, not deep in torch later."""
        from relayrl.exploration.make_exploration import check_exploration_config
        from relayrl.modules.default_model_config import check_model_config_values

        check_model_config_values(self.model_config)
        check_exploration_config(self.exploration_config, default=self.get_default_exploration_config())

    def _validate_values(self) -> None:
        # Re-check everything: attributes may have been mutated in place since they were set.
        for option in self._option_table:
            value = self._values[option.name]
            if is_search_space(value):
                raise ValueError(
                    f"{option.name} is still a Ray Tune search space ({short_repr(value)}): Tune "
                    "picks a value per trial, so pass the config to Tune (e.g. "
                    "Tuner(PPO, param_space=config)) instead of building it directly")
            self._values[option.name] = option.check_value(value)

    def _validate_batch_sizes(self) -> None:
        per_learner = self.train_batch_size_per_learner
        if per_learner <= 0:
            raise ValueError(f"train_batch_size ({self.train_batch_size}) // num_learners "
                             f"({self.num_learners}) is 0: raise train_batch_size or set "
                             "train_batch_size_per_learner")
        if self.minibatch_size is not None and self.minibatch_size > per_learner:
            raise ValueError(f"minibatch_size ({self.minibatch_size}) must be <= "
                             f"train_batch_size_per_learner ({per_learner})")

    def _validate_fragment_vs_batch(self) -> None:
        """On-policy algorithms: an int rollout_fragment_length must fit the train batch."""
        fragment = self.rollout_fragment_length
        if fragment == "auto":
            return
        envs, runners = self.num_envs_per_env_runner, max(self.num_env_runners, 1)
        total = self.total_train_batch_size

        def fits(num_envs: int) -> bool:
            per_round = fragment * num_envs * runners
            return per_round <= total and math.ceil(total / per_round) * per_round - total <= 0.1 * total

        if fits(envs):
            return
        per_round = fragment * envs * runners
        sampled = math.ceil(total / per_round) * per_round
        fix = "set rollout_fragment_length='auto' or a divisor of the batch"
        if not self.is_given("num_envs_per_env_runner") and envs > 1:
            # An RLlib config (1 env per runner there) fails here only through relayrl's default: say so.
            fitting = next((n for n in range(envs - 1, 0, -1) if fits(n)), None)
            fix = (f"num_envs_per_env_runner={envs} is relayrl's default here (RLlib's is 1), not yours; "
                   + (f"set num_envs_per_env_runner={fitting}, or " if fitting else "") + fix)
        raise ValueError(
            f"rollout_fragment_length ({fragment}) x num_envs_per_env_runner ({envs}) x "
            f"max(num_env_runners, 1) ({runners}) = {per_round} steps per sampling round "
            f"does not fit the train batch of {total} steps (it would sample {sampled}); {fix}")
