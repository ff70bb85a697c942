import copy
import json
import math
import pickle
import time

import numpy as np
import pytest

from relayrl.metrics.metrics_logger import STATS_MARKER, MetricsLogger
from relayrl.metrics.stats import Stats


def ema(values, c):
    # Reference EMA: first value initialises, then new = (1 - c) * old + c * value.
    out = values[0]
    for v in values[1:]:
        out = (1 - c) * out + c * v
    return out


# --- reduce modes ----------------------------------------------------------------------


def test_mean_default_is_ema_001():
    m = MetricsLogger()
    for v in [10.0, 20.0, 30.0]:
        m.log_value("loss", v)
    assert m.peek("loss") == pytest.approx(ema([10.0, 20.0, 30.0], 0.01), abs=1e-12)
    assert m.peek("loss") == pytest.approx(10.1 * 0.99 + 0.3, abs=1e-12)  # 10 -> 10.1 -> 10.299


def test_ema_exact_numbers():
    m = MetricsLogger()
    for v in [1.0, 2.0, 3.0]:
        m.log_value("x", v, ema_coeff=0.5)
    assert m.peek("x") == 2.25  # 1 -> 1.5 -> 2.25
    m.log_value("x", 4)
    assert m.peek("x") == 3.125
    assert m.reduce() == {"x": 3.125}
    assert m.peek("x") == 3.125  # EMA survives reduce unless clear_on_reduce


def test_mean_window():
    m = MetricsLogger()
    for v in [1, 2, 3, 4, 5]:
        m.log_value("r", v, window=3)
    assert m.peek("r") == 4.0
    assert m.reduce() == {"r": 4.0}
    m.log_value("r", 10)
    assert m.peek("r") == pytest.approx((4 + 5 + 10) / 3)
    assert m.get_state()["stats"][0]["values"] == [4, 5, 10]  # only last `window` kept


@pytest.mark.parametrize(
    "reduce,window,expected",
    [
        ("min", None, -2),
        ("max", None, 7),
        ("sum", None, 17),
        ("min", 2, 3),
        ("max", 2, 4),
        ("sum", 2, 7),
    ],
)
def test_min_max_sum(reduce, window, expected):
    m = MetricsLogger()
    for v in [5, 7, -2, 3, 4]:
        m.log_value("k", v, reduce=reduce, window=window)
    assert m.peek("k") == expected
    assert m.reduce() == {"k": expected}
    assert m.peek("k") == expected  # no clear_on_reduce: unchanged


def test_min_max_lifetime_vs_clear():
    m = MetricsLogger()
    m.log_value("lo", 3, reduce="min")
    m.log_value("lo_c", 3, reduce="min", clear_on_reduce=True)
    m.reduce()
    m.log_value("lo", 5)
    m.log_value("lo_c", 5)
    assert m.reduce() == {"lo": 3, "lo_c": 5}
    assert math.isnan(m.peek("lo_c"))


def test_sum_clear_on_reduce_vs_lifetime():
    m = MetricsLogger()
    m.log_value("steps", 10, reduce="sum", clear_on_reduce=True)
    m.log_value("steps_lifetime", 10, reduce="sum")
    m.log_value("steps", 5)
    m.log_value("steps_lifetime", 5)
    assert m.reduce() == {"steps": 15, "steps_lifetime": 15}
    assert m.peek("steps") == 0  # next period starts at 0
    m.log_value("steps", 1)
    m.log_value("steps_lifetime", 1)
    assert m.reduce() == {"steps": 1, "steps_lifetime": 16}


def test_reduce_none_collects_and_clears():
    m = MetricsLogger()
    m.log_value("ret", 1.0, reduce=None)
    m.log_value("ret", np.float32(2.5))
    out = m.reduce()
    assert out == {"ret": [1.0, 2.5]}
    assert type(out["ret"][1]) is float
    assert m.reduce() == {"ret": []}  # cleared by default when no window


