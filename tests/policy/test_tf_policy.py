"""TF policies: the template on EagerTFPolicy, eager vs traced steps, TFModelV2 and Keras models, TF action
distributions (the torch ones' formulas), checkpoints as data, the numpy fast path, framework='tf2' in an
algorithm. CI installs tensorflow-cpu (the test extra); without it these tests are skipped."""
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import torch

tf = pytest.importorskip("tensorflow")

from relayrl.algorithms.algorithm import Algorithm  # noqa: E402
from relayrl.policy.eager_tf_policy import EagerTFPolicy  # noqa: E402
from relayrl.policy.models.catalog import ModelCatalog  # noqa: E402
from relayrl.policy.models.tf_action_dist import Categorical, DiagGaussian  # noqa: E402
from relayrl.policy.models.tf_modelv2 import TFModelV2  # noqa: E402
from relayrl.policy.models.torch_action_dist import TorchCategorical, TorchDiagGaussian  # noqa: E402
from relayrl.policy.policy import Policy  # noqa: E402
from relayrl.policy.postprocessing import compute_advantages  # noqa: E402
from relayrl.policy.sample_batch import SampleBatch  # noqa: E402
from relayrl.policy.tf_policy_template import build_tf_policy  # noqa: E402

OBS = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
ACT = gym.spaces.Discrete(2)


def pg_loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    return -tf.reduce_mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["advantages"])


def postprocess(policy, batch, other_agent_batches=None, episode=None):
    return compute_advantages(batch, 0.0, policy.config["gamma"], use_gae=False, use_critic=False)


def _batch(n=8, seed=0):
    rng = np.random.default_rng(seed)
    return SampleBatch(obs=rng.normal(size=(n, 4)).astype(np.float32), actions=rng.integers(0, 2, n),
                       rewards=np.ones(n, np.float32), terminateds=[False] * (n - 1) + [True], truncateds=[False] * n)


PGPolicy = build_tf_policy("PGPolicy", loss_fn=pg_loss, postprocess_fn=postprocess)


def test_hooks_run_in_rllib_order_and_template_arguments_apply():
    calls = []
    hook = lambda name: (lambda policy, obs, act, config: calls.append(name))

    class Mixin:
        def extra_method(self):
            return "mixin"

    def gradients_fn(policy, optimizer, loss):
        calls.append("gradients")
        return optimizer.compute_gradients(loss, colocate_gradients_with_ops=True)  # the seed's call

    P = build_tf_policy(
        "P", loss_fn=pg_loss, postprocess_fn=postprocess, validate_spaces=hook("validate"), before_init=hook("before"),
        before_loss_init=hook("before_loss"), after_init=hook("after"), mixins=[Mixin],
        get_default_config=lambda: {"gamma": 0.5, "model": {"fcnet_hiddens": [16]}},
        stats_fn=lambda policy, batch: {"batch_size": tf.shape(batch["obs"])[0]},
        extra_action_out_fn=lambda policy: {"my_column": policy.model.value_function()},  # the seed's fn(policy)
        optimizer_fn=lambda policy, config: tf.keras.optimizers.SGD(0.1), gradients_fn=gradients_fn,
        grad_stats_fn=lambda policy, batch, grads: {"num_grads": len(grads[0])},
        extra_learn_fetches_fn=lambda policy: {"extra_fetch": 1})
    policy = P(OBS, ACT, {"lr": 0.01})
    assert calls == ["validate", "before", "before_loss", "after"]
    assert isinstance(policy, (Mixin, EagerTFPolicy)) and policy.extra_method() == "mixin"
    assert policy.config["gamma"] == 0.5 and policy.config["lr"] == 0.01
    actions, states, extra = policy.compute_actions(np.zeros((3, 4), np.float32))
    assert actions.shape == (3,) and states == [] and extra["my_column"].shape == (3,)
    assert {"action_dist_inputs", "action_logp", "action_prob"} <= set(extra)
    batch = policy.postprocess_trajectory(_batch())
    np.testing.assert_allclose(batch["advantages"][-2:], [1.5, 1.0])
    before = policy.get_weights()
    result = policy.learn_on_batch(batch)
    assert calls[-1] == "gradients"
    assert result["learner_stats"] == {"batch_size": 8, "num_grads": 8}  # 2 layers + 2 value layers, w and b
    assert result["extra_fetch"] == 1 and result["num_grad_updates"] == 1
    changed = [k for k, v in policy.get_weights().items() if not np.allclose(before[k], v)]
    assert changed and all(not k.startswith("value") for k in changed)  # the loss reads no values
    Q = P.with_updates(name="Q", postprocess_fn=None)
    assert Q.__name__ == "Q" and "advantages" not in Q(OBS, ACT, {}).postprocess_trajectory(_batch())
    assert Q._original_kwargs["grad_stats_fn"] is P._original_kwargs["grad_stats_fn"]


