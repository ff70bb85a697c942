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
                         "(evaluation_config={'policies': ...}). Multi-agent recordings are not read yet.")
    return trained[0]


def as_module_episode(episode, module_id: str):
    """A single-agent episode of the data as module `module_id`'s part of a multi-agent episode (the Learner's
    pipeline then batches its rows under that module); unchanged for DEFAULT_MODULE_ID."""
    if module_id != DEFAULT_MODULE_ID:
        episode.agent_id, episode.module_id, episode.multi_agent_episode_id = module_id, module_id, episode.id_
    return episode


__all__ = ["offline_module_id", "as_module_episode"]