def test_reduce_none_window_keeps_last_n():
    m = MetricsLogger()
    for v in range(5):
        m.log_value("ret", v, reduce=None, window=3)
    assert m.reduce() == {"ret": [2, 3, 4]}
    assert m.reduce() == {"ret": [2, 3, 4]}  # windowed lists are not cleared by default


def test_reduce_none_explicit_no_clear():
    m = MetricsLogger()
    m.log_value("ret", 1, reduce=None, clear_on_reduce=False)
    m.reduce()
    m.log_value("ret", 2)
    assert m.reduce() == {"ret": [1, 2]}


def test_ema_clear_on_reduce_and_empty_values():
    m = MetricsLogger()
    m.log_value("x", 4.0, ema_coeff=0.1, clear_on_reduce=True)
    assert m.reduce() == {"x": 4.0}
    assert math.isnan(m.peek("x"))
    m.log_value("x", 8.0)
    assert m.peek("x") == 8.0  # re-initialised by the first new value


def test_settings_fixed_by_first_call():
    m = MetricsLogger()
    m.log_value("k", 1, reduce="sum")
    m.log_value("k", 2, reduce="max", window=1)  # later settings are ignored
    assert m.peek("k") == 3


def test_torch_scalar_tensor_values():
    torch = pytest.importorskip("torch")
    m = MetricsLogger()
    m.log_value("loss", torch.tensor(2.0), reduce="sum")
    m.log_value("loss", torch.tensor(3))
    out = m.reduce()
    assert out == {"loss": 5.0}
    assert type(out["loss"]) is float


def test_non_numeric_value_with_numeric_reduce_raises():
    m = MetricsLogger()
    with pytest.raises(TypeError, match="'k'"):
        m.log_value("k", "abc", reduce="sum")


# --- errors ----------------------------------------------------------------------------


def test_bad_reduce_lists_allowed_values():
    m = MetricsLogger()
    with pytest.raises(ValueError) as e:
        m.log_value("k", 1.0, reduce="avg")
    msg = str(e.value)
    assert "'avg'" in msg
    for allowed in ("'mean'", "'min'", "'max'", "'sum'", "None"):
        assert allowed in msg
    assert "k" not in m  # nothing half-created


def test_ema_with_window_raises():
    m = MetricsLogger()
    with pytest.raises(ValueError, match="mutually exclusive"):
        m.log_value("k", 1.0, window=10, ema_coeff=0.1)
    with pytest.raises(ValueError, match="reduce='mean'"):
        m.log_value("k", 1.0, reduce="sum", ema_coeff=0.1)
    with pytest.raises(ValueError):
        m.log_value("k", 1.0, window=0)


def test_key_both_leaf_and_group_raises():
    m = MetricsLogger()
    m.log_value(("a", "b"), 1.0)
    with pytest.raises(ValueError):
        m.log_value("a", 1.0)
    with pytest.raises(ValueError):
        m.log_value(("a", "b", "c"), 1.0)


# --- keys, log_dict, log_time, peek ----------------------------------------------------


def test_nested_and_tuple_keys():
    m = MetricsLogger()
    m.log_value(("learners", "default_policy", "loss"), 1.0, window=2)
    m.log_value(("learners", "default_policy", "loss"), 3.0)
    m.log_value(("learners", "num_updates"), 2, reduce="sum")
    m.log_value("top", 5, reduce="max")
    expected = {"learners": {"default_policy": {"loss": 2.0}, "num_updates": 2}, "top": 5}
    assert m.peek() == expected
    assert m.peek("learners") == {"default_policy": {"loss": 2.0}, "num_updates": 2}
    assert m.peek(("learners", "default_policy")) == {"loss": 2.0}
    assert m.peek("learners/default_policy/loss") == 2.0  # "/" path fallback
    assert ("learners", "default_policy", "loss") in m
    assert "learners" in m and ("learners", "default_policy") in m
    assert "nope" not in m and ("learners", "nope") not in m
    assert m.reduce() == expected


