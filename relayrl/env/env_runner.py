"""`EnvRunner`: steps a vector env with an RLModule through the connector pipelines, producing episodes.

The same class runs in the driver (the embedded default) and inside Ray actors.
"""
import logging
from typing import Any, Callable, Dict, List, Optional

from relayrl.callbacks import CallbackDispatch
from relayrl.connectors.common.add_observations_from_episodes_to_batch import (
    VECTOR_ENV_OBSERVATIONS,
)
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.env.current_env_runner import set_current_env_runner
from relayrl.env.env_context import EnvContext
from relayrl.core.devices import device_for
from relayrl.env.env_runner_state import EnvRunnerState
from relayrl.env.env_stepper import EnvStepper, SubEnvFailuresError  # noqa: F401 (SubEnvFailuresError: its old home)
from relayrl.env.episode_stats import EpisodeStats
from relayrl.env.sampling import SampleAmount, SamplingPlan, plan_sampling
from relayrl.env.vector_env import batch_actions, info_at, unbatch
from relayrl.episodes.single_agent_episode import SingleAgentEpisode
from relayrl.exploration.env_runner_exploration import build_env_runner_exploration
from relayrl.metrics.metrics_logger import MetricsLogger

logger = logging.getLogger("relayrl")


class EnvRunner(EnvRunnerState):
    """Single-agent EnvRunner (RLlib's SingleAgentEnvRunner). Its checkpoint state: env_runner_state.py; its
    envs (building, stepping, failure recovery, reward clipping): env_stepper.py."""

    EPISODE_STATS = EpisodeStats  # the per-episode metrics (MultiAgentEnvRunner adds the agents' and modules')
    MULTI_AGENT = False  # which vector env the stepper builds
    _checkpoint_kind = "env runner"  # a stored config may name this class and its subclasses (checkpoints/trust.py)

    def __init__(self, *, config, worker_index: int = 0, num_workers: Optional[int] = None,
                 recreated_worker: bool = False, **kwargs):
        # An unfrozen copy, as in RLlib: curriculum code changes a runner's env settings in place, e.g.
        # `env_runner.config.environment(env_config=...)` then `env_runner.make_env()`.
        self.config = config.copy(copy_frozen=False) if hasattr(config, "copy") else config
        self.worker_index = worker_index
        self.num_workers = config.num_env_runners if num_workers is None else num_workers
        self.recreated_worker = recreated_worker
        self.metrics = MetricsLogger()
        self._stats = self.EPISODE_STATS(self.metrics, config.metrics_num_episodes_for_smoothing)
        self._seed = None if config.seed is None else int(config.seed) + 1000 * worker_index
        self.env = None
        self.module = None
        self._callbacks = CallbackDispatch(self.config)
        # Handlers per event, looked up once; an empty tuple means the sampling loop skips the event.
        handlers = self._callbacks.handlers
        self._cb_created, self._cb_start = handlers("on_episode_created"), handlers("on_episode_start")
        self._cb_step, self._cb_end = handlers("on_episode_step"), handlers("on_episode_end")
        self._cb_sample_end = handlers("on_sample_end")
        self._prev_chunks: Dict[str, list] = {}  # episode id -> chunks handed out (only with on_episode_end)
        self.num_env_steps_sampled_lifetime = 0  # the `timestep` Exploration objects see
        self.weights_seq_no = 0  # the version of the weights it acts with (set by IMPALA's broadcasts: policy lag)
        self.training_iteration = 0  # the Algorithm's iteration in progress (only told when videos are recorded)
        self._sampling_explore = self.config.explore  # the sample() in progress's (a failed env's restart uses it)
        self._stepper = EnvStepper(self.config, worker_index=worker_index, num_workers=self.num_workers,
                                   metrics=self.metrics, multi_agent=self.MULTI_AGENT, restart=self._restart_envs)
        self._inference_rng = None  # numpy inference's sampling Generator (env/sampling/numpy_actions.py)
        self.make_env()
        self.make_module()
        self._offline_writer = _offline_writer(self)  # config.offline_data(output=...): records what sample() returns

    # -- construction ------------------------------------------------------------------------
    def make_env(self) -> None:
        """(Re)create the vector env from the config; the next sample() starts fresh episodes."""
        self._forget_ongoing()  # ongoing episodes end with the old env
        self.env = self._stepper.make(iteration=self.training_iteration)
        self._callbacks("on_environment_created", env_runner=self, metrics_logger=self.metrics, env=self.env,
                        env_context=EnvContext(self.config.env_config, self.worker_index, 0, self.num_workers))
        self.num_envs = self.env.num_envs
        self._set_env_spaces()
        self._episodes = []
        self._cached_to_module = None
        self._reward_clipping = self._stepper.reward_clipping
        self._needs_reset = True
        self._next_step_resets = set()  # sub-envs whose next step is an auto-reset (NEXT_STEP envs: NextStepRecorder)

    def _restart_envs(self) -> None:
        """A sub-env failed (restart_failed_sub_environments): new envs, new episodes (EnvStepper.recover)."""
        self.make_env()
        self._reset_envs(self._sampling_explore)

    @property
    def _consecutive_env_failures(self) -> int:  # (checkpointed: env_runner_state.py's STATE_ATTRIBUTES)
        return self._stepper.consecutive_failures

    @_consecutive_env_failures.setter
    def _consecutive_env_failures(self, value: int) -> None:
        self._stepper.consecutive_failures = value

    def _set_env_spaces(self) -> None:
        """The env's spaces (and the module's, kept when only the env is remade)."""
        self._single_env_action_space = self.env.single_action_space
        module_spaces = getattr(self, "_spaces", {}).get(DEFAULT_MODULE_ID)
        self._spaces = {
            "__env__": (self.env.observation_space, self.env.action_space),
            "__env_single__": (
                self.config.observation_space or self.env.single_observation_space,
                self.config.action_space or self.env.single_action_space,
            ),
        }
        if module_spaces is not None:  # make_env() alone keeps the module (and its spaces)
            self._spaces[DEFAULT_MODULE_ID] = module_spaces

    def make_module(self) -> None:
        """Build the connector pipelines and the (inference-only) RLModule for the env's spaces."""
        # Inference on the CPU unless num_gpus_per_env_runner asks for a GPU (then the numpy fast path is off).
        device = device_for("num_gpus_per_env_runner", self.config.num_gpus_per_env_runner)
        self._env_to_module = self.config.build_env_to_module_connector(env=self.env, spaces=self._spaces,
                                                                        device=None if device.type == "cpu" else device)
        self._module_to_env = self.config.build_module_to_env_connector(env=self.env, spaces=self._spaces)
        module_spaces = (self._env_to_module.observation_space, self._env_to_module.action_space)
        self._spaces[DEFAULT_MODULE_ID] = module_spaces
        spec = self.config.get_rl_module_spec(spaces=self._spaces, inference_only=True)
        self.module = spec.build().to(device)
        self.module.eval()
        # `self.exploration` (RLlib's exploration API); GetActions calls it only when it is not the default.
        self.exploration, self._use_exploration, self._exploration_on_episode_start = build_env_runner_exploration(
            self.config, module_spaces[1], model=self.module, worker_index=self.worker_index,
            num_workers=self.num_workers)

    @property
    def policy_config(self):
        """The old API stack's name for the runner's config: `env_runner.policy_config["in_evaluation"]`."""
        return self.config

    def get_spaces(self) -> Dict[str, Any]:
        return dict(self._spaces)

    # -- sampling ------------------------------------------------------------------------------
    def sample(self, *, num_timesteps: Optional[int] = None, num_episodes: Optional[int] = None,
               explore: Optional[bool] = None, random_actions: bool = False,
               force_reset: bool = False) -> List[SingleAgentEpisode]:
        """Step the envs and return finished episodes plus (truncate mode) the cut ongoing chunks.

        Default amount: `rollout_fragment_length * num_envs` steps. With `num_episodes` (or
        batch_mode="complete_episodes") only finished episodes are returned.
        """
        if num_timesteps is not None and num_episodes is not None:
            raise ValueError("Pass num_timesteps or num_episodes to sample(), not both.")
        set_current_env_runner(self)  # get_global_worker() in callbacks (seed 000)
        explore = self.config.explore if explore is None else explore
        complete = num_episodes is not None or self.config.batch_mode == "complete_episodes"
        if num_timesteps is None and num_episodes is None:
            num_timesteps = self.config.get_rollout_fragment_length(self.worker_index) * self.num_envs
        self._sampling_explore = explore
        with self._stepper.explaining_errors():  # (an observation that does not fit the space, named)
            if self._needs_reset or force_reset or num_episodes is not None:
                self._stepper.guarded(lambda: self._reset_envs(explore))
            amount = self._sample_amount(num_timesteps, num_episodes, complete)
            plan = self._plan_sampling(explore, random_actions, num_timesteps, amount)
            steps = self._run(plan, amount)
        self._stats.on_steps(steps)
        self.num_env_steps_sampled_lifetime += steps
        samples = amount.done_episodes[:num_episodes] if complete else amount.done_episodes + self._cut_ongoing()
        for handler in self._cb_sample_end:
            handler(env_runner=self, metrics_logger=self.metrics, samples=samples)
        if self._offline_writer is not None:
            self._offline_writer.write(samples)
        return samples

    def _plan_sampling(self, explore: bool, random_actions: bool, num_timesteps: Optional[int],
                       amount: Optional[SampleAmount] = None) -> SamplingPlan:
        return plan_sampling(self, explore=explore, random_actions=random_actions, num_timesteps=num_timesteps,
                             amount=amount)

    def _sample_amount(self, num_timesteps: Optional[int], num_episodes: Optional[int], complete: bool) -> SampleAmount:
        return SampleAmount(num_timesteps=num_timesteps, num_episodes=num_episodes, complete=complete,
                            num_envs=self.num_envs)

    def _run(self, plan: SamplingPlan, amount: SampleAmount) -> int:
        """The sampling loop: the plan's action source computes the actions, the envs step, its recorder
        puts the step into the episodes (env/sampling/). Returns the env steps taken."""
        actions, recorder, explore, steps = plan.actions, plan.recorder, plan.actions.explore, 0
        clip_rewards = self._reward_clipping.use(self.config.clip_rewards)
        step = self._stepper.step
        while not amount.reached(steps):
            to_env = actions(self.num_env_steps_sampled_lifetime + steps)
            chosen = to_env.pop(Columns.ACTIONS)
            stepped = step(batch_actions(self._single_env_action_space, to_env.pop(Columns.ACTIONS_FOR_ENV, chosen)))
            if stepped is None:  # a sub-env failed and the envs were recreated (restart_failed_sub_environments)
                recorder.drop_pending()
                actions.restart()
                clip_rewards = self._reward_clipping.use(self.config.clip_rewards)  # (the new envs')
                continue
            observations, rewards, terminateds, truncateds, infos = stepped
            finished = recorder.record(chosen, to_env, observations, clip_rewards(rewards), terminateds,
                                       truncateds, infos)
            steps += self.num_envs - recorder.rows_skipped  # (rows of NEXT_STEP auto-resets are no env steps)
            if self._cb_step:
                for i, episode in enumerate(self._episodes):
                    if len(episode):  # (not one that a NEXT_STEP auto-reset just started)
                        self._episode_callbacks(self._cb_step, episode, i)
            if finished:
                self._end_episodes(finished, self._starts(observations, infos), amount, explore,
                                   recorder.next_episode)
            actions.next_step(observations, finished)
        # First: the episodes then hold every step when the action source finishes. Chunks about to be
        # cut and handed out take their steps numpy'd at once, not as items that to_numpy() then stacks.
        recorder.finish(to_numpy=amount.cuts_ongoing)
        actions.finish(steps)
        return steps

    def _end_episodes(self, finished: List[int], start_of: Callable, amount: SampleAmount, explore: bool,
                      next_episode: Optional[Callable] = None) -> None:
        """The episodes of sub-envs `finished` ended (and hold all their steps): the amount takes those it
        wants (callbacks, numpy, metrics); new episodes start from the auto-reset observations
        (`start_of(i)`: sub-env i's (observation, info); `next_episode(i, observation, info)`: the recorder's,
        which knows when the env auto-resets)."""
        next_episode = next_episode or (lambda i, observation, info: self._new_episode(observation, info, i))
        ended = [self._episodes[i] for i in finished]
        if self._env_to_module.WRITES_EPISODES:
            # Let pieces that write episodes see the terminal observations (e.g. MeanStdFilter).
            self._env_to_module_call(ended, explore)
        for i, episode in zip(finished, ended):
            score = self._reward_clipping.take_score(i)  # the unclipped return (None: not clipping)
            if amount.wants(i):
                if self._cb_end:
                    self._episode_callbacks(self._cb_end, episode, i,
                                            prev_episode_chunks=self._prev_chunks.pop(episode.id_, []))
                self._handed_out(episode)  # first: the return then sums an array, not a list
                self._stats.on_episode_done(episode, score=score)
                amount.add(episode)
            else:
                self._prev_chunks.pop(episode.id_, None)
            self._episodes[i] = next_episode(i, *start_of(i))

    def _cut_ongoing(self) -> List[SingleAgentEpisode]:
        """Truncate mode: the ongoing episodes' chunks so far (numpy'd); their successors go on."""
        chunks = []
        for i, episode in enumerate(self._episodes):
            if len(episode) == 0:
                continue
            successor = episode.cut(len_lookback_buffer=self.config.episode_lookback_horizon)
            self._stats.on_chunk_cut(episode)
            chunks.append(self._handed_out(episode))
            if self._cb_end:  # on_episode_end gets the chunks handed out before the episode ended
                self._prev_chunks.setdefault(episode.id_, []).append(episode)
            self._episodes[i] = successor
        return chunks

    @staticmethod
    def _handed_out(episode):
        """An episode or chunk as sample() returns it: numpy'd (returns the episode)."""
        return episode.to_numpy()

    def _reset_envs(self, explore: bool) -> None:
        seed, self._seed = self._seed, None  # seed only the first reset; later resets continue the env's own RNG
        self._forget_ongoing()
        self._episodes = [self._make_episode() for _ in range(self.num_envs)]
        self._reward_clipping.restart()
        self._next_step_resets.clear()
        for i, episode in enumerate(self._episodes):
            self._episode_callbacks(self._cb_created, episode, i)
        observations, infos = self.env.reset(seed=seed)
        start_of = self._starts(observations, infos)
        for i, episode in enumerate(self._episodes):
            self._start_episode(episode, *start_of(i), i)
        self._cache_env_to_module(explore, observations)
        self._needs_reset = False

    def _forget_ongoing(self) -> None:
        """The ongoing episodes are dropped: forget the returns of their already handed-out chunks."""
        for episode in getattr(self, "_episodes", []):
            self._stats.forget(episode)
            self._prev_chunks.pop(episode.id_, None)

    def _starts(self, observations, infos) -> Callable:
        """`start_of(i)`: sub-env i's (observation, info) out of the vector env's reset or step results."""
        observations = unbatch(self.env.observation_space, observations)
        return lambda i: (observations[i], info_at(infos, i))

    def _cache_env_to_module(self, explore: bool, vector_observations=None) -> None:
        """The env-to-module batch for the ongoing episodes, for the next step."""
        self._cached_to_module = self._env_to_module_call(self._episodes, explore, vector_observations)

    def _make_episode(self) -> SingleAgentEpisode:
        obs_space, act_space = self._spaces["__env_single__"]
        return SingleAgentEpisode(observation_space=obs_space, action_space=act_space)

    def _new_episode(self, observation, info, env_index: int) -> SingleAgentEpisode:
        """The episode that follows a finished one in sub-env `env_index` (which auto-reset already)."""
        episode = self._make_episode()
        if self._cb_created:
            self._episode_callbacks(self._cb_created, episode, env_index)
        self._start_episode(episode, observation, info, env_index)
        return episode

    def _start_episode(self, episode, observation, info, env_index: int) -> None:
        """The reset observation goes in, then on_episode_start (callbacks, then the exploration object)."""
        self._add_reset(episode, observation, info)
        if self._cb_start:
            self._episode_callbacks(self._cb_start, episode, env_index)
        if self._exploration_on_episode_start is not None:
            self._exploration_on_episode_start(environment=self.env, episode=episode, env_index=env_index)

    def _add_reset(self, episode, observation, info) -> None:
        episode.add_env_reset(observation, info)

    def _episode_callbacks(self, handlers, episode, env_index: int, **extra) -> None:
        for handler in handlers:
            handler(episode=episode, env_runner=self, metrics_logger=self.metrics, env=self.env,
                    env_index=env_index, rl_module=self.module, **extra)

    def _env_to_module_call(self, episodes, explore, vector_observations=None):
        # Passing the vector env's observations lets the default pieces skip reading each episode.
        shared_data = {} if vector_observations is None else {VECTOR_ENV_OBSERVATIONS: vector_observations}
        return self._env_to_module(rl_module=self.module, batch={}, episodes=episodes, explore=explore,
                                   shared_data=shared_data, metrics=self.metrics)

    # -- metrics, state, helpers ----------------------------------------------------------
    def get_metrics(self) -> Dict[str, Any]:
        """Raw metrics since the last call, in the mergeable form (`MetricsLogger.reduce_for_merge`)."""
        return self.metrics.reduce_for_merge()

    def set_training_iteration(self, iteration: int) -> None:
        """The Algorithm's iteration in progress (1 = the first train()), named in this runner's video files."""
        self.training_iteration = iteration
        self._stepper.set_training_iteration(iteration)

    def foreach_env(self, func: Callable) -> List:
        """`func(sub_env)` for every sub-env of this runner's vector env; returns the results."""
        return self._stepper.foreach_env(func)

    def ping(self) -> str:
        return "pong"

    def assert_healthy(self) -> None:
        assert self.env is not None and self.module is not None, "EnvRunner has no env or module."

    def stop(self) -> None:
        writer, self._offline_writer = getattr(self, "_offline_writer", None), None
        if writer is not None:
            writer.close()
        self._stepper.close()
        self.env = None


def _offline_writer(env_runner):
    """The recorder of `config.offline_data(output=...)` (relayrl/offline/writer.py), or None without output."""
    if env_runner.config.output is None:
        return None
    from relayrl.offline.writer import writer_for

    return writer_for(env_runner)


SingleAgentEnvRunner = EnvRunner
