"""A cheap token that changes whenever a Learner's module weights may have changed, so that a copy of them (the
inference EnvRunner of an offline algorithm) is refreshed only then, not on every compute_single_action call.

The token holds:
- the Learner's count of weight-changing calls (update, set_weights, set_state: `note_weights_changed`). torch's
  own write counts do not see every update: the fused Adam step leaves `param._version` as it was;
- per module, its identity and each parameter's and buffer's (identity, storage address, write count): a module
  added, removed or rebuilt, and in-place writes outside the Learner's methods (`param.copy_` on get_module()'s
  module, load_state_dict) change them.
Comparing two tokens costs a few attribute reads per tensor; copying the weights costs a state dict."""
from typing import Hashable


def note_weights_changed(learner) -> None:
    """Called by the Learner's methods that write its module's weights."""
    learner.__dict__["_weights_changes"] = learner.__dict__.get("_weights_changes", 0) + 1


def weights_version(learner) -> Hashable:
    """The token of `learner`'s weights now, or a new object (never equal to another) where a tensor keeps no write
    count (made under torch.inference_mode)."""
    try:
        return (learner.__dict__.get("_weights_changes", 0),
                tuple((module_id, id(module), tuple((id(tensor), tensor.data_ptr(), tensor._version)
                                                    for tensor in (*module.parameters(), *module.buffers())))
                      for module_id, module in learner.module.items()))
    except RuntimeError:  # an inference tensor: no write count, so always "changed"
        return object()