def test_log_dict():
    m = MetricsLogger()
    m.log_dict({"a": 1.0, "b": {"c": 2, "d": 3}}, key="runner", reduce="sum")
    m.log_dict({"a": 4.0, "b": {"c": 5, "d": 6}}, key="runner")
    assert m.peek("runner") == {"a": 5.0, "b": {"c": 7, "d": 9}}
    m.log_dict({"x": np.int64(7)}, reduce="max", window=5)
    assert m.peek("x") == 7 and type(m.peek("x")) is int


@pytest.mark.parametrize("settings", [dict(reduce="mean", window=3), dict(reduce="mean"), dict(reduce="min", window=2),
                                      dict(reduce="sum"), dict(reduce=None)])
def test_log_values_is_log_value_per_value(settings):
    values = [3.0, np.float32(1.5), 7, np.int64(2), 0.25]
    one_by_one, together = MetricsLogger(), MetricsLogger()
    for value in values:
        one_by_one.log_value("k", value, **settings)
    together.log_values("k", values, **settings)
    assert together.reduce_for_merge() == one_by_one.reduce_for_merge()
    assert together.peek("k") == one_by_one.peek("k")


def test_log_values_nothing_creates_no_key_and_bad_values_name_the_key():
    m = MetricsLogger()
    m.log_values("empty", [], reduce="max", window=4)
    assert "empty" not in m
    with pytest.raises(TypeError, match="'returns'"):
        m.log_values("returns", [1.0, "two"], reduce="mean", window=5)


def test_log_time():
    m = MetricsLogger()
    with m.log_time(("timers", "sleep"), reduce="sum"):
        time.sleep(0.01)
    with m.log_time(("timers", "sleep")):
        time.sleep(0.01)
    assert m.peek(("timers", "sleep")) >= 0.018
    with pytest.raises(RuntimeError):
        with m.log_time("failed", window=5):
            raise RuntimeError("boom")
    assert "failed" not in m  # a failing block is not timed


def test_peek_does_not_mutate():
    m = MetricsLogger()
    m.log_value("s", 3, reduce="sum", clear_on_reduce=True)
    m.log_value("l", 1, reduce=None)
    m.log_value("e", 2.0)
    before = json.dumps(m.get_state())
    for _ in range(3):
        assert m.peek() == {"s": 3, "l": [1], "e": 2.0}
    m.peek("l").append(99)  # returned lists are copies
    assert json.dumps(m.get_state()) == before
    assert m.reduce() == {"s": 3, "l": [1], "e": 2.0}


def test_peek_missing_key():
    m = MetricsLogger()
    with pytest.raises(KeyError, match="missing_key"):
        m.peek("missing_key")
    assert m.peek("missing_key", default=0.0) == 0.0
    assert m.peek(("a", "b"), default=None) is None


def test_reduce_subkey_only_clears_that_subtree():
    m = MetricsLogger()
    m.log_value(("a", "n"), 1, reduce="sum", clear_on_reduce=True)
    m.log_value(("b", "n"), 2, reduce="sum", clear_on_reduce=True)
    assert m.reduce("a") == {"n": 1}
    assert m.reduce(("b", "n")) == 2
    assert m.peek() == {"a": {"n": 0}, "b": {"n": 0}}
    with pytest.raises(KeyError):
        m.reduce("c")


def test_set_value_delete_reset():
    m = MetricsLogger()
    m.log_value("s", 5, reduce="sum")
    m.set_value("s", 100)
    assert m.peek("s") == 100
    m.set_value("new", 7.0, window=3)
    m.log_value("new", 9.0)
    assert m.peek("new") == 8.0
    m.log_value("lst", 1, reduce=None)
    m.set_value("lst", [4, 5])
    assert m.peek("lst") == [4, 5]

    m.log_value(("g", "a"), 1.0)
    m.log_value(("g", "b"), 2.0)
    m.delete("g", "a")
    assert ("g", "a") not in m and ("g", "b") in m
    m.delete("g")
    assert "g" not in m
    with pytest.raises(KeyError):
        m.delete("g")
    m.delete("g", key_error=False)
    m.log_value("g", 3.0)  # "g" may now be a leaf
    m.reset()
    assert m.peek() == {} and "s" not in m


