"""PPO on CartPole-v1 with a hand-written actor-critic RLModule instead of the default one.

    python examples/custom_rl_module.py --stop-reward 450 --stop-iters 100

A custom RLModule only needs `setup()` (build the layers) and `_forward()` (return the action
distribution inputs); PPO also needs the value function (`ValueFunctionAPI.compute_values`). The
module is given to the algorithm with `config.rl_module(rl_module_spec=RLModuleSpec(module_class=...))`;
`model_config` reaches the module as `self.model_config`.
"""
import argparse

from torch import nn

from relayrl import Columns, PPOConfig, RLModule, RLModuleSpec, ValueFunctionAPI
from relayrl.testing.example_script import add_rllib_example_script_args, run_rllib_example_script_experiment


class ActorCriticModule(RLModule, ValueFunctionAPI):
    """Separate policy and value MLPs for a 1-D Box observation and Discrete actions."""

    def setup(self):
        hidden = int(self.model_config.get("hidden_size", 64))
        obs_dim = self.observation_space.shape[0]
        num_actions = self.action_space.n
        self.policy_net = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.Tanh(),
            nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, num_actions),
        )
        # Start from a near-uniform policy.
        nn.init.orthogonal_(self.policy_net[-1].weight, gain=0.01)
        nn.init.zeros_(self.policy_net[-1].bias)
        # EnvRunners build the module with inference_only=True: they never need the value net.
        if not self.inference_only:
            self.value_net = nn.Sequential(
                nn.Linear(obs_dim, hidden), nn.Tanh(),
                nn.Linear(hidden, hidden), nn.Tanh(),
                nn.Linear(hidden, 1),
            )

    def _forward(self, batch, **kwargs):
        # Used for inference, exploration and training; GetActions samples (or takes the argmax of) these logits.
        return {Columns.ACTION_DIST_INPUTS: self.policy_net(batch[Columns.OBS])}

    def compute_values(self, batch, embeddings=None):
        return self.value_net(batch[Columns.OBS]).squeeze(-1)

    # The learner sends only the policy weights to the (inference-only) EnvRunner modules.
    def get_state(self, components=None, *, not_components=None, inference_only: bool = False, **kwargs):
        state = super().get_state()
        if inference_only:
            state = {k: v for k, v in state.items() if not k.startswith("value_net.")}
        return state


def build_config(args):
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=8)
        .training(lr=0.0003, num_epochs=6, vf_loss_coeff=0.01)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=ActorCriticModule),
                   model_config={"hidden_size": args.hidden_size})
        .debugging(seed=args.seed)
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_rllib_example_script_args(parser, default_reward=450.0, default_iters=100,
                                  default_timesteps=300_000)
    parser.set_defaults(no_tune=True)  # train in this process (RLlib's default is Ray Tune)
    parser.add_argument("--hidden-size", type=int, default=64)
    args = parser.parse_args(argv)

    return run_rllib_example_script_experiment(
        build_config(args), args,
        on_algorithm_built=lambda algo: print(f"The algorithm acts with {type(algo.get_module()).__name__}"))

if __name__ == "__main__":
    main()
