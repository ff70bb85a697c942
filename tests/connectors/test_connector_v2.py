"""ConnectorV2's helpers: batch items, in-place changes, episode iteration, output spaces and state."""
import gymnasium as gym
import numpy as np
import pytest
from connector_test_utils import OBS_SPACE, make_episode, o

from relayrl.connectors import BatchIndividualItems, ConnectorPipelineV2, ConnectorV2
from relayrl.connectors.connector_v2 import BatchedNdArray
from relayrl.episodes.single_agent_episode import SingleAgentEpisode


def two_episodes():
    e1 = make_episode([o(1, 1), o(2, 2), o(3, 3)], [0, 1], [1.0, 2.0], eid="e1")
    e2 = make_episode([o(4, 4), o(5, 5)], [2], [3.0], eid="e2")
    return e1, e2


# -- add_batch_item / add_n_batch_items ------------------------------------------------------------
def test_add_batch_item_without_episode_appends_to_a_plain_list():
    batch = {}
    ConnectorV2.add_batch_item(batch, "col", 1)
    ConnectorV2.add_batch_item(batch, "col", 2)
    assert batch == {"col": [1, 2]}


def test_add_batch_item_with_episode_keys_items_by_episode_id_in_order():
    e1, e2 = two_episodes()
    batch = {}
    ConnectorV2.add_batch_item(batch, "obs", "a", e1)
    ConnectorV2.add_batch_item(batch, "obs", "b", e2)
    ConnectorV2.add_batch_item(batch, "obs", "c", e1)
    assert batch == {"obs": {("e1",): ["a", "c"], ("e2",): ["b"]}}
    assert list(batch["obs"]) == [("e1",), ("e2",)]


def test_add_batch_item_multi_agent_sub_episode_key_is_eps_agent_module():
    ep = SingleAgentEpisode("sa", observations=[o(0, 0)], agent_id="a0", module_id="m0",
                            multi_agent_episode_id="ma")
    batch = {}
    ConnectorV2.add_batch_item(batch, "obs", 7, ep)
    assert batch == {"obs": {("ma", "a0", "m0"): [7]}}


def test_add_batch_item_mixing_episode_and_no_episode_raises_clearly():
    e1, _ = two_episodes()
    batch = {}
    ConnectorV2.add_batch_item(batch, "obs", 1)
    with pytest.raises(ValueError, match="not per-episode lists"):
        ConnectorV2.add_batch_item(batch, "obs", 2, e1)
    batch = {}
    ConnectorV2.add_batch_item(batch, "obs", 1, e1)
    with pytest.raises(ValueError, match="not a list"):
        ConnectorV2.add_batch_item(batch, "obs", 2)


def test_add_batch_item_after_batching_raises():
    e1, _ = two_episodes()
    batch = {"obs": np.zeros((3, 2))}
    with pytest.raises(ValueError, match="BatchIndividualItems"):
        ConnectorV2.add_batch_item(batch, "obs", o(1, 1), e1)


def test_add_n_batch_items_with_a_list_adds_each_item():
    e1, _ = two_episodes()
    batch = {}
    ConnectorV2.add_n_batch_items(batch, "rewards", [1.0, 2.0, 3.0], 3, e1)
    assert batch == {"rewards": {("e1",): [1.0, 2.0, 3.0]}}
    with pytest.raises(ValueError, match="expected 2"):
        ConnectorV2.add_n_batch_items(batch, "rewards", [1.0], 2, e1)


def test_add_n_batch_items_with_an_array_adds_one_batched_item():
    e1, _ = two_episodes()
    batch = {}
    ConnectorV2.add_n_batch_items(batch, "obs", np.arange(6).reshape(3, 2), 3, e1)
    (item,) = batch["obs"][("e1",)]
    assert isinstance(item, BatchedNdArray)
    np.testing.assert_array_equal(item, [[0, 1], [2, 3], [4, 5]])
    with pytest.raises(ValueError, match="does not have 4 rows"):
        ConnectorV2.add_n_batch_items(batch, "obs", np.zeros((3, 2)), 4, e1)


def test_add_n_batch_items_with_a_dict_of_arrays_tags_every_leaf():
    e1, _ = two_episodes()
    batch = {}
    ConnectorV2.add_n_batch_items(batch, "obs", {"a": np.zeros((2, 3)), "b": np.arange(2)}, 2, e1)
    (item,) = batch["obs"][("e1",)]
    assert isinstance(item["a"], BatchedNdArray) and isinstance(item["b"], BatchedNdArray)
    out = BatchIndividualItems()(rl_module=None, batch=batch, episodes=[e1])
    assert out["obs"]["a"].shape == (2, 3)
    np.testing.assert_array_equal(out["obs"]["b"], [0, 1])


