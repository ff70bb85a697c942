"""`MultiRLModule`: a dict of RLModules keyed by module ID, forwarding each sub-batch to its module."""
from typing import Any, Callable, Dict, Optional

from torch import nn

from relayrl.modules.rl_module import RLModule


class MultiRLModule(RLModule):
    """Container module; the Learner always holds one (single-agent: one entry, `default_policy`)."""

    def __init__(self, *, rl_module_specs: Optional[Dict[str, Any]] = None, **kwargs):
        self._rl_module_specs = dict(rl_module_specs or {})
        super().__init__(**kwargs)

    def setup(self) -> None:
        self._rl_modules = nn.ModuleDict({mid: spec.build() for mid, spec in self._rl_module_specs.items()})

    def _run(self, method: str, batch: Dict[str, Any], **kwargs) -> Dict[str, Any]:
        return {mid: getattr(self._rl_modules[mid], method)(sub, **kwargs) for mid, sub in batch.items()
                if mid in self._rl_modules}

    # {module_id: batch} -> {module_id: outputs}. A subclass changes how its modules work together (e.g. one
    # shared encoder feeding several policy heads) by overriding the `_forward_*` methods, as in RLlib.
    def forward_inference(self, batch, **kwargs):
        return self._forward_inference(batch, **kwargs)

    def forward_exploration(self, batch, **kwargs):
        return self._forward_exploration(batch, **kwargs)

    def forward_train(self, batch, **kwargs):
        return self._forward_train(batch, **kwargs)

    def _forward_inference(self, batch, **kwargs):
        return self._run("forward_inference", batch, **kwargs)

    def _forward_exploration(self, batch, **kwargs):
        return self._run("forward_exploration", batch, **kwargs)

    def _forward_train(self, batch, **kwargs):
        return self._run("forward_train", batch, **kwargs)

    def add_module(self, module_id: str, module: RLModule, *, override: bool = False) -> None:
        if module_id in self._rl_modules and not override:
            raise ValueError(f"Module ID `{module_id}` already exists; pass override=True to replace it.")
        self._rl_modules[module_id] = module
        self.__dict__.pop("_relayrl_is_stateful", None)  # connectors cache whether any module is stateful

    def remove_module(self, module_id: str, *, raise_err_if_not_found: bool = True) -> None:
        if module_id not in self._rl_modules:
            if raise_err_if_not_found:
                raise KeyError(f"Module ID `{module_id}` not found; existing: {list(self.keys())}.")
            return
        del self._rl_modules[module_id]
        self.__dict__.pop("_relayrl_is_stateful", None)

    def foreach_module(self, func: Callable, *, return_dict: bool = False, **kwargs):
        results = {mid: func(mid, module, **kwargs) for mid, module in self._rl_modules.items()}
        return results if return_dict else list(results.values())

    def __contains__(self, module_id) -> bool:
        return module_id in self._rl_modules

    def __getitem__(self, module_id) -> RLModule:
        if module_id not in self._rl_modules:
            raise KeyError(f"Module ID `{module_id}` not found; existing: {list(self.keys())}.")
        return self._rl_modules[module_id]

    def get(self, module_id, default=None):
        return self._rl_modules[module_id] if module_id in self._rl_modules else default

    def keys(self):
        return self._rl_modules.keys()

    def values(self):
        return self._rl_modules.values()

    def items(self):
        return self._rl_modules.items()

    def __len__(self) -> int:
        return len(self._rl_modules)

    def get_initial_state(self):
        return {mid: m.get_initial_state() for mid, m in self._rl_modules.items()}

    def is_stateful(self) -> bool:
        return any(m.is_stateful() for m in self._rl_modules.values())

    def get_state(self, components=None, *, not_components=None, inference_only: bool = False, **kwargs):
        ids = self.keys() if components is None else ([components] if isinstance(components, str) else components)
        return {mid: self._rl_modules[mid].get_state(inference_only=inference_only) for mid in ids}

    def set_state(self, state: Dict[str, Any]) -> None:
        for mid, sub_state in state.items():
            self[mid].set_state(sub_state)

    def check_state(self, state: Dict[str, Any], where) -> None:
        """Every stored module id exists here and its weights fit (see RLModule.check_state)."""
        from relayrl.checkpoints.state_checks import check_mapping

        check_mapping(state, where, known=list(self.keys()), owner="this MultiRLModule")
        for mid, sub_state in state.items():
            self[mid].check_state(sub_state, where / mid)