def test_eager_and_traced_steps_agree_and_the_trace_is_reused():
    """The same start and batches: eager and eager_tracing=True end at the same weights. Traced, the loss's
    Python runs at tracing only: once for batches of two sizes (a batch-size-free signature)."""
    counted = []

    def counting_loss(policy, model, dist_class, train_batch):
        counted.append(policy.config["eager_tracing"])
        return pg_loss(policy, model, dist_class, train_batch)

    P = build_tf_policy("P", loss_fn=counting_loss, postprocess_fn=postprocess)
    eager, traced = P(OBS, ACT, {"eager_tracing": False}), P(OBS, ACT, {"eager_tracing": True})
    traced.set_weights(eager.get_weights())
    for n, seed in ((8, 0), (13, 1), (8, 2)):
        batch = eager.postprocess_trajectory(_batch(n, seed))
        eager.learn_on_batch(batch)
        traced.learn_on_batch(batch)
    assert counted.count(False) == 3 and counted.count(True) == 1
    for key, value in eager.get_weights().items():
        np.testing.assert_allclose(value, traced.get_weights()[key], rtol=1e-5, atol=1e-6)


def test_tf_gradients_in_gradients_fn_needs_tracing():
    """The seed's clip_gradients calls tf.gradients: TF allows it in a graph only, so it runs with
    eager_tracing=True and says so eagerly."""
    def clip_gradients(policy, optimizer, loss):
        grads = tf.gradients(loss, policy.model.trainable_variables())
        policy.grads, _ = tf.clip_by_global_norm(grads, policy.config["grad_clip"])
        return list(zip(policy.grads, policy.model.trainable_variables()))

    P = build_tf_policy("P", loss_fn=pg_loss, postprocess_fn=postprocess, gradients_fn=clip_gradients,
                        optimizer_fn=lambda policy, config: tf.keras.optimizers.SGD(1.0))
    batch = postprocess(type("C", (), {"config": {"gamma": 0.99}}), _batch())
    with pytest.raises(RuntimeError, match="eager_tracing=True"):
        P(OBS, ACT, {"grad_clip": 0.5}).learn_on_batch(batch)
    traced = P(OBS, ACT, {"grad_clip": 1e-3, "eager_tracing": True})
    before = traced.get_weights()
    traced.learn_on_batch(batch)
    step = np.sqrt(sum(np.square(v - before[k]).sum() for k, v in traced.get_weights().items()))
    assert 0 < step <= 1e-3 * (1 + 1e-4)  # SGD(1.0): the step is the clipped gradient


def test_non_finite_loss_leaves_weights_unchanged():
    P = build_tf_policy("P", loss_fn=lambda p, m, d, b: pg_loss(p, m, d, b) * float("nan"))
    for tracing in (False, True):
        policy = P(OBS, ACT, {"eager_tracing": tracing})
        before = policy.get_weights()
        with pytest.raises(FloatingPointError, match="not finite"):
            policy.learn_on_batch(postprocess(policy, _batch()))
        assert all(np.array_equal(before[k], v) for k, v in policy.get_weights().items())


