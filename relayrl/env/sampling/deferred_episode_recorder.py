"""Recorder: a NEXT_STEP vector env's episodes built in bulk from the step log when `sample()` stops.

With an env's own vector implementation (NEXT_STEP auto-reset, e.g. CartPole's) and a short-episode
policy, several of 64 sub-envs end an episode at every vector step. NextStepRecorder around
StepLogRecorder then, per ended episode, starts an episode object at its reset row, hands it its
rows (one `add_env_steps`, numpy'd column by column), logs its metrics and starts the next one: ~30
µs per episode, more than the env's whole vector step. This recorder writes the same rows into a
`VectorStepLog` but only remembers where each episode began and ended; when the call stops it builds
every episode that began in it with one fancy-index gather per column over all of them, each
episode's columns being slices of those arrays. The episodes, their order, the metrics and the
chunks handed out are the same as NextStepRecorder's (tested against it); episodes that began
before the call (objects already) take their rows as they do there (`VectorStepLog.hand_over`).

It applies (`plan`) only when no one can see an episode before the call stops:
- the env auto-resets on the NEXT step and StepLogRecorder applies (nothing reads the ongoing episodes
  between steps), and the action source is `DirectNumpyActions` (no pipeline is called in the loop, its
  outputs are arrays with a row per sub-env, and it ignores which sub-envs ended);
- no `on_episode_created` / `on_episode_start` / `on_episode_step` / `on_episode_end` callback and no
  exploration object's `on_episode_start`;
- rewards are not clipped (the unclipped score is taken at the step an episode ends), sub-env
  failures are not restarted (a rebuild drops the episodes mid-call), and the call returns every
  episode that ends and cuts the ongoing ones (truncate mode, no `num_episodes`);
- the runner's episode hooks are EnvRunner's own (`_make_episode`, `_new_episode`, ...).
A step that does not fit the log's columns (e.g. integer rewards, dict observations) turns the rest
of the call into NextStepRecorder around EpisodeRecorder, after giving every episode what it has.
"""
import time
from typing import List, Optional

import numpy as np
from gymnasium.vector import AutoresetMode

from relayrl.env.native_vector_env import autoreset_mode
from relayrl.env.reward_clipping import clip_function
from relayrl.env.sampling.carried_episodes import hand_over_carried
from relayrl.env.sampling.direct_numpy_actions import DirectNumpyActions
from relayrl.env.sampling.episode_recorder import EpisodeRecorder
from relayrl.env.sampling.next_step_recorder import NextStepRecorder
from relayrl.env.sampling.step_log_recorder import StepLogRecorder
from relayrl.env.sampling.vector_step_log import VectorStepLog
from relayrl.env.vector_env import has_env_infos, info_at, infos_per_env
from relayrl.episodes.infinite_lookback_buffer import InfiniteLookbackBuffer
from relayrl.episodes.single_agent_episode import _REWARD_SPACE, SingleAgentEpisode

_HOOKS = ("_make_episode", "_new_episode", "_start_episode", "_add_reset", "_handed_out", "_end_episodes")
_CALLBACKS = ("_cb_created", "_cb_start", "_cb_step", "_cb_end")


