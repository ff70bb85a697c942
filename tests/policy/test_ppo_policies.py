"""RLlib's old-stack PPO policies (relayrl/algorithms/ppo/ppo_torch_policy.py, ppo_tf_policy.py): the loss against a
numpy reference, the defaults and config checks, the KL and entropy coefficients, minibatch SGD in train_one_step,
training inside an Algorithm (torch learns CartPole; TF eager and traced train), and the import without TensorFlow."""
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

from relayrl.algorithms.algorithm import Algorithm
from relayrl.algorithms.ppo.ppo_policy_config import PPO_POLICY_DEFAULTS
from relayrl.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
from relayrl.core.policy_spec import PolicySpec
from relayrl.policy.execution import LEARNER_STATS_KEY, standardize_fields, synchronous_parallel_sample, train_one_step
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.policy.sample_batch import SampleBatch
from relayrl.testing.learning import train_until

ENV = gym.make("CartPole-v1")
SMALL = {"model": {"fcnet_hiddens": [16]}}


def tf_policy_class():
    pytest.importorskip("tensorflow")
    from relayrl.algorithms.ppo.ppo_tf_policy import PPOTFPolicy

    return PPOTFPolicy


def policy_class(framework: str):
    return PPOTorchPolicy if framework == "torch" else tf_policy_class()


def algo_class(policy, step=None):
    class PPOPolicyAlgo(Algorithm):
        def get_default_policy_class(self, config):
            return policy

    if step is not None:
        PPOPolicyAlgo.training_step = step
    return PPOPolicyAlgo


def old_ppo_training_step(algo):
    """RLlib's old PPO training_step, short: sample, standardize advantages, train (epochs, minibatches), sync
    weights, adapt each policy's KL coefficient to the kl it reported."""
    batch = synchronous_parallel_sample(worker_set=algo.workers, max_env_steps=algo.config.train_batch_size)
    results = train_one_step(algo, standardize_fields(batch, ["advantages"]))
    algo.workers.sync_weights(global_vars={"timestep": algo._counters["num_env_steps_sampled_lifetime"]})
    for pid, info in results.items():
        algo.get_policy(pid).update_kl(info[LEARNER_STATS_KEY]["kl"])
    return results


def config_for(policy, step=None, **training):
    return (PolicyAlgorithmConfig(algo_class=algo_class(policy, step)).environment("CartPole-v1")
            .training(**training).debugging(seed=0, logger_config={"type": "none"}))


# -- the loss ------------------------------------------------------------------------------------------------

def _log_softmax(logits):
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def reference_ppo_loss(logits, values, batch, config, kl_coeff, entropy_coeff):
    """RLlib's PPO loss in numpy, from the model's logits and values."""
    logp_all = _log_softmax(logits.astype(np.float64))
    logp = logp_all[np.arange(len(logits)), batch["actions"]]
    ratio = np.exp(logp - batch["action_logp"])
    adv, clip = batch["advantages"], config["clip_param"]
    surrogate = np.minimum(adv * ratio, adv * np.clip(ratio, 1 - clip, 1 + clip))
    vf_loss = np.clip((values - batch["value_targets"]) ** 2, 0, config["vf_clip_param"])
    entropy = -(np.exp(logp_all) * logp_all).sum(axis=1)
    prev = _log_softmax(batch["action_dist_inputs"].astype(np.float64))
    kl = (np.exp(prev) * (prev - logp_all)).sum(axis=1)
    total = np.mean(-surrogate + config["vf_loss_coeff"] * vf_loss - entropy_coeff * entropy) + kl_coeff * kl.mean()
    return {"total_loss": total, "policy_loss": -surrogate.mean(), "vf_loss": vf_loss.mean(), "kl": kl.mean(),
            "entropy": entropy.mean()}