def test_action_distributions_match_the_torch_ones():
    rng = np.random.default_rng(0)
    logits, other = rng.normal(size=(5, 3)).astype(np.float32), rng.normal(size=(5, 3)).astype(np.float32)
    dist, ref = Categorical(logits), TorchCategorical(torch.as_tensor(logits))
    actions = dist.sample().numpy()
    np.testing.assert_allclose(dist.logp(actions), ref.logp(torch.as_tensor(actions)), rtol=1e-5)
    np.testing.assert_allclose(dist.entropy(), ref.entropy(), rtol=1e-5)
    np.testing.assert_allclose(dist.kl(Categorical(other)), ref.kl(TorchCategorical(torch.as_tensor(other))),
                               rtol=1e-5, atol=1e-6)
    assert (dist.deterministic_sample().numpy() == logits.argmax(-1)).all()
    draws = Categorical(np.tile(np.log([[0.2, 0.8]]), (4000, 1)).astype(np.float32)).sample().numpy()
    assert abs(draws.mean() - 0.8) < 0.03
    inputs, other = rng.normal(size=(4, 6)).astype(np.float32), rng.normal(size=(4, 6)).astype(np.float32)
    g, ref = DiagGaussian(inputs), TorchDiagGaussian(torch.as_tensor(inputs))
    x = g.sample().numpy()
    np.testing.assert_allclose(g.logp(x), ref.logp(torch.as_tensor(x)), rtol=1e-5)
    np.testing.assert_allclose(g.entropy(), ref.entropy(), rtol=1e-5)
    np.testing.assert_allclose(g.kl(DiagGaussian(other)), ref.kl(TorchDiagGaussian(torch.as_tensor(other))),
                               rtol=1e-4, atol=1e-5)
    assert (g.deterministic_sample().numpy() == inputs[:, :3]).all()
    assert g.sampled_action_logp().shape == (4,)


class KerasModel(TFModelV2):
    """A custom model as RLlib's TF docs write them: a Keras functional model with logits and value outputs."""

    def __init__(self, obs_space, action_space, num_outputs, model_config, name, width=3):
        super().__init__(obs_space, action_space, num_outputs, model_config, name)
        self.width = width
        inputs = tf.keras.layers.Input(shape=obs_space.shape)
        hidden = tf.keras.layers.Dense(width, activation="relu")(inputs)
        self.base_model = tf.keras.Model(inputs, [tf.keras.layers.Dense(num_outputs)(hidden),
                                                  tf.keras.layers.Dense(1)(hidden)])

    def forward(self, input_dict, state, seq_lens):
        logits, self._value_out = self.base_model(input_dict["obs_flat"])
        return logits, state

    def value_function(self):
        return tf.reshape(self._value_out, [-1])


def test_keras_custom_model_from_model_catalog_learns_and_syncs_by_name():
    ModelCatalog.register_custom_model("keras_for_test", KerasModel)
    config = {"model": {"custom_model": "keras_for_test", "custom_model_config": {"width": 5}}}
    policy, other = PGPolicy(OBS, ACT, config), PGPolicy(OBS, ACT, config)
    assert isinstance(policy.model, KerasModel) and policy.model.width == 5
    assert policy._numpy_forward() is None  # a custom model acts through TF
    logits, _ = policy.model({"obs": np.zeros((2, 4), np.float32)})
    assert logits.shape == (2, 2) and policy.model.value_function().shape == (2,)
    assert len(policy.model.trainable_variables()) == 6
    before = policy.get_weights()
    policy.learn_on_batch(policy.postprocess_trajectory(_batch()))
    assert any(not np.allclose(before[k], v) for k, v in policy.get_weights().items())
    other.set_weights(policy.get_weights())  # Keras names differ per copy (dense_7/kernel); the keys do not
    obs = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    np.testing.assert_allclose(policy.compute_actions(obs, explore=False)[2]["action_dist_inputs"],
                               other.compute_actions(obs, explore=False)[2]["action_dist_inputs"])
    with pytest.raises(ValueError, match="do not fit the model"):
        other.set_weights({"base_model/0": before["base_model/0"]})


