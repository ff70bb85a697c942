"""`OfflineAlgorithm`: the setup and training_step of algorithms that learn from files (BC, MARWIL, CQL, IQL).

No training EnvRunner samples: the data comes from `config.offline_data(input_=...)` through the reader
(relayrl/offline/: embedded; relayrl/distributed/offline_ray_data.py: Ray Data) into the Learners, whose
connector pipeline builds the train batch as it does from sampled episodes. An env, where one is set, only
gives the spaces and runs the evaluation (`config.evaluation(evaluation_interval=...)`). One training_step runs
`dataset_num_iters_per_learner` updates (None: one with the local Learner; one pass over each shard with Ray
Data), each on `train_batch_size_per_learner` timesteps per Learner; `num_env_steps_sampled_lifetime` counts the
timesteps read, as RLlib's does.
"""
from typing import Any, Dict, Tuple

from relayrl.algorithms.offline_multi_agent import multi_agent_offline_spaces
from relayrl.algorithms.offline_recurrent_rows import check_recurrent_module_reads_episodes
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.metrics import LEARNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME, NUM_ENV_STEPS_TRAINED_LIFETIME


class OfflineAlgorithm:
    """Mixed in before the algorithm's own base class (CQL(OfflineAlgorithm, SAC), MARWIL(OfflineAlgorithm,
    Algorithm)): its setup, training_step and result replace the online ones."""

    STATE_ATTRIBUTES: tuple = ()

    def setup(self, config) -> None:
        from relayrl.algorithms.algorithm import _check_new_api_stack
        from relayrl.env.env_runner_group import EnvRunnerGroup

        _check_new_api_stack(config, type(self).__name__)
        self._learner_results_pending = False
        self.env_runner_group = EnvRunnerGroup(config=config, local_env_runner=False, num_env_runners=0)
        spaces = offline_spaces(config)
        self.learner_group = config._learner_group_for_algorithm(
            spaces=spaces, rl_module_spec=config.get_module_spec_for_learner(spaces))
        try:
            check_recurrent_module_reads_episodes(config, self.learner_group, type(self).__name__)
        except ValueError:
            self.learner_group.shutdown()  # remote Learners do not outlive a build that failed
            raise
        self.eval_env_runner_group = self._make_eval_env_runner_group(config)
        self.offline_data = make_offline_data(config, spaces["__env_single__"], self.learner_group)
        self.offline_eval_runner = None
        if config.offline_evaluation_interval:
            self.offline_eval_runner = make_offline_eval_runner(config, spaces)

    def evaluate_offline(self) -> Dict[str, Any]:
        """The Learner's loss (no gradient step) on the offline evaluation data with the current weights:
        `{"offline_eval_runners": {module id: {"total_eval_loss": ...}, ...}}`, as RLlib 2.60's; train() reports
        it under `result["evaluation"]` every offline_evaluation_interval iterations."""
        from relayrl.offline.offline_evaluation import OFFLINE_EVAL_RUNNER_RESULTS

        runner = self.offline_eval_runner
        if runner is None:
            raise ValueError("evaluate_offline() needs config.evaluation(offline_evaluation_interval=N) (N > 0) "
                             "before the algorithm is built.")
        self._callbacks("on_evaluate_offline_start", algorithm=self, metrics_logger=self.metrics)
        with self.metrics.log_time(("timers", "offline_evaluation_iteration_timer"), window=1):
            results = runner.run(self.learner_group, self._counters)
        self._callbacks("on_evaluate_offline_end", algorithm=self, metrics_logger=self.metrics,
                        evaluation_metrics=results)
        return {OFFLINE_EVAL_RUNNER_RESULTS: results}

    def training_step(self) -> None:
        cfg = self.config
        learners = max(cfg.num_learners, 1)
        with self.metrics.log_time(("timers", "learner_update_timer"), window=1):
            steps = self.offline_data.update_learners(
                self.learner_group, num_iters=cfg.dataset_num_iters_per_learner,
                timesteps=lambda: {NUM_ENV_STEPS_SAMPLED_LIFETIME: self._counters.get(NUM_ENV_STEPS_SAMPLED_LIFETIME,
                                                                                      0)},
                on_update=lambda n: self._count_steps(n))
        if steps == 0:
            raise RuntimeError(f"{type(self).__name__} read no offline data this iteration (train batch of "
                               f"{cfg.train_batch_size_per_learner} x {learners} Learner(s)); check input_.")
        self._learner_results_pending = True

    def _count_steps(self, steps: int) -> None:
        for key in (NUM_ENV_STEPS_SAMPLED_LIFETIME, NUM_ENV_STEPS_TRAINED_LIFETIME):
            self._counters[key] = self._counters.get(key, 0) + steps

    def _compile_result(self, elapsed: float, calls: int) -> Dict[str, Any]:
        # The Learners' metrics of the iteration's updates, reduced once (updates run with reduce_metrics=False).
        from relayrl.algorithms.algorithm import Algorithm

        if self._learner_results_pending:
            self.metrics.log_dict(self.learner_group.reduce_results(), key=LEARNER_RESULTS, window=1)
            self._learner_results_pending = False
        result = Algorithm._compile_result(self, elapsed, calls)
        result["offline_data"] = {"num_rows": self.offline_data.num_rows}
        return result

    def inference_env_runner(self):
        """The EnvRunner compute_single_action / compute_actions use: offline algorithms run no training EnvRunner,
        so one is built in this process on first use (its env only builds the connector pipelines), and it gets
        the Learner's current weights whenever they changed since it last got them (a train(), set_weights,
        restore, add/remove module): copying them at every call made per-step acting slow."""
        runner = getattr(self, "_inference_runner", None)
        if runner is None:
            config = self.config if self.config.env is not None else self.evaluation_config
            if config is None or config.env is None:
                raise ValueError(
                    f"compute_single_action/compute_actions run the env-to-module and module-to-env pipelines, which "
                    f"need an env, and this {type(self).__name__} has none (only spaces). Set "
                    "config.environment(env=...) (the env is only made, not stepped), or call the module directly: "
                    "algo.get_module().forward_inference({'obs': torch.as_tensor(batch_of_obs)}).")
            from relayrl.core.rng_isolation import isolated_global_rngs
            from relayrl.env.env_runner_group import default_env_runner_class

            with isolated_global_rngs():  # building it draws no randomness from the training run's
                runner = default_env_runner_class(config)(config=config, worker_index=0)
            self._inference_runner = runner
            self._inference_weights_version = None
        version = self.learner_group.weights_version()
        if version != self._inference_weights_version:
            runner.set_state({"rl_module": self.learner_group.get_weights(inference_only=True)})
            self._inference_weights_version = version  # (after set_state: a failed copy is tried again)
        return runner

    def cleanup(self) -> None:
        from relayrl.algorithms.algorithm import Algorithm

        runner = getattr(self, "_inference_runner", None)
        if runner is not None:
            runner.stop()
        for owner in (getattr(self, "offline_data", None), getattr(self, "offline_eval_runner", None)):
            close = getattr(owner, "close", None)
            if close is not None:
                close()
        Algorithm.cleanup(self)


