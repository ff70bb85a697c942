"""The one table of algorithms: name -> package and the public names it exports.

Everything else derives from `ALGORITHMS`: the top-level `relayrl.PPO`-style names, each algorithm
package's lazy names (`relayrl.algorithms.ppo.PPOConfig`), a config's algorithm class
(`PPOConfig().algo_class`), the CLI's algorithm list and the names Ray Tune knows
(`tune.Tuner("PPO")`). Adding an algorithm is one `AlgorithmEntry` (or `register_algorithm(...)`
at run time). Listing names imports no torch: modules load on first use.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple

from relayrl.core.suggest import did_you_mean

__all__ = ["ALGORITHMS", "AlgorithmEntry", "algorithm_names", "canonical_name", "get_algorithm_class",
           "get_config_class", "lazy_exports", "public_names", "register_algorithm"]


@dataclass(frozen=True)
class AlgorithmEntry:
    """An algorithm `name` whose package exports `name` (the Algorithm) and `name + "Config"`, and more names."""

    name: str
    package: str  # e.g. "relayrl.algorithms.ppo"
    exports: Dict[str, str] = field(default_factory=dict)  # public name -> module in the package

    def path_of(self, export: str) -> str:
        """"pkg.module:Name" of one exported name (its module is relative to `package`, if one is given)."""
        module = self.exports[export]
        return f"{self.package}.{module}:{export}" if self.package else f"{module}:{export}"

    @property
    def algorithm_path(self) -> str:
        return self.path_of(self.name)

    @property
    def config_path(self) -> str:
        return self.path_of(self.name + "Config")


ALGORITHMS: Dict[str, AlgorithmEntry] = {entry.name: entry for entry in (
    AlgorithmEntry("PPO", "relayrl.algorithms.ppo", {
        "PPO": "ppo", "PPOConfig": "ppo_config", "PPOLearner": "ppo_learner",
        "DefaultPPOTorchRLModule": "default_ppo_rl_module"}),
    AlgorithmEntry("DQN", "relayrl.algorithms.dqn", {
        "DQN": "dqn", "DQNConfig": "dqn_config", "DQNLearner": "dqn_learner",
        "DefaultDQNTorchRLModule": "default_dqn_rl_module"}),
    AlgorithmEntry("SAC", "relayrl.algorithms.sac", {
        "SAC": "sac", "SACConfig": "sac_config", "SACLearner": "sac_learner",
        "DefaultSACTorchRLModule": "default_sac_rl_module"}),
    AlgorithmEntry("IMPALA", "relayrl.algorithms.impala", {
        "IMPALA": "impala", "IMPALAConfig": "impala_config", "IMPALALearner": "impala_learner"}),
    AlgorithmEntry("APPO", "relayrl.algorithms.appo", {
        "APPO": "appo", "APPOConfig": "appo_config", "APPOLearner": "appo_learner",
        "DefaultAPPOTorchRLModule": "default_appo_rl_module"}),
    AlgorithmEntry("BC", "relayrl.algorithms.bc", {
        "BC": "bc", "BCConfig": "bc_config", "DefaultBCTorchRLModule": "default_bc_rl_module"}),
    AlgorithmEntry("MARWIL", "relayrl.algorithms.marwil", {
        "MARWIL": "marwil", "MARWILConfig": "marwil_config", "MARWILLearner": "marwil_learner"}),
    AlgorithmEntry("CQL", "relayrl.algorithms.cql", {
        "CQL": "cql", "CQLConfig": "cql_config", "CQLLearner": "cql_learner",
        "DefaultCQLTorchRLModule": "default_cql_rl_module"}),
    AlgorithmEntry("IQL", "relayrl.algorithms.iql", {
        "IQL": "iql", "IQLConfig": "iql_config", "IQLLearner": "iql_learner",
        "DefaultIQLTorchRLModule": "default_iql_rl_module"}),
)}

_on_register: List[Callable[[AlgorithmEntry], None]] = []  # e.g. the Tune bridge registering trainables


def register_algorithm(name: str, *, algorithm: str, config: str) -> AlgorithmEntry:
    """Add an algorithm at run time: `algorithm` and `config` are "pkg.module:Class" paths. It then shows up in
    the CLI (`relayrl train <name>`), `get_algorithm_class(name)` and, once ray.tune is loaded, in Tune."""
    (algo_module, _, algo_name), (config_module, _, config_name) = algorithm.partition(":"), config.partition(":")
    if algo_name != name or config_name != name + "Config":
        raise ValueError(f"register_algorithm({name!r}): the classes must be named {name!r} and {name + 'Config'!r}, "
                         f"got {algorithm!r} and {config!r}.")
    entry = AlgorithmEntry(name, "", {name: algo_module, name + "Config": config_module})
    ALGORITHMS[name] = entry
    for hook in list(_on_register):
        hook(entry)
    return entry


def on_register(hook: Callable[[AlgorithmEntry], None]) -> None:
    """Call `hook(entry)` for every algorithm registered from now on (the existing ones are the caller's)."""
    _on_register.append(hook)


def algorithm_names() -> list:
    return list(ALGORITHMS)


def canonical_name(name: str) -> str:
    """The registered spelling of `name` (case-insensitive); ValueError with a hint if unknown."""
    if name in ALGORITHMS:
        return name
    for known in ALGORITHMS:
        if known.lower() == str(name).lower():
            return known
    raise ValueError(f"unknown algorithm `{name}`.{did_you_mean(str(name).upper(), ALGORITHMS)} "
                     f"Available: {', '.join(ALGORITHMS)}.")


def _load(path: str):
    module_name, _, attr = path.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def get_config_class(name: str) -> type:
    """The config class of algorithm `name`, e.g. get_config_class("PPO") -> PPOConfig."""
    return _load(ALGORITHMS[canonical_name(name)].config_path)


def get_algorithm_class(name: str) -> type:
    """The Algorithm class of `name`, e.g. get_algorithm_class("ppo") -> PPO."""
    return _load(ALGORITHMS[canonical_name(name)].algorithm_path)


def algorithm_class_for_config(config_cls: type):
    """The Algorithm class a config class builds: that of the nearest registered config class in its MRO."""
    paths = {entry.config_path: entry for entry in ALGORITHMS.values()}
    for klass in config_cls.__mro__:
        entry = paths.get(f"{klass.__module__}:{klass.__qualname__}")
        if entry is not None:
            return _load(entry.algorithm_path)
    return None


def public_names() -> Dict[str, str]:
    """{public name: module} of every built-in algorithm's exports (for `relayrl`'s lazy names)."""
    return {export: entry.path_of(export).partition(":")[0]
            for entry in ALGORITHMS.values() if entry.package for export in entry.exports}


def lazy_exports(name: str) -> Tuple[Callable, Callable, list]:
    """(__getattr__, __dir__, __all__) for an algorithm package, from its entry."""
    entry = ALGORITHMS[name]

    def __getattr__(attr):
        if attr not in entry.exports:
            raise AttributeError(f"module '{entry.package}' has no attribute '{attr}'")
        return _load(entry.path_of(attr))

    names = sorted(entry.exports)
    return __getattr__, lambda: names, names
