"""The general action source: the RLModule's torch forward pass between the two connector pipelines.

Always applicable; the other sources are shortcuts that give the same columns where their conditions hold.
"""
from typing import Any, Dict

import torch

from relayrl.connectors.module_to_env.get_actions import EXPLORATION, TIMESTEP


class TorchModuleActions:
    """An action source: `source(timestep)` -> the module-to-env pipeline's output for the current step.

    The protocol every action source follows (the EnvRunner's loop calls nothing else):
    - `source(timestep)`: the columns for the env (`actions`, maybe `actions_for_env`, the extra model
      outputs the episodes keep); `timestep` is the runner's lifetime env steps (Exploration objects read it);
    - `next_step(observations, finished)`: the vector env stepped and the episodes hold the step (`finished`:
      the sub-envs whose episode ended, their new one started): get ready for the next;
    - `restart()`: the envs were rebuilt and reset after a failure: start from the runner's new batch;
    - `finish(steps)`: the sample() call ends after `steps` env steps: leave `runner._cached_to_module` (the
      env-to-module batch for the ongoing episodes) as the next call, or a checkpoint, expects it.
    """

    def __init__(self, runner, explore: bool):
        self.runner = runner
        self.explore = explore

    def __call__(self, timestep: int) -> Dict[str, Any]:
        runner, explore = self.runner, self.explore
        with torch.inference_mode():
            shared_data = {}
            if runner._use_exploration:
                runner.exploration.before_compute_actions(timestep=timestep, explore=explore)
                shared_data = {EXPLORATION: runner.exploration, TIMESTEP: timestep}
            if explore:
                out = runner.module.forward_exploration(runner._cached_to_module)
            else:
                out = runner.module.forward_inference(runner._cached_to_module)
            return runner._module_to_env(rl_module=runner.module, batch=out, episodes=runner._episodes,
                                         explore=explore, shared_data=shared_data, metrics=runner.metrics)

    def next_step(self, observations, finished=()) -> None:
        runner = self.runner
        runner._cached_to_module = runner._env_to_module_call(runner._episodes, self.explore, observations)

    def restart(self) -> None:
        pass  # the reset computed the runner's batch

    def finish(self, steps: int) -> None:
        pass  # next_step kept the runner's batch up to date