# --- merging ---------------------------------------------------------------------------


def _two_children(reduce, a_values, b_values, **kw):
    a, b = MetricsLogger(), MetricsLogger()
    for v in a_values:
        a.log_value("k", v, reduce=reduce, **kw)
    for v in b_values:
        b.log_value("k", v, reduce=reduce, **kw)
    return a, b


@pytest.mark.parametrize(
    "reduce,expected",
    [("mean", 4.0), ("min", 1), ("max", 8), ("sum", 18)],
)
def test_merge_reduced_dicts_each_mode(reduce, expected):
    # child a reduces to mean 2 / min 1 / max 3 / sum 6, child b to 6 / 4 / 8 / 12
    a, b = _two_children(reduce, [1, 2, 3], [4, 8], window=10)
    parent = MetricsLogger()
    parent.merge_and_log_n_dicts([a.reduce(), b.reduce()], key="env_runners", reduce=reduce)
    assert parent.peek(("env_runners", "k")) == expected


def test_merge_reduced_lists_concatenate():
    a, b = _two_children(None, [1, 2], [3])
    parent = MetricsLogger()
    parent.merge_and_log_n_dicts([a.reduce(), b.reduce()])  # reduce="mean" default
    assert parent.peek("k") == [1, 2, 3]  # lists -> reduce=None for a new key
    assert parent.reduce() == {"k": [1, 2, 3]}
    assert parent.reduce() == {"k": []}


def test_merge_reduced_dicts_uses_existing_settings_and_skips_nan():
    parent = MetricsLogger()
    parent.log_value("k", 100, reduce="max")
    parent.merge_and_log_n_dicts([{"k": 3.0}, {"k": 200.0}, {"k": float("nan")}], reduce="mean")
    assert parent.peek("k") == 200.0
    # A "mean" key with a window averages children and then windows over merges.
    parent.merge_and_log_n_dicts([{"m": 1.0}, {"m": 3.0}], window=2)
    parent.merge_and_log_n_dicts([{"m": 5.0}, {"m": float("nan")}])
    assert parent.peek("m") == 3.5  # mean(2.0, 5.0)
    # A new "mean" key without window: EMA(0.01) over per-merge means.
    parent.merge_and_log_n_dicts([{"e": 1.0}, {"e": 3.0}])
    parent.merge_and_log_n_dicts([{"e": 6.0}, {"e": 6.0}])
    assert parent.peek("e") == pytest.approx(0.99 * 2.0 + 0.01 * 6.0, abs=1e-12)


def test_merge_exact_windowed_mean_via_reduce_for_merge():
    a, b = _two_children("mean", [1.0, 2.0, 3.0], [10.0], window=100)
    parent = MetricsLogger()
    parent.merge_and_log_n_dicts([a.reduce_for_merge(), b.reduce_for_merge()], key="env_runners")
    # Exact: (1+2+3+10)/4 = 4, not the mean of means (2+10)/2 = 6.
    assert parent.peek(("env_runners", "k")) == 4.0

    # Next iteration: only new values travel; the parent window spans both iterations.
    a.log_value("k", 4.0)
    parent.merge_and_log_n_dicts([a.reduce_for_merge(), b.reduce_for_merge()], key="env_runners")
    assert parent.peek(("env_runners", "k")) == 4.0  # (1+2+3+10+4)/5
    assert parent.get_state()["stats"][0]["window"] == 100  # child's settings travelled


def test_reduce_for_merge_window_truncates_across_children():
    a, b = _two_children("mean", [1.0, 2.0, 3.0], [10.0, 20.0], window=3)
    parent = MetricsLogger()
    parent.merge_and_log_n_dicts([a.reduce_for_merge(), b.reduce_for_merge()])
    assert parent.peek("k") == 11.0  # last 3 of [1, 2, 3, 10, 20]