@pytest.mark.parametrize("framework", ["torch", "tf2"])
def test_the_loss_is_rllibs_ppo_loss(framework):
    """Ratios outside [1 - clip, 1 + clip] for both advantage signs, value errors inside and beyond vf_clip_param:
    the stats of one learn_on_batch equal the numpy formula on the weights before the step."""
    config = {**SMALL, "clip_param": 0.2, "vf_clip_param": 4.0, "vf_loss_coeff": 0.5, "entropy_coeff": 0.01,
              "kl_coeff": 0.3}
    policy = policy_class(framework)(ENV.observation_space, ENV.action_space, config)
    rng = np.random.default_rng(0)
    n = 64
    obs = rng.normal(size=(n, 4)).astype(np.float32)
    logits, _ = policy.model({"obs": policy._to_tensor(obs)})
    logits, values = np.asarray(policy._to_numpy(logits)), np.asarray(policy._to_numpy(policy.model.value_function()))
    actions = rng.integers(0, 2, n)
    current_logp = _log_softmax(logits.astype(np.float64))[np.arange(n), actions]
    batch = SampleBatch({
        "obs": obs, "actions": actions,
        "action_logp": (current_logp + rng.choice([-1.0, 0.0, 0.05, 1.0], n)).astype(np.float32),
        "action_dist_inputs": rng.normal(size=(n, 2)).astype(np.float32),
        "advantages": rng.choice([-1.0, 1.0], n).astype(np.float32) * rng.uniform(0.5, 2, n).astype(np.float32),
        "value_targets": (values + rng.choice([0.5, 5.0], n)).astype(np.float32)})
    expected = reference_ppo_loss(logits, values, batch, policy.config, 0.3, 0.01)
    assert 0 < expected["vf_loss"] < 4.0  # some value errors are clipped, some are not
    stats = policy.learn_on_batch(batch.copy())[LEARNER_STATS_KEY]
    for key, value in expected.items():
        assert stats[key] == pytest.approx(value, rel=1e-4, abs=1e-5), key
    assert stats["cur_kl_coeff"] == pytest.approx(0.3) and stats["entropy_coeff"] == pytest.approx(0.01)
    assert set(stats) >= {"vf_explained_var", "cur_lr"} and np.isfinite(stats["vf_explained_var"])


# -- config ------------------------------------------------------------------------------------------------

def test_defaults_are_rllibs_old_stack_ppo_defaults():
    policy = PPOTorchPolicy(ENV.observation_space, ENV.action_space, {})
    expected = {"lambda": 1.0, "clip_param": 0.3, "vf_clip_param": 10.0, "kl_coeff": 0.2, "kl_target": 0.01,
                "vf_loss_coeff": 1.0, "entropy_coeff": 0.0, "use_kl_loss": True, "use_gae": True, "use_critic": True,
                "lr": 5e-5, "grad_clip": None}
    assert {k: policy.config[k] for k in expected} == expected
    assert policy.kl_coeff == 0.2 and policy.entropy_coeff == 0.0 and policy.cur_lr == 5e-5
    assert set(PPO_POLICY_DEFAULTS) >= set(expected)


@pytest.mark.parametrize("key, value", [("clip_param", 0), ("clip_param", -0.1), ("vf_clip_param", 0.0),
                                        ("kl_target", 0), ("entropy_coeff", -0.01), ("lambda", 1.5),
                                        ("clip_param", "0.2")])
def test_a_bad_config_names_the_key(key, value):
    with pytest.raises(ValueError, match=f"config\\['{key}'\\]"):
        PPOTorchPolicy(ENV.observation_space, ENV.action_space, {key: value})


def test_gae_without_a_critic_is_refused():
    with pytest.raises(ValueError, match="use_gae=True needs use_critic=True"):
        PPOTorchPolicy(ENV.observation_space, ENV.action_space, {"use_critic": False})


def test_policy_keys_reach_the_policy_through_policy_config_and_policy_spec():
    """An algorithm's config has no PPO keys of its own: the `policy_config` option (every policy) and
    PolicySpec(config=...) (one policy) carry them; a bad one fails when the algorithm is built."""
    config = config_for(PPOTorchPolicy, train_batch_size=32).update_from_dict(
        {"policy_config": {"clip_param": 0.1, "kl_target": 0.02}, "model": SMALL["model"]})
    algo = config.build_algo()
    try:
        assert algo.get_policy().config["clip_param"] == 0.1 and algo.get_policy().kl_target == 0.02
    finally:
        algo.stop()
    config = config_for(PPOTorchPolicy, train_batch_size=32).multi_agent(
        policies={"default_policy": PolicySpec(config={"clip_param": -1})})
    with pytest.raises(ValueError, match="clip_param"):
        config.build_algo()


# -- the coefficients ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("framework", ["torch", "tf2"])
def test_kl_coeff_adapts_toward_kl_target(framework):
    policy = policy_class(framework)(ENV.observation_space, ENV.action_space, {**SMALL, "kl_target": 0.01})
    assert policy.update_kl(0.03) == pytest.approx(0.3)  # above 2x target: x1.5
    assert policy.update_kl(0.01) == pytest.approx(0.3)  # within [0.5x, 2x]: unchanged
    assert policy.update_kl(0.001) == pytest.approx(0.15)  # below half: halved
    stats = policy.learn_on_batch(_sampled_batch(policy))[LEARNER_STATS_KEY]
    assert stats["cur_kl_coeff"] == pytest.approx(0.15)  # the loss reads the new coefficient
    assert policy.get_state()["current_kl_coeff"] == pytest.approx(0.15)


