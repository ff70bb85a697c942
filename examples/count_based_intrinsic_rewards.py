"""Count-based intrinsic rewards: the seeds' reward-shaping Learner connector, on a sparse-reward corridor.

`CountBasedIntrinsicRewards` (the seeds' "Example: Reward shaping prior to loss computation") is
a Learner connector piece. It walks over every observation of every train episode and adds
`1 / N(o_t)` to the reward at that step, `N(o_t)` being how often the piece has seen `o_t`
so far. It writes the new rewards back into the episodes; the default Learner pieces that run
after it (AddColumnsFromEpisodesToTrainBatch) then put the changed rewards into the train batch,
so the loss sees extrinsic + intrinsic rewards.

The env, `Corridor`, rewards only reaching its far end (+1) and truncates after a few steps more
than the shortest path, so a random policy rarely sees any reward; the count bonus pays for
visiting new cells. Its observations are cell indices (Discrete); the FlattenObservations
env-to-module piece one-hot encodes them in the episodes, so `tuple(obs)` works as a count key.

    python examples/count_based_intrinsic_rewards.py                # with the intrinsic rewards
    python examples/count_based_intrinsic_rewards.py --no-intrinsic # extrinsic rewards only

With the defaults (corridor of 20 cells), seeds 0-4 reached an extrinsic return >= 0.95 within 7-8
iterations with the intrinsic rewards; without them, seeds 0 and 4 still had return 0 after 25.
"""
import argparse
from collections import Counter

import gymnasium as gym
import numpy as np

from relayrl import DefaultModelConfig, PPOConfig
from relayrl.connectors import ConnectorV2, FlattenObservations
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment


class CountBasedIntrinsicRewards(ConnectorV2):
    """Learner piece: r(t) = r_e(t) + 1 / N(o_t), written back into the episodes."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

        # Observation counter to compute state visitation frequencies.
        self._counts = Counter()

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        for sa_episode in self.single_agent_episode_iterator(episodes=episodes, agents_that_stepped_only=False):
            # Loop through all observations, except the last one.
            observations = sa_episode.get_observations(slice(None, -1))
            # Get all respective extrinsic rewards.
            rewards = sa_episode.get_rewards()

            for i, (obs, rew) in enumerate(zip(observations, rewards)):
                # Add 1 to obs counter.
                obs = tuple(obs)
                self._counts[obs] += 1
                # Compute the count-based intrinsic reward and add it to the extrinsic reward.
                rew += 1 / self._counts[obs]
                # Store the new reward back to the episode (under the correct timestep/index).
                sa_episode.set_rewards(new_data=rew, at_indices=i)

        return batch


class Corridor(gym.Env):
    """Cells 0 .. length-1; start in cell 0; action 1 moves right, 0 moves left (walls at both ends).

    Reaching the last cell gives +1 and ends the episode; every other step gives 0. The episode is
    truncated after `max_episode_steps` steps (default: twice the shortest path).
    """

    def __init__(self, config=None):
        config = dict(config or {})
        self.length = int(config.get("length", 20))
        self.max_episode_steps = int(config.get("max_episode_steps", 2 * (self.length - 1)))
        self.observation_space = gym.spaces.Discrete(self.length)
        self.action_space = gym.spaces.Discrete(2)
        self._pos = 0
        self._t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._pos, self._t = 0, 0
        return self._pos, {}

    def step(self, action):
        self._pos = int(np.clip(self._pos + (1 if int(action) == 1 else -1), 0, self.length - 1))
        self._t += 1
        terminated = self._pos == self.length - 1
        truncated = not terminated and self._t >= self.max_episode_steps
        return self._pos, float(terminated), terminated, truncated, {}


def get_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_rllib_example_script_args(parser, default_reward=0.95, default_iters=50,
                                  default_timesteps=200_000)
    parser.set_defaults(no_tune=True)  # train in this process (RLlib's default is Ray Tune)
    parser.add_argument("--no-intrinsic", action="store_true", help="Train on the extrinsic rewards only.")
    parser.add_argument("--corridor-length", type=int, default=20)
    parser.add_argument("--train-batch-size", type=int, default=1000)
    parser.add_argument("--num-envs", type=int, default=4)
    return parser


def build_config(args) -> PPOConfig:
    config = (
        PPOConfig()
        .environment(Corridor, env_config={"length": args.corridor_length})
        .env_runners(
            num_envs_per_env_runner=args.num_envs,
            # Discrete cell index -> one-hot float32 observation, written into the episodes.
            env_to_module_connector=lambda env, spaces, device: FlattenObservations(),
        )
        .training(train_batch_size=args.train_batch_size, minibatch_size=128, lr=0.0005, num_epochs=6,
                  gamma=0.99, entropy_coeff=0.01)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32], vf_share_layers=False))
        .debugging(seed=args.seed)
    )
    if not args.no_intrinsic:
        # The Learner connector factory takes (observation space, action space); RLlib puts the
        # returned piece(s) before its default Learner pieces.
        config.learners(learner_connector=lambda obs_space, act_space: CountBasedIntrinsicRewards())
    return config


def main(argv=None):
    args = get_parser().parse_args(argv)
    # env_runners/episode_return_mean is the extrinsic return: the env's own rewards.
    return run_rllib_example_script_experiment(build_config(args), args)


if __name__ == "__main__":
    main()
