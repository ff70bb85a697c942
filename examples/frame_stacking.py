"""Frame stacking with connectors: the module sees the last four observations, the episodes keep single frames.

The seeds' "Stacking the N most recent observations" example (Learner connector pipelines page):
one ConnectorV2 class, `StackFourObservations`, used twice:

- in the env-to-module pipeline (on the EnvRunner) it puts the four newest observations of each
  ongoing episode, concatenated, into the batch for the action-computing forward pass;
- in the Learner pipeline (`as_learner_connector=True`) it puts, for every timestep of every
  episode, the four observations up to that timestep into the train batch.

Neither writes the stacked observations into the episodes, so nothing is stored or shipped
twice. Frames before the episode start are zeros; for chunks cut in the middle of an episode
(batch_mode="truncate_episodes") the three earlier frames come from the chunk's lookback buffer,
which is why the config sets `episode_lookback_horizon=3`. The env-to-module pipeline computes the
RLModule's observation space from `recompute_output_observation_space`: CartPole's Box(4,)
becomes Box(16,).

`--builtin` uses relayrl's off-the-shelf `FrameStacking(num_frames=4)` piece instead.

    python examples/frame_stacking.py --stop-reward 450
    python examples/frame_stacking.py --builtin --stop-iters 20
"""
import argparse

import gymnasium as gym
import numpy as np

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.connectors import ConnectorV2, FrameStacking
from relayrl.core.columns import Columns
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment

NUM_FRAMES = 4


class StackFourObservations(ConnectorV2):
    """Stacks the four most recent observations into one (works as env-to-module and as Learner piece)."""

    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        # Assume the input observation space is a Box of shape (x,).
        assert isinstance(input_observation_space, gym.spaces.Box) and len(input_observation_space.shape) == 1
        # The four observations are concatenated on axis 0: the output has shape (4 * x,).
        return gym.spaces.Box(
            low=np.tile(input_observation_space.low, NUM_FRAMES),
            high=np.tile(input_observation_space.high, NUM_FRAMES),
            shape=(input_observation_space.shape[0] * NUM_FRAMES,),
            dtype=input_observation_space.dtype,
        )

    def __init__(self, input_observation_space=None, input_action_space=None, *, as_learner_connector=False,
                 **kwargs):
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self._as_learner_connector = as_learner_connector

    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        # Loop through all (single-agent) episodes.
        for sa_episode in self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False):
            if self._as_learner_connector:
                # Every timestep t of the episode needs observations t-3 .. t. Negative indices reach
                # into the lookback buffer (`neg_index_as_lookback=True`); positions before the
                # episode start are zero-filled.
                n = len(sa_episode)
                frames = sa_episode.get_observations(
                    slice(-(NUM_FRAMES - 1), n), neg_index_as_lookback=True, fill=0.0,
                )
                frames = np.asarray(frames)  # (n + 3, x)
                stacked = np.concatenate([frames[i:i + n] for i in range(NUM_FRAMES)], axis=-1)  # (n, 4 * x)
                # One already batched array for all n timesteps of this episode.
                self.add_n_batch_items(batch=batch, column=Columns.OBS, items_to_add=stacked, num_items=n,
                                       single_agent_episode=sa_episode)
            else:
                # The four most recent observations (left-zero-filled at the beginning of the episode).
                last_4_obs = sa_episode.get_observations(indices=[-4, -3, -2, -1], fill=0.0)
                new_obs = np.concatenate(last_4_obs, axis=0)
                # The episode itself keeps single (non-stacked) observations.
                self.add_batch_item(batch=batch, column=Columns.OBS, item_to_add=new_obs,
                                    single_agent_episode=sa_episode)
        # Return the batch (with stacked observations).
        return batch


def get_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_rllib_example_script_args(parser, default_reward=450.0, default_iters=50,
                                  default_timesteps=200_000)
    parser.set_defaults(no_tune=True)  # train in this process (RLlib's default is Ray Tune)
    parser.add_argument("--builtin", action="store_true",
                        help="Use relayrl's FrameStacking(num_frames=4) instead of StackFourObservations.")
    parser.add_argument("--train-batch-size", type=int, default=2000)
    parser.add_argument("--num-envs", type=int, default=4)
    return parser


def build_config(args) -> PPOConfig:
    if args.builtin:
        env_to_module = lambda env, spaces, device: FrameStacking(num_frames=NUM_FRAMES)  # noqa: E731
        learner = lambda obs_space, act_space: FrameStacking(num_frames=NUM_FRAMES,  # noqa: E731
                                                             as_learner_connector=True)
    else:
        env_to_module = lambda env, spaces, device: StackFourObservations()  # noqa: E731
        learner = lambda obs_space, act_space: StackFourObservations(as_learner_connector=True)  # noqa: E731
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(
            num_envs_per_env_runner=args.num_envs,
            # Frame stacking on the EnvRunner side ...
            env_to_module_connector=env_to_module,
            # ... cut episode chunks keep the 3 earlier frames the Learner side needs.
            episode_lookback_horizon=NUM_FRAMES - 1,
        )
        # ... and again on the Learner side.
        .training(
            learner_connector=learner,
            train_batch_size=args.train_batch_size,
            minibatch_size=128,
            lr=0.0003,
            num_epochs=6,
            vf_loss_coeff=0.01,
        )
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
