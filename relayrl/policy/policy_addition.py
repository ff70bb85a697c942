"""`algo.add_policy(...)` for Policy-based algorithms (RLlib's old stack): a league / self-play run adds a frozen
copy of a policy (a class, or a Policy object such as one from `Policy.from_checkpoint`) to every runner.

Each runner (local, remote, evaluation) builds the policy from the same PolicySpec, takes `policy_state` (or the
given policy's state), and from then on maps agents with `policy_mapping_fn` and trains `policies_to_train` when
they are given (ongoing episodes keep their agents' policies, as in RLlib). Not carried: a remote runner that Ray
restarts later is built from the algorithm's original policies.
"""
from typing import Any

from relayrl.core.policy_spec import PolicySpec
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
    change = (policy_id, spec, policy_mapping_fn, policies_to_train, state)
    _add_to_runner(local, *change)
    if add_to_env_runners and algo.env_runner_group.is_remote:
        algo.env_runner_group.foreach_worker(lambda runner: _add_to_runner(runner, *change), local_worker=False)
    evaluation = getattr(algo, "eval_env_runner_group", None)
    if add_to_eval_env_runners and evaluation is not None:
        evaluation.foreach_worker(lambda runner: _add_to_runner(runner, *change))
        evaluation.sync_weights(policies=[policy_id], connector_states_from=local)
    if state is None and add_to_env_runners:  # remote copies start from the local one's initial weights
        algo.env_runner_group.sync_weights(policies=[policy_id])
    return local.get_policy(policy_id)


def _add_to_runner(runner, policy_id: str, spec: PolicySpec, mapping_fn, to_train, state: dict[str, Any] | None):
    if getattr(runner, "MULTI_AGENT", False):
        first = runner.env.envs[0]
        spaces = {a: (first.get_observation_space(a), first.get_action_space(a)) for a in runner.env.possible_agents}
    else:
        spaces = {"agent0": (runner.env.single_observation_space, runner.env.single_action_space)}
    if mapping_fn is not None:
        runner.POLICY_MAPPING_FN = mapping_fn  # (an instance attribute: called unbound, as the class's staticmethod)
    policies, preprocessors = build_policy_map({policy_id: spec}, runner.config, spaces, seed=None,
                                               mapping_fn=runner._map, callbacks=runner.callbacks)
    if state is not None:
        policies[policy_id].set_state(state)
    runner.policy_map.update(policies)
    runner.preprocessors.update(preprocessors)
    if to_train is not None:
        runner.policies_to_train_override = to_train
    return True