def test_continuous_actions_default_model():
    box = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    policy = PGPolicy(OBS, box, {"model": {"fcnet_hiddens": [8]}})
    assert policy.dist_class is DiagGaussian
    actions, _, extra = policy.compute_actions(np.zeros((3, 4), np.float32))
    assert actions.shape == (3, 2) and extra["action_dist_inputs"].shape == (3, 4)


CheckpointedTFPolicy = build_tf_policy("CheckpointedTFPolicy", loss_fn=pg_loss, postprocess_fn=postprocess)


def test_checkpoint_round_trip_as_data(tmp_path):
    policy = CheckpointedTFPolicy(OBS, ACT, {"lr": 0.01, "eager_tracing": True})
    policy.learn_on_batch(policy.postprocess_trajectory(_batch()))
    policy.export_checkpoint(str(tmp_path / "ckpt"))
    restored = Policy.from_checkpoint(str(tmp_path / "ckpt"), trusted=[CheckpointedTFPolicy])
    assert type(restored) is CheckpointedTFPolicy and restored.num_grad_updates == 1
    assert restored.config["lr"] == 0.01 and restored.config["eager_tracing"] is True
    for key, value in policy.get_weights().items():
        assert np.array_equal(value, restored.get_weights()[key])
    saved, loaded = policy.get_state()["_optimizer_variables"], restored.get_state()["_optimizer_variables"]
    assert len(saved[0]) > 2 and all(np.array_equal(a, b) for a, b in zip(saved[0], loaded[0]))
    assert not list(tmp_path.rglob("*.pkl"))
    # the next step is the same from the restored policy (the optimizer state came back too)
    batch = policy.postprocess_trajectory(_batch(8, 1))
    policy.learn_on_batch(batch)
    restored.learn_on_batch(batch)
    for key, value in policy.get_weights().items():
        np.testing.assert_allclose(value, restored.get_weights()[key], rtol=1e-6, atol=1e-7)


def test_numpy_fast_path_matches_tf_and_follows_updates():
    tf.random.set_seed(0)
    policy = PGPolicy(OBS, ACT, {"model": {"fcnet_hiddens": [16, 16]}})
    assert policy._numpy_forward() is not None
    obs = np.random.default_rng(1).normal(size=(64, 4)).astype(np.float32)

    def both():
        policy.config["_disable_numpy_forward"] = False
        fast = policy.compute_actions(obs, explore=False)
        policy.config["_disable_numpy_forward"] = True
        return fast, policy.compute_actions(obs, explore=False)

    for _ in range(2):
        (actions, _, extra), (tf_actions, _, tf_extra) = both()
        assert (actions == tf_actions).all()
        for key in ("action_dist_inputs", "action_logp"):
            np.testing.assert_allclose(extra[key], tf_extra[key], rtol=1e-4, atol=1e-5)
        policy.learn_on_batch(policy.postprocess_trajectory(_batch()))  # the numpy copy follows the update
    policy.config["_disable_numpy_forward"] = False
    sampled = policy.compute_actions(np.zeros((4000, 4), np.float32), explore=True)[0]
    probs = tf.nn.softmax(policy.model({"obs": np.zeros((1, 4), np.float32)})[0])[0].numpy()
    assert abs(sampled.mean() - probs[1]) < 0.03


@pytest.mark.parametrize("framework", ["tf2", "tf"])
def test_algorithm_with_framework_tf2_or_tf(framework):
    class MyAlgo(Algorithm):
        def get_default_policy_class(self, config):
            return PGPolicy if config["framework"] in ("tf", "tf2") else None

    algo = MyAlgo(config={"env": "CartPole-v1", "framework": framework, "eager_tracing": True,
                          "train_batch_size": 64, "seed": 0, "logger_config": {"type": "none"}})
    try:
        result = algo.train()
        assert isinstance(algo.get_policy(), EagerTFPolicy)
        assert result["num_env_steps_sampled_lifetime"] >= 64 and algo.get_policy().num_grad_updates == 1
    finally:
        algo.stop()


