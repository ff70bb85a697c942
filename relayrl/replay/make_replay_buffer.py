"""make_replay_buffer: build a buffer from an RLlib-style `replay_buffer_config` dict."""
import inspect
from typing import Any, Dict

from relayrl.core.imports import ImportObject, import_object, module_and_name
from relayrl.core.suggest import did_you_mean
from relayrl.replay.episode_replay_buffer import _IGNORED_INIT_KWARGS, EpisodeReplayBuffer
from relayrl.replay.multi_agent_episode_replay_buffer import (
    MultiAgentEpisodeReplayBuffer,
    MultiAgentPrioritizedEpisodeReplayBuffer,
    multi_agent_buffer_class,
)
from relayrl.replay.prioritized_episode_replay_buffer import PrioritizedEpisodeReplayBuffer

BUILT_IN_BUFFERS = {
    "EpisodeReplayBuffer": EpisodeReplayBuffer,
    "PrioritizedEpisodeReplayBuffer": PrioritizedEpisodeReplayBuffer,
    "MultiAgentEpisodeReplayBuffer": MultiAgentEpisodeReplayBuffer,
    "MultiAgentPrioritizedEpisodeReplayBuffer": MultiAgentPrioritizedEpisodeReplayBuffer,
}


# RLlib's old-stack names (its docs and older scripts use them): what the episode buffers call them instead.
OLD_STACK_TYPES = {"ReplayBuffer": "EpisodeReplayBuffer", "PrioritizedReplayBuffer": "PrioritizedEpisodeReplayBuffer",
                   "MultiAgentReplayBuffer": "EpisodeReplayBuffer",
                   "MultiAgentPrioritizedReplayBuffer": "PrioritizedEpisodeReplayBuffer"}
OLD_STACK_KEYS = {"prioritized_replay_alpha": "alpha", "prioritized_replay_beta": "beta",
                  "prioritized_replay_eps": None}


def _old_stack_key_hint(key: str, cls, accepted) -> str:
    new = OLD_STACK_KEYS[key]
    if new is None:
        return (" It is RLlib's old-stack key; the episode buffers have none (priorities are |TD error| + 1e-6): "
                "drop it.")
    where = (cls.__name__ if new in accepted
             else "PrioritizedEpisodeReplayBuffer (type='PrioritizedEpisodeReplayBuffer')")
    return f" It is RLlib's old-stack key; {where} calls it {new!r}."


def resolve_replay_buffer_class(buffer_type, import_name: ImportObject = import_object):
    """The buffer class `replay_buffer_config["type"]` names: a class, a built-in name or 'pkg.module.ClassName'
    (imported through `import_name`)."""
    if isinstance(buffer_type, type):
        return buffer_type
    if not isinstance(buffer_type, str):
        raise TypeError(f"replay_buffer_config['type'] must be a class or a class name, got "
                        f"{type(buffer_type).__name__}.")
    if buffer_type in BUILT_IN_BUFFERS:
        return BUILT_IN_BUFFERS[buffer_type]
    if "." in buffer_type or ":" in buffer_type:
        return import_name(module_and_name(buffer_type), what=f"replay_buffer_config['type']={buffer_type!r}")
    if buffer_type in OLD_STACK_TYPES:
        hint = (" It is RLlib's old-stack buffer of timesteps; the new stack's (and relayrl's) buffers store "
                f"episodes: use {OLD_STACK_TYPES[buffer_type]!r} (a multi-agent config gets its multi-agent "
                "version itself).")
    else:
        hint = did_you_mean(buffer_type, BUILT_IN_BUFFERS)
    raise ValueError(f"Unknown replay buffer type {buffer_type!r}.{hint} "
                     f"Built-in types: {sorted(BUILT_IN_BUFFERS)}; or pass a class or 'pkg.module.ClassName'.")


def _accepted_keys(cls):
    """(named constructor parameters, whether it takes **kwargs)."""
    params = inspect.signature(cls.__init__).parameters.values()
    named = [p.name for p in params if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    return named, any(p.kind == p.VAR_KEYWORD for p in params)


def make_replay_buffer(replay_buffer_config: Dict[str, Any], *, multi_agent: bool = False, **defaults):
    """Build the buffer `replay_buffer_config["type"]` (default: EpisodeReplayBuffer).

    `multi_agent=True` (a multi-agent config): a single-agent type becomes its multi-agent version, one buffer
    of that type per module (e.g. PrioritizedEpisodeReplayBuffer -> MultiAgentPrioritizedEpisodeReplayBuffer).

    `defaults` (e.g. an algorithm's `capacity` or `seed`) apply where the config does not set a key
    and the buffer type takes them; the others are left out. Unknown config keys raise.
    """
    if replay_buffer_config is None:
        replay_buffer_config = {}
    if not isinstance(replay_buffer_config, dict):
        raise TypeError(f"replay_buffer_config must be a dict, got {type(replay_buffer_config).__name__}.")
    config = dict(replay_buffer_config)
    cls = resolve_replay_buffer_class(config.pop("type", EpisodeReplayBuffer))
    if multi_agent:
        cls = multi_agent_buffer_class(cls)
    named, takes_kwargs = _accepted_keys(cls)
    built_in = cls in BUILT_IN_BUFFERS.values()
    if issubclass(cls, MultiAgentEpisodeReplayBuffer) and not built_in:  # a user's buffer class, one per module
        named, takes_kwargs = _accepted_keys(cls.MODULE_BUFFER_CLASS)
        named = named + ["replay_mode"]
    if built_in:
        accepted = list(cls._INIT_ARGS + _IGNORED_INIT_KWARGS)
    else:
        accepted = named
    if built_in or not takes_kwargs:
        for key in config:
            if key not in accepted:
                hint = _old_stack_key_hint(key, cls, accepted) if key in OLD_STACK_KEYS else did_you_mean(key, accepted)
                raise ValueError(f"replay_buffer_config has unknown key {key!r} for {cls.__name__}."
                                 f"{hint} Accepted keys: {sorted(['type'] + accepted)}.")
    # A user class taking **kwargs also gets the defaults its buffer base class takes (e.g. `seed`);
    # other defaults are meant for other buffer types and are left out.
    known = set(accepted)
    if takes_kwargs and not built_in:
        known |= set(getattr(cls, "_INIT_ARGS", PrioritizedEpisodeReplayBuffer._INIT_ARGS))
    for key, value in defaults.items():
        if key not in config and key in known:
            config[key] = value
    return cls(**config)