@pytest.mark.parametrize("framework", ["torch", "tf2"])
def test_entropy_coeff_follows_its_schedule(framework):
    policy = policy_class(framework)(ENV.observation_space, ENV.action_space,
                                     {**SMALL, "entropy_coeff_schedule": [[0, 0.1], [1000, 0.0]]})
    assert float(policy.entropy_coeff) == pytest.approx(0.1)
    policy.on_global_var_update({"timestep": 500})
    assert float(policy.entropy_coeff) == pytest.approx(0.05)
    assert policy.learn_on_batch(_sampled_batch(policy))[LEARNER_STATS_KEY]["entropy_coeff"] == pytest.approx(0.05)


def _sampled_batch(policy, n=32):
    """A batch as the runner makes it: the policy's own actions and extra outputs, then GAE."""
    obs = np.random.default_rng(1).normal(size=(n, 4)).astype(np.float32)
    actions, _, extra = policy.compute_actions(obs)
    batch = SampleBatch({"obs": obs, "new_obs": obs, "actions": actions, "rewards": np.ones(n, np.float32),
                         "terminateds": np.arange(n) == n - 1, "truncateds": np.zeros(n, bool), **extra})
    return policy.postprocess_trajectory(batch)


# -- inside an Algorithm ---------------------------------------------------------------------------------------

def test_ppo_torch_policy_learns_cartpole_with_the_default_training_step():
    """One learn_on_batch per iteration (the default training_step), lr 4e-4, train batch 200, seed 0: mean
    return 150 within 40,000 env steps. Measured: 150 at 21,200 env steps, ~2.5 s (load ~4.4, 2 cores; acting through
    torch instead of the numpy forward: 24,200 env steps, ~12 s at load ~0.6)."""
    ret, steps = train_until(config_for(PPOTorchPolicy, lr=4e-4, train_batch_size=200), target=150, budget=40_000)
    assert ret >= 150, (ret, steps)


