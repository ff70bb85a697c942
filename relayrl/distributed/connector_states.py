"""Merging connector states (e.g. MeanStdFilter statistics) gathered from several remote EnvRunners.

Every runner starts each round from the state last broadcast (the "base") and adds what it saw.
Merging the runners' states as they are would count the base once per runner, so running
statistics ({"stat": {"count", "mean", "m2"}}, or per agent {"stats": [[agent_id, {...}], ...]}) are first
reduced to what each runner added and then merged onto the base once. Other piece states go to the piece's
own `merge_states`.
"""
from typing import Any, Dict, List, Optional

import numpy as np


def _is_running_stat(state: Any) -> bool:
    stat = state.get("stat") if isinstance(state, dict) else None
    return isinstance(stat, dict) and {"count", "mean", "m2"} <= stat.keys()


def subtract_running_stat(total: Dict[str, Any], base: Dict[str, Any]) -> Dict[str, Any]:
    """The statistics D with merge(base, D) == total (Chan et al.'s merge, solved for D)."""
    n_total, n_base = int(total["count"]), int(base["count"])
    n = n_total - n_base
    mean_total, mean_base = np.asarray(total["mean"], np.float64), np.asarray(base["mean"], np.float64)
    if n <= 0:
        return {"count": 0, "mean": np.zeros_like(mean_total).tolist(), "m2": np.zeros_like(mean_total).tolist()}
    mean = (n_total * mean_total - n_base * mean_base) / n
    m2 = (np.asarray(total["m2"], np.float64) - np.asarray(base["m2"], np.float64)
          - (mean - mean_base) ** 2 * n_base * n / n_total)
    return {"count": n, "mean": mean.tolist(), "m2": np.maximum(m2, 0.0).tolist()}


def _is_per_agent_stats(state: Any) -> bool:
    stats = state.get("stats") if isinstance(state, dict) else None
    return isinstance(stats, list) and all(isinstance(entry, (list, tuple)) and len(entry) == 2 for entry in stats)


def _has_running_stats(state: Any) -> bool:
    return _is_running_stat(state) or _is_per_agent_stats(state)


def _added_since(piece_state: Dict[str, Any], base: Dict[str, Any]) -> Dict[str, Any]:
    """A piece state reduced to what the runner added to its running statistics since `base`."""
    if _is_running_stat(piece_state) and _is_running_stat(base):
        return {**piece_state, "stat": subtract_running_stat(piece_state["stat"], base["stat"])}
    if _is_per_agent_stats(piece_state) and _is_per_agent_stats(base):
        base_stats = {_hashable(agent_id): stat for agent_id, stat in base["stats"]}
        return {**piece_state, "stats": [
            [agent_id, subtract_running_stat(stat, base_stats[_hashable(agent_id)])
             if _hashable(agent_id) in base_stats else stat] for agent_id, stat in piece_state["stats"]]}
    return piece_state


def _hashable(agent_id: Any) -> Any:
    return tuple(agent_id) if isinstance(agent_id, list) else agent_id


def merge_connector_states(pipeline, base: Dict[str, Any], states: List[Dict[str, Any]],
                           runner_bases: Optional[List[Optional[Dict[str, Any]]]] = None) -> Dict[str, Any]:
    """One pipeline state from the runners' `states` of `pipeline`, given the driver's `base` (the state last
    merged). `runner_bases[i]`: what runner i held when last looked at, where that is not `base` (runners that
    keep their own states, broadcast_env_runner_states=False); None or missing: `base`."""
    base = base or {}
    base_entry = _running_stats_of(base)
    entries = [base_entry] if base_entry else []
    for i, state in enumerate(states):
        held = runner_bases[i] if runner_bases is not None and runner_bases[i] is not None else None
        held_entry = base_entry if held is None else _running_stats_of(held)
        entries.append({key: _added_since(piece_state, held_entry[key]) if key in held_entry else piece_state
                        for key, piece_state in state.items()})
    return pipeline.merge_states(entries) if entries else {}


def _running_stats_of(state: Dict[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in (state or {}).items() if _has_running_stats(value)}
