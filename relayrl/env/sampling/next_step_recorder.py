"""Recorder for vector envs that auto-reset on the NEXT step (gymnasium's AutoresetMode.NEXT_STEP).

relayrl's own Sync/Async vector envs reset a finished sub-env inside the same step (SAME_STEP), and the
other recorders expect that. An env's own vector implementation (gym_env_vectorize_mode=
"VECTOR_ENTRY_POINT", e.g. CartPole's) usually resets on the next step instead:

- the step where a sub-env's episode ends returns its final observation in `observations` (there is
  no infos["final_obs"]);
- the following step of that sub-env is a reset: its action is ignored, its reward (0) and
  terminated/truncated (False) are no transition, and its observation is the new episode's first one.

This recorder passes each step to a same-step recorder (StepLogRecorder or EpisodeRecorder) with the
final observations where those look for them and the reset rows marked, so no reset row goes into an
episode. Between the end of an episode and the reset row the sub-env's slot holds a placeholder
episode (its last observation, no callbacks) that the action source may read; at the reset row the
real episode starts (on_episode_created / on_episode_start then run, as with SAME_STEP). Which sub-envs
owe a reset row is kept on the runner (`_next_step_resets`), so it carries over sample() calls.
"""
from typing import List, Optional

from gymnasium.vector import AutoresetMode

from relayrl.env.native_vector_env import autoreset_mode
from relayrl.env.sampling.step_log_recorder import StepLogRecorder
from relayrl.env.vector_env import info_at, unbatch


class NextStepRecorder:
    """A recorder (see EpisodeRecorder for the protocol) around a same-step one, for NEXT_STEP envs."""

    def __init__(self, runner, inner):
        self.runner = runner
        self.inner = inner
        self.rows_skipped = 0
        self._shared_placeholder = None

    @classmethod
    def plan(cls, runner, inner) -> Optional["NextStepRecorder"]:
        """This recorder around `inner` when the runner's vector env auto-resets on the next step."""
        if autoreset_mode(runner.env) != AutoresetMode.NEXT_STEP:
            return None
        return cls(runner, inner)

    def record(self, actions, extra_model_outputs, observations, rewards, terminateds, truncateds,
               infos) -> List[int]:
        runner = self.runner
        resets = runner._next_step_resets
        reset_rows = sorted(resets) if resets else ()
        if reset_rows:  # (gymnasium's NEXT_STEP envs report them False; a reset row must end nothing)
            terminateds, truncateds = terminateds.copy(), truncateds.copy()
            terminateds[reset_rows] = truncateds[reset_rows] = False
        if (terminateds | truncateds).any():  # the final observations and infos where same-step recorders look
            infos = {**infos, "final_obs": observations, "final_info": infos}
        finished = self.inner.record(actions, extra_model_outputs, observations, rewards, terminateds,
                                     truncateds, infos, reset_rows)
        self.rows_skipped = len(reset_rows)
        if reset_rows:
            resets.clear()
            first_observations = unbatch(runner.env.observation_space, observations)
            for i in reset_rows:
                runner._episodes[i] = runner._new_episode(first_observations[i], info_at(infos, i), i)
        return finished

    def next_episode(self, env_index: int, observation, info):
        """The slot's placeholder until the reset row (`observation` is the final one of the ended episode).

        When nothing reads the ongoing episodes between steps (the inner recorder is a StepLogRecorder),
        one shared placeholder serves every slot: no connector looks at it, and it is never recorded into.
        """
        runner = self.runner
        runner._next_step_resets.add(env_index)
        if self._shared_placeholder is not None:
            return self._shared_placeholder
        placeholder = runner._make_episode()
        placeholder.add_env_reset(observation, {})
        if isinstance(self.inner, StepLogRecorder):
            self._shared_placeholder = placeholder
        return placeholder

    def drop_pending(self) -> None:
        self.inner.drop_pending()

    def finish(self, to_numpy: bool = False) -> None:
        self.inner.finish(to_numpy=to_numpy)
