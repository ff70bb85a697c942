"""SampleBatch / MultiAgentBatch and the postprocessing math, checked against direct loops."""
import numpy as np
import pytest

from relayrl.policy.postprocessing import Postprocessing, compute_advantages, discount_cumsum
from relayrl.policy.sample_batch import MultiAgentBatch, SampleBatch, concat_samples


def _batch(n=5, eps=None):
    return SampleBatch({"obs": np.arange(n * 2, dtype=np.float32).reshape(n, 2), "actions": list(range(n)),
                        "rewards": np.ones(n), "terminateds": [False] * (n - 1) + [True],
                        "truncateds": [False] * n, "eps_id": eps if eps is not None else [7] * n,
                        "infos": [{}] * n})


def test_columns_count_and_constants():
    b = _batch()
    assert len(b) == b.count == b.env_steps() == b.agent_steps() == 5
    assert isinstance(b["actions"], np.ndarray) and isinstance(b["infos"], list)
    assert SampleBatch.NEXT_OBS == "new_obs" and SampleBatch.CUR_OBS == "obs"
    assert (b["dones"] == b["terminateds"]).all()
    with pytest.raises(KeyError, match="terminateds"):
        b["dones"] = np.zeros(5)
    with pytest.raises(KeyError, match="terminateds"):
        SampleBatch(dones=[True])


def test_slice_copy_rows_concat_shuffle():
    b = _batch()
    s = b[1:3]
    assert s.count == 2 and list(s["actions"]) == [1, 2]
    c = b.copy()
    c["rewards"][0] = 99
    assert b["rewards"][0] == 1
    rows = list(b.rows())
    assert len(rows) == 5 and rows[4]["actions"] == 4
    both = concat_samples([b, _batch(3)])
    assert both.count == 8 and list(both["actions"][5:]) == [0, 1, 2]
    assert b.concat(b).count == 10
    with pytest.raises(NotImplementedError):
        SampleBatch.concat_samples([b])
    np.random.seed(0)
    shuffled = b.copy().shuffle()
    order = shuffled["actions"]
    assert sorted(order) == list(range(5)) and list(order) != list(range(5))
    assert (shuffled["obs"][:, 0] == order * 2).all()  # rows move together


def test_split_by_episode():
    b = _batch(6, eps=[1, 1, 2, 2, 2, 3])
    parts = b.split_by_episode()
    assert [p.count for p in parts] == [2, 3, 1]
    no_ids = SampleBatch({"rewards": np.ones(5), "terminateds": [0, 1, 0, 0, 1], "truncateds": [0] * 5})
    assert [p.count for p in no_ids.split_by_episode()] == [2, 3]


def test_multi_agent_batch():
    ma = MultiAgentBatch({"a": _batch(3), "b": _batch(4)}, env_steps=4)
    assert ma.env_steps() == 4 and ma.agent_steps() == 7 and ma["a"].count == 3
    both = concat_samples([ma, _batch(2).as_multi_agent()])
    assert both.env_steps() == 6 and set(both.policy_batches) == {"a", "b", "default_policy"}
    assert MultiAgentBatch.wrap_as_needed({"default_policy": _batch(2)}, 2).count == 2


def _returns_loop(rewards, gamma, last_r):
    out, running = [], last_r
    for r in reversed(rewards):
        running = r + gamma * running
        out.append(running)
    return out[::-1]


def test_discount_cumsum_matches_loop():
    x = np.random.default_rng(0).normal(size=20)
    np.testing.assert_allclose(discount_cumsum(x, 0.9), _returns_loop(x, 0.9, 0.0))


def test_compute_advantages_all_modes():
    rng = np.random.default_rng(1)
    r, v = rng.normal(size=10), rng.normal(size=10)
    gamma, lam, last_r = 0.95, 0.9, 0.7
    plain = compute_advantages(SampleBatch(rewards=r), 0.0, gamma, use_gae=False, use_critic=False)
    np.testing.assert_allclose(plain[Postprocessing.ADVANTAGES], _returns_loop(r, gamma, 0.0), rtol=1e-5)
    assert plain[Postprocessing.ADVANTAGES].dtype == np.float32
    critic = compute_advantages(SampleBatch(rewards=r, vf_preds=v), last_r, gamma, use_gae=False)
    np.testing.assert_allclose(critic["value_targets"], _returns_loop(r, gamma, last_r), rtol=1e-5)
    np.testing.assert_allclose(critic["advantages"], np.array(_returns_loop(r, gamma, last_r)) - v, rtol=1e-4)
    gae = compute_advantages(SampleBatch(rewards=r, vf_preds=v), last_r, gamma, lam)
    values = list(v) + [last_r]
    expected, running = [], 0.0
    for t in reversed(range(10)):
        running = r[t] + gamma * values[t + 1] - values[t] + gamma * lam * running
        expected.append(running)
    np.testing.assert_allclose(gae["advantages"], expected[::-1], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gae["value_targets"], np.array(expected[::-1]) + v, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="GAE"):
        compute_advantages(SampleBatch(rewards=r, vf_preds=v), 0.0, use_gae=True, use_critic=False)
    with pytest.raises(KeyError, match="vf_preds"):
        compute_advantages(SampleBatch(rewards=r), 0.0)
