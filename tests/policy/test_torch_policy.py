"""Policy, the torch template, models, action distributions, ModelCatalog, checkpoints and the numpy fast path."""
import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from relayrl.policy.models.catalog import ModelCatalog
from relayrl.policy.models.modelv2 import TorchModelV2
from relayrl.policy.models.torch_action_dist import TorchCategorical, TorchDiagGaussian
from relayrl.policy.policy import Policy
from relayrl.policy.policy_template import build_policy_class, build_torch_policy
from relayrl.policy.postprocessing import Postprocessing, compute_advantages
from relayrl.policy.sample_batch import SampleBatch
from relayrl.policy.torch_policy import TorchPolicy

OBS = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
ACT = gym.spaces.Discrete(2)


def pg_loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    return -torch.mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["advantages"])


def postprocess(policy, batch, other_agent_batches=None, episode=None):
    return compute_advantages(batch, 0.0, policy.config["gamma"], use_gae=False, use_critic=False)


def _batch(n=8):
    rng = np.random.default_rng(0)
    return SampleBatch(obs=rng.normal(size=(n, 4)).astype(np.float32), actions=rng.integers(0, 2, n),
                       rewards=np.ones(n, np.float32), terminateds=[False] * (n - 1) + [True], truncateds=[False] * n)


def test_hooks_run_in_rllib_order_and_template_arguments_apply():
    calls = []
    hook = lambda name: (lambda policy, obs, act, config: calls.append(name))

    class Mixin:
        def extra_method(self):
            return "mixin"

    P = build_torch_policy(
        "P", loss_fn=pg_loss, postprocess_fn=postprocess, validate_spaces=hook("validate"), before_init=hook("before"),
        before_loss_init=hook("before_loss"), after_init=hook("after"), mixins=[Mixin],
        get_default_config=lambda: {"gamma": 0.5, "model": {"fcnet_hiddens": [16]}},
        stats_fn=lambda policy, batch: {"batch_size": len(batch["obs"])},
        extra_action_out_fn=lambda policy, input_dict, states, model, dist: {"my_column": model.value_function()},
        optimizer_fn=lambda policy, config: torch.optim.SGD(policy.model.parameters(), lr=0.1),
        extra_grad_process_fn=lambda policy, optimizer, loss: {"seen_loss": float(loss)},
        extra_learn_fetches_fn=lambda policy: {"extra_fetch": 1})
    policy = P(OBS, ACT, {"lr": 0.01})
    assert calls == ["validate", "before", "before_loss", "after"]
    assert policy.extra_method() == "mixin" and isinstance(policy, Mixin)
    assert policy.config["gamma"] == 0.5 and policy.config["lr"] == 0.01
    assert isinstance(policy._optimizers[0], torch.optim.SGD)
    actions, states, extra = policy.compute_actions(np.zeros((3, 4), np.float32))
    assert actions.shape == (3,) and states == [] and extra["my_column"].shape == (3,)
    assert {"action_dist_inputs", "action_logp", "action_prob"} <= set(extra)
    batch = policy.postprocess_trajectory(_batch())
    np.testing.assert_allclose(batch["advantages"][-2:], [1.5, 1.0])
    before = policy.get_weights()
    result = policy.learn_on_batch(batch)
    assert result["learner_stats"]["batch_size"] == 8 and "seen_loss" in result["learner_stats"]
    assert result["extra_fetch"] == 1 and result["num_grad_updates"] == 1
    assert any(not np.allclose(before[k], v) for k, v in policy.get_weights().items())


def test_with_updates_and_bad_arguments():
    P = build_policy_class("P", "torch", loss_fn=pg_loss, postprocess_fn=postprocess)
    Q = P.with_updates(name="Q", postprocess_fn=None)
    assert Q.__name__ == "Q" and P.__name__ == "P"
    assert "advantages" not in Q(OBS, ACT, {}).postprocess_trajectory(_batch())
    with pytest.raises(ValueError, match="'torch' or 'tf2'"):
        build_policy_class("P", "mxnet", loss_fn=pg_loss)
    with pytest.raises(ValueError, match="not both"):
        build_policy_class("P", "torch", make_model=lambda *a: None, make_model_and_action_dist=lambda *a: None)


