"""Learning tests' loops (train until the mean return reaches a target or the budget runs out; train once), the Learner
batch that sampled episodes become, and recording a trained policy's steps (offline data, expert data)."""
import copy
from typing import Tuple


def stateless_cartpole() -> str:
    """The registered name of StatelessCartPole with CartPole-v1's episode limit (TimeLimit 500): the memory task of
    RLlib's LSTM examples and of relayrl's stateful-module defaults (docs/stateful_modules.md)."""
    from gymnasium.wrappers import TimeLimit

    from relayrl.env.registry import register_env
    from relayrl.testing.example_envs import StatelessCartPole

    register_env("StatelessCartPole-v1", lambda config: TimeLimit(StatelessCartPole(config), max_episode_steps=500))
    return "StatelessCartPole-v1"


def train_until(config, target: float, budget: int) -> Tuple[float, int]:
    """Build the algorithm from `config`, train it until `episode_return_mean >= target` or `budget` env steps
    are sampled, stop it; returns (last mean return, env steps sampled)."""
    algo = config.build_algo()
    try:
        return train_algo_until(algo, target, budget)
    finally:
        algo.stop()


def train_algo_until(algo, target: float, budget: int) -> Tuple[float, int]:
    """Train a built algorithm until `episode_return_mean >= target` or `budget` env steps are sampled (it stays
    running); returns (last mean return, env steps sampled)."""
    while True:
        result = algo.train()
        ret, steps = result["env_runners"]["episode_return_mean"], result["num_env_steps_sampled_lifetime"]
        if ret >= target or steps >= budget:
            return ret, steps


def train_once(config) -> dict:
    """Build the algorithm from `config`, run one train() call, stop it; returns the result."""
    algo = config.build_algo()
    try:
        return algo.train()
    finally:
        algo.stop()


def sample_and_learner_batch(config, fragments: int):
    """Build the algorithm, sample `fragments` times on its local EnvRunner and run the episodes through the local
    Learner's connector pipeline; returns (a copy of the episodes as sampled, the batch by module id, the Learner's
    MultiRLModule)."""
    algo = config.build_algo()
    try:
        runner, learner = algo.env_runner, algo.learner_group._learner
        episodes = [ep for _ in range(fragments) for ep in runner.sample()]
        kept = copy.deepcopy(episodes)  # the pipeline changes the episodes it reads
        batch = learner._learner_connector(rl_module=learner.module, batch={}, episodes=episodes)
        return kept, batch, learner.module
    finally:
        algo.stop()


def record_policy(config, weights, folder: str, num_timesteps: int) -> None:
    """Record `num_timesteps` greedy steps of a policy (`weights`, e.g. `learner_group.get_weights()` of a trained
    algorithm of `config`'s kind) as transition rows into `folder` (config.offline_data(output=...))."""
    recorder = (config.copy(copy_frozen=False).offline_data(output=str(folder), output_write_episodes=False)
                .build_algo())
    try:
        recorder.learner_group.set_weights(weights)
        recorder.sync_weights()
        recorder.env_runner.sample(num_timesteps=num_timesteps, explore=False)
    finally:
        recorder.stop()


def train_and_record(config, folder: str, num_timesteps: int, target: float, budget: int) -> int:
    """Train `config`'s algorithm to a mean return of `target` (RuntimeError if `budget` env steps do not reach
    it), then record `num_timesteps` greedy steps of the trained policy into `folder` (record_policy): expert data.
    Returns the env steps the training took."""
    algo = config.build_algo()
    try:
        ret, steps = train_algo_until(algo, target, budget)
        weights = algo.learner_group.get_weights()
    finally:
        algo.stop()
    if ret < target:
        raise RuntimeError(f"the expert reached a mean return of {ret:.1f} after {steps} env steps, below {target}")
    record_policy(config, weights, folder, num_timesteps)
    return steps