def test_without_tensorflow_build_tf_policy_says_how_to_install():
    code = ("import sys; sys.modules['tensorflow'] = None\n"
            "from relayrl.policy.tf_policy_template import build_tf_policy\n"
            "try:\n    build_tf_policy('P', loss_fn=None)\nexcept ImportError as e:\n    print(e)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": root})
    assert "pip install 'relayrl[tf]'" in out.stdout, out.stdout + out.stderr


def test_a_torch_model_in_a_tf_policy_is_a_clear_error():
    from relayrl.policy.models.fully_connected import FullyConnectedNetwork

    ModelCatalog.register_custom_model("torch_fc_for_tf_test", FullyConnectedNetwork)
    with pytest.raises(TypeError, match="TorchModelV2.*'tf2'"):
        PGPolicy(OBS, ACT, {"model": {"custom_model": "torch_fc_for_tf_test"}})


@pytest.mark.slow
def test_tf_policy_on_two_remote_runners_syncs_weights():
    """The seed's MyTFPolicy with num_workers=2 (its Tune snippet's setting): the Ray runners build TF policies,
    sample with them and get the driver's weights after each update. ~40 s (Ray, TF imports in each runner)."""
    import ray

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                    "examples"))
    import policy_gradient_tf_policy as pg

    ray.cloudpickle.register_pickle_by_value(pg)  # the runners cannot import the example by name
    ray.init(address="local", num_cpus=3, include_dashboard=False, log_to_driver=False)
    algo = pg.MyAlgo(config={"env": "CartPole-v1", "framework": "tf2", "eager_tracing": True, "num_env_runners": 2,
                             "train_batch_size": 200, "seed": 0, "logger_config": {"type": "none"}})
    try:
        for _ in range(2):
            result = algo.train()
        assert result["num_env_steps_sampled_lifetime"] >= 400 and algo.get_policy().num_grad_updates == 2
        weights = algo.get_policy().get_weights()
        remote = algo.workers.foreach_worker(lambda w: (type(w.get_policy()).__name__, w.get_policy().get_weights()),
                                             local_worker=False)
        assert len(remote) == 2
        for name, remote_weights in remote:
            assert name == "MyTFPolicy" and all(np.array_equal(weights[k], remote_weights[k]) for k in weights)
    finally:
        algo.stop()
        ray.shutdown()


class TFPGAlgo(Algorithm):
    def get_default_policy_class(self, config):
        return PGPolicy


def test_tf_policy_algorithm_checkpoint_resumes_bit_identically(tmp_path):
    config = {"env": "CartPole-v1", "framework": "tf2", "train_batch_size": 64, "lr": 0.01, "seed": 0,
              "logger_config": {"type": "none"}}

    def train(algo, n):
        returns = [algo.train()["env_runners"]["episode_return_mean"] for _ in range(n)]
        return returns, algo.get_policy().get_weights()

    algo = TFPGAlgo(config=config)
    train(algo, 2)
    path = algo.save_to_path(str(tmp_path / "ckpt"))
    expected_returns, expected_weights = train(algo, 2)
    algo.stop()
    restored = TFPGAlgo(config=config)
    restored.restore_from_path(path)
    returns, weights = train(restored, 2)
    restored.stop()
    assert returns == expected_returns
    assert all(np.array_equal(weights[k], v) for k, v in expected_weights.items())


def test_tf_policy_algorithm_reset_config_sets_the_keras_optimizers_lr():
    config = {"env": "CartPole-v1", "framework": "tf2", "train_batch_size": 64, "lr": 0.01, "seed": 0,
              "logger_config": {"type": "none"}}
    algo = TFPGAlgo(config=config)
    try:
        algo.train()
        assert algo.reset_config({**config, "lr": 0.002}) is True
        policy = algo.get_policy()
        assert [float(o.learning_rate.numpy()) for o in policy._optimizers] == [pytest.approx(0.002)]
        algo.train()  # the traced/eager step runs with the new rate
    finally:
        algo.stop()
