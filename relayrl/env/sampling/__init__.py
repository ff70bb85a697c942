"""The EnvRunner's sampling plan: made once per `sample()` call, then one plain loop runs it.

A plan is an action source (who computes the actions) and a recorder (how a step goes into the
episodes). Each is a small object whose conditions live in its own file; the loop
(`EnvRunner._run`) never branches on which one it got.

Action sources, first that applies:
- `RandomActions` (random_actions.py): `sample(random_actions=True)`;
- `RecurrentNumpyActions` (recurrent_numpy_actions.py): a stateful module's numpy step, its state held
  on the runner as one batched array, both pipelines holding only the default pieces;
- `DirectNumpyActions` (direct_numpy_actions.py): the module's numpy forward fed the vector env's
  observations, both pipelines holding only default pieces that would merely convert arrays (for Box
  actions it calls the NormalizeAndClipActions piece itself);
- `NumpyActions` (numpy_actions.py): the module's numpy forward (`NumpyForwardAPI`) and a numpy policy for
  its distribution (numpy_policies.py: Categorical, PPO's diagonal Gaussian, SAC's squashed one) between
  the pipelines;
- `TorchModuleActions` (torch_actions.py): the torch forward pass between the pipelines (always applies).

Recorders: `StepLogRecorder` (step_log_recorder.py) when nothing reads the ongoing episodes between
steps (pipelines that read them count only if the action source calls them), else `EpisodeRecorder` (episode_recorder.py); for a vector env that auto-resets on the next
step (an env's own vector implementation), either one inside `NextStepRecorder` (next_step_recorder.py),
or, where no one can see an episode before the call stops (its conditions: deferred_episode_recorder.py),
`DeferredEpisodeRecorder`, which builds the call's episodes in bulk when it stops.
"""
from dataclasses import dataclass
from typing import Any, Optional

from relayrl.env.sampling.deferred_episode_recorder import DeferredEpisodeRecorder
from relayrl.env.sampling.direct_numpy_actions import DirectNumpyActions
from relayrl.env.sampling.episode_recorder import EpisodeRecorder
from relayrl.env.sampling.next_step_recorder import NextStepRecorder
from relayrl.env.sampling.numpy_actions import NumpyActions
from relayrl.env.sampling.numpy_policies import numpy_policy_for
from relayrl.env.sampling.random_actions import RandomActions
from relayrl.env.sampling.recurrent_numpy_actions import RecurrentNumpyActions
from relayrl.env.sampling.sample_amount import SampleAmount
from relayrl.env.sampling.step_log_recorder import StepLogRecorder
from relayrl.env.sampling.torch_actions import TorchModuleActions


@dataclass
class SamplingPlan:
    actions: Any  # an action source (TorchModuleActions' protocol)
    recorder: Any  # a recorder (EpisodeRecorder's protocol)


def plan_actions(runner, explore: bool, random_actions: bool = False):
    """The action source for one sample() call of `runner` (its envs reset, its batch computed)."""
    if random_actions:
        return RandomActions(runner, explore)
    recurrent = RecurrentNumpyActions.plan(runner, explore)
    if recurrent is not None:
        return recurrent
    policy = numpy_policy_for(runner)
    if policy is None:
        return TorchModuleActions(runner, explore)
    return DirectNumpyActions.plan(runner, explore, policy) or NumpyActions(runner, explore, policy)


def plan_recorder(runner, num_timesteps: Optional[int], random_actions: bool = False, actions=None, amount=None):
    """The recorder; `actions` (the plan's action source) tells whether the pipelines run between steps,
    `amount` (the call's SampleAmount; None: unknown) which episodes the call returns."""
    if not random_actions:
        deferred = DeferredEpisodeRecorder.plan(runner, actions, amount, num_timesteps)
        if deferred is not None:
            return deferred
    bypassed = getattr(actions, "BYPASSES_PIPELINES", False)
    recorder = (StepLogRecorder.plan(runner, num_timesteps, random_actions, pipelines_bypassed=bypassed)
                or EpisodeRecorder(runner))
    return NextStepRecorder.plan(runner, recorder) or recorder


def plan_sampling(runner, *, explore: bool, random_actions: bool, num_timesteps: Optional[int],
                  amount: Optional[SampleAmount] = None) -> SamplingPlan:
    actions = plan_actions(runner, explore, random_actions)
    return SamplingPlan(actions, plan_recorder(runner, num_timesteps, random_actions, actions, amount))


__all__ = ["SamplingPlan", "SampleAmount", "plan_sampling", "plan_actions", "plan_recorder"]
