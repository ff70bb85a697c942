"""RLModule / MultiRLModule / RLModuleSpec / DefaultModelConfig API."""
import dataclasses

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.modules.default_model_config import DefaultModelConfig
from relayrl.modules.distributions import TorchCategorical, TorchDiagGaussian
from relayrl.modules.multi_rl_module import MultiRLModule
from relayrl.modules.partial_module_state import partial_module_states
from relayrl.modules.rl_module import RLModule
from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec

OBS = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
ACT = gym.spaces.Discrete(2)


class Recorder(RLModule):
    """Records which _forward* implementation ran."""

    def setup(self):
        self.calls = []
        self.setup_calls = getattr(self, "setup_calls", 0) + 1
        self.net = nn.Linear(3, 2)

    def _forward(self, batch, **kwargs):
        self.calls.append(("_forward", kwargs))
        return {Columns.ACTION_DIST_INPUTS: self.net(batch[Columns.OBS])}


class SplitRecorder(Recorder):
    def _forward_inference(self, batch, **kwargs):
        self.calls.append("inference")
        return {"which": "inference"}

    def _forward_exploration(self, batch, **kwargs):
        self.calls.append("exploration")
        return {"which": "exploration"}

    def _forward_train(self, batch, **kwargs):
        self.calls.append("train")
        return {"which": "train"}


def _batch(n=4):
    return {Columns.OBS: torch.zeros(n, 3)}


def _module(cls=Recorder, **kw):
    return cls(observation_space=OBS, action_space=ACT, **kw)


def test_forward_methods_default_to_forward():
    m = _module()
    assert m.setup_calls == 1
    for fn in (m.forward_inference, m.forward_exploration, m.forward_train):
        out = fn(_batch(), extra=1)
        assert out[Columns.ACTION_DIST_INPUTS].shape == (4, 2)
    assert m.calls == [("_forward", {"extra": 1})] * 3
    # nn.Module.__call__ runs the train pass.
    m(_batch())
    assert len(m.calls) == 4


def test_forward_methods_dispatch_to_specific_implementations():
    m = _module(SplitRecorder)
    assert m.forward_inference(_batch())["which"] == "inference"
    assert m.forward_exploration(_batch())["which"] == "exploration"
    assert m.forward_train(_batch())["which"] == "train"
    assert m.calls == ["inference", "exploration", "train"]


def test_base_forward_returns_empty_dict():
    m = RLModule(observation_space=OBS, action_space=ACT)
    assert m.forward_inference(_batch()) == {}


def test_forward_train_raises_on_inference_only():
    m = _module(inference_only=True)
    assert m.inference_only
    m.forward_inference(_batch())
    with pytest.raises(RuntimeError, match="inference"):
        m.forward_train(_batch())


def test_unknown_ctor_kwargs_raise():
    with pytest.raises(TypeError, match="bogus"):
        _module(bogus=1)


def test_default_action_dist_classes():
    assert _module().get_train_action_dist_cls() is TorchCategorical
    box = Recorder(observation_space=OBS, action_space=gym.spaces.Box(-1, 1, (2,)))
    assert box.get_inference_action_dist_cls() is TorchDiagGaussian
    weird = Recorder(observation_space=OBS, action_space=gym.spaces.MultiBinary(3))
    with pytest.raises(NotImplementedError, match="MultiBinary"):
        weird.get_exploration_action_dist_cls()


def test_model_config_dataclass_becomes_dict():
    m = _module(model_config=DefaultModelConfig(fcnet_hiddens=[7]))
    assert isinstance(m.model_config, dict) and m.model_config["fcnet_hiddens"] == [7]


def test_get_state_set_state_round_trip_numpy():
    torch.manual_seed(0)
    a, b = _module(), _module()
    state = a.get_state()
    assert set(state) == {"net.weight", "net.bias"}
    assert all(isinstance(v, np.ndarray) for v in state.values())
    assert not np.array_equal(state["net.weight"], b.get_state()["net.weight"])
    b.set_state(state)
    for k, v in b.get_state().items():
        np.testing.assert_array_equal(v, state[k])
    x = torch.randn(5, 3)
    torch.testing.assert_close(a.forward_inference({Columns.OBS: x})[Columns.ACTION_DIST_INPUTS],
                               b.forward_inference({Columns.OBS: x})[Columns.ACTION_DIST_INPUTS])
    # get_state returns copies: changing the module later does not change the saved state.
    with torch.no_grad():
        a.net.weight.add_(1.0)
    assert not np.array_equal(a.get_state()["net.weight"], state["net.weight"])
    # Tensors are accepted too.
    b.set_state({k: torch.from_numpy(v) for k, v in state.items()})


