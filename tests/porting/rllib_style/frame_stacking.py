"""Frame stacking, as RLlib's `examples/connectors/frame_stacking.py` writes it: StatelessCartPole hides the
velocities; stacking the last frames on both sides (env-to-module and Learner) gives them back to the module."""
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.connectors.env_to_module.frame_stacking import FrameStackingEnvToModule
from ray.rllib.connectors.learner.frame_stacking import FrameStackingLearner
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.examples.envs.classes.stateless_cartpole import StatelessCartPole
from ray.rllib.utils.test_utils import add_rllib_example_script_args, run_rllib_example_script_experiment

parser = add_rllib_example_script_args(default_reward=1e9, default_iters=2)
parser.add_argument("--num-frames", type=int, default=4)

if __name__ == "__main__":
    args = parser.parse_args()
    config = (
        PPOConfig()
        .environment(StatelessCartPole)
        .framework("torch")
        .env_runners(env_to_module_connector=lambda env: FrameStackingEnvToModule(num_frames=args.num_frames))
        .training(learner_connector=lambda obs_space, act_space: FrameStackingLearner(num_frames=args.num_frames),
                  train_batch_size_per_learner=256, minibatch_size=128, num_epochs=1)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
    )
    assert FrameStackingLearner(num_frames=4)._as_learner_connector and not \
        FrameStackingEnvToModule(num_frames=4)._as_learner_connector
    result = run_rllib_example_script_experiment(config, args)
    algo = config.build_algo()
    obs_space = algo.get_module().observation_space
    algo.stop()
    assert StatelessCartPole().observation_space.shape == (2,) and obs_space.shape == (2 * args.num_frames,), obs_space
    assert result["learners"]["default_policy"]["vf_loss"] > 0
    print("PORTED OK", obs_space.shape, result["training_iteration"])