def offline_spaces(config) -> Dict[str, Tuple[Any, Any]]:
    """The spaces of the rows ("__env_single__": what the data checks, the one-step episodes and the Learner
    pipeline's input use) and of the module (DEFAULT_MODULE_ID): the config's, else those of one env made to read
    them.

    With an env-to-module connector both follow it as a recorder and the evaluation EnvRunners see it: the rows
    hold the observations after the pieces that write them into the episodes (FlattenObservations one-hot encodes
    Discrete and flattens Dict observations, MeanStdFilter), and the module gets the whole pipeline's output
    (FrameStacking's stacked frames too, which its Learner counterpart stacks from episode rows)."""
    obs_space, act_space = config.observation_space, config.action_space
    env = None
    if obs_space is None or act_space is None:
        from relayrl.env.env_context import EnvContext
        from relayrl.env.multi_agent_env import is_multi_agent_env
        from relayrl.env.registry import make_env_creator

        env = make_env_creator(config.env)(EnvContext(config.env_config))
    try:
        if env is not None and is_multi_agent_env(env):
            if not config.is_multi_agent:
                raise ValueError(
                    f"The env {type(env).__name__} is a MultiAgentEnv, but this config is single-agent: add "
                    "config.multi_agent(policies={'main', ...}, policy_mapping_fn=..., policies_to_train=['main']) "
                    "(the rows train the one module trained), or give the spaces of the rows' agent with "
                    "config.environment(observation_space=..., action_space=...).")
            return multi_agent_offline_spaces(config, env)
        if env is not None:
            obs_space, act_space = obs_space or env.observation_space, act_space or env.action_space
        rows_spaces = module_spaces = (obs_space, act_space)
        if config.env_to_module_connector is not None and not config.is_multi_agent:  # (multi-agent: as before)
            pipeline = config.build_env_to_module_connector(env=env, spaces={"__env_single__": rows_spaces})
            module_spaces = (pipeline.observation_space, pipeline.action_space)
            rows_spaces = (_recorded_observation_space(pipeline, obs_space), act_space)
    finally:
        if env is not None:
            env.close()
    return {"__env_single__": rows_spaces, DEFAULT_MODULE_ID: module_spaces}


def _recorded_observation_space(pipeline, observation_space):
    """The space of the observations a recorder with this pipeline wrote: the output of the leading pieces that
    write the episodes' observations (a piece that only builds the batch, as FrameStacking, ends them)."""
    for piece in pipeline.connectors:
        if not getattr(piece, "WRITES_EPISODES", True):
            break
        observation_space = piece.observation_space
    return observation_space


def make_offline_data(config, spaces, learner_group):
    """The reader of `input_`: Ray Data with remote Learners or when asked for, else embedded (pyarrow)."""
    if uses_ray_data(config):
        from relayrl.distributed.offline_ray_data import RayDataOfflineData

        return RayDataOfflineData(config, spaces, learner_group)
    from relayrl.offline.offline_data import OfflineData

    return OfflineData(config, spaces, learner=learner_group._learner if learner_group.is_local else None)


def make_offline_eval_runner(config, spaces):
    """The offline evaluation: in this process (num_offline_eval_runners=0), else Ray actors."""
    module_spec = config.get_module_spec_for_learner(spaces)
    if config.num_offline_eval_runners:
        from relayrl.distributed.offline_eval_actors import RemoteOfflineEvaluationRunners

        return RemoteOfflineEvaluationRunners(config, spaces, module_spec)
    from relayrl.offline.offline_evaluation import OfflineEvaluationRunner

    return OfflineEvaluationRunner(config, spaces, module_spec)


def uses_ray_data(config) -> bool:
    from relayrl.offline.minari_bridge import minari_dataset_ids

    if minari_dataset_ids(config.input_):  # read in this process; remote Learners get their shards of each batch
        if config.input_reader == "ray_data":
            raise ValueError("input_reader='ray_data' reads files; a Minari dataset (minari://...) is read embedded: "
                             "set input_reader='auto' or 'embedded'.")
        return False
    if config.input_reader != "auto":
        return config.input_reader == "ray_data"
    return config.num_learners > 0 or config.input_read_method not in ("read_parquet", "read_json")


__all__ = ["OfflineAlgorithm", "offline_spaces", "make_offline_data", "make_offline_eval_runner", "uses_ray_data"]