def test_set_state_with_missing_or_unknown_keys_raises():
    m = _module()
    state = m.get_state()
    with pytest.raises(KeyError, match="net.bias"):
        m.set_state({"net.weight": state["net.weight"]})
    with pytest.raises(KeyError, match="foo"):
        m.set_state({**state, "foo": np.zeros(1)})
    with partial_module_states(), pytest.raises(KeyError, match="foo"):
        m.set_state({**state, "foo": np.zeros(1)})
    with partial_module_states(), pytest.raises(KeyError, match="net.weight"):
        m.set_state({})


def test_set_state_with_part_of_the_weights_sets_that_part_and_warns_when_loading_by_path(caplog):
    """RLlib's `strict=False`, only inside partial_module_states() (load_state_path, restore_from_path of a
    module's component): a trained module's weights loaded into a subclass that adds a head."""
    m = _module()
    bias = m.get_state()["net.bias"]
    weight = np.full_like(m.get_state()["net.weight"], 0.5)
    with caplog.at_level("WARNING", logger="relayrl"), partial_module_states():
        m.set_state({"net.weight": weight})
    np.testing.assert_array_equal(m.get_state()["net.weight"], weight)
    np.testing.assert_array_equal(m.get_state()["net.bias"], bias)
    assert "net.bias" in caplog.text


def test_initial_state_and_stateful():
    m = _module()
    assert m.get_initial_state() == {} and not m.is_stateful()


# -- RLModuleSpec -------------------------------------------------------------------------
def test_spec_build_passes_everything_to_ctor():
    spec = RLModuleSpec(module_class=Recorder, observation_space=OBS, action_space=ACT, inference_only=True,
                        model_config=DefaultModelConfig(fcnet_hiddens=[5]))
    m = spec.build()
    assert isinstance(m, Recorder)
    assert m.observation_space == OBS and m.action_space == ACT and m.inference_only
    assert m.model_config["fcnet_hiddens"] == [5]
    back = RLModuleSpec.from_module(m)
    assert back.module_class is Recorder and back.inference_only and back.observation_space == OBS


def test_spec_build_errors():
    with pytest.raises(ValueError, match="module_class"):
        RLModuleSpec(observation_space=OBS, action_space=ACT).build()
    with pytest.raises(ValueError, match="observation_space"):
        RLModuleSpec(module_class=Recorder, action_space=ACT).build()
    with pytest.raises(ValueError, match="action_space"):
        RLModuleSpec(module_class=Recorder, observation_space=OBS).build()


def test_spec_update_and_dict_round_trip():
    spec = RLModuleSpec(module_class=Recorder)
    spec.update(RLModuleSpec(observation_space=OBS, action_space=ACT))
    assert spec.module_class is Recorder and spec.observation_space == OBS
    spec.update(RLModuleSpec(module_class=SplitRecorder), override=False)
    assert spec.module_class is Recorder
    spec.update(RLModuleSpec(module_class=SplitRecorder))
    assert spec.module_class is SplitRecorder
    assert RLModuleSpec.from_dict(spec.to_dict()) == spec
    multi = spec.as_multi_rl_module_spec()
    assert isinstance(multi, MultiRLModuleSpec) and multi.rl_module_specs[DEFAULT_MODULE_ID] is spec


# -- MultiRLModule -------------------------------------------------------------------------
def _multi():
    spec = MultiRLModuleSpec(rl_module_specs={
        "a": RLModuleSpec(module_class=Recorder, observation_space=OBS, action_space=ACT),
        "b": RLModuleSpec(module_class=SplitRecorder, observation_space=OBS, action_space=ACT),
    })
    return spec.build()


def test_multi_rl_module_build_and_forward():
    multi = _multi()
    assert isinstance(multi, MultiRLModule)
    assert set(multi.keys()) == {"a", "b"} and len(multi) == 2 and "a" in multi and "c" not in multi
    out = multi.forward_exploration({"a": _batch(2), "b": _batch(3)})
    assert out["a"][Columns.ACTION_DIST_INPUTS].shape == (2, 2)
    assert out["b"] == {"which": "exploration"}
    # Only modules present in the batch run.
    assert set(multi.forward_train({"b": _batch()})) == {"b"}
    # Parameters of sub-modules are registered (the optimizer sees them).
    assert len(list(multi.parameters())) == 4
    # Building one sub-module from the spec.
    assert isinstance(MultiRLModuleSpec(rl_module_specs={"a": RLModuleSpec(
        module_class=Recorder, observation_space=OBS, action_space=ACT)}).build("a"), Recorder)


