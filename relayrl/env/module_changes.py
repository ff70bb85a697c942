"""A module joins or leaves a built MultiAgentEnvRunner (Algorithm.add_module / remove_module,
algorithms/module_changes.py). Runs in the runner's process (a Ray actor's too): the runner's own config copy
takes the new policies / mapping fn, the module and its exploration are added or dropped, and the ongoing
episodes restart at the next sample() so that every agent is mapped by the new mapping fn."""
from typing import Any, Dict

from relayrl.core.devices import device_for
from relayrl.env.unmapped_module_spaces import spaces_by_module


def check_mapping_fn(runner, config) -> None:
    """Each of the env's agents maps to one of `config.policies` (UnknownModuleIdError, naming it, if not)."""
    import gymnasium as gym

    from relayrl.connectors.common.agent_to_module_mapping import module_of_agent_before_sampling

    agent_spaces = runner.get_spaces().get("__env_single__", (None, None))[0]
    if isinstance(agent_spaces, gym.spaces.Dict):
        mapping_fn = config.agent_to_module_mapping_fn
        for agent_id in agent_spaces.spaces:
            module_of_agent_before_sampling(mapping_fn, agent_id)


def spaces_with_modules(runner, policies) -> Dict[str, Any]:
    """The runner's spaces plus each of `policies`' (obs, action) spaces; one no agent maps to yet gets the spaces
    the mapped modules share (unmapped_module_spaces.py)."""
    return {**runner.get_spaces(), **spaces_by_module(runner._env_to_module.observation_space,
                                                       runner._env_to_module.action_space, policies)}


def change_runner_module(runner, module_id: str, updates: Dict[str, Any], added: bool) -> None:
    from relayrl.exploration.env_runner_exploration import build_env_runner_exploration

    runner.config._set_options(updates)
    config = runner.config
    if added:
        runner._spaces = spaces_with_modules(runner, config.policies)
        spec = config.get_multi_rl_module_spec(spaces=runner._spaces, inference_only=True).rl_module_specs[module_id]
        device = device_for("num_gpus_per_env_runner", config.num_gpus_per_env_runner)
        module = spec.build().to(device)
        module.eval()
        runner.module.add_module(module_id, module)
        exploration, used, _ = build_env_runner_exploration(
            config, module.action_space, model=module, worker_index=runner.worker_index,
            num_workers=runner.num_workers)
        runner.exploration[module_id] = exploration
        runner._use_exploration = runner._use_exploration or used
    else:
        runner.module.remove_module(module_id, raise_err_if_not_found=False)
        runner.exploration.pop(module_id, None)
        runner._spaces.pop(module_id, None)
    runner._needs_reset = True  # new episodes, mapped by the new mapping fn
