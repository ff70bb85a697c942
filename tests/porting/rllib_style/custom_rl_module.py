"""A custom RLModule, as RLlib's `examples/rl_modules/custom_rl_module.py` writes one: a TorchRLModule with its own
actor-critic nets and the ValueFunctionAPI, given through an RLModuleSpec."""
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.annotations import override
from ray.rllib.utils.framework import try_import_torch
from ray.rllib.utils.metrics import LEARNER_RESULTS
from ray.rllib.utils.test_utils import add_rllib_example_script_args, run_rllib_example_script_experiment

torch, nn = try_import_torch()


class ActorCriticModule(TorchRLModule, ValueFunctionAPI):
    @override(TorchRLModule)
    def setup(self):
        hidden = self.model_config.get("hidden_dim", 16)
        in_size = self.observation_space.shape[0]
        self._pi = nn.Sequential(nn.Linear(in_size, hidden), nn.Tanh(), nn.Linear(hidden, self.action_space.n))
        self._vf = nn.Sequential(nn.Linear(in_size, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    @override(TorchRLModule)
    def _forward(self, batch, **kwargs):
        return {Columns.ACTION_DIST_INPUTS: self._pi(batch[Columns.OBS])}

    @override(ValueFunctionAPI)
    def compute_values(self, batch, embeddings=None):
        return self._vf(batch[Columns.OBS]).squeeze(-1)


parser = add_rllib_example_script_args(default_iters=2, default_reward=1e9)

if __name__ == "__main__":
    args = parser.parse_args()
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .framework("torch")
        .rl_module(rl_module_spec=RLModuleSpec(module_class=ActorCriticModule, model_config={"hidden_dim": 12}))
        .training(train_batch_size_per_learner=256, minibatch_size=128, num_epochs=1)
    )
    result = run_rllib_example_script_experiment(config, args)
    module_results = result[LEARNER_RESULTS][DEFAULT_MODULE_ID]
    assert module_results["vf_loss"] > 0 and "policy_loss" in module_results, sorted(module_results)
    algo = config.build_algo()
    module = algo.get_module()
    algo.stop()
    assert type(module) is ActorCriticModule and module._pi[0].out_features == 12
    print("PORTED OK", type(module).__name__, round(module_results["vf_loss"], 3))
