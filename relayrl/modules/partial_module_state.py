"""Where a module may take a state holding only part of its weights (RLlib's `strict=False`).

Loading a trained module's checkpoint into a module that adds to it (a BC policy into PPO's actor-critic: RLlib's
`examples/offline_rl/train_w_bc_finetune_w_ppo.py`) is asked for by path: `RLModuleSpec(load_state_path=...)` or
`restore_from_path(..., component="learner_group/learner/rl_module")`. Those loads run inside
`partial_module_states()`, and the weights the state lacks keep their values, with a warning. Everywhere else
(`set_state`, restoring a whole algorithm, weight syncs) a missing weight is an error: there it means another model
or a truncated state, and training on half-initialised weights would lose the run quietly.
"""
import contextlib
import contextvars

_allowed = contextvars.ContextVar("relayrl_partial_module_states", default=False)


@contextlib.contextmanager
def partial_module_states(allowed: bool = True):
    """Within this block, RLModule.check_state / set_state accept a state with part of the module's weights (with
    `allowed=False`, the block changes nothing: a caller that decides per load)."""
    token = _allowed.set(allowed or _allowed.get())
    try:
        yield
    finally:
        _allowed.reset(token)


def partial_module_states_allowed() -> bool:
    return _allowed.get()