def test_multi_rl_module_add_remove_getitem_errors():
    multi = _multi()
    c = _module()
    multi.add_module("c", c)
    assert multi["c"] is c and multi.get("c") is c and multi.get("zzz", 5) == 5
    with pytest.raises(ValueError, match="override"):
        multi.add_module("c", _module())
    d = _module()
    multi.add_module("c", d, override=True)
    assert multi["c"] is d
    multi.remove_module("c")
    assert "c" not in multi
    with pytest.raises(KeyError, match="c"):
        multi.remove_module("c")
    multi.remove_module("c", raise_err_if_not_found=False)
    with pytest.raises(KeyError, match="existing"):
        multi["nope"]


def test_multi_rl_module_foreach_module():
    multi = _multi()
    names = multi.foreach_module(lambda mid, m, suffix="": type(m).__name__ + suffix, suffix="!")
    assert names == ["Recorder!", "SplitRecorder!"]
    as_dict = multi.foreach_module(lambda mid, m: mid * 2, return_dict=True)
    assert as_dict == {"a": "aa", "b": "bb"}


def test_multi_rl_module_state_round_trip():
    torch.manual_seed(0)
    m1, m2 = _multi(), _multi()
    state = m1.get_state()
    assert set(state) == {"a", "b"}
    assert set(m1.get_state(components="a")) == {"a"}
    m2.set_state(state)
    for mid in ("a", "b"):
        for k, v in m2.get_state()[mid].items():
            np.testing.assert_array_equal(v, state[mid][k])
    with pytest.raises(KeyError):
        m2.set_state({"zzz": {}})


def test_as_multi_rl_module_wraps_under_default_id():
    m = _module()
    multi = m.as_multi_rl_module()
    assert list(multi.keys()) == [DEFAULT_MODULE_ID] and multi[DEFAULT_MODULE_ID] is m


# -- DefaultModelConfig ----------------------------------------------------------------------
def test_default_model_config_defaults_match_rllib():
    cfg = DefaultModelConfig()
    assert cfg.fcnet_hiddens == [256, 256] and cfg.fcnet_activation == "tanh"
    assert cfg.vf_share_layers is True and cfg.free_log_std is False and cfg.log_std_clip_param == 20.0
    assert cfg.head_fcnet_hiddens == [] and cfg.max_seq_len == 20


def test_default_model_config_from_dict():
    cfg = DefaultModelConfig.from_dict({"fcnet_hiddens": [8], "vf_share_layers": False})
    assert cfg.fcnet_hiddens == [8] and cfg.vf_share_layers is False and cfg.fcnet_activation == "tanh"
    assert DefaultModelConfig.from_dict(None) == DefaultModelConfig()
    same = DefaultModelConfig(fcnet_hiddens=[1])
    assert DefaultModelConfig.from_dict(same) is same
    assert DefaultModelConfig.from_dict(dataclasses.asdict(same)) == same


def test_default_model_config_unknown_key_did_you_mean():
    with pytest.raises(ValueError, match=r"fcnet_hidden`.*Did you mean `fcnet_hiddens`"):
        DefaultModelConfig.from_dict({"fcnet_hidden": [8]})
    with pytest.raises(ValueError, match="totally_unrelated"):
        DefaultModelConfig.from_dict({"totally_unrelated": 1})


def test_set_state_from_read_only_arrays_warns_nothing():
    # Remote runners get their weights through Ray as read-only arrays; torch.from_numpy warned on each.
    import warnings

    from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule

    spaces = dict(observation_space=gym.spaces.Box(-1, 1, (3,)), action_space=gym.spaces.Discrete(2))
    source, target = DefaultPPOTorchRLModule(**spaces), DefaultPPOTorchRLModule(**spaces)
    state = {k: np.asarray(v) for k, v in source.get_state().items()}
    for array in state.values():
        array.setflags(write=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        target.set_state(state)
    assert all(np.array_equal(np.asarray(v), state[k]) for k, v in target.get_state().items())
