"""What an EnvRunner checkpoints, checks and restores (mixed into `EnvRunner`).

Module weights, connector and exploration states, metrics, and (`sampling`) the counters, the
ongoing episodes with the batch already computed for them, and the sync vector env's state: with
all of it restored, the next `sample()` continues exactly where the saved runner stopped. Where the
envs' state cannot be captured (checkpoints/env_state.py decides when saving: ASYNC envs, an env
holding objects), the checkpoint says why (`fresh_episodes`) and the restored runner starts fresh
episodes, keeping everything else.
"""
from typing import Any, Dict

import gymnasium as gym

from relayrl.checkpoints.checkpointable import selected
from relayrl.checkpoints.codec import make_generator
from relayrl.checkpoints.errors import CheckpointError
from relayrl.checkpoints.env_state import (
    capture_vector_env_state,
    check_vector_env_state,
    env_config_changed,
    env_config_key,
    fresh_episodes_seed,
    log_fresh_episodes,
    set_vector_env_state,
)
from relayrl.checkpoints.state_checks import (
    Where,
    check_generator_state,
    check_int,
    check_mapping,
    require,
    unexpected_error,
)
from relayrl.core.columns import DEFAULT_MODULE_ID
from relayrl.episodes.single_agent_episode import SingleAgentEpisode

PARTS = ("rl_module", "env_to_module_connector", "module_to_env_connector", "exploration", "metrics", "sampling")
SAMPLING_KEYS = ("seed", "episode_stats", "prev_chunks", "action_space_rng", "attributes", "ongoing", "episodes",
                 "cached_to_module", "env", "cached_map_structure", "unclipped_returns", "fresh_episodes", "env_config")
_SPACE_KEYS = ("observation_space", "action_space")
_GENERATOR = "__np_generator_state__"  # how `attributes` marks a numpy Generator's state
# Derived from the config when the module is built; relayrl 0.1.0 stored it: read, not applied.
_LEGACY_ATTRIBUTES = ("_use_exploration",)


