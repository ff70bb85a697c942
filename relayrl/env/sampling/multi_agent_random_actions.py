"""Multi-agent action source for `sample(random_actions=True)`: each acting agent samples its action space."""
from typing import Any, Dict

from relayrl.core.columns import Columns
from relayrl.env.sampling.multi_agent_module_actions import MultiAgentModuleActions


class MultiAgentRandomActions(MultiAgentModuleActions):
    """The env-to-module pipeline still runs after every step (filters see every observation)."""

    def __call__(self, timestep: int) -> Dict[str, Any]:
        spaces = self.runner._spaces["__env_single__"][1]
        return {Columns.ACTIONS: [{aid: spaces[aid].sample() for aid in episode.get_agents_to_act()}
                                  for episode in self.runner._episodes]}
