"""The curriculum example: the task set from on_train_result reaches every sub-env."""
import importlib.util
import pathlib

import pytest

EXAMPLE = pathlib.Path(__file__).parent.parent / "examples" / "curriculum_learning.py"
spec = importlib.util.spec_from_file_location("curriculum_learning", EXAMPLE)
curriculum = importlib.util.module_from_spec(spec)
spec.loader.exec_module(curriculum)


def test_task_switches_on_the_return_threshold_and_reaches_every_sub_env():
    args = curriculum.add_rllib_example_script_args().parse_args([])
    algo = curriculum.build_config(args).build_algo()
    try:
        tasks = lambda: algo.env_runner_group.foreach_env(lambda env: env.get_task())[0]  # noqa: E731
        assert tasks() == [3, 3, 3, 3]
        result = {"env_runners": {"episode_return_mean": -1.0}}
        algo.callbacks.on_train_result(algorithm=algo, result=result)
        assert result["curriculum_task"] == 3 and tasks() == [3, 3, 3, 3]  # not good enough yet
        result = {"env_runners": {"episode_return_mean": curriculum.optimal_return(3)}}
        algo.callbacks.on_train_result(algorithm=algo, result=result)
        assert result["curriculum_task"] == 3 and tasks() == [6, 6, 6, 6]  # trained on 3, next is 6
        algo.callbacks.on_train_result(algorithm=algo, result={"env_runners": {"episode_return_mean": 0.5}})
        assert tasks() == [12, 12, 12, 12]
    finally:
        algo.stop()


def test_the_task_comes_back_after_a_restore(tmp_path):
    """The callbacks' task index is in the checkpoint and on_checkpoint_loaded gives the task to the new envs (the
    index went back to 0 and the next on_train_result set the first task again)."""
    args = curriculum.add_rllib_example_script_args().parse_args([])
    config = curriculum.build_config(args)
    algo, fresh = config.build_algo(), config.build_algo()
    try:
        algo.callbacks.on_train_result(algorithm=algo, result={"env_runners": {"episode_return_mean": 1.0}})
        path = algo.save_to_path(str(tmp_path / "checkpoint"))
        fresh.restore_from_path(path)
        assert fresh.callbacks.task_index == 1
        assert fresh.env_runner_group.foreach_env(lambda env: env.get_task()) == [[6, 6, 6, 6]]
    finally:
        algo.stop()
        fresh.stop()


def test_the_callback_runs_inside_train():
    result = curriculum.main(["--stop-iters", "2"])
    assert result["training_iteration"] == 2 and result["curriculum_task"] in curriculum.TASKS


def test_task_reaches_evaluation_runners():
    args = curriculum.add_rllib_example_script_args().parse_args([])
    algo = curriculum.build_config(args).evaluation(evaluation_interval=1, evaluation_duration=1).build_algo()
    try:
        algo.callbacks.on_train_result(algorithm=algo, result={"env_runners": {"episode_return_mean": 1.0}})
        assert algo.eval_env_runner_group.foreach_env(lambda env: env.get_task()) == [[6, 6, 6, 6]]
    finally:
        algo.stop()


@pytest.mark.slow  # starts Ray and three runner actors (one restart)
def test_task_survives_a_remote_runner_restart():
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    args = curriculum.add_rllib_example_script_args().parse_args([])
    config = (curriculum.build_config(args)
              .env_runners(num_env_runners=2, num_envs_per_env_runner=2, num_cpus_per_env_runner=0.5)
              .training(train_batch_size=128, minibatch_size=64, num_epochs=1)
              .fault_tolerance(delay_between_env_runner_restarts_s=0.0))
    algo = config.build_algo()
    try:
        algo.callbacks.on_train_result(algorithm=algo, result={"env_runners": {"episode_return_mean": 1.0}})
        assert algo.env_runner_group.foreach_env(lambda env: env.get_task()) == [[6, 6], [6, 6]]
        ray.kill(algo.env_runner_group.remote_env_runners[0].actor, no_restart=True)
        for _ in range(3):  # the dead runner is noticed, restarted and re-tasked within these
            result = algo.train()
        assert algo.env_runner_group.num_remote_env_runner_restarts() == 1
        assert result["num_healthy_env_runners"] == 2
        assert algo.env_runner_group.foreach_env(lambda env: env.get_task()) == [[6, 6], [6, 6]]
    finally:
        algo.stop()
        ray.shutdown()
