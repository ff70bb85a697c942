"""ConnectorPipelineV2: editing, indexing, printing, space chaining and calling."""
import gymnasium as gym
import numpy as np
import pytest
from connector_test_utils import OBS_SPACE, make_episode, o

from relayrl.connectors import (
    AddObservationsFromEpisodesToBatch,
    BatchIndividualItems,
    ConnectorPipelineV2,
    ConnectorV2,
    FrameStacking,
    NumpyToTensor,
)


class Tag(ConnectorV2):
    """Appends its tag to batch["trace"] (so the call order is visible)."""

    def __init__(self, tag="", **kwargs):
        super().__init__(**kwargs)
        self.tag = tag

    def __call__(self, *, rl_module, batch, episodes, shared_data=None, **kwargs):
        batch.setdefault("trace", []).append(self.tag)
        shared_data.setdefault("seen", []).append(self.tag)
        return batch


class OtherTag(Tag):
    pass


class Forgetful(ConnectorV2):
    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        batch["x"] = 1  # ... but no `return batch`


def names(pipe):
    return [c.name for c in pipe.connectors]


def test_call_runs_pieces_in_order_sharing_shared_data():
    pipe = ConnectorPipelineV2(connectors=[Tag("a"), Tag("b")])
    shared = {}
    out = pipe(rl_module=None, batch={}, episodes=[], shared_data=shared)
    assert out == {"trace": ["a", "b"]}
    assert shared == {"seen": ["a", "b"]}
    # batch and shared_data default to fresh dicts
    assert pipe(rl_module=None, episodes=[]) == {"trace": ["a", "b"]}


def test_append_prepend_insert_return_values_and_order():
    pipe = ConnectorPipelineV2(connectors=[Tag("a")])
    assert pipe.append(OtherTag("z")) is None
    pipe.prepend(Forgetful())
    assert names(pipe) == ["Forgetful", "Tag", "OtherTag"]
    b = Tag("b")
    before = pipe.insert_before("OtherTag", b)
    assert before is pipe[3] and before.name == "OtherTag"
    assert pipe[2] is b
    c = Tag("c")
    after = pipe.insert_after(Forgetful, c)
    assert after is pipe[0] and after.name == "Forgetful"
    assert pipe[1] is c
    assert [getattr(p, "tag", None) for p in pipe.connectors] == [None, "c", "a", "b", "z"]
    with pytest.raises(ValueError, match="No piece `Nope`"):
        pipe.insert_before("Nope", Tag())


def test_insert_by_class_matches_subclasses_first_match():
    pipe = ConnectorPipelineV2(connectors=[OtherTag("x"), Tag("y")])
    assert pipe.insert_after(Tag, Tag("new")) is pipe[0]  # OtherTag is a Tag
    assert [p.tag for p in pipe.connectors] == ["x", "new", "y"]


def test_remove_by_name_and_class_and_did_you_mean():
    pipe = ConnectorPipelineV2(connectors=[Tag("a"), OtherTag("b"), Tag("c")])
    pipe.remove("Tag")  # only the first match, as RLlib's remove()
    assert [p.tag for p in pipe.connectors] == ["b", "c"]
    pipe.remove(OtherTag)
    assert [p.tag for p in pipe.connectors] == ["c"]
    with pytest.raises(ValueError, match=r"No piece `Tga`.*Did you mean `Tag`\?"):
        pipe.remove("Tga")
    assert len(pipe) == 1


def test_indexing_by_position_class_and_name_and_len():
    a, b, c = Tag("a"), OtherTag("b"), Forgetful()
    pipe = ConnectorPipelineV2(connectors=[a, b, c])
    assert len(pipe) == 3
    assert pipe[0] is a and pipe[-1] is c and pipe[np.int64(1)] is b
    assert pipe[Tag] == [a, b]  # class: every instance (subclasses too)
    assert pipe["Tag"] == [a]  # name: exact class name
    assert pipe["Missing"] == [] and pipe[NumpyToTensor] == []
    with pytest.raises(IndexError):
        pipe[5]
    with pytest.raises(TypeError):
        pipe[0:2]


def test_str_shows_the_chain_in_order():
    inner = ConnectorPipelineV2(connectors=[OtherTag()])
    pipe = ConnectorPipelineV2(connectors=[Tag(), inner, Forgetful()])
    assert str(pipe) == "\n".join([
        "ConnectorPipelineV2",
        "    Tag",
        "    ConnectorPipelineV2",
        "        OtherTag",
        "    Forgetful",
    ])
    assert repr(pipe) == "ConnectorPipelineV2(Tag -> ConnectorPipelineV2 -> Forgetful)"


def test_a_piece_that_does_not_return_the_batch_raises_clearly():
    pipe = ConnectorPipelineV2(connectors=[Tag("a"), Forgetful(), Tag("b")])
    with pytest.raises(ValueError, match="Forgetful returned NoneType.*return batch"):
        pipe(rl_module=None, batch={}, episodes=[])
    with pytest.raises(ValueError, match="Forgetful returned NoneType"):
        pipe.timed_call(rl_module=None, batch={}, episodes=[])


def test_timed_call_accumulates_per_piece_times():
    pipe = ConnectorPipelineV2(connectors=[Tag("a"), OtherTag("b")])
    out = pipe.timed_call(rl_module=None, batch={}, episodes=[], shared_data=None)
    assert out == {"trace": ["a", "b"]}
    assert set(pipe.timers) == {"Tag", "OtherTag"} and all(t >= 0 for t in pipe.timers.values())


def test_frame_stacking_piece_changes_the_pipeline_observation_space_on_every_edit():
    pipe = ConnectorPipelineV2(OBS_SPACE, gym.spaces.Discrete(2),
                               connectors=[AddObservationsFromEpisodesToBatch(), BatchIndividualItems()])
    assert pipe.observation_space == OBS_SPACE
    pipe.prepend(FrameStacking(num_frames=3))
    assert pipe.observation_space.shape == (6,)
    assert pipe[1].input_observation_space.shape == (6,)
    pipe.insert_after(FrameStacking, FrameStacking(num_frames=2))  # stacks the stacks: (12,)
    assert pipe.observation_space.shape == (12,)
    pipe.remove("FrameStacking")
    assert pipe.observation_space.shape == (4,)
    pipe.remove(FrameStacking)
    assert pipe.observation_space == OBS_SPACE
    assert pipe.action_space == gym.spaces.Discrete(2)


def test_pipeline_is_itself_a_piece_with_its_output_batch():
    ep = make_episode([o(1, 2), o(3, 4)], [0], [1.0], eid="e")
    pipe = ConnectorPipelineV2(OBS_SPACE, None, connectors=[
        ConnectorPipelineV2(connectors=[AddObservationsFromEpisodesToBatch()]),
        BatchIndividualItems(),
    ])
    out = pipe(rl_module=None, batch={}, episodes=[ep])
    np.testing.assert_array_equal(out["obs"], [[3, 4]])
