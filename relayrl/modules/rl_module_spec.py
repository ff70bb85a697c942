"""`RLModuleSpec` / `MultiRLModuleSpec`: everything needed to build a module, as data."""
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Type

from relayrl.core.columns import DEFAULT_MODULE_ID


@dataclass
class RLModuleSpec:
    """Class, spaces and model config of one RLModule; `build()` makes the module."""

    _checkpoint_kind = "module spec"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)

    module_class: Optional[Type] = None
    observation_space: Any = None
    action_space: Any = None
    inference_only: bool = False
    learner_only: bool = False
    model_config: Any = None
    catalog_class: Any = None
    load_state_path: Optional[str] = None

    def build(self):
        if self.module_class is None:
            raise ValueError("RLModuleSpec.module_class is not set; give the RLModule subclass to build.")
        if self.observation_space is None or self.action_space is None:
            raise ValueError(
                f"RLModuleSpec for {self.module_class.__name__} lacks observation_space/action_space; "
                "set them or let the algorithm fill them from the env."
            )
        model_config = self.model_config
        if dataclasses.is_dataclass(model_config):
            model_config = dataclasses.asdict(model_config)
        return self.module_class(
            observation_space=self.observation_space,
            action_space=self.action_space,
            inference_only=self.inference_only,
            model_config=dict(model_config or {}),
            catalog_class=self.catalog_class,
        )

    @classmethod
    def from_module(cls, module) -> "RLModuleSpec":
        return cls(
            module_class=type(module),
            observation_space=module.observation_space,
            action_space=module.action_space,
            inference_only=module.inference_only,
            model_config=module.model_config,
        )

    def update(self, other: "RLModuleSpec", override: bool = True) -> None:
        """Take `other`'s set (non-None) fields; with override=False only fill this spec's gaps."""
        for f in dataclasses.fields(self):
            value = getattr(other, f.name)
            if value is not None and (override or getattr(self, f.name) is None):
                setattr(self, f.name, value)

    def to_dict(self) -> Dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "RLModuleSpec":
        return cls(**d)

    def as_multi_rl_module_spec(self) -> "MultiRLModuleSpec":
        return MultiRLModuleSpec(rl_module_specs={DEFAULT_MODULE_ID: self})


@dataclass
class MultiRLModuleSpec:
    """Specs of several modules keyed by module ID, built into one MultiRLModule."""

    _checkpoint_kind = "module spec"  # a checkpoint may name this class and its subclasses (checkpoints/trust.py)

    multi_rl_module_class: Optional[Type] = None
    observation_space: Any = None
    action_space: Any = None
    inference_only: Optional[bool] = None
    model_config: Any = None
    rl_module_specs: Dict[str, RLModuleSpec] = field(default_factory=dict)
    load_state_path: Optional[str] = None
    modules_to_load: Any = None

    def build(self, module_id: Optional[str] = None):
        if module_id is not None:
            return self.rl_module_specs[module_id].build()
        from relayrl.modules.multi_rl_module import MultiRLModule

        cls = self.multi_rl_module_class or MultiRLModule
        return cls(rl_module_specs=self.rl_module_specs, observation_space=self.observation_space,
                   action_space=self.action_space, inference_only=self.inference_only)

    def add_modules(self, module_specs: Dict[str, RLModuleSpec], override: bool = True) -> None:
        for mid, spec in module_specs.items():
            if override or mid not in self.rl_module_specs:
                self.rl_module_specs[mid] = spec

    def as_multi_rl_module_spec(self) -> "MultiRLModuleSpec":
        return self


def spec_with_overrides(current, override):
    """`override` (an evaluation_config's rl_module_spec) over `current`: as the config's dicts are merged, a
    MultiRLModuleSpec over a MultiRLModuleSpec keeps the modules it does not name (their trained architecture,
    which the evaluation EnvRunners' weights come from) and adds or replaces those it does."""
    if isinstance(current, MultiRLModuleSpec) and isinstance(override, MultiRLModuleSpec):
        return dataclasses.replace(override, rl_module_specs={**current.rl_module_specs, **override.rl_module_specs})
    return override
