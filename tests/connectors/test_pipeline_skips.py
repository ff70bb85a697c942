"""Pipelines leave out pieces that skip a module (ConnectorV2.skips); the batches stay the same."""
import numpy as np
import torch
from connector_test_utils import (
    ACT_SPACE,
    OBS_SPACE,
    LinearValueModule,
    StatefulLinearValueModule,
    make_episode,
    o,
    reset_episode,
)

from relayrl import PPOConfig
from relayrl.connectors import AddStatesFromEpisodesToBatch, ConnectorV2
from relayrl.core.columns import Columns

SPACES = {"__env_single__": (OBS_SPACE, ACT_SPACE)}
STATE_PIECES = {"AddTimeDimToBatchAndZeroPad", "AddStatesFromEpisodesToBatch"}


def module(cls):
    return cls(observation_space=OBS_SPACE, action_space=ACT_SPACE)


def episodes():
    ongoing = make_episode([o(0, 0), o(3, 3)], [1], [0.0], eid="ongoing", numpy=False,
                           extra_model_outputs={Columns.STATE_OUT: [{"h": np.float32([1, -1])}]})
    return [reset_episode(o(1, 1), eid="fresh"), ongoing]


def active_names(pipe, rl_module):
    return {piece.name for piece in pipe._active_pieces(rl_module)}


def assert_same_batch(a, b):
    assert set(a) == set(b)
    for key in a:
        if isinstance(a[key], dict):
            assert_same_batch(a[key], b[key])
        else:
            torch.testing.assert_close(a[key], b[key], rtol=0, atol=0)


def test_state_pieces_are_left_out_for_a_stateless_module_only():
    pipe = PPOConfig().build_env_to_module_connector(spaces=SPACES)
    assert not active_names(pipe, module(LinearValueModule)) & STATE_PIECES
    assert active_names(pipe, module(StatefulLinearValueModule)) >= STATE_PIECES


def test_skipping_gives_the_batch_of_calling_every_piece():
    for cls in (LinearValueModule, StatefulLinearValueModule):
        pipe = PPOConfig().build_env_to_module_connector(spaces=SPACES)
        rl_module = module(cls)
        skipped = pipe(rl_module=rl_module, batch={}, episodes=episodes())
        every_piece = pipe.timed_call(rl_module=rl_module, batch={}, episodes=episodes())  # calls all pieces
        assert_same_batch(skipped, every_piece)


def test_one_pipeline_follows_a_change_of_module():
    pipe = PPOConfig().build_env_to_module_connector(spaces=SPACES)
    assert Columns.STATE_IN not in pipe(rl_module=module(LinearValueModule), batch={}, episodes=episodes())
    out = pipe(rl_module=module(StatefulLinearValueModule), batch={}, episodes=episodes())
    assert out[Columns.OBS].shape == (2, 1, 2)
    torch.testing.assert_close(out[Columns.STATE_IN]["h"], torch.tensor([[0.0, 0.0], [1.0, -1.0]]))


class Marker(ConnectorV2):
    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        batch["marker"] = np.ones(len(episodes), np.float32)
        return batch


class StatesPlusMarker(AddStatesFromEpisodesToBatch):
    """Overrides __call__ but not skips(): must not be left out where its parent would be."""

    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        batch["marker"] = np.zeros(len(episodes), np.float32)
        return super().__call__(rl_module=rl_module, batch=batch, episodes=episodes, **kwargs)


def test_a_subclass_with_its_own_call_is_not_skipped():
    pipe = PPOConfig().build_env_to_module_connector(spaces=SPACES)
    pipe.insert_before("BatchIndividualItems", StatesPlusMarker())
    out = pipe(rl_module=module(LinearValueModule), batch={}, episodes=episodes())
    torch.testing.assert_close(out["marker"], torch.zeros(2))


def test_pieces_put_into_the_list_directly_are_called():
    pipe = PPOConfig().build_env_to_module_connector(spaces=SPACES)
    rl_module = module(LinearValueModule)
    assert "marker" not in pipe(rl_module=rl_module, batch={}, episodes=episodes())
    pipe.connectors.insert(0, Marker())  # not through the editing methods
    torch.testing.assert_close(pipe(rl_module=rl_module, batch={}, episodes=episodes())["marker"], torch.ones(2))
