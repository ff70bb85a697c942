"""The old API stack's top-level result keys (seed 003's `episode_reward_mean`, ...) and where they live now.

`config.reporting(legacy_result_keys=True)` adds them to every result (`add_legacy_result_keys`), so old
Tune stop criteria and PBT metrics work unchanged. Without it, a Tune stop criterion or scheduler metric that
names one of them fails at the first result with a message naming the new key (`missing_result_key_message`,
checked by relayrl/tune/result_key_checks.py), instead of a run that waits for a key no result has.
"""
from typing import Any, Dict, Mapping, Optional

# old key -> the "/"-path of today's key it copies. Keys whose value is not a plain copy are in
# add_legacy_result_keys below (policy_reward_mean, custom_metrics).
OLD_RESULT_KEYS: Dict[str, str] = {
    "episode_reward_mean": "env_runners/episode_return_mean",
    "episode_reward_min": "env_runners/episode_return_min",
    "episode_reward_max": "env_runners/episode_return_max",
    "episode_len_mean": "env_runners/episode_len_mean",
    "episodes_this_iter": "env_runners/num_episodes",
    "episodes_total": "env_runners/num_episodes_lifetime",
    "timesteps_this_iter": "env_runners/num_env_steps_sampled",
    "timesteps_total": "num_env_steps_sampled_lifetime",
    "policy_reward_mean": "env_runners/module_episode_returns_mean",  # per policy (see below)
    "custom_metrics": "env_runners/custom_metrics",
}
_NOTES = {"policy_reward_mean": " (per policy in multi-agent runs; old RLlib listed only the non-default policies: {} "
                               "for a single agent)"}


def _get(result: Mapping, path: str, default: Any = None) -> Any:
    value: Any = result
    for part in path.split("/"):
        if not isinstance(value, Mapping) or part not in value:
            return default
        value = value[part]
    return value


def add_legacy_result_keys(result: Dict[str, Any]) -> None:
    """Add the old keys at the top of `result` and of `result["evaluation"]` (in place)."""
    for scope in (result, result.get("evaluation")):
        if not isinstance(scope, dict) or "env_runners" not in scope:
            continue
        for old, new in OLD_RESULT_KEYS.items():
            if old in ("policy_reward_mean", "custom_metrics"):
                continue
            value = _get(scope, new, _get(result, new))
            if value is not None:
                scope[old] = value
        # Per-policy returns of the non-default policies (old RLlib left the default one out): single-agent, none.
        returns = _get(scope, OLD_RESULT_KEYS["policy_reward_mean"], {}) or {}
        scope["policy_reward_mean"] = {pid: value for pid, value in returns.items() if pid != "default_policy"}
        scope["custom_metrics"] = dict(_get(scope, "env_runners/custom_metrics", {}))


def add_policy_reward_mean(result: Dict[str, Any]) -> None:
    """Multi-agent results: each module's mean episode return also as `env_runners/policy_reward_mean/<module>`
    (at the top and in `evaluation`), the key of RLlib's hybrid API stack, which RLlib 2.60's
    `pretrain_bc_single_agent_evaluate_as_multi_agent.py` stops on (in place; a shallow copy of the dict)."""
    if not isinstance(result, dict):
        return
    for scope in (result, result.get("evaluation")):
        env_runners = scope.get("env_runners") if isinstance(scope, dict) else None
        returns = env_runners.get("module_episode_returns_mean") if isinstance(env_runners, dict) else None
        if isinstance(returns, Mapping):
            env_runners["policy_reward_mean"] = dict(returns)


def missing_result_key_message(key: str, flat_result: Mapping[str, Any], *, what: str) -> Optional[str]:
    """Why a relayrl result will never have `key` (a Tune stop criterion or metric: `what`), or None if it may.

    Only relayrl's results are judged (they carry env_runners/episode_return_mean), and only keys that are
    known not to come later: the old top-level keys, and a top-level name that relayrl reports nested.
    """
    if key in flat_result or "env_runners/episode_return_mean" not in flat_result:
        return None
    fix = " or turn the old keys on with config.reporting(legacy_result_keys=True) (\"legacy_result_keys\": True " \
          "in a config dict)"
    if key in OLD_RESULT_KEYS:
        return (f"{what} `{key}` is the old API stack's result key, which relayrl's results do not have: use "
                f"`{OLD_RESULT_KEYS[key]}`{_NOTES.get(key, '')}{fix}.")
    if "/" not in key:
        nested = sorted(k for k in flat_result if k.endswith("/" + key))
        if nested:
            return (f"{what} `{key}` is not a top-level key of relayrl's results; they have "
                    f"{', '.join(f'`{k}`' for k in nested)}.")
    return None
