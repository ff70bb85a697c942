"""A custom Exploration class: epsilon-greedy over PPO's action distribution, epsilon decaying with env steps.

`EpsilonSampling.get_exploration_action` picks a uniformly random action with probability
epsilon(t) and otherwise samples from the policy; it returns the behaviour policy's log-probability
log(eps / n + (1 - eps) * pi(a | s)) so PPO's importance ratio stays correct. It is plugged in with

    config.env_runners(exploration_config={"type": EpsilonSampling, "initial_epsilon": 0.5, ...})

(a class, a built-in name such as "EpsilonGreedy", or a dotted path "my_pkg.module:EpsilonSampling").
Every EnvRunner builds one, reachable as `algo.env_runner.exploration`; `timestep` is the runner's
lifetime env-step count. A callback prints `get_info()` after every iteration; at the end the
trained greedy policy plays one episode through `algo.compute_single_action(obs, explore=False)`.

    python examples/custom_exploration.py --stop-iters 10
"""
import gymnasium as gym
import torch

from relayrl import PPOConfig, RLlibCallback
from relayrl.core.schedules import Scheduler
from relayrl.exploration import Exploration
from relayrl.testing.example_script import add_rllib_example_script_args, should_stop

parser = add_rllib_example_script_args(default_reward=450.0, default_iters=15, default_timesteps=100_000)


class EpsilonSampling(Exploration):
    """With probability epsilon a uniform random action, else a sample from the policy (Discrete spaces)."""

    def __init__(self, action_space, *, initial_epsilon: float = 0.5, final_epsilon: float = 0.0,
                 epsilon_timesteps: int = 20_000, **kwargs):
        super().__init__(action_space, **kwargs)
        assert isinstance(action_space, gym.spaces.Discrete), "EpsilonSampling needs Discrete actions"
        self.schedule = Scheduler([(0, initial_epsilon), (epsilon_timesteps, final_epsilon)])

    def get_exploration_action(self, *, action_distribution, timestep, explore=True):
        if not explore:  # greedy: the distribution's deterministic action (argmax), probability 1
            actions = action_distribution.deterministic_sample()
            return actions, torch.zeros(actions.shape)
        self.last_timestep = timestep
        epsilon = self.schedule.get(timestep)
        policy_actions = action_distribution.sample()
        random_actions = torch.randint(self.action_space.n, policy_actions.shape)
        actions = torch.where(torch.rand(policy_actions.shape) < epsilon, random_actions, policy_actions)
        probs = epsilon / self.action_space.n + (1 - epsilon) * action_distribution.logp(actions).exp()
        return actions, probs.log()

    def get_info(self):
        return {"cur_epsilon": self.schedule.get(self.last_timestep)}


class PrintExplorationInfo(RLlibCallback):
    def on_train_result(self, *, algorithm, result, **kwargs):
        info = algorithm.env_runner.exploration.get_info()
        result["exploration_info"] = info
        print(f"  exploration: {info}", flush=True)


def build_config(args) -> PPOConfig:
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(exploration_config={"type": EpsilonSampling, "initial_epsilon": 0.5,
                                         "epsilon_timesteps": 20_000})
        .callbacks(PrintExplorationInfo)
        .debugging(seed=args.seed)
    )


def greedy_episode_return(algo) -> float:
    env = gym.make("CartPole-v1")
    obs, _ = env.reset(seed=0)
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, _ = env.step(algo.compute_single_action(obs, explore=False))
        total, done = total + reward, terminated or truncated
    return total


if __name__ == "__main__":
    args = parser.parse_args()
    stop = {"env_runners/episode_return_mean": args.stop_reward, "training_iteration": args.stop_iters,
            "num_env_steps_sampled_lifetime": args.stop_timesteps}
    algo = build_config(args).build_algo()
    print(f"exploration object: {algo.env_runner.exploration!r}")
    try:
        while True:
            result = algo.train()
            print(f"iter={result['training_iteration']} steps={result['num_env_steps_sampled_lifetime']} "
                  f"return={result['env_runners']['episode_return_mean']:.2f}", flush=True)
            if should_stop(stop, result):
                break
        print(f"greedy episode return (compute_single_action, explore=False): {greedy_episode_return(algo):.0f}")
    finally:
        algo.stop()
