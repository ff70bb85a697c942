"""`observation_filter` (RLlib's option name): "MeanStdFilter" puts a MeanStdFilter first in the env-to-module
pipeline (after the user's FlattenObservations for Discrete / Dict observations, which it cannot take as they
are), so the module and the Learner see observations normalised by running statistics (merged across remote
EnvRunners and checkpointed like a MeanStdFilter the user adds). "NoFilter" (the default) adds nothing.

Image observations are scaled by the CNN encoder instead: a filter the user asks for there is an error naming the
fix; the one a stateful module gets by default (relayrl/algorithms/resolved_defaults/stateful_module.py) normalises
vector (Box) observations only and leaves any other space (images, Discrete, Dict, Tuple) alone, and so does the
value of a config that came whole from a run (a checkpoint's, a dict of every option: `chosen_by_user`), which may be
that default. That default also steps aside when the user's env-to-module connector has a MeanStdFilter of its own
(RLlib's way to normalise): observations are normalised once.
"""
import gymnasium as gym

from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations
from relayrl.connectors.env_to_module.mean_std_filter import MeanStdFilter

_FLATTEN_FIX = ("config.env_runners(env_to_module_connector=lambda env, spaces, device: FlattenObservations()) "
                "(FlattenObservations(multi_agent=True) for a multi-agent env), which the filter then follows")


def with_observation_filter(config, observation_space, user_pieces) -> list:
    """The user's env-to-module `user_pieces` with the pieces `config.observation_filter` asks for: first, or, where
    the observations are not vectors (Discrete, Dict, ...), right after the user's FlattenObservations, which makes
    the vectors the filter normalises."""
    filters = observation_filter_pieces(config, observation_space, user_pieces)
    if not filters or _takes_filter(observation_space, config.is_multi_agent):
        return filters + list(user_pieces)
    flatten = [i for i, piece in enumerate(user_pieces) if isinstance(piece, FlattenObservations)]
    if not flatten:
        raise ValueError(f"observation_filter='MeanStdFilter' normalises vector observations, but this env's "
                         f"observations are {observation_space}. Fix: flatten them first, {_FLATTEN_FIX}; or "
                         "observation_filter='NoFilter'.")
    at = flatten[-1] + 1
    return list(user_pieces[:at]) + filters + list(user_pieces[at:])


def _takes_filter(space, multi_agent: bool) -> bool:
    """Whether MeanStdFilter takes these observations as they come from the env (each agent's, multi-agent; agents'
    spaces not known yet are left to the filter, as before)."""
    if multi_agent:
        agents = space.spaces.values() if isinstance(space, gym.spaces.Dict) else ()
        return all(isinstance(s, gym.spaces.Box) for s in agents)
    return isinstance(space, gym.spaces.Box)


def observation_filter_pieces(config, observation_space, user_pieces=()) -> list:
    """The pieces `config.observation_filter` asks for, for observations of `observation_space`, before the user's
    env-to-module `user_pieces`."""
    if config.observation_filter != "MeanStdFilter":
        return []
    if not config.chosen_by_user("observation_filter") and any(isinstance(p, MeanStdFilter) for p in user_pieces):
        return []  # the stateful default, where the user's connector normalises already: one filter, not two
    if _has_images(observation_space):
        if config.chosen_by_user("observation_filter"):  # (a restored run's is the stateful default's: no filter)
            raise ValueError("observation_filter='MeanStdFilter' normalises vector observations, but this env's "
                             f"observations are images ({observation_space}), which the CNN scales itself. Fix: "
                             "observation_filter='NoFilter'.")
        return []
    if not config.chosen_by_user("observation_filter") and not _vector_boxes_only(observation_space):
        return []  # the stateful default: only where MeanStdFilter applies
    return [MeanStdFilter(multi_agent=config.is_multi_agent)]


def _vector_boxes_only(space) -> bool:
    """Whether every observation (each agent's, in a multi-agent Dict) is a vector Box, which MeanStdFilter takes."""
    if isinstance(space, gym.spaces.Dict):
        return all(_vector_boxes_only(s) for s in space.spaces.values())
    return isinstance(space, gym.spaces.Box)


def _has_images(space) -> bool:
    from relayrl.modules.encoders import is_image_space

    if isinstance(space, gym.spaces.Dict):
        return any(_has_images(s) for s in space.spaces.values())
    return space is not None and is_image_space(space)
