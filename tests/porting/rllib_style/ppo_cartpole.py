"""PPO on CartPole, as RLlib's `examples/algorithms/ppo/cartpole_ppo.py` writes it."""
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN, NUM_ENV_STEPS_SAMPLED_LIFETIME
from ray.rllib.utils.test_utils import add_rllib_example_script_args, run_rllib_example_script_experiment

parser = add_rllib_example_script_args(default_reward=450.0, default_timesteps=300000)

if __name__ == "__main__":
    args = parser.parse_args()

    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .framework("torch")
        .env_runners(num_envs_per_env_runner=2)
        .training(lr=0.0003, num_epochs=2, vf_loss_coeff=0.01, train_batch_size_per_learner=256, minibatch_size=64)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32], fcnet_activation="linear", vf_share_layers=True))
    )

    stop = {
        f"{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}": args.stop_reward,
        NUM_ENV_STEPS_SAMPLED_LIFETIME: args.stop_timesteps,
        "training_iteration": args.stop_iters,
    }
    result = run_rllib_example_script_experiment(config, args, stop=stop)
    print("PORTED OK", result["training_iteration"], result[NUM_ENV_STEPS_SAMPLED_LIFETIME])
