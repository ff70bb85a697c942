"""Unit tests for SingleAgentEpisode: collection, getters/setters, cut/concat/slice, state."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl.core.columns import Columns
from relayrl.episodes.single_agent_episode import SingleAgentEpisode

OBS_SPACE = gym.spaces.Box(-np.inf, np.inf, (2,), np.float32)
ACT_SPACE = gym.spaces.Discrete(4)


def obs(i):
    return np.array([i, -i], dtype=np.float32)


def make_episode(n=5, *, terminated=False, numpy=False, eid="eps"):
    """o0..on, a_i = i % 4, r_i = i + 1, infos {"i": i}, logp_i = -i."""
    ep = SingleAgentEpisode(eid, observation_space=OBS_SPACE, action_space=ACT_SPACE)
    ep.add_env_reset(obs(0), {"i": 0})
    for i in range(n):
        ep.add_env_step(obs(i + 1), i % 4, float(i + 1), {"i": i + 1},
                        terminated=terminated and i == n - 1, extra_model_outputs={"logp": -float(i)})
    return ep.to_numpy() if numpy else ep


def vals(x):
    return np.asarray(x).tolist()


both = pytest.mark.parametrize("numpy", [False, True])


def test_reset_and_steps():
    ep = SingleAgentEpisode()
    assert len(ep.id_) == 32 and not ep.is_reset and len(ep) == 0
    ep.add_env_reset(obs(0))
    assert ep.is_reset and len(ep) == 0 and ep.t == 0 and ep.get_infos(0) == {}
    ep.add_env_step(obs(1), 1, 0.5)
    ep.add_env_step(obs(2), 2, 1.5, truncated=True)
    assert len(ep) == ep.env_steps() == ep.agent_steps() == 2 and ep.t == 2
    assert ep.is_truncated and not ep.is_terminated and ep.is_done
    assert ep.get_return() == 2.0
    assert repr(ep) == f"SAEps(len=2 done=True R=2.0 id_={ep.id_})"
    ep.validate()


def test_constructor_auto_lookback_and_int_lookback():
    o = [obs(i) for i in range(4)]
    ep = SingleAgentEpisode(observations=o, actions=[0, 1, 2], rewards=[1.0, 2.0, 3.0], t_started=10)
    assert len(ep) == 0 and ep.t == ep.t_started == 10 and ep.observations.lookback == 3
    assert vals(ep.get_observations(-1)) == [3, -3] and vals(ep.get_observations(0)) == [3, -3]
    assert ep.get_rewards() == [] and ep.get_rewards(-1, neg_index_as_lookback=True) == 3.0
    assert ep.get_infos() == [{}]
    ep2 = SingleAgentEpisode(observations=o, actions=[0, 1, 2], rewards=[1.0, 2.0, 3.0], len_lookback_buffer=1)
    assert len(ep2) == 2 and ep2.t == 2
    assert ep2.get_rewards() == [2.0, 3.0] and vals(ep2.get_observations(0)) == [1, -1]
    assert ep2.get_actions(-1, neg_index_as_lookback=True) == 0
    # A lookback longer than the data is capped.
    assert len(SingleAgentEpisode(observations=o, actions=[0, 1, 2], rewards=[1.0, 2.0, 3.0],
                                  len_lookback_buffer=10)) == 0


@both
def test_observation_getters(numpy):
    ep = make_episode(3, numpy=numpy)
    assert vals(ep.get_observations()) == [[i, -i] for i in range(4)]
    assert vals(ep.get_observations(-1)) == [3, -3]
    assert vals(ep.get_observations(1)) == [1, -1]
    assert vals(ep.get_observations([0, -1])) == [[0, 0], [3, -3]]
    assert vals(ep.get_observations(slice(None, -1))) == [[0, 0], [1, -1], [2, -2]]
    assert vals(ep.get_observations(slice(-2, None))) == [[2, -2], [3, -3]]
    with pytest.raises(IndexError):
        ep.get_observations(-1, neg_index_as_lookback=True)  # no lookback
    assert vals(ep.get_observations(-1, neg_index_as_lookback=True, fill=5.0)) == [5, 5]
    filled = ep.get_observations(slice(-2, 2), neg_index_as_lookback=True, fill=0.0)
    assert vals(filled) == [[0, 0], [0, 0], [0, 0], [1, -1]]
    assert isinstance(filled, np.ndarray) == numpy


@both
def test_action_reward_info_extra_getters(numpy):
    ep = make_episode(5, numpy=numpy)
    assert vals(ep.get_actions()) == [0, 1, 2, 3, 0]
    assert ep.get_actions(-1) == 0 and ep.get_actions(2) == 2
    assert vals(ep.get_rewards(slice(1, 3))) == [2.0, 3.0]
    assert vals(ep.get_rewards([-1, 0])) == [5.0, 1.0]
    assert vals(ep.get_rewards(slice(-7, None), fill=0.0)) == [0, 0, 1, 2, 3, 4, 5]
    assert ep.get_rewards(7, fill=-1.0) == -1.0
    with pytest.raises(IndexError):
        ep.get_rewards(5)
    assert ep.get_infos(-1) == {"i": 5} and ep.get_infos([0, 1]) == [{"i": 0}, {"i": 1}]
    assert isinstance(ep.get_infos(), list)  # infos are never numpy'ized
    assert ep.get_infos(-1, neg_index_as_lookback=True, fill={}) == {}
    assert vals(ep.get_extra_model_outputs("logp")) == [0, -1, -2, -3, -4]
    assert ep.get_extra_model_outputs("logp", -1) == -4.0
    assert vals(ep.get_extra_model_outputs("logp", slice(-2, 1), neg_index_as_lookback=True, fill=9.0)) == [9, 9, 0]
    with pytest.raises(KeyError, match="vf_preds"):
        ep.get_extra_model_outputs("vf_preds")


@both
def test_one_hot_actions(numpy):
    ep = make_episode(3, numpy=numpy)
    oh = np.asarray(ep.get_actions(one_hot_discrete=True))
    assert oh.dtype == np.float32 and oh.tolist() == [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]
    assert ep.get_actions(-1, one_hot_discrete=True).tolist() == [0, 0, 1, 0]
    filled = np.asarray(ep.get_actions(slice(-1, 1), neg_index_as_lookback=True, fill=0, one_hot_discrete=True))
    assert filled.tolist() == [[0, 0, 0, 0], [1, 0, 0, 0]]


@both
def test_documented_last_four_observations_left_filled(numpy):
    ep = make_episode(2, numpy=numpy)  # observations o0, o1, o2
    out = ep.get_observations(indices=[-4, -3, -2, -1], fill=0.0)
    assert len(out) == 4
    assert vals(out) == [[0, 0], [0, 0], [1, -1], [2, -2]]
    first = out[0]
    assert first.shape == (2,) and first.dtype == np.float32
    ep.observations.set([obs(7)] * 3)  # make o0 nonzero so the fill is distinguishable
    assert vals(ep.get_observations(indices=[-4, -3], fill=0.0)) == [[0, 0], [7, -7]]


@both
def test_documented_count_based_intrinsic_reward_loop(numpy):
    # RLlib's CountBasedIntrinsicRewards connector: read obs/rewards, write rewards back.
    ep = SingleAgentEpisode(observation_space=OBS_SPACE, action_space=ACT_SPACE)
    ep.add_env_reset(obs(0))
    for o in [1, 0, 1, 1]:
        ep.add_env_step(obs(o), 0, 1.0)
    if numpy:
        ep.to_numpy()
    counts = {}
    observations = ep.get_observations(slice(None, -1))  # o0 .. o3 = 0, 1, 0, 1
    for i, (o, rew) in enumerate(zip(observations, ep.get_rewards())):
        key = tuple(o)
        counts[key] = counts.get(key, 0) + 1
        ep.set_rewards(new_data=rew + 1.0 / counts[key], at_indices=i)
    assert vals(ep.get_rewards()) == [2.0, 2.0, 1.5, 1.5]
    assert ep.get_return() == 7.0


@both
def test_setters(numpy):
    ep = make_episode(3, numpy=numpy)
    ep.set_observations(new_data=obs(9), at_indices=-1)
    assert vals(ep.get_observations(-1)) == [9, -9]
    ep.set_observations(new_data=[obs(5), obs(6)], at_indices=slice(0, 2))
    assert vals(ep.get_observations(slice(0, 3))) == [[5, -5], [6, -6], [2, -2]]
    ep.set_actions(new_data=[3, 3, 3])
    assert vals(ep.get_actions()) == [3, 3, 3]
    ep.set_rewards(new_data=[10.0, 20.0], at_indices=[0, -1])
    assert vals(ep.get_rewards()) == [10.0, 2.0, 20.0]
    ep.set_extra_model_outputs(key="logp", new_data=-0.5, at_indices=1)
    assert vals(ep.get_extra_model_outputs("logp")) == [0.0, -0.5, -2.0]
    with pytest.raises(KeyError, match="'nope'"):
        ep.set_extra_model_outputs(key="nope", new_data=1.0, at_indices=0)
    with pytest.raises(ValueError):
        ep.set_rewards(new_data=[1.0])  # needs one per step
    with pytest.raises(IndexError):
        ep.set_rewards(new_data=1.0, at_indices=3)
    with pytest.raises(TypeError):
        ep.set_rewards([1.0, 2.0, 3.0])  # keyword-only
    ep.validate()


def test_setters_into_lookback():
    ep = make_episode(4).cut(len_lookback_buffer=2)
    ep.set_rewards(new_data=-1.0, at_indices=-1, neg_index_as_lookback=True)
    assert ep.get_rewards(-1, neg_index_as_lookback=True) == -1.0
    assert ep.get_rewards(-2, neg_index_as_lookback=True) == 3.0


def test_to_numpy_types_and_no_more_steps():
    ep = make_episode(3)
    assert not ep.is_numpy
    assert ep.to_numpy() is ep and ep.is_numpy
    assert isinstance(ep.observations.data, np.ndarray) and ep.observations.data.shape == (4, 2)
    assert ep.actions.data.tolist() == [0, 1, 2] and ep.rewards.data.tolist() == [1, 2, 3]
    assert isinstance(ep.extra_model_outputs["logp"].data, np.ndarray)
    assert isinstance(ep.infos.data, list)
    with pytest.raises(AssertionError, match="numpy"):
        ep.add_env_step(obs(4), 0, 1.0)
    assert len(ep) == 3
    empty = SingleAgentEpisode(observation_space=OBS_SPACE, action_space=ACT_SPACE)
    empty.add_env_reset(obs(0))
    empty.to_numpy()
    assert empty.get_actions().shape == (0,) and empty.get_observations().shape == (1, 2)


def test_cut_without_lookback():
    ep = make_episode(3)
    ep.custom_data["hist"] = [1]
    nxt = ep.cut()
    assert nxt.id_ == ep.id_ and len(nxt) == 0 and nxt.t_started == nxt.t == ep.t == 3
    assert vals(nxt.get_observations(-1)) == [3, -3] and vals(nxt.get_observations()) == [[3, -3]]
    assert nxt.get_infos(0) == {"i": 3}
    assert nxt.observations.lookback == 0 and nxt.get_rewards() == []
    with pytest.raises(IndexError):
        nxt.get_rewards(-1, neg_index_as_lookback=True)
    assert nxt.observation_space is OBS_SPACE and nxt.action_space is ACT_SPACE
    nxt.custom_data["hist"].append(2)  # deep copy: predecessor unchanged
    assert ep.custom_data["hist"] == [1]
    assert list(nxt.extra_model_outputs) == ["logp"] and len(nxt.extra_model_outputs["logp"]) == 0


def test_cut_with_lookback():
    ep = make_episode(4)
    nxt = ep.cut(len_lookback_buffer=1)
    assert len(nxt) == 0 and nxt.rewards.lookback == 1 and nxt.observations.lookback == 1
    assert vals(nxt.get_observations(-1)) == [4, -4]
    assert nxt.get_rewards(-1, neg_index_as_lookback=True) == 4.0  # predecessor's last reward
    assert nxt.get_actions(-1, neg_index_as_lookback=True) == 3
    assert vals(nxt.get_observations(-1, neg_index_as_lookback=True)) == [3, -3]
    assert nxt.get_extra_model_outputs("logp", -1, neg_index_as_lookback=True) == -3.0
    nxt.add_env_step(obs(5), 0, 5.0, extra_model_outputs={"logp": -4.0})
    assert vals(nxt.get_rewards(slice(-3, None), neg_index_as_lookback=False)) == [4.0, 5.0]
    assert vals(nxt.get_rewards(slice(-2, 1), neg_index_as_lookback=True, fill=0.0)) == [0.0, 4.0, 5.0]
    # Lookback longer than available data is capped.
    short = make_episode(1).cut(len_lookback_buffer=5)
    assert short.rewards.lookback == 1 and short.observations.lookback == 1
    short.validate()


def test_cut_of_numpy_episode_is_steppable():
    ep = make_episode(3, numpy=True)
    nxt = ep.cut(len_lookback_buffer=2)
    assert not nxt.is_numpy and isinstance(nxt.observations.data, list)
    nxt.add_env_step(obs(4), 1, 4.0, extra_model_outputs={"logp": -3.0})
    assert vals(nxt.get_rewards(slice(-2, 1), neg_index_as_lookback=True)) == [2.0, 3.0, 4.0]


def test_cut_done_episode_raises():
    with pytest.raises(AssertionError, match="done"):
        make_episode(2, terminated=True).cut()


@pytest.mark.parametrize("lookback", [0, 2])
@pytest.mark.parametrize("numpy_first", [False, True])
def test_cut_then_concat_restores_full_episode(lookback, numpy_first):
    ref = make_episode(6, terminated=True)
    ep = SingleAgentEpisode("eps", observation_space=OBS_SPACE, action_space=ACT_SPACE)
    ep.add_env_reset(obs(0), {"i": 0})
    for i in range(3):
        ep.add_env_step(obs(i + 1), i % 4, float(i + 1), {"i": i + 1}, extra_model_outputs={"logp": -float(i)})
    ep.custom_data.update(a=1, b=1)
    nxt = ep.cut(len_lookback_buffer=lookback)
    for i in range(3, 6):
        nxt.add_env_step(obs(i + 1), i % 4, float(i + 1), {"i": i + 1},
                         terminated=i == 5, extra_model_outputs={"logp": -float(i)})
    nxt.custom_data["b"] = 2
    if numpy_first:
        ep.to_numpy()
    ep.concat_episode(nxt)
    assert len(ep) == 6 and ep.t == 6 and ep.is_terminated
    assert vals(ep.get_observations()) == vals(ref.get_observations())
    assert vals(ep.get_actions()) == vals(ref.get_actions())
    assert vals(ep.get_rewards()) == vals(ref.get_rewards())
    assert ep.get_infos() == ref.get_infos()
    assert vals(ep.get_extra_model_outputs("logp")) == vals(ref.get_extra_model_outputs("logp"))
    assert ep.custom_data == {"a": 1, "b": 2}


def test_concat_errors():
    ep = make_episode(3)
    nxt = ep.cut()
    nxt.add_env_step(obs(4), 0, 1.0, extra_model_outputs={"logp": 0.0})
    other_id = SingleAgentEpisode("other", observations=[obs(3)], t_started=3)
    with pytest.raises(AssertionError, match="ids"):
        ep.concat_episode(other_id)
    wrong_t = SingleAgentEpisode("eps", observations=[obs(3)], t_started=2)
    with pytest.raises(AssertionError, match="t_started"):
        ep.concat_episode(wrong_t)
    wrong_obs = SingleAgentEpisode("eps", observations=[obs(8)], t_started=3)
    with pytest.raises(AssertionError, match="observation"):
        ep.concat_episode(wrong_obs)
    done = make_episode(3, terminated=True)
    with pytest.raises(AssertionError, match="done"):
        done.concat_episode(nxt)
    assert len(ep) == 3 and vals(ep.get_observations(-1)) == [3, -3]  # untouched by failed concats


@both
def test_slice(numpy):
    ep = make_episode(6, terminated=True, numpy=numpy)
    sl = ep[1:4]
    assert len(sl) == 3 and sl.t_started == 1 and sl.t == 4 and sl.id_ == ep.id_
    assert vals(sl.get_observations()) == [[1, -1], [2, -2], [3, -3], [4, -4]]
    assert vals(sl.get_actions()) == [1, 2, 3] and vals(sl.get_rewards()) == [2.0, 3.0, 4.0]
    assert sl.get_infos() == [{"i": 1}, {"i": 2}, {"i": 3}, {"i": 4}]
    assert vals(sl.get_extra_model_outputs("logp")) == [-1.0, -2.0, -3.0]
    assert not sl.is_done and sl.observations.lookback == 0 and sl.is_numpy == numpy
    tail = ep[-2:]
    assert tail.t_started == 4 and tail.is_terminated and vals(tail.get_rewards()) == [5.0, 6.0]
    lb = ep.slice(slice(2, 4), len_lookback_buffer=1)
    assert lb.observations.lookback == 1 and lb.get_rewards(-1, neg_index_as_lookback=True) == 2.0
    assert vals(lb.get_observations(-1, neg_index_as_lookback=True)) == [1, -1]
    assert ep.slice(slice(0, 2), len_lookback_buffer=3).observations.lookback == 0  # capped
    empty = ep[3:3]
    assert len(empty) == 0 and vals(empty.get_observations()) == [[3, -3]]
    if numpy:  # sliced data is copied, not a view
        sl.set_rewards(new_data=100.0, at_indices=0)
        assert ep.get_rewards(1) == 2.0


def test_slice_keeps_own_lookback_and_bad_args():
    ep = make_episode(5).cut(len_lookback_buffer=2)
    for i in range(5, 8):
        ep.add_env_step(obs(i + 1), 0, float(i + 1), extra_model_outputs={"logp": 0.0})
    sl = ep[1:]
    assert sl.observations.lookback == 2 and sl.t_started == 6
    assert vals(sl.get_rewards(slice(-2, None), neg_index_as_lookback=False)) == [7.0, 8.0]
    assert vals(sl.get_rewards(slice(-2, 0), neg_index_as_lookback=True)) == [5.0, 6.0]
    with pytest.raises(TypeError, match="slicing"):
        ep[0]
    with pytest.raises(ValueError):
        ep[::2]


@both
def test_get_data_dict(numpy):
    ep = make_episode(3, terminated=True, numpy=numpy)
    d = ep.get_data_dict()
    assert vals(d[Columns.OBS]) == [[0, 0], [1, -1], [2, -2]]
    assert vals(d[Columns.ACTIONS]) == [0, 1, 2] and vals(d[Columns.REWARDS]) == [1, 2, 3]
    assert d[Columns.INFOS] == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert d[Columns.TERMINATEDS].tolist() == [False, False, True]
    assert d[Columns.TRUNCATEDS].tolist() == [False, False, False]
    assert vals(d[Columns.T]) == [0, 1, 2] and d[Columns.EPS_ID] == ["eps"] * 3
    assert vals(d["logp"]) == [0, -1, -2]
    fresh = make_episode(0).get_data_dict()
    assert len(fresh[Columns.TERMINATEDS]) == 0 and len(fresh[Columns.OBS]) == 0


def test_get_return_excludes_lookback_and_duration():
    ep = make_episode(3).cut(len_lookback_buffer=2)
    assert ep.get_return() == 0.0
    ep.add_env_step(obs(4), 0, 10.0, extra_model_outputs={"logp": 0.0}, terminated=True)
    assert ep.get_return() == 10.0
    d = ep.get_duration_s()
    assert d >= 0 and ep.get_duration_s() == d  # frozen once done


def test_custom_data_and_spaces():
    ep = make_episode(2)
    assert ep.custom_data == {}
    ep.custom_data["x"] = 3
    assert ep.custom_data["x"] == 3
    new_space = gym.spaces.Discrete(2)
    ep.action_space = new_space
    assert ep.actions.space is new_space and ep.action_space is new_space
    ep.observation_space = None
    assert ep.observations.space is None


@both
def test_state_roundtrip(numpy):
    ep = make_episode(4, numpy=numpy).cut(len_lookback_buffer=2) if not numpy else make_episode(4, numpy=True)
    if not numpy:
        ep.add_env_step(obs(5), 1, 5.0, {"i": 5}, truncated=True, extra_model_outputs={"logp": -4.0})
    ep.custom_data["k"] = [1, 2]
    ep.agent_id, ep.module_id, ep.multi_agent_episode_id = "a0", "m0", "ma"
    state = ep.get_state()
    back = SingleAgentEpisode.from_state(state)
    assert back.id_ == ep.id_ and (back.agent_id, back.module_id, back.multi_agent_episode_id) == ("a0", "m0", "ma")
    assert len(back) == len(ep) and back.t == ep.t and back.t_started == ep.t_started
    assert back.is_truncated == ep.is_truncated and back.is_terminated == ep.is_terminated
    assert back.is_numpy == numpy and back.observation_space == OBS_SPACE and back.action_space == ACT_SPACE
    for name in ("observations", "infos", "actions", "rewards"):
        assert getattr(back, name) == getattr(ep, name), name
    assert back.extra_model_outputs["logp"] == ep.extra_model_outputs["logp"]
    assert back.custom_data == {"k": [1, 2]} and back.custom_data is not ep.custom_data
    assert vals(back.get_rewards(slice(-1, None), neg_index_as_lookback=True)) == vals(
        ep.get_rewards(slice(-1, None), neg_index_as_lookback=True))


def test_dict_observations_through_to_numpy():
    space = gym.spaces.Dict({"pos": gym.spaces.Box(-10, 10, (2,), np.float32), "id": gym.spaces.Discrete(5)})
    ep = SingleAgentEpisode(observation_space=space, action_space=ACT_SPACE)
    ep.add_env_reset({"pos": np.zeros(2, np.float32), "id": 0})
    for i in range(1, 4):
        ep.add_env_step({"pos": np.full(2, i, np.float32), "id": i}, 0, 1.0)
    assert ep.get_observations(-1)["id"] == 3
    ep.to_numpy()
    o = ep.get_observations()
    assert set(o) == {"pos", "id"} and o["pos"].shape == (4, 2) and o["id"].tolist() == [0, 1, 2, 3]
    last = ep.get_observations(-1)
    assert last["id"] == 3 and last["pos"].tolist() == [3, 3]
    filled = ep.get_observations([-6, -1], fill=0.0)
    assert filled["pos"].tolist() == [[0, 0], [3, 3]] and filled["id"].tolist() == [0, 3]
    oh = ep.get_observations(slice(0, 2), one_hot_discrete=True)
    assert oh["id"].tolist() == [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0]]
    assert ep.get_data_dict()[Columns.OBS]["id"].tolist() == [0, 1, 2]
    nxt = ep.cut(len_lookback_buffer=1)
    assert nxt.get_observations(-1)["id"] == 3 and nxt.get_observations(-1, neg_index_as_lookback=True)["id"] == 2
    nxt.add_env_step({"pos": np.full(2, 4, np.float32), "id": 4}, 0, 1.0)
    ep.concat_episode(nxt)
    assert ep.get_observations()["id"].tolist() == [0, 1, 2, 3, 4]


def test_validation_errors():
    with pytest.raises(AssertionError, match="len"):
        SingleAgentEpisode(observations=[obs(0), obs(1), obs(2)], actions=[0], rewards=[1.0, 2.0])
    with pytest.raises(AssertionError, match="infos"):
        SingleAgentEpisode(observations=[obs(0), obs(1)], infos=[{}], actions=[0], rewards=[1.0])
    with pytest.raises(AssertionError, match="logp"):
        SingleAgentEpisode(observations=[obs(0), obs(1)], actions=[0], rewards=[1.0],
                           extra_model_outputs={"logp": [0.1, 0.2]})
    with pytest.raises(ValueError):
        SingleAgentEpisode(len_lookback_buffer=-1)
    ep = make_episode(1)
    with pytest.raises(AssertionError, match="already been reset"):
        ep.add_env_reset(obs(0))
    with pytest.raises(ValueError, match="vf"):
        ep.add_env_step(obs(2), 0, 1.0, extra_model_outputs={"logp": 0.0, "vf": 1.0})
    with pytest.raises(ValueError, match="logp"):
        ep.add_env_step(obs(2), 0, 1.0)  # key missing from this step
    assert len(ep) == 1 and len(ep.observations) == 2 and len(ep.get_extra_model_outputs("logp")) == 1
    ep.validate()  # failed steps appended nothing
    fresh = make_episode(0)
    fresh.add_env_step(obs(1), 0, 1.0, extra_model_outputs={"vf": 2.0})  # new key at first step: fine
    assert fresh.get_extra_model_outputs("vf") == [2.0]
    done = make_episode(1, terminated=True)
    with pytest.raises(AssertionError, match="done"):
        done.add_env_step(obs(2), 0, 1.0)
    broken = make_episode(2)
    broken.rewards.data.pop()
    with pytest.raises(AssertionError):
        broken.validate()


# -- add_env_steps (several steps at once) ---------------------------------------------------------
def _steps_from(first, n):
    """Steps first..first+n-1 of `make_episode`'s data, as arrays with a leading step axis."""
    idx = np.arange(first, first + n)
    return dict(observations=np.stack([obs(i + 1) for i in idx]), actions=idx % 4,
                rewards=(idx + 1).astype(np.float64), infos=[{"i": int(i) + 1} for i in idx],
                extra_model_outputs={"logp": -idx.astype(np.float64)})


