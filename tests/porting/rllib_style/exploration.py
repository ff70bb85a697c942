"""Exploration, as RLlib's DQN examples write it: an epsilon-greedy schedule while training, and evaluation with
exploration switched off (`evaluation_config=AlgorithmConfig.overrides(explore=False)`)."""
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.algorithms.dqn import DQNConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EVALUATION_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME
from ray.rllib.utils.test_utils import add_rllib_example_script_args

parser = add_rllib_example_script_args(default_iters=2)

if __name__ == "__main__":
    args = parser.parse_args()
    config = (
        DQNConfig()
        .environment("CartPole-v1")
        .framework("torch")
        .env_runners(explore=True)
        .training(epsilon=[(0, 1.0), (400, 0.1)], num_steps_sampled_before_learning_starts=100,
                  replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": 5000})
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
        .reporting(min_sample_timesteps_per_iteration=200)
        .evaluation(evaluation_interval=1, evaluation_duration=2,
                    evaluation_config=AlgorithmConfig.overrides(explore=False))
    )
    algo = config.build_algo()
    for _ in range(args.stop_iters):
        result = algo.train()
    epsilon = algo.env_runner.exploration.get_info()["cur_epsilon"]
    steps = result[NUM_ENV_STEPS_SAMPLED_LIFETIME]
    assert steps >= 400 and 0.1 <= epsilon < 0.11, (steps, epsilon)  # annealed (nearly) to its final value
    assert algo.eval_env_runner.config.explore is False and algo.env_runner.config.explore is True
    assert result[EVALUATION_RESULTS][ENV_RUNNER_RESULTS]["num_episodes"] == 2
    algo.stop()
    print("PORTED OK", steps, round(epsilon, 3))
