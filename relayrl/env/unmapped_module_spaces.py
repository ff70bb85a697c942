"""Spaces for a module that no agent maps to (e.g. an evaluation config mapping every agent to one policy,
or a policy kept for later): as RLlib, it takes the one space all the mapped modules share."""
from typing import Dict, Optional, Tuple

import gymnasium as gym


def _entry(space, module_id):
    if isinstance(space, gym.spaces.Dict):
        return space.spaces.get(module_id)
    return space


def spaces_by_module(observation_space, action_space, module_ids) -> Dict[str, Tuple[Optional[gym.Space], ...]]:
    """{module_id: (obs space, action space)} from the env-to-module pipeline's output spaces (Dicts by module).

    A module missing there (no agent maps to it) gets the spaces every mapped module has, when they are all
    the same; else (None, None), and `check_module_spaces` names it unless its PolicySpec/RLModuleSpec has spaces.
    """
    out = {m: (_entry(observation_space, m), _entry(action_space, m)) for m in module_ids}
    mapped = [pair for pair in out.values() if None not in pair]
    shared = mapped[0] if mapped and all(pair == mapped[0] for pair in mapped) else (None, None)
    return {m: pair if None not in pair else shared for m, pair in out.items()}


def check_module_spaces(multi_spec) -> None:
    """A clear error for a module whose spaces could not be filled in (instead of the spec's generic one)."""
    for module_id, spec in multi_spec.rl_module_specs.items():
        if spec.observation_space is None or spec.action_space is None:
            raise ValueError(
                f"No agent maps to module {module_id!r} (policy_mapping_fn) and the agents' spaces differ, so its "
                "spaces cannot be inferred; give them in config.multi_agent(policies={"
                f"{module_id!r}: PolicySpec(observation_space=..., action_space=...)}}) or in its RLModuleSpec.")
