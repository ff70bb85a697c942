"""Curriculum learning (the seeds' "Curriculum Learning" section): three corridor lengths, harder
as the agent gets good, switched from `on_train_result` on every sub-env of every EnvRunner.

    python examples/curriculum_learning.py --stop-iters 60
"""
from relayrl import PPOConfig, RLlibCallback
from relayrl.testing.envs import CorridorEnv
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment

TASKS = [3, 6, 12]  # corridor lengths: easy, medium, hard


def optimal_return(length: int) -> float:
    return 1.0 - 0.1 * (length - 1)  # -0.1 per step, +1.0 at the end


class CurriculumCallbacks(RLlibCallback):
    """Moves to the next task once the mean return is within 0.2 of the current task's optimum."""

    def __init__(self):
        self.task_index = 0

    def on_train_result(self, *, algorithm, result, **kwargs):
        result["curriculum_task"] = TASKS[self.task_index]  # the task this iteration trained on
        mean_return = result["env_runners"]["episode_return_mean"]
        if self.task_index < len(TASKS) - 1 and mean_return >= optimal_return(TASKS[self.task_index]) - 0.2:
            self.task_index += 1
        task = TASKS[self.task_index]
        # The seeds' snippet, as written: every sub-env of every EnvRunner gets the new task.
        algorithm.workers.foreach_worker(lambda ev: ev.foreach_env(lambda env: env.set_task(task)))
        # Evaluation runners (if any) evaluate on the task being trained.
        if algorithm.eval_env_runner_group is not None:
            algorithm.eval_env_runner_group.foreach_env(lambda env: env.set_task(task))

    # The task index goes into checkpoints (a callbacks object's get_state) and back to the envs after a restore:
    # restored runners may make their envs anew (remote runners always do), at the first task.
    def get_state(self):
        return {"task_index": self.task_index}

    def set_state(self, state):
        self.task_index = state["task_index"]

    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        task = TASKS[self.task_index]
        algorithm.env_runner_group.foreach_env(lambda env: env.set_task(task))
        if algorithm.eval_env_runner_group is not None:
            algorithm.eval_env_runner_group.foreach_env(lambda env: env.set_task(task))

    def on_env_runners_recreated(self, *, algorithm, env_runner_group, env_runner_indices, **kwargs):
        """A crashed remote runner came back with fresh envs: give them the current task too."""
        task = TASKS[self.task_index]
        env_runner_group.foreach_env_runner(lambda ev: ev.foreach_env(lambda env: env.set_task(task)),
                                            local_env_runner=False, remote_worker_ids=env_runner_indices)


def build_config(args) -> PPOConfig:
    return (
        PPOConfig()
        .environment(CorridorEnv, env_config={"corridor_length": TASKS[0], "max_episode_steps": 50})
        .env_runners(num_envs_per_env_runner=4)
        .training(train_batch_size=512, minibatch_size=64, num_epochs=5, lr=1e-3, gamma=0.99)
        .callbacks(CurriculumCallbacks)
        .reporting(metrics_num_episodes_for_smoothing=20)  # judge each task on recent episodes only
        .debugging(seed=args.seed)
    )


def main(argv=None):
    parser = add_rllib_example_script_args(default_reward=optimal_return(TASKS[-1]) - 0.2, default_iters=60,
                                           default_timesteps=200_000)
    parser.set_defaults(no_tune=True)  # train in this process (RLlib's default is Ray Tune)
    args = parser.parse_args(argv)
    stop = {"curriculum_solved": 1.0, "training_iteration": args.stop_iters,
            "num_env_steps_sampled_lifetime": args.stop_timesteps}
    config = build_config(args).callbacks(on_train_result=lambda *, result, **kw: result.update(
        curriculum_solved=float(result["curriculum_task"] == TASKS[-1]
                                and result["env_runners"]["episode_return_mean"] >= args.stop_reward)))
    result = run_rllib_example_script_experiment(config, args, stop=stop)
    print(f"last task trained on: corridor length {result['curriculum_task']}")
    return result


if __name__ == "__main__":
    main()
