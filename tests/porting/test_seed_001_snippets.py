"""Seed 001 ("How To Customize Policies"): every code snippet runs on relayrl with `ray.rllib` replaced by `relayrl`
(tests/porting/seed_snippets/001_* hold them copied from the seed with that substitution made, nothing else). The
test supplies only what a snippet leaves to the reader (the `...` actions, the names a fragment uses). The TensorFlow
snippets run on relayrl's TF policies when TensorFlow is installed (the test extra installs tensorflow-cpu). What
cannot run as written is pinned with the reason (docs/policy_api.md): the PPO training_step's indentation (a seed
bug), the postprocessor's use_critic (a seed bug) and `PPOTrainer.with_updates` (a name the seed never defines)."""
import ast
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import relayrl
from relayrl.algorithms.algorithm import Algorithm
from relayrl.core.annotations import override
from relayrl.core.policy_spec import PolicySpec
from relayrl.policy.policy import Policy
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.policy.policy_template import build_policy_class
from relayrl.policy.postprocessing import Postprocessing, compute_gae_for_sample_batch
from relayrl.policy.sample_batch import SampleBatch
from relayrl.policy.torch_mixins import KLCoeffMixin, LearningRateSchedule, ValueNetworkMixin
from relayrl.testing.learning import train_until
from relayrl.testing.no_ray_rllib import env_without_ray_rllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(relayrl.__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
# The seed's two policy_gradient_loss versions, with torch instead of tf (the example holds them).
from policy_gradient_custom_policy import policy_gradient_loss, postprocess_advantages, raw_reward_loss

SNIPPETS = os.path.join(os.path.dirname(__file__), "seed_snippets")


def snippet(name: str) -> str:
    """The seed's text, ported: stored with the one substitution made."""
    with open(os.path.join(SNIPPETS, name)) as f:
        return f.read()


def run(name: str, source: str = None, **namespace) -> dict:
    namespace.setdefault("__name__", "seed_snippet")
    exec(compile(source or snippet(name), name, "exec"), namespace)
    return namespace


def functions_of(name: str, *function_names: str, **namespace) -> dict:
    """Only the named top-level functions of a snippet (and its relayrl imports): for TF snippets whose other
    parts need TensorFlow."""
    tree = ast.parse(snippet(name))
    keep = [node for node in tree.body if (isinstance(node, ast.FunctionDef) and node.name in function_names)
            or (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("relayrl"))]
    return run(name, ast.unparse(ast.Module(keep, [])), **namespace)


def quiet(config_dict: dict) -> dict:
    return {"logger_config": {"type": "none"}, "seed": 0, **config_dict}


def algo_for(policy_class, **config):
    class SnippetAlgo(Algorithm):
        def get_default_policy_class(self, config):
            return policy_class

    return SnippetAlgo(config=quiet({"env": "CartPole-v1", **config}))


# -- the from-scratch policy ------------------------------------------------------------------------------------

def custom_policy_class():
    return run("001_custom_policy.txt", Policy=Policy)["CustomPolicy"]


def test_001_custom_policy_basic_columns_and_weights():
    """The snippet's CustomPolicy inside an Algorithm: batches carry the basic columns; weights round-trip."""
    base = custom_policy_class()
    seen = []

    class Recording(base):
        def learn_on_batch(self, samples):
            seen.append(samples)
            return super().learn_on_batch(samples)

    algo = algo_for(Recording, train_batch_size=40)
    try:
        algo.train()
        batch = seen[0]
        assert {"obs", "new_obs", "actions", "rewards", "dones", "infos", "eps_id", "t"} <= set(batch.keys()) | {"dones"}
        assert batch.count >= 40 and len(batch["dones"]) == batch.count
        assert (batch["obs"][1:][batch["eps_id"][1:] == batch["eps_id"][:-1]]
                == batch["new_obs"][:-1][batch["eps_id"][1:] == batch["eps_id"][:-1]]).all()
        policy = algo.get_policy()
        policy.set_weights({"w": 3.0})
        assert policy.get_weights() == {"w": 3.0} and policy.w == 3.0
    finally:
        algo.stop()


def recurrent_extra_policy_class():
    """The three from-scratch snippets in one class: CustomPolicy, its recurrent state, its extra action outputs.
    The two compute_actions snippets leave the actions as `...`; the test samples them there."""
    base = custom_policy_class()
    # Only the functions, not the exec namespaces: a namespace holds the builtins dict, which cloudpickle cannot send
    # to the remote runners once a pybind11 library (TensorFlow) has put its internals capsule there.
    state = {k: v for k, v in run("001_recurrent_state.txt").items() if not k.startswith("__")}
    extra = {k: v for k, v in run("001_extra_action_info.txt").items() if not k.startswith("__")}

    class RecurrentExtraPolicy(base):
        get_initial_state = state["get_initial_state"]

        def compute_actions(self, obs_batch, state_batches, *args, **kwargs):
            _, new_state, _ = state["compute_actions"](self, obs_batch, state_batches, *args, **kwargs)
            _, _, action_info = extra["compute_actions"](self, obs_batch, state_batches, *args, **kwargs)
            return [self.action_space.sample() for _ in obs_batch], new_state, action_info

        def learn_on_batch(self, samples):
            state["learn_on_batch"](self, samples)
            extra["learn_on_batch"](self, samples)
            self.w += 1.0  # a new weight each update, to see the sync reach the remote runners
            return {"state_in": np.asarray(samples["state_in_0"]).tolist(),
                    "state_out": np.asarray(samples["state_out_0"]).tolist(), "t": samples["t"].tolist(),
                    "some_value": list(samples["some_value"]), "other_value": list(samples["other_value"])}

    return RecurrentExtraPolicy


def _check_recurrent_extra(stats):
    state_in, state_out, t = (np.asarray(stats[k]) for k in ("state_in", "state_out", "t"))
    assert len(state_in) >= 20
    assert (state_out == state_in + 1).all()  # state_out_0 at t is the policy's update of state_in_0 at t
    assert (state_in == t).all()  # the state starts at 0 each episode and is carried across cut fragments
    assert set(stats["some_value"]) == {"foo"} and set(stats["other_value"]) == {12345}


def test_001_recurrent_state_and_extra_outputs_local():
    algo = algo_for(recurrent_extra_policy_class(), train_batch_size=60, rollout_fragment_length=20)
    try:
        algo.train()
        algo.train()  # fragments cut mid-episode: the state goes on in the next one
        _check_recurrent_extra(algo.get_policy().learn_on_batch(algo.workers.sample()))
    finally:
        algo.stop()


@pytest.fixture
def ray_local():
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_001_recurrent_state_and_extra_outputs_two_remote_runners(ray_local):
    """The must-show: 2 remote runners sample with the policy; learn_on_batch (driver) sees state_in_0 /
    state_out_0 (out = in + 1 at every t) and the extra columns; the runners get the new weights."""
    from relayrl.policy.execution import synchronous_parallel_sample, train_one_step

    algo = algo_for(recurrent_extra_policy_class(), num_workers=2, train_batch_size=80)
    try:
        assert len(algo.workers.remote_workers()) == 2
        batch = synchronous_parallel_sample(worker_set=algo.workers, max_env_steps=80)
        assert set(np.unique(batch["env_id"])) == {0}
        stats = train_one_step(algo, batch)["default_policy"]
        _check_recurrent_extra(stats)
        algo.workers.sync_weights()
        weights = algo.workers.foreach_worker(lambda w: w.get_policy().get_weights(), local_worker=False)
        assert weights == [{"w": 2.0}, {"w": 2.0}]
        algo.train()  # the default training_step: sample on the remote runners, learn, sync
        assert algo.workers.foreach_worker(lambda w: w.get_policy().w, local_worker=False) == [3.0, 3.0]
    finally:
        algo.stop()


# -- the policy-gradient policy (the seed's TF code, written with torch as the anchor does) ------------------------

def seed_postprocess_advantages():
    """The seed's postprocessor, taken from its (otherwise TF) snippet."""
    return functions_of("001_tf_postprocess_advantages.txt", "postprocess_advantages")["postprocess_advantages"]


def test_001_seed_postprocessor_needs_use_critic_false():
    """A seed bug: its postprocess_advantages calls compute_advantages(..., use_gae=False) with use_critic left at
    True, which needs a value column (RLlib asserts the same). With vf_preds it runs; the anchor and
    examples/policy_gradient_custom_policy.py pass use_critic=False, as the text means (rewards summed over time)."""
    seed_fn = seed_postprocess_advantages()
    policy = type("P", (), {"config": {"gamma": 0.5}})()
    batch = SampleBatch(rewards=np.ones(3, np.float32))
    with pytest.raises(KeyError, match="use_critic=False"):
        seed_fn(policy, batch.copy())
    with_values = seed_fn(policy, SampleBatch(rewards=np.ones(3, np.float32), vf_preds=np.zeros(3, np.float32)))
    np.testing.assert_allclose(with_values[Postprocessing.ADVANTAGES], [1.75, 1.5, 1.0])
    np.testing.assert_allclose(postprocess_advantages(policy, batch.copy())[Postprocessing.ADVANTAGES], [1.75, 1.5, 1.0])


def pg_config(policy_class):
    class MyAlgo(Algorithm):
        def get_default_policy_class(self, config):
            return policy_class

    return (PolicyAlgorithmConfig(algo_class=MyAlgo).environment("CartPole-v1").training(lr=0.0004, train_batch_size=200)
            .debugging(seed=0, logger_config={"type": "none"}))


@pytest.mark.slow
def test_001_policy_gradient_with_postprocessor_learns_cartpole():
    """lr 0.0004, train batch 200, seed 0: mean return 150 within 100,000 env steps (RLlib's old stack: 20,400).
    Measured: 150 at 20,600 env steps; ~75 s on the loaded 2-core machine with the full suite running alongside.
    The postprocessor is the seed's with use_critic=False, as the anchor (see the test above)."""
    policy = build_policy_class("MyTorchPolicy", "torch", loss_fn=policy_gradient_loss,
                                postprocess_fn=postprocess_advantages)
    ret, steps = train_until(pg_config(policy), target=150, budget=100_000)
    assert ret >= 150, (ret, steps)


@pytest.mark.slow
def test_001_policy_gradient_without_postprocessor_stays_low():
    """The seed's first attempt (raw 1-step rewards): it 'doesn't learn so well' (the seed shows 23.1). ~15 s."""
    policy = build_policy_class("MyTorchPolicy", "torch", loss_fn=raw_reward_loss)
    ret, steps = train_until(pg_config(policy), target=150, budget=20_000)
    assert ret < 60, (ret, steps)


# -- the TensorFlow snippets (CI installs tensorflow-cpu with the test extra) -------------------------------------

def tf_pg_policy():
    """The seed's first TF loss and `build_tf_policy(name="MyTFPolicy", loss_fn=policy_gradient_loss)`, as written."""
    pytest.importorskip("tensorflow")
    loss = run("001_tf_pg_loss.txt")
    return run("001_tf_build_policy.txt", policy_gradient_loss=loss["policy_gradient_loss"]), loss


def test_001_tf_build_policy_runs_in_an_algorithm():
    from relayrl.policy.eager_tf_policy import EagerTFPolicy

    built, loss = tf_pg_policy()
    my_tf_policy = built["MyTFPolicy"]
    assert my_tf_policy.__name__ == "MyTFPolicy" and issubclass(my_tf_policy, EagerTFPolicy)
    for tracing in (False, True):
        algo = algo_for(my_tf_policy, framework="tf2", eager_tracing=tracing, train_batch_size=100)
        try:
            before = algo.get_policy().get_weights()
            result = algo.train()
            assert result["num_env_steps_sampled_lifetime"] >= 100 and algo.get_policy().num_grad_updates == 1
            assert any(not np.array_equal(v, before[k]) for k, v in algo.get_policy().get_weights().items())
        finally:
            algo.stop()


def tf_pg_policy_with_postprocessor():
    """The seed's second TF snippet as written (postprocess_advantages, the advantage loss, MyTFPolicy), and the
    same class with the postprocessor the anchor uses (use_critic=False; see test_001_seed_postprocessor_...)."""
    _, first = tf_pg_policy()
    second = run("001_tf_postprocess_advantages.txt", tf=first["tf"], SampleBatch=SampleBatch,
                 build_tf_policy=first.get("build_tf_policy") or _build_tf_policy())
    return second["MyTFPolicy"].with_updates(postprocess_fn=postprocess_advantages), second


def _build_tf_policy():
    from relayrl.policy.tf_policy_template import build_tf_policy

    return build_tf_policy


def test_001_tf_postprocess_snippet_computes_advantages_in_the_batch():
    policy_class, second = tf_pg_policy_with_postprocessor()
    assert second["MyTFPolicy"]._original_kwargs["postprocess_fn"] is second["postprocess_advantages"]
    seen = []

    class Recording(policy_class):
        def learn_on_batch(self, samples):
            seen.append(samples)
            return super().learn_on_batch(samples)

    algo = algo_for(Recording, framework="tf2", train_batch_size=100)
    try:
        algo.train()
        batch = seen[0]
        last = np.flatnonzero(batch["terminateds"])[0]
        assert batch["advantages"][last] == batch["rewards"][last] == 1.0  # returns summed from the episode's end
        assert batch["advantages"][0] > batch["advantages"][last]
    finally:
        algo.stop()


@pytest.mark.slow
def test_001_tf_policy_gradient_with_postprocessor_learns_cartpole():
    """The seed's TF PG policy (its loss, build_tf_policy, the postprocessor with use_critic=False), lr 0.0004, train
    batch 200, seed 0, eager_tracing: mean return 150 within 100,000 env steps. Measured: 150 at 20,600 env steps (the
    torch one: 20,600; RLlib's old stack: 20,400), ~26 s on the loaded 2-core machine."""
    policy_class, _ = tf_pg_policy_with_postprocessor()
    config = pg_config(policy_class).framework("tf2", eager_tracing=True)
    ret, steps = train_until(config, target=150, budget=100_000)
    assert ret >= 150, (ret, steps)


@pytest.mark.slow
def test_001_tf_policy_gradient_without_postprocessor_stays_low():
    """The seed's first TF policy as written (1-step rewards): it "doesn't learn so well" (measured: 10.2 at 20,000)."""
    built, _ = tf_pg_policy()
    ret, steps = train_until(pg_config(built["MyTFPolicy"]).framework("tf2", eager_tracing=True), target=150,
                             budget=20_000)
    assert ret < 60, (ret, steps)


def tf_ppo_surrogate_loss(policy, model, dist_class, train_batch):
    """A small PPO loss in TF (the seed does not show PPO's); it fills policy.loss_obj for kl_and_loss_stats."""
    import tensorflow as tf

    logits, _ = model.from_batch(train_batch)
    dist = dist_class(logits, model)
    prev = dist_class(train_batch[SampleBatch.ACTION_DIST_INPUTS], model)
    ratio = tf.exp(dist.logp(train_batch[SampleBatch.ACTIONS]) - train_batch[SampleBatch.ACTION_LOGP])
    adv = train_batch[Postprocessing.ADVANTAGES]
    surrogate = tf.minimum(adv * ratio, adv * tf.clip_by_value(ratio, 0.8, 1.2))
    vf_loss = tf.square(model.value_function() - train_batch[Postprocessing.VALUE_TARGETS])
    obj = type("LossObj", (), {})()
    obj.mean_kl, obj.mean_entropy = tf.reduce_mean(prev.kl(dist)), tf.reduce_mean(dist.entropy())
    obj.mean_policy_loss, obj.mean_vf_loss = -tf.reduce_mean(surrogate), tf.reduce_mean(vf_loss)
    obj.loss = obj.mean_policy_loss + policy.kl_coeff * obj.mean_kl + 0.5 * obj.mean_vf_loss
    policy.loss_obj = obj
    return obj.loss


@pytest.mark.parametrize("tracing", [False, True])
def test_001_ppo_tf_policy_as_written(tracing):
    """`PPOTFPolicy = build_tf_policy(...)` as the seed writes it, with its kl_and_loss_stats,
    vf_preds_and_logits_fetches, clip_gradients and setup_mixins and relayrl's TF mixins, under the seed's
    PPO class and training_step. clip_gradients calls tf.gradients when grad_clip is set: TF allows that in a
    traced step only, so grad_clip is set with eager_tracing=True."""
    tf = pytest.importorskip("tensorflow")
    import relayrl.algorithms.ppo.ppo  # noqa: F401  (the snippet's get_default_config reads it)
    from relayrl.policy.eager_tf_policy import EagerTFPolicy
    from relayrl.policy.tf_mixins import KLCoeffMixin as TFKLCoeffMixin
    from relayrl.policy.tf_mixins import LearningRateSchedule as TFLearningRateSchedule
    from relayrl.policy.tf_mixins import ValueNetworkMixin as TFValueNetworkMixin
    from relayrl.policy.tf_policy_template import build_tf_policy
    from relayrl.utils.tf_utils import explained_variance

    stats = run("001_kl_and_loss_stats.txt", tf=tf, explained_variance=explained_variance,
                Postprocessing=Postprocessing)["kl_and_loss_stats"]
    clip = run("001_clip_gradients.txt", tf=tf)["clip_gradients"]
    fetches = run("001_vf_preds_and_logits_fetches.txt", SampleBatch=SampleBatch,
                  BEHAVIOUR_LOGITS="behaviour_logits")["vf_preds_and_logits_fetches"]
    mixins = dict(ValueNetworkMixin=TFValueNetworkMixin, KLCoeffMixin=TFKLCoeffMixin,
                  LearningRateSchedule=TFLearningRateSchedule)
    setup_mixins = run("001_setup_mixins.txt", **mixins)["setup_mixins"]
    ppo_tf_policy = run("001_ppo_tf_policy.txt", relayrl=relayrl, build_tf_policy=build_tf_policy,
                        ppo_surrogate_loss=tf_ppo_surrogate_loss, kl_and_loss_stats=stats,
                        vf_preds_and_logits_fetches=fetches, postprocess_ppo_gae=compute_gae_for_sample_batch,
                        clip_gradients=clip, setup_mixins=setup_mixins, **mixins)["PPOTFPolicy"]
    seed_ppo = seed_ppo_class(ppo_tf_policy)
    algo = seed_ppo(config=quiet({"env": "CartPole-v1", "train_batch_size": 64, "framework": "tf2",
                                  "eager_tracing": tracing, "grad_clip": 0.5 if tracing else None,
                                  "model": {"fcnet_hiddens": [32]}}))
    try:
        policy = algo.get_policy()
        assert isinstance(policy, (EagerTFPolicy, TFKLCoeffMixin, TFValueNetworkMixin, TFLearningRateSchedule))
        assert policy.kl_coeff_val == 0.2
        before = policy.get_weights()
        result = algo.train()
        assert policy.kl_coeff_val != 0.2 and float(policy.kl_coeff.numpy()) == pytest.approx(policy.kl_coeff_val)
        learner = result["learners"]["default_policy"]
        assert {"kl", "cur_kl_coeff", "cur_lr", "total_loss", "vf_explained_var", "entropy"} <= set(learner)
        assert learner["cur_lr"] == pytest.approx(policy.config["lr"]) and np.isfinite(learner["total_loss"])
        assert any(not np.array_equal(v, before[k]) for k, v in policy.get_weights().items())
        if tracing:
            grads = getattr(policy, "grads", None)
            assert grads is not None  # clip_gradients ran its tf.gradients branch
        batch = algo.workers.sample()
        assert {"vf_preds", "behaviour_logits", "advantages", "value_targets"} <= set(batch.keys())
    finally:
        algo.stop()


@pytest.mark.slow
def test_001_my_algo_through_tune_with_two_workers(tmp_path):
    """`tune.Tuner(MyAlgo, param_space={"env": "CartPole-v1", "num_workers": 2}).fit()`, as written; the policy is the
    torch version of MyTFPolicy (the test adds a stop: the seed's run has none). ~70 s (Ray start, 2 runners)."""
    script = tmp_path / "seed_001_tune.py"
    prelude = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {os.path.join(ROOT, "examples")!r})
        import ray
        from ray import tune
        import policy_gradient_custom_policy as pg  # the seed's PG policy, with torch
        ray.cloudpickle.register_pickle_by_value(pg)  # Tune's actors cannot import the example by name
        MyTFPolicy = pg.MyTorchPolicy
        _init = ray.init
        ray.init = lambda *a, **kw: _init(*a, num_cpus=4, **kw)  # the seed's 3 CPUs, on a 2-core CI machine
        _Tuner, TUNERS = tune.Tuner, []
        def _tuner_with_a_stop(*args, **kwargs):  # the seed's run has no stop criterion: it would train forever
            kwargs.setdefault("run_config", tune.RunConfig(stop={{"training_iteration": 2}}, verbose=0,
                                                           storage_path={str(tmp_path / "results")!r}))
            TUNERS.append(_Tuner(*args, **kwargs))
            return TUNERS[-1]
        tune.Tuner = _tuner_with_a_stop
    ''')
    epilogue = textwrap.dedent('''
        result = TUNERS[0].get_results().get_best_result(metric="training_iteration", mode="max")
        assert result.error is None, result.error
        print("ITERATIONS", result.metrics["training_iteration"], result.metrics["num_env_steps_sampled_lifetime"])
    ''')
    # Guarded as a script: relayrl's checkpoint naming imports the algorithm's module by name inside Tune's actor,
    # which must not run the experiment again.
    body = prelude + snippet("001_my_algo_tune.txt") + epilogue
    script.write_text("if __name__ == '__main__':\n" + textwrap.indent(body, "    "))
    env = env_without_ray_rllib(tmp_path / "no_ray_rllib", ROOT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=400, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "ITERATIONS 2" in proc.stdout


# -- PPO's pieces --------------------------------------------------------------------------------------------

def ppo_surrogate_loss(policy, model, dist_class, train_batch):
    """A small PPO loss (the seed does not show PPO's); it sets policy.loss_obj-like stats for stats_fn."""
    logits, _ = model.from_batch(train_batch)
    dist = dist_class(logits, model)
    prev = dist_class(train_batch[SampleBatch.ACTION_DIST_INPUTS], model)
    ratio = torch.exp(dist.logp(train_batch[SampleBatch.ACTIONS]) - train_batch[SampleBatch.ACTION_LOGP])
    adv = train_batch[Postprocessing.ADVANTAGES]
    surrogate = torch.min(adv * ratio, adv * torch.clamp(ratio, 0.8, 1.2))
    vf_loss = (model.value_function() - train_batch[Postprocessing.VALUE_TARGETS]).pow(2)
    policy.mean_kl = prev.kl(dist).mean()
    return -surrogate.mean() + policy.kl_coeff * policy.mean_kl + 0.5 * vf_loss.mean()


def kl_stats(policy, train_batch):
    return {"kl": policy.mean_kl, "cur_kl_coeff": policy.kl_coeff, "cur_lr": policy.cur_lr}


def seed_ppo_class(policy_class):
    """The seed's PPO class around `policy_class`, with its training_step (indented: in the seed its body sits at the
    def's level, a seed bug)."""
    from relayrl.policy.execution import (
        LEARNER_STATS_KEY,
        NUM_AGENT_STEPS_SAMPLED,
        NUM_ENV_STEPS_SAMPLED,
        WORKER_UPDATE_TIMER,
        multi_gpu_train_one_step,
        standardize_fields,
        synchronous_parallel_sample,
        train_one_step,
    )

    # As written: relayrl's `override` checks that Algorithm has each method (validate_config included).
    ppo = run("001_ppo_class.txt", Algorithm=Algorithm, override=override, AlgorithmConfigDict=dict,
              DEFAULT_CONFIG=None, PPOTFPolicy=policy_class)["PPO"]
    lines = snippet("001_ppo_training_step.txt").splitlines()
    source = "\n".join([lines[0]] + ["    " + line for line in lines[1:]])
    seed_training_step = run("training_step", source, ResultDict=dict,
                             synchronous_parallel_sample=synchronous_parallel_sample,
                             NUM_AGENT_STEPS_SAMPLED=NUM_AGENT_STEPS_SAMPLED,
                             NUM_ENV_STEPS_SAMPLED=NUM_ENV_STEPS_SAMPLED, standardize_fields=standardize_fields,
                             train_one_step=train_one_step, multi_gpu_train_one_step=multi_gpu_train_one_step,
                             WORKER_UPDATE_TIMER=WORKER_UPDATE_TIMER,
                             LEARNER_STATS_KEY=LEARNER_STATS_KEY)["training_step"]

    class SeedPPO(ppo):
        get_default_config = classmethod(lambda cls: PolicyAlgorithmConfig(algo_class=cls))  # DEFAULT_CONFIG: None
        training_step = seed_training_step

    return SeedPPO


def test_001_ppo_snippets_with_torch_policy():
    """The PPO class, training_step (its body indented: in the seed it sits at the def's level, a seed bug),
    vf_preds_and_logits_fetches and setup_mixins, on a torch policy built with the seed's arguments."""
    from relayrl.policy.execution import NUM_ENV_STEPS_SAMPLED

    fetches = run("001_vf_preds_and_logits_fetches.txt", SampleBatch=SampleBatch,
                  BEHAVIOUR_LOGITS="behaviour_logits")["vf_preds_and_logits_fetches"]
    setup_mixins = run("001_setup_mixins.txt", ValueNetworkMixin=ValueNetworkMixin, KLCoeffMixin=KLCoeffMixin,
                       LearningRateSchedule=LearningRateSchedule)["setup_mixins"]
    PPOTorchPolicy = build_policy_class(
        "PPOTorchPolicy", "torch", get_default_config=lambda: {"kl_coeff": 0.2, "kl_target": 0.01, "lambda": 0.95,
                                                              "model": {"fcnet_hiddens": [32]}},
        loss_fn=ppo_surrogate_loss, stats_fn=kl_stats, extra_action_out_fn=fetches,
        postprocess_fn=compute_gae_for_sample_batch, before_loss_init=setup_mixins,
        mixins=[LearningRateSchedule, KLCoeffMixin, ValueNetworkMixin])
    SeedPPO = seed_ppo_class(PPOTorchPolicy)
    algo = SeedPPO(config=quiet({"env": "CartPole-v1", "train_batch_size": 64}))
    try:
        policy = algo.get_policy()
        assert isinstance(policy, (LearningRateSchedule, KLCoeffMixin, ValueNetworkMixin))
        assert policy.kl_coeff == 0.2
        result = algo.train()
        assert policy.kl_coeff != 0.2  # update_kl ran on the stats_fn's kl
        assert algo._counters[NUM_ENV_STEPS_SAMPLED] >= 64
        assert "kl" in result["learners"]["default_policy"]
        batch = algo.workers.sample()
        assert {"vf_preds", "behaviour_logits", "advantages", "value_targets"} <= set(batch.keys())
    finally:
        algo.stop()


def seed_ppo_policy_snippet():
    """The with_updates snippet and its framework: as written (relayrl's PPOTFPolicy) with TensorFlow installed;
    without it, the import line names PPOTorchPolicy instead."""
    source = snippet("001_with_updates.txt")
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        torch_import = "from relayrl.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy as PPOTFPolicy"
        return source.replace("from relayrl.algorithms.ppo.ppo_tf_policy import PPOTFPolicy", torch_import), "torch"
    return source, "tf2"


def value_error_loss(framework: str, calls: list):
    """A custom loss for the snippet's `some_custom_loss_fn`: the value function's squared error only, so what it
    trains is visible (the value branch changes, the policy branch does not)."""
    def some_custom_loss_fn(policy, model, dist_class, train_batch):
        calls.append(train_batch.count)
        model.from_batch(train_batch)
        error = model.value_function() - train_batch[Postprocessing.VALUE_TARGETS]
        if framework == "torch":
            return error.pow(2).mean()
        import tensorflow as tf

        return tf.reduce_mean(tf.square(error))

    return some_custom_loss_fn


def test_001_with_updates():
    """The seed's `CustomPolicy = PPOTFPolicy.with_updates(name="MyCustomPPOTFPolicy", loss_fn=some_custom_loss_fn)`
    as written, on relayrl's PPOTFPolicy (PPOTorchPolicy without TensorFlow); CustomPolicy keeps PPO's
    postprocessing, mixins and defaults and trains with the custom loss inside an Algorithm. The snippet's last line
    cannot run: `PPOTrainer` is never defined in the seed (RLlib removed Trainer.with_updates)."""
    source, framework = seed_ppo_policy_snippet()
    calls = []
    namespace = {"__name__": "seed_snippet", "some_custom_loss_fn": value_error_loss(framework, calls)}
    with pytest.raises(NameError, match="PPOTrainer"):
        exec(compile(source, "001_with_updates.txt", "exec"), namespace)
    base, custom = namespace["PPOTFPolicy"], namespace["CustomPolicy"]
    assert base.__name__ == ("PPOTFPolicy" if framework == "tf2" else "PPOTorchPolicy")
    assert custom.__name__ == "MyCustomPPOTFPolicy" and custom._framework == base._framework
    assert custom._original_kwargs["loss_fn"] is namespace["some_custom_loss_fn"]
    assert custom._original_kwargs["postprocess_fn"] is compute_gae_for_sample_batch
    algo = algo_for(custom, framework=framework, train_batch_size=64, model={"fcnet_hiddens": [16]})
    try:
        policy = algo.get_policy()
        assert type(policy).__name__ == "MyCustomPPOTFPolicy" and policy.config["clip_param"] == 0.3
        before = policy.get_weights()
        stats = algo.train()["learners"]["default_policy"]
        assert calls and calls[0] >= 64
        changed = {k for k, v in policy.get_weights().items() if not np.array_equal(v, before[k])}
        assert changed and all("value" in k for k in changed)  # the custom loss trained: the value branch only
        assert "cur_kl_coeff" in stats and "total_loss" not in stats  # PPO's stats without PPO's loss parts
        assert {"vf_preds", "advantages", "value_targets"} <= set(algo.workers.sample().keys())
    finally:
        algo.stop()


@pytest.mark.parametrize("framework", ["torch", "tf2"])
def test_001_ppo_class_and_training_step_on_relayrls_ppo_policies(framework):
    """The seed's PPO class and training_step (indented) around relayrl's own PPOTorchPolicy / PPOTFPolicy: it
    trains, reports PPO's stats and its update_kl adapts the policy's KL coefficient."""
    if framework == "torch":
        from relayrl.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy as policy_class
    else:
        pytest.importorskip("tensorflow")
        from relayrl.algorithms.ppo.ppo_tf_policy import PPOTFPolicy as policy_class
    algo = seed_ppo_class(policy_class)(config=quiet({"env": "CartPole-v1", "train_batch_size": 64,
                                                      "framework": framework, "model": {"fcnet_hiddens": [16]}}))
    try:
        policy = algo.get_policy()
        before = policy.get_weights()
        stats = algo.train()["learners"]["default_policy"]
        assert {"total_loss", "policy_loss", "vf_loss", "kl", "entropy", "cur_kl_coeff"} <= set(stats)
        assert float(policy.kl_coeff_val if framework == "tf2" else policy.kl_coeff) != 0.2
        assert any(not np.array_equal(v, before[k]) for k, v in policy.get_weights().items())
    finally:
        algo.stop()


def test_policy_spec_is_public():
    assert relayrl.PolicySpec is PolicySpec