@pytest.mark.parametrize("to_numpy", [False, True])
def test_add_env_steps_equals_one_add_env_step_per_step(to_numpy):
    expected = make_episode(5, terminated=True, numpy=to_numpy)
    ep = make_episode(2)  # two steps one by one, then three at once
    ep.add_env_steps(**_steps_from(2, 3), terminated=True, to_numpy=to_numpy)
    assert ep.is_numpy == to_numpy and ep.is_terminated and len(ep) == 5 and ep.t == 5
    for name in ("observations", "actions", "rewards", "infos"):
        got, want = getattr(ep, name).get(), getattr(expected, name).get()
        if to_numpy and name != "infos":
            assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(ep.get_extra_model_outputs("logp"), expected.get_extra_model_outputs("logp"))


def test_add_env_steps_to_numpy_copies_the_given_arrays():
    ep = SingleAgentEpisode()
    ep.add_env_reset(obs(0))
    steps = _steps_from(0, 2)
    ep.add_env_steps(**steps, to_numpy=True)
    steps["rewards"][:] = -1.0
    steps["actions"][:] = 3
    np.testing.assert_array_equal(ep.get_rewards(), [1.0, 2.0])
    np.testing.assert_array_equal(ep.get_actions(), [0, 1])


def test_add_env_steps_with_different_step_counts_names_them():
    ep = make_episode(1)
    steps = _steps_from(1, 3)
    steps["rewards"] = steps["rewards"][:2]
    with pytest.raises(ValueError, match=r"same number .* 'rewards': 2"):
        ep.add_env_steps(**steps)
    assert len(ep) == 1  # nothing was added


def test_add_env_steps_after_the_end_raises():
    ep = make_episode(2, terminated=True)
    with pytest.raises(AssertionError, match="already done"):
        ep.add_env_steps(**_steps_from(2, 1))