def test_non_finite_loss_leaves_weights_unchanged():
    P = build_policy_class("P", "torch", loss_fn=lambda p, m, d, b: torch.tensor(float("nan"), requires_grad=True))
    policy = P(OBS, ACT, {})
    before = policy.get_weights()
    with pytest.raises(FloatingPointError, match="not finite"):
        policy.learn_on_batch(_batch())
    assert all(np.array_equal(before[k], v) for k, v in policy.get_weights().items())


def test_non_finite_gradient_leaves_weights_unchanged():
    # a finite loss whose gradient is not: sqrt at 0 (one check over all gradients catches any one of them)
    P = build_policy_class("P", "torch", loss_fn=lambda p, m, d, b: torch.sqrt(m.from_batch(b)[0].sum() * 0.0))
    policy = P(OBS, ACT, {})
    before = policy.get_weights()
    with pytest.raises(FloatingPointError, match="gradient is not finite"):
        policy.learn_on_batch(_batch())
    assert all(np.array_equal(before[k], v) for k, v in policy.get_weights().items())


def test_learn_on_batch_uses_a_templates_compute_gradients_fn():
    calls = []

    def compute_gradients_fn(policy, batch):
        calls.append(len(batch))
        return TorchPolicy.compute_gradients(policy, batch)

    P = build_policy_class("P", "torch", loss_fn=pg_loss, postprocess_fn=postprocess,
                           compute_gradients_fn=compute_gradients_fn)
    policy = P(OBS, ACT, {})
    before = policy.get_weights()
    policy.learn_on_batch(policy.postprocess_trajectory(_batch()))
    assert calls == [8] and any(not np.array_equal(before[k], v) for k, v in policy.get_weights().items())


def test_action_distributions_against_torch_distributions():
    logits = torch.randn(5, 3)
    dist, ref = TorchCategorical(logits), torch.distributions.Categorical(logits=logits)
    actions = dist.sample()
    torch.testing.assert_close(dist.logp(actions), ref.log_prob(actions))
    torch.testing.assert_close(dist.entropy(), ref.entropy())
    other = torch.randn(5, 3)
    torch.testing.assert_close(dist.kl(TorchCategorical(other)),
                               torch.distributions.kl_divergence(ref, torch.distributions.Categorical(logits=other)))
    assert (dist.deterministic_sample() == logits.argmax(-1)).all()
    inputs = torch.randn(4, 6)
    g = TorchDiagGaussian(inputs)
    normal = torch.distributions.Normal(inputs[:, :3], inputs[:, 3:].exp())
    x = g.sample()
    torch.testing.assert_close(g.logp(x), normal.log_prob(x).sum(-1))
    torch.testing.assert_close(g.entropy(), normal.entropy().sum(-1))
    other = torch.randn(4, 6)
    normal_other = torch.distributions.Normal(other[:, :3], other[:, 3:].exp())
    torch.testing.assert_close(g.kl(TorchDiagGaussian(other)),
                               torch.distributions.kl_divergence(normal, normal_other).sum(-1))
    assert (g.deterministic_sample() == inputs[:, :3]).all()


class TinyModel(TorchModelV2, nn.Module):
    def __init__(self, obs_space, action_space, num_outputs, model_config, name, width=3):
        TorchModelV2.__init__(self, obs_space, action_space, num_outputs, model_config, name)
        nn.Module.__init__(self)
        self.width = width
        self.body = nn.Linear(4, width)
        self.head = nn.Linear(width, num_outputs)
        self.value = nn.Linear(width, 1)

    def forward(self, input_dict, state, seq_lens):
        self._features = torch.relu(self.body(input_dict["obs_flat"]))
        return self.head(self._features), state

    def value_function(self):
        return self.value(self._features).squeeze(1)