def test_single_and_batched_items_are_concatenated_in_order():
    e1, e2 = two_episodes()
    batch = {}
    ConnectorV2.add_batch_item(batch, "x", np.array([1.0]), e1)
    ConnectorV2.add_n_batch_items(batch, "x", np.array([[2.0], [3.0]]), 2, e1)
    ConnectorV2.add_batch_item(batch, "x", np.array([4.0]), e2)
    out = BatchIndividualItems()(rl_module=None, batch=batch, episodes=[e1, e2])
    np.testing.assert_array_equal(out["x"], [[1.0], [2.0], [3.0], [4.0]])
    assert type(out["x"]) is np.ndarray


# -- foreach_batch_item_change_in_place -------------------------------------------------------------
def test_foreach_change_in_place_one_column_gets_episode_ids():
    e1, e2 = two_episodes()
    batch = {}
    for ep, v in ((e1, 1), (e2, 2), (e1, 3)):
        ConnectorV2.add_batch_item(batch, "x", v, ep)
    seen = []

    def func(item, eps_id, agent_id, module_id):
        seen.append((item, eps_id, agent_id, module_id))
        return item * 10

    ConnectorV2.foreach_batch_item_change_in_place(batch, "x", func)
    assert batch["x"] == {("e1",): [10, 30], ("e2",): [20]}
    assert seen == [(1, "e1", None, None), (3, "e1", None, None), (2, "e2", None, None)]


def test_foreach_change_in_place_plain_list_column():
    batch = {"x": [1, 2, 3]}
    ConnectorV2.foreach_batch_item_change_in_place(batch, "x", lambda item, e, a, m: (item, e))
    assert batch["x"] == [(1, None), (2, None), (3, None)]


def test_foreach_change_in_place_several_columns_get_and_return_tuples():
    e1, e2 = two_episodes()
    batch = {}
    for ep, obs, rew in ((e1, 1.0, 10.0), (e2, 2.0, 20.0), (e1, 3.0, 30.0)):
        ConnectorV2.add_batch_item(batch, "obs", obs, ep)
        ConnectorV2.add_batch_item(batch, "rewards", rew, ep)

    def swap_and_scale(items, eps_id, agent_id, module_id):
        obs, rew = items
        return rew, obs * (100 if eps_id == "e2" else 1)

    ConnectorV2.foreach_batch_item_change_in_place(batch, ["obs", "rewards"], swap_and_scale)
    assert batch["obs"] == {("e1",): [10.0, 30.0], ("e2",): [20.0]}
    assert batch["rewards"] == {("e1",): [1.0, 3.0], ("e2",): [200.0]}


# -- single_agent_episode_iterator -------------------------------------------------------------------
def test_single_agent_episode_iterator_yields_episodes_in_order():
    e1, e2 = two_episodes()
    assert list(ConnectorV2.single_agent_episode_iterator([e1, e2])) == [e1, e2]
    assert list(ConnectorV2.single_agent_episode_iterator([e2, e1], agents_that_stepped_only=False)) == [e2, e1]
    assert list(ConnectorV2.single_agent_episode_iterator([])) == []


def test_single_agent_episode_iterator_zips_with_a_per_episode_column():
    e1, e2 = two_episodes()
    batch = {}
    for ep, v in ((e1, "a"), (e2, "b"), (e1, "c")):
        ConnectorV2.add_batch_item(batch, "x", v, ep)
    pairs = list(ConnectorV2.single_agent_episode_iterator([e1, e2, e1], zip_with_batch_column=batch["x"]))
    assert pairs == [(e1, "a"), (e2, "b"), (e1, "c")]
    with pytest.raises(ValueError, match="only 2 item"):
        list(ConnectorV2.single_agent_episode_iterator([e1, e1, e1], zip_with_batch_column=batch["x"]))


def test_single_agent_episode_iterator_zips_with_a_plain_list_column():
    e1, e2 = two_episodes()
    pairs = list(ConnectorV2.single_agent_episode_iterator([e1, e2], zip_with_batch_column=["a", "b"]))
    assert pairs == [(e1, "a"), (e2, "b")]
    with pytest.raises(ValueError, match="fewer"):
        list(ConnectorV2.single_agent_episode_iterator([e1, e2], zip_with_batch_column=["a"]))


