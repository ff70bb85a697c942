"""The multi-agent EnvRunner's sampling plan (the same idea as the single-agent one: env/sampling/__init__.py).

Action sources, first that applies: `MultiAgentRandomActions` (random_actions=True),
`MultiAgentNumpyActions` (every module's numpy forward, pipelines skipped), `MultiAgentModuleActions`
(the torch forward between the multi-agent pipelines). Recorder: `MultiAgentEpisodeRecorder`.
"""
from relayrl.env.sampling import SamplingPlan
from relayrl.env.sampling.multi_agent_episode_recorder import MultiAgentEpisodeRecorder
from relayrl.env.sampling.multi_agent_module_actions import MultiAgentModuleActions
from relayrl.env.sampling.multi_agent_numpy_actions import MultiAgentNumpyActions
from relayrl.env.sampling.multi_agent_random_actions import MultiAgentRandomActions


def plan_multi_agent_actions(runner, explore: bool, random_actions: bool = False):
    if random_actions:
        return MultiAgentRandomActions(runner, explore)
    return MultiAgentNumpyActions.plan(runner, explore) or MultiAgentModuleActions(runner, explore)


def plan_multi_agent_sampling(runner, *, explore: bool, random_actions: bool) -> SamplingPlan:
    return SamplingPlan(plan_multi_agent_actions(runner, explore, random_actions), MultiAgentEpisodeRecorder(runner))
