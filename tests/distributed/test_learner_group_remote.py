"""Remote Learners: 2 DDP Learner actors give the same update as 1 local Learner on the same batch."""
import time

import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.distributed.learner_actors import reduce_learner_results
from relayrl.distributed.learner_sharding import per_learner_minibatch_size, shard_batch, shard_row_indices
from relayrl.learner.learner_group import LearnerGroup
from relayrl.learner.minibatches import iterate_minibatches

ray = pytest.importorskip("ray")

OBS = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)
ACT = gym.spaces.Discrete(2)
SPACES = {"__env_single__": (OBS, ACT)}
ROWS, MINIBATCH, EPOCHS = 256, 64, 2


# Ray: tests/distributed/conftest.py starts one small local instance per module (fixture `ray_cluster`).


def ppo_config(num_learners, **training):
    settings = dict(minibatch_size=MINIBATCH, num_epochs=EPOCHS, shuffle_batch_per_epoch=False, lr=1e-3,
                    use_kl_loss=True, kl_coeff=0.2, kl_target=1e-4, grad_clip=0.5, entropy_coeff=0.01)
    settings.update(training)
    return (PPOConfig().environment(observation_space=OBS, action_space=ACT).debugging(seed=0)
            .training(**settings).learners(num_learners=num_learners)
            .rl_module(model_config={"fcnet_hiddens": [16, 16]}))


def make_group(config):
    return LearnerGroup(config=config, module_spec=config.get_rl_module_spec(spaces=SPACES), spaces=SPACES)