def test_zip_with_an_already_batched_column_raises():
    e1, _ = two_episodes()
    with pytest.raises(TypeError, match="collect phase"):
        list(ConnectorV2.single_agent_episode_iterator([e1], zip_with_batch_column=np.zeros(1)))


# -- output spaces ------------------------------------------------------------------------------------
class Doubler(ConnectorV2):
    """Output observation space: the input Box repeated twice; records the spaces it was given."""

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        return gym.spaces.Box(np.tile(input_observation_space.low, 2), np.tile(input_observation_space.high, 2),
                              dtype=input_observation_space.dtype)

    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        return batch


class AppendOneHotAction(ConnectorV2):
    """Output observation space depends on the action space (obs dim + number of actions)."""

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        n = input_observation_space.shape[0] + int(input_action_space.n)
        return gym.spaces.Box(-np.inf, np.inf, (n,), np.float32)

    def recompute_output_action_space(self, input_observation_space, input_action_space):
        return gym.spaces.Discrete(int(input_action_space.n) + 1)

    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        return batch


def test_setting_input_space_recomputes_output_space():
    piece = Doubler()
    assert piece.observation_space is None
    piece.input_observation_space = OBS_SPACE
    assert piece.observation_space.shape == (4,)
    assert piece.observation_space.low[2] == OBS_SPACE.low[0]
    assert piece.action_space is None
    piece.input_action_space = gym.spaces.Discrete(2)
    assert piece.action_space == gym.spaces.Discrete(2)  # default: unchanged


def test_output_spaces_chain_through_pipeline_pieces():
    pipe = ConnectorPipelineV2(OBS_SPACE, gym.spaces.Discrete(3),
                               connectors=[Doubler(), AppendOneHotAction(), Doubler()])
    # (2,) -> (4,) -> (4 + 3,) -> (14,); actions Discrete(3) -> Discrete(4)
    assert pipe[0].observation_space.shape == (4,)
    assert pipe[1].input_observation_space.shape == (4,)
    assert pipe[1].observation_space.shape == (7,)
    assert pipe[2].input_observation_space.shape == (7,)
    assert pipe.observation_space.shape == (14,)
    assert pipe.action_space == gym.spaces.Discrete(4)
    assert pipe[2].input_action_space == gym.spaces.Discrete(4)


def test_nested_pipeline_chains_spaces():
    inner = ConnectorPipelineV2(connectors=[Doubler(), Doubler()])
    outer = ConnectorPipelineV2(OBS_SPACE, gym.spaces.Discrete(3), connectors=[inner, AppendOneHotAction()])
    assert inner.observation_space.shape == (8,)
    assert outer.observation_space.shape == (11,)


# -- state -------------------------------------------------------------------------------------------
def test_base_state_methods():
    piece = Doubler()
    assert piece.get_state() == {}
    piece.set_state({"anything": 1})  # no-op
    assert piece.merge_states([{"a": 1}, {"a": 2}]) == {"a": 1}
    assert piece.merge_states([]) == {}


class Counting(ConnectorV2):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.count = 0

    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        self.count += len(episodes)
        return batch

    def get_state(self, components=None, *, not_components=None, **kwargs):
        return {"count": self.count}

    def set_state(self, state):
        self.count = state["count"]

    def merge_states(self, states):
        return {"count": sum(s["count"] for s in states)}


def test_pipeline_state_keyed_by_class_name_and_merged_per_piece():
    e1, e2 = two_episodes()
    pipe = ConnectorPipelineV2(connectors=[Counting(), Doubler(), Counting()])
    pipe(rl_module=None, batch={}, episodes=[e1, e2])
    state = pipe.get_state()
    assert state == {"Counting": {"count": 2}, "Counting_1": {"count": 2}}  # Doubler: empty state omitted
    assert pipe.get_state(components=["Counting_1"]) == {"Counting_1": {"count": 2}}
    assert pipe.get_state(not_components="Counting") == {"Counting_1": {"count": 2}}
    merged = pipe.merge_states([state, {"Counting": {"count": 5}, "Counting_1": {"count": 1}}])
    assert merged == {"Counting": {"count": 7}, "Counting_1": {"count": 3}}
    other = ConnectorPipelineV2(connectors=[Counting(), Doubler(), Counting()])
    other.set_state(merged)
    assert [other[0].count, other[2].count] == [7, 3]
