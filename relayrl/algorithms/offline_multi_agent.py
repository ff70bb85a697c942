"""Offline algorithms under `config.multi_agent(policies=...)`: single-agent data trains the one module the config
trains (RLlib's rule for a multi-agent config with one policy reading single-agent data: every row is that
policy's), e.g. RLlib's `pretrain_bc_single_agent_evaluate_as_multi_agent.py` (BC of "main" from single-agent
CartPole steps, evaluated in a multi-agent env against a random policy). Several trained modules would need
multi-agent data, which is refused where it is read (relayrl/offline/reader.py)."""
from relayrl.core.columns import DEFAULT_MODULE_ID


def offline_module_id(config) -> str:
    """The module the rows train: DEFAULT_MODULE_ID for a single-agent config, else the multi-agent config's one
    trained module (ValueError naming the fix when it trains none or several)."""
    if not config.is_multi_agent:
        return DEFAULT_MODULE_ID
    from relayrl.algorithms.multi_agent_mapping import trains_module

    to_train = config.policies_to_train
    trained = [module_id for module_id, spec in config.policies.items()
               if spec.policy_class is None and trains_module(to_train, module_id, None)]
    if len(trained) != 1:
        name = type(config).__name__.replace("Config", "")
        raise ValueError(f"{name} trains one module from single-agent offline data, but config.multi_agent(...) "
                         f"trains {len(trained)} ({trained}): give it one policy to train (policies={{'main'}}, "
                         "or policies_to_train=['main']); other policies may run in evaluation only "
                         "(evaluation_config={'policies': ...}). Multi-agent recordings are not read yet: "
                         "relayrl.offline.split_by_module.split_by_module(recording, folder) writes each module's "
                         "rows as a single-agent dataset, which a BC per module (or this one) reads.")
    return trained[0]


def as_module_episode(episode, module_id: str):
    """A single-agent episode of the data as module `module_id`'s part of a multi-agent episode (the Learner's
    pipeline then batches its rows under that module); unchanged for DEFAULT_MODULE_ID."""
    if module_id != DEFAULT_MODULE_ID:
        episode.agent_id, episode.module_id, episode.multi_agent_episode_id = module_id, module_id, episode.id_
    return episode


def multi_agent_offline_spaces(config, env) -> dict:
    """offline_spaces for a multi-agent config whose env (a MultiAgentEnv, per-agent spaces) gives the spaces: each
    module gets its agents' spaces through the env-to-module pipeline (policy_mapping_fn), as a MultiAgentEnvRunner
    builds them, and the rows are checked against the spaces of the module they train. The config's own
    observation_space / action_space, where set, win (the rows and any module without agents)."""
    import gymnasium as gym

    from relayrl.env.unmapped_module_spaces import check_module_spaces, spaces_by_module

    agents = list(env.possible_agents) or list(getattr(env, "observation_spaces", None) or {})
    agent_spaces = (gym.spaces.Dict({aid: env.get_observation_space(aid) for aid in agents}),
                    gym.spaces.Dict({aid: env.get_action_space(aid) for aid in agents}))
    pipeline = config.build_env_to_module_connector(env=env, spaces={"__env_single__": agent_spaces})
    spaces = spaces_by_module(pipeline.observation_space, pipeline.action_space, config.policies)
    check_module_spaces(config.get_multi_rl_module_spec(spaces=spaces))
    trained = spaces[offline_module_id(config)]
    rows = (config.observation_space or trained[0], config.action_space or trained[1])
    return {**spaces, "__env_single__": rows, DEFAULT_MODULE_ID: rows}


__all__ = ["offline_module_id", "as_module_episode", "multi_agent_offline_spaces"]