def test_reduce_for_merge_lifetime_sum_counts_once():
    a, b = _two_children("sum", [5, 5], [7])
    parent = MetricsLogger()
    parent.merge_and_log_n_dicts([a.reduce_for_merge(), b.reduce_for_merge()])
    assert parent.peek("k") == 17
    a.log_value("k", 1)
    parent.merge_and_log_n_dicts([a.reduce_for_merge(), b.reduce_for_merge()])
    assert parent.peek("k") == 18  # children's lifetime totals (11, 7) not re-added
    assert a.peek("k") == 11


def test_reduce_for_merge_other_modes():
    # min/max, per-period sum, lists, EMA.
    for reduce, kw, expected in [
        ("min", {}, -1),
        ("max", {"clear_on_reduce": True}, 9),
        ("sum", {"clear_on_reduce": True}, 14),
        (None, {}, [3, -1, 9, 3]),
        ("mean", {"ema_coeff": 0.5}, ema([3, -1, 9, 3], 0.5)),
    ]:
        a, b = _two_children(reduce, [3, -1], [9, 3], **kw)
        parent = MetricsLogger()
        parent.merge_and_log_n_dicts([a.reduce_for_merge(), b.reduce_for_merge()])
        assert parent.peek("k") == expected, reduce


def test_reduce_for_merge_is_a_reduce_and_json_safe():
    child = MetricsLogger()
    child.log_value(("runner", "steps"), 3, reduce="sum", clear_on_reduce=True)
    rec = child.reduce_for_merge()
    assert json.loads(json.dumps(rec)) == rec
    leaf = rec["runner"]["steps"]
    assert leaf[STATS_MARKER] is True and leaf["values"] == [3] and leaf["reduce"] == "sum"
    assert child.peek(("runner", "steps")) == 0  # clear_on_reduce applied
    # Nothing new -> empty values; the parent still learns the key.
    parent = MetricsLogger()
    parent.merge_and_log_n_dicts([child.reduce_for_merge()])
    assert parent.peek(("runner", "steps")) == 0


# --- state -----------------------------------------------------------------------------


def _populated():
    m = MetricsLogger()
    m.log_value("ema", 1.0, ema_coeff=0.5)
    m.log_value("ema", 3.0)
    m.log_value(("w", "mean"), 1, window=2)
    m.log_value(("w", "mean"), 2)
    m.log_value(("w", "mean"), 6)
    m.log_value("life", 4, reduce="sum")
    m.log_value("lo", 2, reduce="min")
    m.log_value("lst", 1.5, reduce=None)
    return m


def test_get_state_set_state_round_trip():
    m = _populated()
    m.reduce()
    m.log_value("life", 1)
    m.log_value("ema", 5.0)
    state = m.get_state()
    restored = MetricsLogger()
    restored.set_state(json.loads(json.dumps(state)))
    assert restored.peek() == m.peek() == {
        "ema": 3.5,
        "w": {"mean": 4.0},
        "life": 5,
        "lo": 2,
        "lst": [],
    }
    # Pending (since-last-reduce) values survive too.
    assert restored.reduce_for_merge() == m.reduce_for_merge()
    # Settings survive: later logs behave identically.
    for logger in (m, restored):
        logger.log_value(("w", "mean"), 10)
        logger.log_value("lst", 2)
    assert restored.reduce() == m.reduce()


def test_pickle_and_deepcopy():
    m = _populated()
    for clone in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert clone.peek() == m.peek()
        clone.log_value(("w", "mean"), 100)
        assert clone.peek(("w", "mean")) == 53.0
        assert m.peek(("w", "mean")) == 4.0


def test_stats_standalone():
    s = Stats("max", window=2)
    for v in [5, 1, 2]:
        s.push(v)
    assert s.peek() == 2 and s.pending() == [1, 2]
    assert Stats.from_state(s.get_state()).peek() == 2
    assert type(Stats()).__name__ != "Stats"  # dispatched to a mode implementation