def fixed_train_batch(seed=0):
    """A PPO train batch (no loss mask: every row counts) as the Learner connector would build it."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(ROWS, 2)).astype(np.float32)
    actions = rng.integers(0, 2, ROWS)
    logp = logits[np.arange(ROWS), actions] - np.log(np.exp(logits).sum(-1))
    return {
        Columns.OBS: rng.normal(size=(ROWS, 4)).astype(np.float32),
        Columns.ACTIONS: actions,
        Columns.ACTION_DIST_INPUTS: logits,
        Columns.ACTION_LOGP: logp.astype(np.float32),
        Columns.ADVANTAGES: rng.normal(size=ROWS).astype(np.float32),
        Columns.VALUE_TARGETS: rng.normal(size=ROWS).astype(np.float32),
    }


def assert_weights_close(a, b, atol=1e-5):
    assert a.keys() == b.keys()
    for mid in a:
        assert a[mid].keys() == b[mid].keys()
        for name in a[mid]:
            np.testing.assert_allclose(np.asarray(a[mid][name]), np.asarray(b[mid][name]), atol=atol, rtol=0,
                                       err_msg=f"{mid}/{name}")


# -- sharding (no Ray) ----------------------------------------------------------------------------------
@pytest.mark.parametrize("rows,minibatch,learners", [(256, 64, 2), (250, 64, 2), (100, 12, 3), (8, None, 2),
                                                     (10, 40, 2)])
def test_shards_split_each_global_minibatch(rows, minibatch, learners):
    """Learner k's minibatch i is part k of the single Learner's minibatch i (no shuffling)."""
    batch = {DEFAULT_MODULE_ID: {"x": torch.arange(rows), Columns.INFOS: ["i"] * rows}}

    def minibatches(module_batch, size):
        return [mb[DEFAULT_MODULE_ID]["x"] for mb in iterate_minibatches(module_batch, num_epochs=1,
                                                                       minibatch_size=size, shuffle=False)]

    single = minibatches(batch, minibatch)
    shards = [shard_batch(batch, k, learners, minibatch) for k in range(learners)]
    per_learner = [minibatches(shard, size) for shard, size in shards]
    assert all(len(steps) == len(single) for steps in per_learner)  # same number of DDP steps everywhere
    for i, rows_i in enumerate(single):
        parts = [steps[i] for steps in per_learner]
        assert len({len(part) for part in parts}) == 1  # equal parts: averaged gradients = the whole mean
        assert torch.cat(parts).sort().values.tolist() == rows_i.tolist()
    lengths = {len(shard[DEFAULT_MODULE_ID]["x"]) for shard, _ in shards}
    assert lengths == {rows // learners}
    assert shards[0][0][DEFAULT_MODULE_ID][Columns.INFOS] == ["i"] * rows  # infos are not sliced


def test_rows_that_do_not_split_evenly_are_dropped():
    shards = [shard_row_indices(7, k, 2, None) for k in range(2)]
    assert [s.tolist() for s in shards] == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="cannot be split"):
        shard_row_indices(1, 0, 2, None)


def test_minibatch_size_must_divide_over_learners():
    with pytest.raises(ValueError, match="multiple of num_learners"):
        per_learner_minibatch_size(65, 2)
    with pytest.raises(ValueError, match="multiple of num_learners"):
        make_group(ppo_config(2, minibatch_size=63))  # checked before any actor starts


def test_reduce_learner_results_sums_counts_and_averages_the_rest():
    results = [{DEFAULT_MODULE_ID: {"policy_loss": 1.0, "num_module_steps_trained": 128}, "__all_modules__": {
        "num_env_steps_trained": 128}}, {DEFAULT_MODULE_ID: {"policy_loss": 3.0, "num_module_steps_trained": 128},
                                         "__all_modules__": {"num_env_steps_trained": 128}}]
    assert reduce_learner_results(results) == {DEFAULT_MODULE_ID: {"policy_loss": 2.0, "num_module_steps_trained": 256},
                                               "__all_modules__": {"num_env_steps_trained": 256}}


# -- Ray actors --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("training", [
    pytest.param({}, id="ppo"),
    pytest.param({"use_critic": False, "use_gae": False}, id="no_critic", marks=pytest.mark.slow),
])
def test_two_ddp_learners_match_one_local_learner(ray_cluster, training):
    """use_critic=False leaves the value head's parameters without gradients: DDP must not wait for them."""
    local, remote = make_group(ppo_config(0, **training)), make_group(ppo_config(2, **training))
    try:
        assert remote.is_remote and remote.num_learners == 2 and local.is_local
        remote.set_weights(local.get_weights())
        initial = local.get_weights()
        batch = fixed_train_batch()
        for update in range(2):  # the second update also checks optimizer state and the KL coefficient
            local_results = local.update(batch=batch)
            remote_results = remote.update(batch=batch)
            mine, theirs = local_results[DEFAULT_MODULE_ID], remote_results[DEFAULT_MODULE_ID]
            for key in ("total_loss", "policy_loss", "vf_loss", "entropy", "mean_kl_loss", "curr_kl_coeff"):
                assert theirs[key] == pytest.approx(mine[key], rel=1e-5, abs=1e-6), (update, key)
            assert theirs["num_module_steps_trained"] == mine["num_module_steps_trained"] == ROWS
            assert_weights_close(remote.get_weights(), local.get_weights())
        assert mine["curr_kl_coeff"] != pytest.approx(0.2)  # the KL coefficient did adapt (and identically)
        changed = {n: not np.allclose(initial[DEFAULT_MODULE_ID][n], w)
                   for n, w in local.get_weights()[DEFAULT_MODULE_ID].items()}
        trains_critic = training.get("use_critic", True)
        assert all(changed[n] == (trains_critic or not n.startswith("vf")) for n in changed), changed
        # Both actors hold the same weights (DDP applied identical updates).
        first, second = remote.foreach_learner(lambda learner: learner.get_weights())
        assert_weights_close(first, second, atol=0)
        assert remote.foreach_learner(lambda learner: learner.distributed) == [True, True]
    finally:
        local.shutdown()
        actors = list(remote._remote.actors)
        remote.shutdown()
    for actor in actors:  # shutdown killed the actors (ray.kill is asynchronous: poll)
        with pytest.raises(ray.exceptions.RayActorError):
            for _ in range(100):
                ray.get(actor.has_gpu.remote(), timeout=30)
                time.sleep(0.1)


def test_one_remote_learner_equals_local_and_state_round_trips(ray_cluster):
    local, remote = make_group(ppo_config(0)), make_group(ppo_config(1))
    try:
        remote.set_weights(local.get_weights())
        batch = fixed_train_batch(seed=1)
        local_results, remote_results = local.update(batch=batch), remote.update(batch=batch)
        assert remote_results[DEFAULT_MODULE_ID]["total_loss"] == pytest.approx(
            local_results[DEFAULT_MODULE_ID]["total_loss"], rel=1e-6)
        assert_weights_close(remote.get_weights(), local.get_weights())
        assert remote.foreach_learner(lambda learner: learner.distributed) == [False]
        state = remote.get_state()
        assert set(state["learner"]) >= {"rl_module", "optimizer"}
        local.set_state(state)
        assert_weights_close(local.get_weights(), remote.get_weights(), atol=0)
        module = remote.get_module(DEFAULT_MODULE_ID)  # a local copy with the remote weights
        assert_weights_close({DEFAULT_MODULE_ID: module.get_state()}, remote.get_weights(), atol=0)
    finally:
        local.shutdown()
        remote.shutdown()