def test_custom_model_from_model_catalog():
    ModelCatalog.register_custom_model("tiny_for_test", TinyModel)
    P = build_policy_class("P", "torch", loss_fn=pg_loss)
    policy = P(OBS, ACT, {"model": {"custom_model": "tiny_for_test", "custom_model_config": {"width": 5}}})
    assert isinstance(policy.model, TinyModel) and policy.model.width == 5
    logits, state = policy.model({"obs": torch.zeros(2, 4)})
    assert logits.shape == (2, 2) and policy.model.value_function().shape == (2,)
    assert len(policy.model.trainable_variables()) == 6
    with pytest.raises(ValueError, match="register_custom_model"):
        P(OBS, ACT, {"model": {"custom_model": "not_registered"}})


def test_default_model_value_function_and_from_batch():
    P = build_policy_class("P", "torch", loss_fn=pg_loss)
    model = P(OBS, ACT, {"model": {"fcnet_hiddens": [8, 8]}}).model
    logits, _ = model.from_batch({"obs": torch.zeros(3, 4)})
    assert logits.shape == (3, 2) and model.value_function().shape == (3,)
    assert model.last_output() is logits


CheckpointedPolicy = build_policy_class("CheckpointedPolicy", "torch", loss_fn=pg_loss, postprocess_fn=postprocess)


def test_checkpoint_round_trip(tmp_path):
    P = CheckpointedPolicy
    policy = P(OBS, ACT, {"lr": 0.01})
    policy.learn_on_batch(policy.postprocess_trajectory(_batch()))
    policy.export_checkpoint(str(tmp_path / "ckpt"))
    restored = Policy.from_checkpoint(str(tmp_path / "ckpt"), trusted=[P])
    assert type(restored) is P and restored.num_grad_updates == 1 and restored.config["lr"] == 0.01
    for key, value in policy.get_weights().items():
        assert np.array_equal(value, restored.get_weights()[key])
    assert not list(tmp_path.rglob("*.pkl"))


def test_numpy_fast_path_matches_torch():
    P = build_policy_class("P", "torch", loss_fn=pg_loss)
    torch.manual_seed(0)
    policy = P(OBS, ACT, {"model": {"fcnet_hiddens": [16, 16]}})
    assert policy._numpy_forward() is not None
    obs = np.random.default_rng(1).normal(size=(64, 4)).astype(np.float32)
    actions, _, extra = policy.compute_actions(obs, explore=False)
    policy.config["_disable_numpy_forward"] = True
    torch_actions, _, torch_extra = policy.compute_actions(obs, explore=False)
    assert (actions == torch_actions).all()
    for key in ("action_dist_inputs", "action_logp"):
        np.testing.assert_allclose(extra[key], torch_extra[key], rtol=1e-4, atol=1e-5)
    policy.config["_disable_numpy_forward"] = False
    policy.learn_on_batch(compute_advantages(_batch(), 0.0, 0.99, use_gae=False, use_critic=False))
    # the weights changed: the numpy copy follows
    with torch.no_grad():
        logits = policy.model({"obs": torch.as_tensor(obs)})[0].numpy()
    np.testing.assert_allclose(policy.compute_actions(obs, explore=False)[2]["action_dist_inputs"], logits,
                               rtol=1e-4, atol=1e-5)
    sampled = policy.compute_actions(np.zeros((4000, 4), np.float32), explore=True)[0]
    probs = torch.softmax(policy.model({"obs": torch.zeros(1, 4)})[0], -1)[0].detach().numpy()
    assert abs(sampled.mean() - probs[1]) < 0.03  # samples follow the distribution


def test_base_policy_defaults_and_single_action():
    class Constant(Policy):
        def compute_actions(self, obs_batch, state_batches=None, **kwargs):
            return np.ones(len(obs_batch), np.int64), [], {"seen": np.asarray(obs_batch)[:, 0]}

    policy = Constant(OBS, ACT, {})
    assert policy.get_initial_state() == [] and not policy.is_recurrent() and policy.num_state_tensors() == 0
    action, state, extra = policy.compute_single_action(np.full(4, 0.5, np.float32))
    assert action == 1 and state == [] and extra["seen"] == 0.5
    with pytest.raises(NotImplementedError, match="cannot learn"):
        policy.learn_on_batch(_batch())
    assert Postprocessing.ADVANTAGES == "advantages"
