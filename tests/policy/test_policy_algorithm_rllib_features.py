"""What an RLlib user expects of a Policy-based Algorithm beyond training: evaluation, compute_single_action,
reset_config (Tune PBT mutating lr) and checkpoints that resume bit-identically."""
import numpy as np
import pytest
import torch

from test_policy_algorithm import ClassMethodAlgo

BASE = {"env": "CartPole-v1", "train_batch_size": 64, "seed": 0, "logger_config": {"type": "none"}}


def test_evaluation_every_n_iterations_with_explore_false():
    algo = ClassMethodAlgo(config={**BASE, "evaluation_interval": 2, "evaluation_duration": 3,
                                   "evaluation_config": {"explore": False}})
    try:
        first, second = algo.train(), algo.train()
        assert "evaluation" not in first
        evaluation = second["evaluation"]["env_runners"]
        assert evaluation["num_episodes"] == 3 and evaluation["episode_return_mean"] > 0
        runner = algo.eval_env_runner_group.local_worker()
        assert runner.config.explore is False and algo.env_runner_group.local_worker().config.explore is True
        # the evaluation policy acts with the training weights, deterministically (argmax of its logits)
        trained = algo.get_policy().get_weights()
        assert all(np.array_equal(v, runner.get_policy().get_weights()[k]) for k, v in trained.items())
        assert algo.evaluate()["env_runners"]["num_episodes"] == 3
        batch = runner.sample(num_episodes=1)
        assert np.array_equal(batch["actions"], batch["action_dist_inputs"].argmax(axis=1))
    finally:
        algo.stop()


def _algo_class_by_value():
    """An Algorithm class made in a function, so Ray ships it (and its policy) to the actors by value."""
    import torch

    from relayrl.algorithms.algorithm import Algorithm
    from relayrl.policy.policy_template import build_policy_class

    def loss(policy, model, dist_class, train_batch):
        logits, _ = model.from_batch(train_batch)
        return -torch.mean(dist_class(logits, model).logp(train_batch["actions"]) * train_batch["rewards"])

    policy_class = build_policy_class("PG", "torch", loss_fn=loss)

    class RemoteAlgo(Algorithm):
        def get_default_policy_class(self, config):
            return policy_class

    return RemoteAlgo


@pytest.mark.slow  # starts Ray (15-30 s on a loaded machine)
def test_evaluation_by_timesteps_on_a_remote_runner():
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    algo = _algo_class_by_value()(config={**BASE, "evaluation_interval": 1, "evaluation_duration": 50,
                                          "evaluation_duration_unit": "timesteps", "evaluation_num_env_runners": 1})
    try:
        result = algo.train()
        assert algo.eval_env_runner_group.num_remote_env_runners() == 1
        assert result["evaluation"]["env_runners"]["num_env_steps_sampled"] == 50
        remote_weights = algo.eval_env_runner_group.foreach_env_runner(
            lambda runner: runner.get_policy().get_weights(), local_env_runner=False)[0]
        trained = algo.get_policy().get_weights()
        assert all(np.array_equal(v, remote_weights[k]) for k, v in trained.items())
    finally:
        algo.stop()
        ray.shutdown()


def test_compute_single_action_uses_the_named_policy():
    algo = ClassMethodAlgo(config=BASE)
    try:
        obs = np.array([0.01, -0.02, 0.03, 0.04], np.float32)
        policy = algo.get_policy()
        action, state, extra = algo.compute_single_action(obs, full_fetch=True, explore=False)
        assert action == int(np.argmax(extra["action_dist_inputs"])) and state == []
        assert action == policy.compute_single_action(obs, explore=False)[0]
        assert algo.compute_single_action(obs, policy_id="default_policy", explore=False) == action
        sampled = {int(algo.compute_single_action(obs, explore=True)) for _ in range(200)}
        assert sampled == {0, 1}
        actions = algo.compute_actions({"a": obs, "b": obs}, explore=False)
        assert actions == {"a": action, "b": action}
        with pytest.raises(ValueError, match="unknown policy_id 'nope'"):
            algo.compute_single_action(obs, policy_id="nope")
    finally:
        algo.stop()


