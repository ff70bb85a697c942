"""A custom env-to-module connector piece: append the (scaled) timestep to every observation.

CartPole's observation does not say how long the episode has been running, yet the episode is
truncated at 500 steps: values near the time limit are ambiguous without it. `AddTimeStepToObs`
appends `t / max_episode_steps` to each new observation.

It follows the seeds' rule for env-to-module pieces whose change must persist: the new
observation is written back into the episode (`set_observations(at_indices=-1)`), not only into
the batch. The default pieces after it then put the changed observation into the batch for the
forward pass, and the Learner later trains on exactly what the module saw, without a matching
Learner piece. `recompute_output_observation_space` tells the pipeline (and so the RLModule) that
observations now have one more dimension: Box(4,) becomes Box(5,).

    python examples/custom_env_to_module_connector.py --stop-reward 450
"""
import argparse

import gymnasium as gym
import numpy as np

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.connectors import ConnectorV2
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment


class AddTimeStepToObs(ConnectorV2):
    """Env-to-module piece: obs -> concat(obs, [t / max_episode_steps]), written into the episode."""

    def __init__(self, input_observation_space=None, input_action_space=None, *, max_episode_steps: int = 500,
                 **kwargs):
        # Set attributes before super().__init__(), which computes the output space if spaces are given.
        self.max_episode_steps = max_episode_steps
        super().__init__(input_observation_space, input_action_space, **kwargs)

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        assert isinstance(input_observation_space, gym.spaces.Box) and len(input_observation_space.shape) == 1
        return gym.spaces.Box(
            low=np.append(input_observation_space.low, 0.0).astype(np.float32),
            high=np.append(input_observation_space.high, 1.0).astype(np.float32),
            dtype=np.float32,
        )

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        for sa_episode in self.single_agent_episode_iterator(episodes):
            # The newest observation was reached at global timestep `t` of the episode (across
            # chunks; `len(sa_episode)` would restart at 0 in every chunk).
            obs = sa_episode.get_observations(-1)
            t = min(sa_episode.t, self.max_episode_steps) / self.max_episode_steps
            sa_episode.set_observations(new_data=np.append(obs, t).astype(np.float32), at_indices=-1)
        return batch


def get_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_rllib_example_script_args(parser, default_reward=450.0, default_iters=50,
                                  default_timesteps=200_000)
    parser.set_defaults(no_tune=True)  # train in this process (RLlib's default is Ray Tune)
    parser.add_argument("--train-batch-size", type=int, default=2000)
    parser.add_argument("--num-envs", type=int, default=4)
    return parser


def build_config(args) -> PPOConfig:
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(
            num_envs_per_env_runner=args.num_envs,
            # A factory (env, spaces, device) -> piece(s); they run before the default pieces.
            env_to_module_connector=lambda env, spaces, device: AddTimeStepToObs(max_episode_steps=500),
        )
        .training(train_batch_size=args.train_batch_size, minibatch_size=128, lr=0.0003, num_epochs=6,
                  vf_loss_coeff=0.01)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32], fcnet_activation="linear",
                                                   vf_share_layers=True))
        .debugging(seed=args.seed)
    )


def main(argv=None):
    args = get_parser().parse_args(argv)
    return run_rllib_example_script_experiment(
        build_config(args), args,
        on_algorithm_built=lambda algo: print(f"RLModule observation space: {algo.get_module().observation_space}"))


if __name__ == "__main__":
    main()