@pytest.mark.slow  # ~20 s on 2 busy cores: starts 2 actors and samples 2 x 256 CartPole steps
def test_ppo_with_two_learners_trains_on_cartpole(ray_cluster):
    config = (PPOConfig().environment("CartPole-v1").debugging(seed=0, logger_config={"type": "none"})
              .env_runners(num_envs_per_env_runner=4)
              .learners(num_learners=2)
              .training(train_batch_size_per_learner=128, minibatch_size=64, num_epochs=2))
    algo = config.build_algo()
    try:
        assert algo.config.total_train_batch_size == 256
        before = algo.learner_group.get_weights()
        for iteration in (1, 2):
            result = algo.train()
            assert result["training_iteration"] == iteration
            learner = result["learners"][DEFAULT_MODULE_ID]
            assert np.isfinite(learner["total_loss"]) and np.isfinite(learner["vf_loss"])
        assert result["num_env_steps_sampled_lifetime"] >= 2 * 256
        assert result["num_env_steps_trained_lifetime"] >= 2 * 256
        after = algo.learner_group.get_weights()
        assert any(not np.array_equal(before[DEFAULT_MODULE_ID][n], w) for n, w in after[DEFAULT_MODULE_ID].items())
        # The EnvRunner samples with the Learners' weights.
        runner_weights = algo.env_runner.module.get_state()
        for name, value in runner_weights.items():
            np.testing.assert_array_equal(np.asarray(value), after[DEFAULT_MODULE_ID][name])
    finally:
        algo.stop()


@pytest.mark.slow  # compiles in both Learner actors
def test_two_ddp_learners_with_a_compiled_training_pass_match_one_eager_local_learner(ray_cluster):
    """torch_compile_learner: DDP runs the compiled forward and losses, and its all-reduced gradients are the
    eager Learner's."""
    local = make_group(ppo_config(0))
    remote = make_group(ppo_config(2).framework(torch_compile_learner=True,
                                                torch_compile_learner_what_to_compile="complete_update"))
    try:
        remote.set_weights(local.get_weights())
        batch = fixed_train_batch()
        mine, theirs = local.update(batch=batch)[DEFAULT_MODULE_ID], remote.update(batch=batch)[DEFAULT_MODULE_ID]
        for key in ("total_loss", "policy_loss", "vf_loss", "entropy"):
            assert theirs[key] == pytest.approx(mine[key], rel=1e-5, abs=1e-6), key
        assert_weights_close(remote.get_weights(), local.get_weights(), atol=1e-4)
        assert remote.foreach_learner(lambda learner: (learner.distributed, type(learner._train_pass).__name__)) \
            == [(True, "CompiledTrainPass")] * 2
    finally:
        local.shutdown()
        remote.shutdown()


def test_learners_with_half_a_cpu_each_ask_ray_for_half_a_cpu_and_train(ray_cluster):
    """RLlib's num_cpus_per_learner is a Ray resource: fractions let several Learner actors share a core."""
    group = make_group(ppo_config(2).learners(num_cpus_per_learner=0.5))
    try:
        deadline = time.time() + 30
        while ray.available_resources().get("CPU", 0) != 1.0 and time.time() < deadline:
            time.sleep(0.2)  # (the resource view lags the actors' start a little)
        assert ray.available_resources().get("CPU", 0) == 1.0  # 2 CPUs, two Learners holding half of one each
        results = group.update(batch=fixed_train_batch(seed=1))
        assert np.isfinite(results[DEFAULT_MODULE_ID]["total_loss"])
        assert group.foreach_learner(lambda learner: __import__("torch").get_num_threads()) == [1, 1]
    finally:
        group.shutdown()


def test_the_weights_version_of_remote_learners_changes_only_with_their_weights(ray_cluster):
    """What an offline algorithm's acting runner compares before copying the Learner's weights again."""
    group = make_group(ppo_config(1))
    try:
        version = group.weights_version()
        assert group.weights_version() == version and group.get_weights() is not None
        group.update(batch=fixed_train_batch(seed=1))
        trained = group.weights_version()
        assert trained != version
        group.set_weights(group.get_weights())
        assert group.weights_version() != trained
    finally:
        group.shutdown()
