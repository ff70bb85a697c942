"""`algo.remove_policy(...)` for Policy-based algorithms (RLlib's old stack): a league run drops a policy.

Everything is checked before anything changes: the policy exists and is not the last one, and no agent of the
env still maps to it (the new `policy_mapping_fn`, else the current one; a single-agent runner's one agent acts
with one policy, which cannot be removed). Then the config drops it (policy_set_changes.py), as do
`policies_to_train` (when it is a list and no new one is given) and every runner. Unlike RLlib, where an ongoing
episode whose agent used the removed policy fails, multi-agent runners drop such episodes and start new ones.
"""
from relayrl.policy.policy_set_changes import (
    apply_policy_change,
    changed_policy_config,
    config_policies,
    set_runner_policies,
)


def remove_policy_from_policy_algorithm(algo, policy_id: str, *, policy_mapping_fn=None, policies_to_train=None,
                                        remove_from_env_runners: bool = True,
                                        remove_from_eval_env_runners: bool = True) -> None:
    local = algo.env_runner_group.local_worker()
    known = sorted(local.policy_map)
    if policy_id not in known:
        raise ValueError(f"remove_policy({policy_id!r}): no such policy; the policies are {known}.")
    if len(known) == 1:
        raise ValueError(f"remove_policy({policy_id!r}): it is the only policy; an algorithm needs one.")
    policies = {pid: spec for pid, spec in config_policies(algo.config).items() if pid != policy_id}
    to_train = policies_to_train
    if to_train is None and isinstance(algo.config.policies_to_train, (list, tuple, set)):
        to_train = [pid for pid in algo.config.policies_to_train if pid != policy_id]
    new_config = changed_policy_config(algo.config, policies, policy_mapping_fn, to_train)
    _check_no_agent_maps_to(local, policy_id, new_config.policy_mapping_fn)
    apply_policy_change(algo, new_config, lambda runner, config: _remove_from_runner(runner, policy_id, config),
                        env_runners=remove_from_env_runners, eval_env_runners=remove_from_eval_env_runners)


def _check_no_agent_maps_to(runner, policy_id: str, mapping_fn) -> None:
    if not getattr(runner, "MULTI_AGENT", False):
        if runner.policy_id == policy_id:
            raise ValueError(f"remove_policy({policy_id!r}): the single-agent env's agent acts with it; a "
                             "single-agent runner keeps the policy it was built with.")
        return
    if mapping_fn is None:
        return
    for agent_id in runner.env.possible_agents:
        if mapping_fn(agent_id, None, worker=runner) == policy_id:
            raise ValueError(f"remove_policy({policy_id!r}): the policy_mapping_fn still maps agent {agent_id!r} "
                             "to it; pass policy_mapping_fn=... that maps every agent to another policy.")


def _remove_from_runner(runner, policy_id: str, config) -> bool:
    set_runner_policies(runner, config, {pid: s for pid, s in runner.POLICY_SPECS.items() if pid != policy_id})
    runner.policy_map.pop(policy_id, None)
    runner.preprocessors.pop(policy_id, None)
    if getattr(runner, "MULTI_AGENT", False):
        runner._pending.pop(policy_id, None)  # its rows are never trained on now
        if any(slot.policy_id == policy_id for slots in runner._slots for slot in slots.values()):
            runner._stepper.guarded(runner._restart_episodes)  # new episodes, mapped by the new mapping fn
    return True
