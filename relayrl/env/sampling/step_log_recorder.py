"""Recorder: the vector env's steps as columns (`VectorStepLog`), handed to an episode when it ends.

Used when nothing reads the ongoing episodes between steps (no `on_episode_step` callback, no
connector piece that reads or writes episodes, no random actions): instead of one `add_env_step`
per sub-env per step, each vector step is one row of numpy columns, and an episode takes its rows in
one `add_env_steps` call when it ends (numpy'd by concatenation) or when `sample()` stops (as items,
so it goes on). The episodes are the same as with per-step recording (tested). A step whose module
outputs are not plain arrays with a row per sub-env (e.g. dict outputs) switches the rest of the
sample() call to per-step recording (`EpisodeRecorder`).
"""
from typing import List, Optional

import numpy as np

from relayrl.env.sampling.episode_recorder import EpisodeRecorder
from relayrl.env.sampling.vector_step_log import VectorStepLog
from relayrl.env.vector_env import has_env_infos, in_space_dtype, info_at, infos_per_env


class StepLogRecorder:
    """A recorder (see EpisodeRecorder for the protocol) writing rows of a `VectorStepLog`."""

    rows_skipped = 0  # every row of a same-step autoreset env is a step

    def __init__(self, runner, log: VectorStepLog):
        self.runner = runner
        self._log: Optional[VectorStepLog] = log
        self._per_episode: Optional[EpisodeRecorder] = None  # after a step that did not fit the columns

    @classmethod
    def plan(cls, runner, num_timesteps: Optional[int], random_actions: bool,
             pipelines_bypassed: bool = False) -> Optional["StepLogRecorder"]:
        """This recorder when nothing reads the ongoing episodes between steps; None otherwise.
        `pipelines_bypassed`: the action source does not call the pipelines in the loop (then pieces
        that read episodes do not count; one that writes them still does)."""
        module = runner.module
        if random_actions or runner._cb_step or runner._env_to_module.WRITES_EPISODES:
            return None
        if not pipelines_bypassed and (runner._env_to_module.reads_episodes(module)
                                       or runner._module_to_env.reads_episodes(module)):
            return None
        n = runner.num_envs
        return cls(runner, VectorStepLog(n, capacity=-(-num_timesteps // n) if num_timesteps else 64))

    def next_episode(self, env_index: int, observation, info):
        return self.runner._new_episode(observation, info, env_index)

    def record(self, actions, extra_model_outputs, observations, rewards, terminateds, truncateds,
               infos, reset_rows=()) -> List[int]:
        if self._per_episode is None:
            finished = self._log_step(actions, extra_model_outputs, observations, rewards, terminateds, truncateds,
                                      infos, reset_rows)
            if finished is not None:
                return finished
            self.finish()  # the step does not fit the log's columns: record per episode from now on
            self._per_episode = EpisodeRecorder(self.runner)
        return self._per_episode.record(actions, extra_model_outputs, observations, rewards, terminateds,
                                        truncateds, infos, reset_rows)

    def _log_step(self, actions, extra_model_outputs, observations, rewards, terminateds, truncateds,
                  infos, reset_rows=()) -> Optional[List[int]]:
        """The step goes into the log's columns and only the episodes that ended take their steps. None,
        recording nothing, if the step does not fit the columns."""
        log, n = self._log, self.runner.num_envs
        if getattr(rewards, "dtype", None) == np.float32:  # (native vector envs): float64 holds the same values,
            rewards = rewards.astype(np.float64)  # as the Python floats of per-step recording do
        step_infos = infos_per_env(infos, n) if infos and has_env_infos(infos) else None
        if not log.write(observations, actions, rewards, extra_model_outputs, step_infos):
            return None
        for i in reset_rows:  # auto-reset rows belong to no episode
            log.skip_row(i)
        done = (terminateds | truncateds).tolist()  # (a list: `in` is cheaper than ndarray.any() on 8 items)
        if True not in done:
            return []
        finished = [i for i, ended in enumerate(done) if ended]
        final_infos = infos.get("final_info", {})
        episodes, space = self.runner._episodes, self.runner.env.single_observation_space
        for i in finished:
            log.hand_over(i, episodes[i], final_observation=in_space_dtype(space, infos["final_obs"][i]),
                          final_info=info_at(final_infos, i), terminated=bool(terminateds[i]),
                          truncated=bool(truncateds[i]))
        return finished

    def drop_pending(self) -> None:
        if self._log is not None:
            self._log.drop_pending()

    def finish(self, to_numpy: bool = False) -> None:
        """The ongoing episodes take their steps from the log, as items, so they can go on, or numpy'd
        (`to_numpy`: the runner cuts them next and hands them out)."""
        log, self._log = self._log, None
        if log is not None:
            for i, episode in enumerate(self.runner._episodes):
                log.hand_over(i, episode, to_numpy=to_numpy)
