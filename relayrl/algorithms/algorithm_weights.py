"""RLlib's `Algorithm.get_weights` / `set_weights` / `export_policy_checkpoint`: the modules' (or the Policy API's
policies') weights as numpy arrays by module id, set back into the Learners and every EnvRunner at once."""
from typing import Any, Dict, Iterable, Optional

from relayrl.core.columns import DEFAULT_MODULE_ID


class AlgorithmWeights:
    def get_weights(self, policies: Optional[Iterable[str]] = None) -> Dict[str, Dict[str, Any]]:
        """{module (policy) id: {parameter name: numpy array}}, of `policies` (all when None): the Learner's
        weights, which the EnvRunners act with after each iteration's sync."""
        ids = None if policies is None else list(policies)
        if self.learner_group is None:  # the Policy API: the local runner's policies learn
            return self.env_runner_group.local_worker().get_weights(ids)
        return self.learner_group.get_weights(module_ids=ids)

    def set_weights(self, weights: Dict[str, Dict[str, Any]]) -> None:
        """Set the weights of the modules (policies) `weights` names (others keep theirs) in the Learners and every
        EnvRunner. Each module's names and shapes are checked first; a mismatch raises and changes nothing."""
        from relayrl.checkpoints.state_checks import Where

        if not isinstance(weights, dict):
            raise TypeError(f"set_weights takes {{module id: {{parameter name: array}}}}, got "
                            f"{type(weights).__name__}; algo.get_weights() returns that form.")
        if self.learner_group is None:
            runner = self.env_runner_group.local_worker()
            unknown = sorted(set(weights) - set(runner.policy_map))
            if unknown:
                raise ValueError(f"set_weights: no policy {unknown} in this {type(self).__name__} (it has "
                                 f"{sorted(runner.policy_map)}).")
            runner.set_weights(weights)
            self.env_runner_group.sync_weights()
            return
        state = {"learner_group": {"learner": {"rl_module": weights}}}
        self.check_state(state, Where(f"the weights given to {type(self).__name__}.set_weights()"))
        self._apply_state(state)  # the Learners, then the EnvRunners (sync)

    def export_policy_checkpoint(self, export_dir: str, policy_id: str = DEFAULT_MODULE_ID) -> None:
        """The Policy API: write policy `policy_id`'s own checkpoint (Policy.from_checkpoint reads it). RLModule
        algorithms have no Policy: save the module with algo.get_module(policy_id).save_to_path(export_dir)."""
        if self.learner_group is not None:
            raise ValueError(f"export_policy_checkpoint writes an old-stack Policy checkpoint, and "
                             f"{type(self).__name__} runs RLModules: use "
                             f"algo.get_module({policy_id!r}).save_to_path(export_dir) (RLModule.from_checkpoint "
                             f"reads it back), or algo.save() for the whole algorithm.")
        policy = self.get_policy(policy_id)
        if policy is None:
            raise ValueError(f"export_policy_checkpoint: no policy {policy_id!r} in this {type(self).__name__}.")
        policy.export_checkpoint(export_dir)
