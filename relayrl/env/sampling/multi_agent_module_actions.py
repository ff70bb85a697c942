"""Multi-agent action source: the MultiRLModule's torch forward pass between the multi-agent pipelines.

The env-to-module pipeline maps the agents about to act to their modules (`AgentToModuleMapping`:
one batch per module, so one forward pass per module per step); the module-to-env pipeline maps the
outputs back (`ModuleToAgentUnmapping`) and `ListifyDataForVectorEnv` gives, per column, one
{agent_id: value} dict per env. Always applicable.
"""
from typing import Any, Dict

import torch

from relayrl.connectors.common.agent_to_module_mapping import MEMORIZED_MAP_STRUCTURE
from relayrl.connectors.module_to_env.get_actions import EXPLORATION, TIMESTEP


class MultiAgentModuleActions:
    """An action source (TorchModuleActions' protocol); its columns hold one {agent_id: value} dict per env."""

    def __init__(self, runner, explore: bool):
        self.runner = runner
        self.explore = explore

    def __call__(self, timestep: int) -> Dict[str, Any]:
        runner, explore = self.runner, self.explore
        with torch.inference_mode():
            shared_data = {MEMORIZED_MAP_STRUCTURE: runner._cached_map_structure}
            if runner._use_exploration:
                for exploration in runner.exploration.values():
                    exploration.before_compute_actions(timestep=timestep, explore=explore)
                shared_data.update({EXPLORATION: runner.exploration, TIMESTEP: timestep})
            to_module = runner._cached_to_module
            if explore:
                out = runner.module.forward_exploration(to_module)
            else:
                out = runner.module.forward_inference(to_module)
            return runner._module_to_env(rl_module=runner.module, batch=out, episodes=runner._episodes,
                                         explore=explore, shared_data=shared_data, metrics=runner.metrics)

    def next_step(self, stepped) -> None:
        self.runner._cache_env_to_module(self.explore)

    def restart(self) -> None:
        pass

    def finish(self, steps: int) -> None:
        pass
