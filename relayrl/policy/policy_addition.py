"""`algo.add_policy(...)` for Policy-based algorithms (RLlib's old stack): a league / self-play run adds a frozen
copy of a policy (a class, or a Policy object such as one from `Policy.from_checkpoint`) to every runner.

The policy is built on the local runner first (a class that cannot be built, or a state that does not fit, fails
there, before anything changed); then the config takes it (policy_set_changes.py: `algo.config`, checkpoints and
restarted remote runners see it) and each runner (local, remote, evaluation) builds it from the same PolicySpec,
takes `policy_state` (or the given policy's state), and from then on maps agents with `policy_mapping_fn` and
trains `policies_to_train` when they are given (ongoing episodes keep their agents' policies, as in RLlib).
"""
from typing import Any

from relayrl.core.policy_spec import PolicySpec
from relayrl.policy.policy_set_changes import (
    apply_policy_change,
    changed_policy_config,
    config_policies,
    set_runner_policies,
)
from relayrl.policy.rollout.policy_map import build_policy_map


def add_policy_to_policy_algorithm(algo, policy_id: str, policy_cls=None, policy=None, *, observation_space=None,
                                   action_space=None, config=None, policy_state=None, policy_mapping_fn=None,
                                   policies_to_train=None, add_to_env_runners: bool = True,
                                   add_to_eval_env_runners: bool = True):
    """Add the policy everywhere; returns the local runner's new Policy."""
    local = algo.env_runner_group.local_worker()
    if policy_id in local.policy_map:
        raise ValueError(f"add_policy({policy_id!r}): a policy of that id exists already (the policies are "
                         f"{sorted(local.policy_map)}); remove_policy it first or pick another id.")
    if (policy_cls is None) == (policy is None):
        raise ValueError(f"add_policy({policy_id!r}): give exactly one of policy_cls (a Policy class) or policy "
                         "(a Policy object, e.g. Policy.from_checkpoint(path)).")
    if policy is not None:
        policy_cls = type(policy)
        # the env's spaces (the runner preprocesses Dict / Discrete observations for the policy again)
        observation_space = observation_space or policy.observation_space_struct
        action_space = action_space or policy.action_space_struct
        if policy_state is None:
            policy_state = policy.get_state()
    spec = PolicySpec(policy_cls, observation_space, action_space, config)
    state = None if policy_state is None else {k: v for k, v in policy_state.items() if k != "policy_spec"}
    new_config = changed_policy_config(algo.config, {**config_policies(algo.config), policy_id: spec},
                                       policy_mapping_fn, policies_to_train)
    built = _build(local, policy_id, spec, new_config, state)  # may raise: nothing has changed yet
    apply_policy_change(algo, new_config,
                        lambda runner, runner_config: _add_to_runner(runner, policy_id, spec, runner_config, state,
                                                                     built if runner is local else None),
                        env_runners=add_to_env_runners, eval_env_runners=add_to_eval_env_runners)
    evaluation = getattr(algo, "eval_env_runner_group", None)
    if add_to_eval_env_runners and evaluation is not None:
        evaluation.sync_weights(policies=[policy_id], connector_states_from=local)
    if add_to_env_runners:  # remote copies (and a runner restarted later) get the local one's weights
        algo.env_runner_group.sync_weights()
    return local.get_policy(policy_id)


def _runner_spaces(runner) -> dict:
    if getattr(runner, "MULTI_AGENT", False):
        first = runner.env.envs[0]
        return {a: (first.get_observation_space(a), first.get_action_space(a)) for a in runner.env.possible_agents}
    return {"agent0": (runner.env.single_observation_space, runner.env.single_action_space)}


def _build(runner, policy_id: str, spec: PolicySpec, config, state: dict[str, Any] | None):
    """({policy_id: Policy}, {policy_id: Preprocessor}) for `runner`, mapped by the config's mapping fn."""
    mapping_fn = config.policy_mapping_fn
    if mapping_fn is None:
        mapping = runner._map
    elif getattr(runner, "MULTI_AGENT", False):
        def mapping(agent_id):
            return mapping_fn(agent_id, None, worker=runner)
    else:
        def mapping(agent_id):
            return runner._map(agent_id)
    policies, preprocessors = build_policy_map({policy_id: spec}, config, _runner_spaces(runner), seed=None,
                                               mapping_fn=mapping, callbacks=runner.callbacks)
    if state is not None:
        policies[policy_id].set_state(state)
    return policies, preprocessors


def _add_to_runner(runner, policy_id: str, spec: PolicySpec, config, state: dict[str, Any] | None, built=None):
    policies, preprocessors = built or _build(runner, policy_id, spec, config, state)
    set_runner_policies(runner, config, {**runner.POLICY_SPECS, policy_id: spec})
    runner.policy_map.update(policies)
    runner.preprocessors.update(preprocessors)
    return True