class EnvRunnerState:
    """get_state / check_state / set_state of an EnvRunner."""

    # Counters and generators that sampling carries between sample() calls.
    STATE_ATTRIBUTES = ("num_env_steps_sampled_lifetime", "_consecutive_env_failures", "_inference_rng",
                        "weights_seq_no")

    def get_state(self, components=None, *, not_components=None, **kwargs) -> Dict[str, Any]:
        parts = {
            "rl_module": lambda: self.module.get_state(inference_only=True),  # (MultiRLModule: by module id)
            "env_to_module_connector": self._env_to_module.get_state,
            "module_to_env_connector": self._module_to_env.get_state,
            "exploration": self.exploration.get_state if _has_state(self.exploration) else None,
            "metrics": self.metrics.get_state,
            "sampling": self._sampling_state,
        }
        return {name: get() for name, get in parts.items()
                if get is not None and selected(name, components, not_components)}

    def _sampling_state(self) -> Dict[str, Any]:
        state = {
            "seed": self._seed,
            "episode_stats": [[k, list(v)] for k, v in self._stats._carried.items()],
            "prev_chunks": {k: [self._episode_to_state(e) for e in v] for k, v in self._prev_chunks.items()},
            "action_space_rng": _space_rng(self._spaces["__env_single__"][1]),
            "attributes": {name: _attribute_state(getattr(self, name)) for name in self.STATE_ATTRIBUTES
                           if getattr(self, name) is not None},
        }
        env_state, why_not = (None, None) if self._needs_reset else capture_vector_env_state(self.env)
        state["ongoing"] = env_state is not None
        if why_not is not None:
            state["fresh_episodes"] = why_not  # the restored runner starts fresh episodes, and says why
        if env_state is not None:
            state["episodes"] = [self._episode_to_state(e) for e in self._episodes]
            state["cached_to_module"] = self._cached_to_module
            state["env"] = env_state
            state["env_config"] = env_config_key(self.config.env_config)  # the settings these envs were made with
            clipping = getattr(self, "_reward_clipping", None)  # (single-agent runners clip rewards)
            scores = clipping.get_state() if clipping is not None else None
            if scores is not None:
                state["unclipped_returns"] = scores
        return state

    def _is_sync(self) -> bool:
        return isinstance(self.env, gym.vector.SyncVectorEnv)

    # -- checking -------------------------------------------------------------------------------
    def check_state(self, state: Dict[str, Any], where: Where) -> None:
        """Raise a CheckpointError if `state` does not fit this runner (module, connectors, envs); change nothing."""
        check_mapping(state, where, known=PARTS, owner="an EnvRunner")
        if "rl_module" in state:
            self.module.check_state(self._module_state_of(state["rl_module"]), where / "rl_module")
        if "env_to_module_connector" in state:
            self._env_to_module.check_state(_one_filter(self._env_to_module, state["env_to_module_connector"]),
                                            where / "env_to_module_connector")
        if "module_to_env_connector" in state:
            self._module_to_env.check_state(state["module_to_env_connector"], where / "module_to_env_connector")
        if "exploration" in state and _has_state(self.exploration):
            self.exploration.check_state(state["exploration"], where / "exploration")
        if "metrics" in state:
            self.metrics.check_state(state["metrics"], where / "metrics")
        if "sampling" in state:
            self._check_sampling_state(state["sampling"], where / "sampling")

    def _check_sampling_state(self, state: Any, where: Where) -> None:
        check_mapping(state, where, known=SAMPLING_KEYS, required=("seed", "episode_stats", "prev_chunks", "ongoing"),
                      owner="an EnvRunner's sampling")
        if state["seed"] is not None:
            check_int(state["seed"], where / "seed")
        attributes = check_mapping(state.get("attributes", {}), where / "attributes",
                                   known=self.STATE_ATTRIBUTES + _LEGACY_ATTRIBUTES, owner="an EnvRunner")
        for name, value in attributes.items():
            if isinstance(value, dict):
                require(set(value) == {_GENERATOR}, where / "attributes" / name, "expected a generator state.")
                check_generator_state(value[_GENERATOR], where / "attributes" / name)
            elif name not in _LEGACY_ATTRIBUTES:
                require(isinstance(value, (int, float)) and not isinstance(value, bool), where / "attributes" / name,
                        f"expected a number, found {value!r}.")
        if state.get("action_space_rng") is not None:
            check_generator_state(state["action_space_rng"], where / "action_space_rng")
        require(isinstance(state.get("fresh_episodes", ""), str), where / "fresh_episodes", "expected a str.")
        try:  # episodes are rebuilt from their data here and again in set_state
            self._stats_from_state(state)
            self._chunks_from_state(state)
            if self._restores_ongoing(state):
                check_vector_env_state(self.env, state["env"], where / "env")
                [self._episode_from_state(s) for s in state["episodes"]]
                require(isinstance(state.get("cached_to_module"), dict), where / "cached_to_module",
                        "expected the batch computed for the ongoing episodes.")
                scores = state.get("unclipped_returns", [])
                require(isinstance(scores, list) and len(scores) in (0, self.num_envs)
                        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in scores),
                        where / "unclipped_returns", f"expected {self.num_envs} numbers (one score per sub-env).")
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            raise unexpected_error(where, error) from None

    # -- setting --------------------------------------------------------------------------------
    def set_state(self, state: Dict[str, Any]) -> None:
        if "rl_module" in state:
            self.module.set_state(self._module_state_of(state["rl_module"]))
        if "env_to_module_connector" in state:
            self._env_to_module.set_state(_one_filter(self._env_to_module, state["env_to_module_connector"]))
        if "module_to_env_connector" in state:
            self._module_to_env.set_state(state["module_to_env_connector"])
        if "exploration" in state and _has_state(self.exploration):
            self.exploration.set_state(state["exploration"])
        if "metrics" in state:
            self.metrics.set_state(state["metrics"])
        if "sampling" in state:
            self._set_sampling_state(state["sampling"])

    def _set_sampling_state(self, state: Dict[str, Any]) -> None:
        self._seed = state["seed"]
        for name, value in state.get("attributes", {}).items():
            if name in self.STATE_ATTRIBUTES:
                setattr(self, name, _attribute_from_state(getattr(self, name), value))
        self._stats._carried = self._stats_from_state(state)
        self._prev_chunks = self._chunks_from_state(state)
        rng = state.get("action_space_rng")
        if rng is not None:
            self._spaces["__env_single__"][1]._np_random = make_generator(rng)
        if self._restores_ongoing(state):
            set_vector_env_state(self.env, state["env"])
            self._episodes = [self._episode_from_state(s) for s in state["episodes"]]
            self._cached_to_module = state["cached_to_module"]
            if "unclipped_returns" in state:
                self._reward_clipping.set_state(state["unclipped_returns"])
            self._needs_reset = False
        else:  # nothing ongoing saved (or envs whose state was not captured): the next sample() starts fresh ones
            self._needs_reset = True
            if state.get("fresh_episodes") or env_config_changed(state, self.config.env_config):
                self._stats._carried, self._prev_chunks = {}, {}  # (of the saved episodes, which do not go on)
                self._seed = fresh_episodes_seed(self.config.seed, self.worker_index,
                                                 self.num_env_steps_sampled_lifetime)
                if state.get("fresh_episodes"):
                    log_fresh_episodes(state["fresh_episodes"])

    def _restores_ongoing(self, state: Dict[str, Any]) -> bool:
        return (bool(state["ongoing"]) and self._is_sync() and len(state["episodes"]) == self.num_envs
                and not env_config_changed(state, self.config.env_config))

    @staticmethod
    def _stats_from_state(state: Dict[str, Any]) -> Dict[Any, tuple]:
        return {k: tuple(v) for k, v in state["episode_stats"]}

    def _chunks_from_state(self, state: Dict[str, Any]) -> Dict[str, list]:
        return {k: [self._episode_from_state(s) for s in v] for k, v in state["prev_chunks"].items()}

    # -- per-runner-kind hooks (MultiAgentEnvRunner overrides them) -------------------------------
    def _module_state_of(self, state: Dict[str, Any]) -> Dict[str, Any]:
        return _single_module_state(state)

    def _episode_to_state(self, episode) -> Dict[str, Any]:
        return _episode_state_without_spaces(episode.get_state())

    def _episode_from_state(self, state: Dict[str, Any]) -> SingleAgentEpisode:
        obs_space, act_space = self._spaces["__env_single__"]
        return SingleAgentEpisode.from_state(dict(state, observation_space=obs_space, action_space=act_space))


