"""`RLModuleSpec(load_state_path=...)` and `MultiRLModuleSpec(load_state_path=..., modules_to_load=...)`: as RLlib
does, the Learner's modules start from these checkpoints when the algorithm is built (e.g. a BC-trained module in
PPO: RLlib's `examples/offline_rl/train_w_bc_finetune_w_ppo.py`).

A path is an RLModule's checkpoint, or a MultiRLModule's (`<checkpoint>/learner_group/learner/rl_module`, as that
script passes to a single module's spec): then the module takes its own id's part. All or nothing, checked before
any weight changes (Checkpointable.restore_from_path's rules); a state holding part of a module's weights (a
subclass that adds a value head) sets that part (relayrl/modules/partial_module_state.py).
"""
from typing import Any, Mapping

from relayrl.checkpoints.checkpointable import checked_restore, read_state_at
from relayrl.checkpoints.errors import CheckpointError
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.modules.partial_module_state import partial_module_states
from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec


def load_module_states(learner_group, user_spec, built_spec) -> None:
    """Load what `user_spec` (config.rl_module_spec) names into `learner_group`'s modules (built from
    `built_spec`: one module, or a MultiRLModuleSpec's)."""
    module_ids = list(getattr(built_spec, "rl_module_specs", None) or [DEFAULT_MODULE_ID])
    if isinstance(user_spec, RLModuleSpec) and user_spec.load_state_path:
        for module_id in module_ids:
            _load(learner_group, user_spec.load_state_path, module_id)
    elif isinstance(user_spec, MultiRLModuleSpec):
        if user_spec.load_state_path:
            for module_id in user_spec.modules_to_load or module_ids:
                _load(learner_group, user_spec.load_state_path, module_id)
        for module_id, spec in (user_spec.rl_module_specs or {}).items():  # these take precedence (RLlib's order)
            if spec.load_state_path:
                _load(learner_group, spec.load_state_path, module_id)


def _load(learner_group, path: str, module_id: str) -> None:
    state, where = read_state_at(path)
    if _is_multi_module_state(state, module_id):
        state, where = state[module_id], where / module_id
    elif _holds_only_other_modules(state):
        raise CheckpointError(
            f"{where}: RLModuleSpec(load_state_path={path!r}) for module {module_id!r} names a MultiRLModule's "
            f"checkpoint holding the modules {sorted(state)}, none named {module_id!r}; point load_state_path at "
            f"the one to load (e.g. {str(path).rstrip('/')}/{sorted(state)[0]}).")
    with partial_module_states():
        checked_restore(learner_group, {"learner": {"rl_module": {module_id: state}}}, where)


def _holds_only_other_modules(state: Any) -> bool:
    """A MultiRLModule's state ({module id: weights}) without the wanted module: one module's holds tensors."""
    return (isinstance(state, Mapping) and bool(state) and all(isinstance(v, Mapping) for v in state.values())
            and all(not isinstance(w, Mapping) for v in state.values() for w in v.values()))


def _is_multi_module_state(state: Any, module_id: str) -> bool:
    """A MultiRLModule's state ({module id: weights}) holding `module_id`, rather than one module's weights."""
    return isinstance(state, Mapping) and isinstance(state.get(module_id), Mapping)