class DeferredEpisodeRecorder:
    """A recorder (see EpisodeRecorder for the protocol); `record` reports no ended sub-env to the loop:
    the ended episodes go to the amount and the metrics, in the order they ended, at `finish`."""

    def __init__(self, runner, amount, log: VectorStepLog):
        self.runner = runner
        self.amount = amount
        self._rows_skipped = 0
        self._log = log
        n = runner.num_envs
        # Per sub-env: the row of the reset observation of its episode begun in this call (None: its episode
        # is the runner's object, begun before, or it owes a reset row, `runner._next_step_resets`).
        self._start: List[Optional[int]] = [None] * n
        self._reset_info: List[Optional[dict]] = [None] * n
        # In the order they ended: (episode, sub-env, last row, terminated, truncated, final info) of one begun
        # before the call (an object: rows 0..last are its), or (sub-env, reset row, last row, terminated,
        # truncated, final info, reset info) of one begun in it.
        self._ended: list = []
        self._times: List[float] = []  # per row: when it was recorded (the episodes' start and end times)
        self._first_final_obs = None  # the placeholder's observation (as NextStepRecorder's shared one)
        self._shared_placeholder: Optional[SingleAgentEpisode] = None
        self._fallback: Optional[NextStepRecorder] = None

    @classmethod
    def plan(cls, runner, actions, amount, num_timesteps: Optional[int]) -> Optional["DeferredEpisodeRecorder"]:
        """This recorder when its conditions (module docstring) hold; None otherwise."""
        if amount is None or not (amount.cuts_ongoing and amount.takes_every_episode):
            return None
        if not isinstance(actions, DirectNumpyActions) or autoreset_mode(runner.env) != AutoresetMode.NEXT_STEP:
            return None
        config = runner.config
        if (any(getattr(runner, name) for name in _CALLBACKS) or runner._exploration_on_episode_start is not None
                or clip_function(config.clip_rewards) is not None or config.restart_failed_sub_environments):
            return None
        from relayrl.env.env_runner import EnvRunner
        if any(getattr(type(runner), hook) is not getattr(EnvRunner, hook) for hook in _HOOKS):
            return None
        if StepLogRecorder.plan(runner, num_timesteps, False) is None:
            return None
        n = runner.num_envs
        return cls(runner, amount, VectorStepLog(n, capacity=-(-num_timesteps // n) + 8 if num_timesteps else 64))

    # -- the loop's calls ----------------------------------------------------------------------
    @property
    def rows_skipped(self) -> int:
        return self._rows_skipped if self._fallback is None else self._fallback.rows_skipped

    def record(self, actions, extra_model_outputs, observations, rewards, terminateds, truncateds,
               infos) -> List[int]:
        if self._fallback is not None:
            return self._fallback.record(actions, extra_model_outputs, observations, rewards, terminateds,
                                         truncateds, infos)
        runner, log = self.runner, self._log
        resets = runner._next_step_resets
        reset_rows = sorted(resets) if resets else ()
        logged_rewards = rewards.astype(np.float64) if getattr(rewards, "dtype", None) == np.float32 else rewards
        step_infos = infos_per_env(infos, runner.num_envs) if infos and has_env_infos(infos) else None
        if not log.write(observations, actions, logged_rewards, extra_model_outputs, step_infos):
            self._fall_back()
            return self._fallback.record(actions, extra_model_outputs, observations, rewards, terminateds,
                                         truncateds, infos)
        row = log.rows - 1
        self._times.append(time.perf_counter())
        self._rows_skipped = len(reset_rows)
        if reset_rows:
            for i in reset_rows:  # (no infos: the episode's first info is a fresh {} when it is built)
                log.skip_row(i)
                self._start[i], self._reset_info[i] = row, info_at(infos, i) if infos else None
            resets.clear()
        done = terminateds | truncateds
        if reset_rows:  # (a reset row ends nothing, whatever the env reports for it)
            done[reset_rows] = False
        done = done.tolist()
        if True in done:
            self._ends(row, [i for i, ended in enumerate(done) if ended], observations, terminateds, truncateds,
                       infos)
        return []

    def _ends(self, row: int, finished: List[int], observations, terms, truncs, infos) -> None:
        runner, starts = self.runner, self._start
        if self._first_final_obs is None:
            self._first_final_obs = observations[finished[0]]
        for i in finished:  # (final info None: no infos, the last step's info stays the fresh {} it gets)
            terminated, truncated, start = bool(terms[i]), bool(truncs[i]), starts[i]
            final_info = info_at(infos, i) if infos else None
            if start is None:  # begun before the call: an object
                self._ended.append((runner._episodes[i], i, row, terminated, truncated, final_info))
            else:
                self._ended.append((i, start, row, terminated, truncated, final_info, self._reset_info[i]))
                starts[i] = None
            runner._next_step_resets.add(i)

    def next_episode(self, env_index: int, observation, info):
        return self._fallback.next_episode(env_index, observation, info)  # (only the fallback reports endings)

    def drop_pending(self) -> None:  # (not planned with restart_failed_sub_environments; as NextStepRecorder)
        if self._fallback is not None:
            return self._fallback.drop_pending()
        self._hand_out_ended()
        self._log.drop_pending()
        self._start = [None] * self.runner.num_envs

    def finish(self, to_numpy: bool = False) -> None:
        if self._fallback is not None:
            return self._fallback.finish(to_numpy=to_numpy)
        self._hand_out_ended()
        self._give_ongoing_their_rows(to_numpy)

    # -- building the episodes --------------------------------------------------------------------
    def _hand_out_ended(self) -> None:
        """Every ended episode to the metrics and the amount, in the order they ended."""
        ended, self._ended = self._ended, []
        spans = [item for item in ended if type(item[0]) is int]
        built = iter(self._build(spans, ended=True)) if spans else None
        self._hand_over_carried([item for item in ended if type(item[0]) is not int])
        stats, amount = self.runner._stats, self.amount
        for item in ended:
            episode = next(built) if type(item[0]) is int else item[0]
            stats.on_episode_done(episode)
            amount.add(episode)

    def _hand_over_carried(self, spans: list, to_numpy: bool = True) -> None:
        """Episodes begun before the call take their rows 0..last (`spans` as in `_ended`), all at once
        where they fit (carried_episodes.py), else one by one."""
        if not spans:
            return
        times = self._times
        end_times = [times[last] if (terminated or truncated) else time.perf_counter()
                     for _, _, last, terminated, truncated, _ in spans]
        if to_numpy and hand_over_carried(self._log, spans, end_times):
            return
        for (episode, i, last, terminated, truncated, final_info), end_time in zip(spans, end_times):
            self._log.hand_over(i, episode, final_observation=self._log.row_of(i, last), final_info=final_info,
                                terminated=terminated, truncated=truncated, to_numpy=to_numpy,
                                rows=slice(0, last + 1))
            episode._last_step_time = end_time

    def _give_ongoing_their_rows(self, to_numpy: bool) -> None:
        """The runner's episodes hold all their steps: those begun before the call take their rows, those
        begun in it are built (numpy'd with `to_numpy`: the runner cuts them next), a sub-env owing a reset
        row gets the placeholder."""
        runner, log = self.runner, self._log
        spans, slots, carried = [], [], []
        for i, start in enumerate(self._start):
            if start is not None and start < log.rows - 1:
                spans.append((i, start, log.rows - 1, False, False, None, self._reset_info[i]))
                slots.append(i)
            elif start is not None:  # its reset row is the last one: no step yet, so no chunk is cut
                episode = runner._episodes[i] = runner._new_episode(log.row_of(i, start), self._reset_info[i], i)
                episode._start_time = self._times[start]
            elif i in runner._next_step_resets:
                self._put_placeholder(i)
            elif log.rows:
                carried.append((runner._episodes[i], i, log.rows - 1, False, False, None))
        self._hand_over_carried(carried, to_numpy)
        if spans:
            for i, episode in zip(slots, self._build(spans, ended=False, to_numpy=to_numpy)):
                runner._episodes[i] = episode
        self._start = [None] * runner.num_envs

    def _put_placeholder(self, env_index: int) -> None:
        """Sub-env `env_index` owes a reset row: its slot holds NextStepRecorder's shared placeholder (one
        per call, holding the final observation of the first episode that ended in it; a sub-env owing a
        reset since the last call keeps the last call's)."""
        if self._first_final_obs is None:
            return
        placeholder = self._shared_placeholder
        if placeholder is None:
            placeholder = self._shared_placeholder = self.runner._make_episode()
            placeholder.add_env_reset(self._first_final_obs, {})
        self.runner._episodes[env_index] = placeholder

    def _build(self, spans: list, *, ended: bool, to_numpy: bool = True) -> List[SingleAgentEpisode]:
        """The episodes of `spans` (sub-env, reset row, last row, terminated, truncated, final info, reset
        info): the reset row's observation and info, then rows reset+1..last as steps."""
        log = self._log
        envs, firsts, lasts = (np.array(column) for column in list(zip(*spans))[:3])
        observations = log.gather(envs, firsts, lasts + 1, slice(0, 1))[0]
        actions, rewards, *extras = log.gather(envs, firsts + 1, lasts + 1, slice(1, None))
        obs_space, act_space = self.runner._spaces["__env_single__"]
        keys, times, end_time = log.extra_keys, self._times, time.perf_counter()
        step_ends = np.cumsum(lasts - firsts).tolist()  # each span's steps end there in the gathered columns
        buffer, new_episode, infos_of = InfiniteLookbackBuffer, SingleAgentEpisode._from_buffers, log.infos_of
        episodes, at = [], 0
        for k, (i, first, last, terminated, truncated, final_info, reset_info) in enumerate(spans):
            end = step_ends[k]
            infos = infos_of(i, first, last + 1, final_info)
            infos[0] = {} if reset_info is None else reset_info
            episode = new_episode(
                buffer(observations[at + k:end + k + 1], 0, obs_space), buffer(infos),
                buffer(actions[at:end], 0, act_space), buffer(rewards[at:end], 0, _REWARD_SPACE),
                {key: buffer(column[at:end]) for key, column in zip(keys, extras)},
                terminated=terminated, truncated=truncated, observation_space=obs_space, action_space=act_space)
            episode._start_time = times[first]
            episode._last_step_time = times[last] if ended else end_time
            if not to_numpy:
                _as_items(episode)
            episodes.append(episode)
            at = end
        return episodes

    def _fall_back(self) -> None:
        """From now on NextStepRecorder around EpisodeRecorder: the ended episodes are handed out, the ongoing
        ones take their rows as items (an episode begun in the call is started first)."""
        self._hand_out_ended()
        runner, log = self.runner, self._log
        if log.rows:
            for i, start in enumerate(self._start):
                if start is not None:
                    episode = runner._episodes[i] = runner._new_episode(log.row_of(i, start), self._reset_info[i], i)
                    episode._start_time = self._times[start]
                elif i in runner._next_step_resets:
                    self._put_placeholder(i)
                    continue
                log.hand_over(i, runner._episodes[i])
        self._start = [None] * runner.num_envs
        self._fallback = NextStepRecorder(runner, EpisodeRecorder(runner))


def _as_items(episode: SingleAgentEpisode) -> None:
    """A built chunk as per-step recording leaves a running one: lists of row items, rewards Python floats."""
    for buffer in (episode.observations, episode.actions, *episode.extra_model_outputs.values()):
        buffer.data, buffer.finalized = list(buffer.data), False
    episode.rewards.data, episode.rewards.finalized = episode.rewards.data.tolist(), False