def _single_module_state(state: Dict[str, Any]) -> Dict[str, Any]:
    """A runner's module state, stored bare or as {DEFAULT_MODULE_ID: weights}."""
    if isinstance(state, dict) and isinstance(state.get(DEFAULT_MODULE_ID), dict):
        return state[DEFAULT_MODULE_ID]
    return state


def _has_state(exploration) -> bool:
    return exploration is not None and callable(getattr(exploration, "get_state", None))


def _episode_state_without_spaces(state: Dict[str, Any]) -> Dict[str, Any]:
    """A SingleAgentEpisode's `get_state()` without its spaces (the runner's, rebuilt from the config)."""
    for key in _SPACE_KEYS:  # the runner's spaces: rebuilt from the config, not stored
        state.pop(key, None)
    for buffer_key in ("observations", "infos", "actions", "rewards"):
        state[buffer_key] = dict(state[buffer_key], space=None)
    state["extra_model_outputs"] = {k: dict(v, space=None) for k, v in state["extra_model_outputs"].items()}
    return state


def _attribute_state(value: Any) -> Any:
    import numpy as np

    return {_GENERATOR: value.bit_generator.state} if isinstance(value, np.random.Generator) else value


def _attribute_from_state(current: Any, value: Any) -> Any:
    if isinstance(value, dict):  # a Generator: continued in place when it is one of the same kind
        state = value[_GENERATOR]
        if current is not None and type(current.bit_generator).__name__ == state.get("bit_generator"):
            current.bit_generator.state = state
            return current
        return make_generator(state)
    return value


def _space_rng(space):
    rng = getattr(space, "_np_random", None)
    return rng.bit_generator.state if rng is not None else None


def _one_filter(pipeline, state):
    """A checkpoint of a stateful module's run whose env_to_module_connector had a MeanStdFilter of its own, written
    when the default observation filter still came too (two filters): the first ("MeanStdFilter") held the raw
    observations' statistics, which the user's filter, now the only one, normalises by; the second's go."""
    if (isinstance(state, dict) and "MeanStdFilter_1" in state and "MeanStdFilter_2" not in state
            and [p.name for p in pipeline.connectors].count("MeanStdFilter") == 1):
        return {k: v for k, v in state.items() if k != "MeanStdFilter_1"}
    return state