def test_minibatch_sgd_runs_epochs_of_minibatches_and_adapts_kl():
    """num_epochs (num_sgd_iter) x ceil(batch / minibatch_size) learn_on_batch calls per train_one_step, the stats
    averaged; RLlib's old PPO step (standardized advantages, update_kl) on top."""
    calls = []

    class Counting(PPOTorchPolicy):
        def learn_on_batch(self, samples):
            calls.append(samples.count)
            return super().learn_on_batch(samples)

    config = config_for(Counting, old_ppo_training_step, train_batch_size=100, num_epochs=3, minibatch_size=40,
                        model=SMALL["model"])
    algo = config.build_algo()
    try:
        result = algo.train()
        count = sum(calls) // 3
        assert count >= 100 and len(calls) == 3 * -(-count // 40) and max(calls) == 40
        assert algo.get_policy().num_grad_updates == len(calls)
        assert algo.get_policy().kl_coeff != 0.2  # update_kl ran on the averaged kl
        stats = result["learners"]["default_policy"]
        assert {"total_loss", "policy_loss", "vf_loss", "vf_explained_var", "kl", "entropy", "cur_kl_coeff", "cur_lr",
                "entropy_coeff"} <= set(stats) and np.isfinite(stats["total_loss"])
    finally:
        algo.stop()


@pytest.mark.parametrize("tracing", [False, True])
def test_ppo_tf_policy_trains_in_an_algorithm(tracing):
    """PPOTFPolicy, eager and traced, under RLlib's old PPO step: finite stats, new weights, vf_preds sampled, the
    KL coefficient adapted (a tf.Variable, so the traced step reads each new value)."""
    policy_cls = tf_policy_class()
    config = config_for(policy_cls, old_ppo_training_step, train_batch_size=100, num_epochs=2, minibatch_size=50,
                        model=SMALL["model"]).framework("tf2", eager_tracing=tracing)
    algo = config.build_algo()
    try:
        policy = algo.get_policy()
        before = policy.get_weights()
        for _ in range(3):
            stats = algo.train()["learners"]["default_policy"]
        assert all(np.isfinite(v) for v in stats.values() if isinstance(v, float))
        assert any(not np.array_equal(v, before[k]) for k, v in policy.get_weights().items())
        assert policy.kl_coeff_val != 0.2 and float(policy.kl_coeff.numpy()) == pytest.approx(policy.kl_coeff_val)
        assert {"vf_preds", "advantages", "value_targets"} <= set(algo.workers.sample().keys())
    finally:
        algo.stop()


# -- acting in numpy (relayrl/policy/numpy_forward.py) --------------------------------------------------------------------

def _torch_forward(policy, obs):
    import torch

    with torch.no_grad():
        logits, _ = policy.model({"obs": torch.as_tensor(obs)})
        return logits.numpy(), policy.model.value_function().numpy()


def test_ppo_torch_policy_acts_in_numpy_with_the_models_values():
    """The value fast path plans for PPOTorchPolicy; its vf_preds and logits are the torch model's (one row and a
    batch), and it follows an update that changes the value layers only."""
    policy = PPOTorchPolicy(ENV.observation_space, ENV.action_space, SMALL)
    assert policy._numpy_forward().extra_columns == ("vf_preds",)
    obs = np.random.default_rng(2).normal(size=(5, 4)).astype(np.float32)
    for rows in (obs[:1], obs):
        _, _, extra = policy.compute_actions(rows)
        logits, values = _torch_forward(policy, rows)
        assert list(extra) == ["action_dist_inputs", "action_prob", "action_logp", "vf_preds"]
        np.testing.assert_allclose(extra["vf_preds"], values, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(extra["action_dist_inputs"], logits, rtol=1e-5, atol=1e-5)
    weights = policy.get_weights()
    policy.set_weights({**weights, "_value_head.bias": weights["_value_head.bias"] + 1.0})
    np.testing.assert_allclose(policy.compute_actions(obs)[2]["vf_preds"], values + 1.0, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("change", [{"model": {"fcnet_hiddens": [16], "vf_share_layers": True}},
                                    {"use_critic": False, "use_gae": False}, "extra_action_out_fn"])
def test_the_value_fast_path_keeps_to_its_conditions(change):
    """Shared layers, no critic or another extra output: the policy acts through torch (no numpy plan)."""
    cls, config = PPOTorchPolicy, {**SMALL}
    if change == "extra_action_out_fn":
        cls = PPOTorchPolicy.with_updates(extra_action_out_fn=lambda policy, *args: {"other": policy.model._flat})
    else:
        config.update(change)
    policy = cls(ENV.observation_space, ENV.action_space, config)
    assert policy._numpy_forward() is None
    _, _, extra = policy.compute_actions(np.zeros((2, 4), np.float32))
    assert ("vf_preds" in extra) == (config.get("use_critic", True))


def test_sampled_vf_preds_are_the_models_values():
    """Inside an Algorithm (one sub-env: the one-env numpy step) the sampled vf_preds column is the torch model's
    value of each row's obs, before and after training."""
    algo = config_for(PPOTorchPolicy, train_batch_size=100, model=SMALL["model"]).build_algo()
    try:
        for _ in range(2):
            batch = algo.workers.sample()
            _, values = _torch_forward(algo.get_policy(), batch["obs"])
            np.testing.assert_allclose(batch["vf_preds"], values, rtol=1e-5, atol=1e-5)
            algo.train()
    finally:
        algo.stop()


# -- imports -------------------------------------------------------------------------------------------------

def test_without_tensorflow_the_tf_policy_says_how_to_install_it():
    """Run with TensorFlow hidden: relayrl and the torch policy import; the TF policy's module raises an
    ImportError naming the extra."""
    code = ("import sys; sys.modules['tensorflow'] = None\n"
            "import relayrl, relayrl.algorithms.ppo\n"
            "from relayrl.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy\n"
            "from relayrl.agents.ppo.ppo_torch_policy import PPOTorchPolicy as Old\n"
            "assert Old is PPOTorchPolicy\n"
            "try:\n"
            "    import relayrl.algorithms.ppo.ppo_tf_policy\n"
            "except ImportError as error:\n"
            "    print('ERROR', error)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": root})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 'ERROR' in proc.stdout and 'pip install "relayrl[tf]"' in proc.stdout


def test_rllibs_module_paths():
    from relayrl.agents.ppo.ppo_torch_policy import PPOTorchPolicy as old_path
    from relayrl.algorithms.ppo import ppo_torch_policy

    assert old_path is ppo_torch_policy.PPOTorchPolicy is PPOTorchPolicy
    tf_cls = tf_policy_class()
    from relayrl.agents.ppo.ppo_tf_policy import PPOTFPolicy
    from relayrl.algorithms.ppo.ppo_tf_policy import PPOTF1Policy, PPOTF2Policy

    assert PPOTFPolicy is tf_cls is PPOTF1Policy is PPOTF2Policy


def test_rllib_package_names_of_the_ppo_policies():
    """`from ray.rllib.algorithms.ppo import PPOTorchPolicy` (and the TF names) ports by changing the import."""
    import relayrl.algorithms.ppo as ppo_package
    from relayrl.algorithms.ppo import PPOTorchPolicy as by_package

    assert by_package is PPOTorchPolicy and "PPOTorchPolicy" in ppo_package.__all__
    assert not {"PPOTFPolicy", "PPOTF1Policy", "PPOTF2Policy"} & set(ppo_package.__all__)  # import * without TF
    assert {"PPOTFPolicy", "PPOTF1Policy", "PPOTF2Policy", "PPOConfig"} <= set(dir(ppo_package))
    namespace = {}
    exec("from relayrl.algorithms.ppo import *", namespace)
    assert namespace["PPOTorchPolicy"] is PPOTorchPolicy and "PPOConfig" in namespace
    with pytest.raises(AttributeError, match="no attribute 'PPOTorchPolicyX'"):
        ppo_package.PPOTorchPolicyX
