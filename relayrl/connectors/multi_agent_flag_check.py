"""The user's pieces that take RLlib's `multi_agent` flag must have it match the config.

Built without it in a multi-agent config, `FlattenObservations` flattened the Dict of all agents' spaces into
one Box for every module and then failed on each agent's observation while sampling (an IndexError from
gymnasium, on every remote runner, restarted again and again); `MeanStdFilter` said to add FlattenObservations.
"""
from relayrl.connectors.common.frame_stacking import FrameStacking
from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations
from relayrl.connectors.env_to_module.mean_std_filter import MeanStdFilter
from relayrl.connectors.env_to_module.prev_actions_prev_rewards import PrevActionsPrevRewards

_FLAGGED = (FlattenObservations, MeanStdFilter, PrevActionsPrevRewards, FrameStacking)


def _pieces(pieces):
    for piece in pieces:
        inner = getattr(piece, "connectors", None)
        if isinstance(inner, (list, tuple)):  # a pipeline given as a piece
            yield from _pieces(inner)
        else:
            yield piece


def check_multi_agent_flags(config, pieces, where: str) -> None:
    """Raise naming the fix when a flagged piece's `multi_agent` differs from `config.is_multi_agent`."""
    multi = bool(config.is_multi_agent)
    for piece in _pieces(pieces):
        name = type(piece).__name__
        if isinstance(piece, _FLAGGED) and bool(piece._multi_agent) != multi:
            if multi:
                raise ValueError(
                    f"{name}() in the {where} of a multi-agent config: its observations come per agent, so build "
                    f"it with {name}(multi_agent=True) (RLlib's flag; each agent keeps its own space"
                    f"{' and statistics' if isinstance(piece, MeanStdFilter) else ''}).")
            raise ValueError(f"{name}(multi_agent=True) in the {where} of a single-agent config: drop "
                             "multi_agent=True (it is for configs with config.multi_agent(policies=...)).")