def test_reset_config_mutates_lr_in_place_and_refuses_rebuilds():
    algo = ClassMethodAlgo(config={**BASE, "lr": 1e-3})
    try:
        algo.train()
        policy = algo.get_policy()
        assert algo.reset_config({"lr": 0.05}) is True
        assert algo.config.lr == 0.05 and policy.config["lr"] == 0.05 and policy.cur_lr == 0.05
        assert [g["lr"] for o in policy._optimizers for g in o.param_groups] == [0.05]
        before = policy.get_weights()
        algo.train()  # the optimizer steps with the new lr: Adam's first moves are about lr in size
        moved = max(np.abs(policy.get_weights()[k] - v).max() for k, v in before.items())
        assert 0.01 < moved < 0.2
        assert algo.reset_config({"num_env_runners": 3}) is False and algo.config.lr == 0.05
    finally:
        algo.stop()


def _train_and_record(algo, n):
    returns = [algo.train()["env_runners"]["episode_return_mean"] for _ in range(n)]
    return returns, algo.get_policy().get_weights()


@pytest.mark.parametrize("num_envs", [1, 2])
def test_checkpoint_resumes_bit_identically(tmp_path, num_envs):
    config = {**BASE, "num_envs_per_env_runner": num_envs}
    algo = ClassMethodAlgo(config=config)
    for _ in range(3):
        algo.train()
    path = algo.save_to_path(str(tmp_path / "ckpt"))
    expected_returns, expected_weights = _train_and_record(algo, 3)
    algo.stop()

    restored = ClassMethodAlgo(config=config)
    restored.restore_from_path(path)
    saved_weights = restored.get_policy().get_weights()
    returns, weights = _train_and_record(restored, 3)
    policy = restored.get_policy()
    restored.stop()
    assert returns == expected_returns
    assert all(np.array_equal(weights[k], v) for k, v in expected_weights.items())
    assert policy.num_grad_updates == 6

    # control: the weights alone (the old checkpoint) do not give the same continuation
    weights_only = ClassMethodAlgo(config=config)
    weights_only.get_policy().set_weights(saved_weights)
    _, other = _train_and_record(weights_only, 3)
    weights_only.stop()
    assert not all(np.array_equal(other[k], v) for k, v in expected_weights.items())


def test_checkpoint_of_the_wrong_algorithm_names_the_problem(tmp_path):
    algo = ClassMethodAlgo(config={**BASE, "num_envs_per_env_runner": 2})
    algo.train()
    path = algo.save_to_path(str(tmp_path / "ckpt"))
    algo.stop()
    other = ClassMethodAlgo(config=BASE)
    try:
        with pytest.raises(Exception, match="num_envs_per_env_runner"):
            other.restore_from_path(path)
    finally:
        other.stop()


def test_restore_keeps_the_config_lr_in_the_optimizer(tmp_path):
    """As PBT needs: a checkpoint's optimizer state comes back, the restoring algorithm's own lr stays."""
    donor = ClassMethodAlgo(config={**BASE, "lr": 0.05})
    donor.train()
    path = donor.save_to_path(str(tmp_path / "ckpt"))
    donor_moments = donor.get_policy()._optimizers[0].state_dict()["state"]
    donor.stop()
    algo = ClassMethodAlgo(config={**BASE, "lr": 1e-3})
    try:
        algo.restore_from_path(path)
        optimizer = algo.get_policy()._optimizers[0]
        assert optimizer.param_groups[0]["lr"] == 1e-3 and algo.get_policy().cur_lr == 1e-3
        restored = optimizer.state_dict()["state"]
        assert all(torch.equal(restored[i]["exp_avg"], donor_moments[i]["exp_avg"]) for i in donor_moments)
    finally:
        algo.stop()


def test_state_taken_right_after_build_restarts_the_first_iteration():
    """Tune's reused actors go back to the state taken after the build: the next iteration is the first one again."""
    fresh = ClassMethodAlgo(config=BASE)
    expected = fresh.train()["env_runners"]["episode_return_mean"]
    expected_weights = fresh.get_policy().get_weights()
    fresh.stop()
    algo = ClassMethodAlgo(config=BASE)
    try:
        initial = algo.get_state()
        algo.train()
        algo.train()
        algo.set_state(initial)
        result = algo.train()
        assert result["training_iteration"] == 1 and result["env_runners"]["episode_return_mean"] == expected
        assert all(np.array_equal(v, algo.get_policy().get_weights()[k]) for k, v in expected_weights.items())
    finally:
        algo.stop()
