"""The EnvRunner's numpy inference (env/sampling/numpy_actions.py, direct_numpy_actions.py; the module's
NumpyForwardAPI): when it runs, and that it computes what the torch path computes."""
import numpy as np
import pytest
import torch

from relayrl import ConnectorV2, PPOConfig
from relayrl.algorithms.ppo.default_ppo_rl_module import DefaultPPOTorchRLModule
from relayrl.core.columns import Columns
from relayrl.env.env_runner import EnvRunner
from relayrl.env.sampling import plan_actions
from relayrl.env.sampling.direct_numpy_actions import DirectNumpyActions
from relayrl.env.sampling.numpy_actions import NumpyActions, NumpyCategoricalPolicy
from relayrl.modules.numpy_forward import NumpyMLP
from relayrl.modules.rl_module_spec import RLModuleSpec


def _config(**env_runners):
    env_runners = {"num_envs_per_env_runner": 4, "rollout_fragment_length": 50, **env_runners}
    return PPOConfig().environment("CartPole-v1").env_runners(**env_runners).debugging(seed=3)


def _runner(config=None, weights_seed=0) -> EnvRunner:
    torch.manual_seed(weights_seed)
    runner = EnvRunner(config=config or _config())
    runner.sample(num_timesteps=8)  # resets the envs; the plan needs the first batch
    return runner


def _torch_forward(module, obs):
    with torch.inference_mode():
        return module.forward_exploration({Columns.OBS: torch.from_numpy(obs)})[Columns.ACTION_DIST_INPUTS].numpy()


class PassThrough(ConnectorV2):  # a custom piece that changes nothing
    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        return batch


class OwnForward(DefaultPPOTorchRLModule):
    def _forward(self, batch, **kwargs):
        out = super()._forward(batch, **kwargs)
        out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] * 0
        return out


class OwnSetup(DefaultPPOTorchRLModule):  # only re-initialises: the forward is the default one
    def setup(self):
        super().setup()
        torch.nn.init.zeros_(self.encoder[0].bias)


def _source(runner, random_actions=False):
    """The action source a sample() call of `runner` would use."""
    return plan_actions(runner, explore=True, random_actions=random_actions)


def _numpy_policy(runner):
    return NumpyCategoricalPolicy.for_runner(runner)


def _plan_of(runner, random_actions=False):
    source = _source(runner, random_actions)
    if isinstance(source, DirectNumpyActions):
        return "numpy, pipelines skipped"
    if isinstance(source, NumpyActions):
        return "numpy, pipelines called"
    return None


def _plan(config, random_actions=False):
    """None where the torch path (or random actions) runs; else whether the pipelines are called."""
    return _plan_of(_runner(config), random_actions)


class ScaleObservations(ConnectorV2):  # a custom env-to-module piece: the module sees other inputs
    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        batch[Columns.OBS] = np.stack([episode.get_observations(-1) for episode in episodes]) * 3.0
        return batch


class SharpenLogits(ConnectorV2):  # a custom piece before GetActions: it changes what gets sampled
    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        batch[Columns.ACTION_DIST_INPUTS] = batch[Columns.ACTION_DIST_INPUTS] * 10
        return batch


def test_the_default_ppo_runner_uses_numpy_inference_and_skips_the_default_pipelines():
    assert _plan(_config()) == "numpy, pipelines skipped"
    assert _plan(_config().rl_module(rl_module_spec=RLModuleSpec(module_class=OwnSetup))) == "numpy, pipelines skipped"


@pytest.mark.parametrize("pieces", ["env_to_module", "module_to_env"])
def test_with_custom_pieces_numpy_inference_runs_through_the_pipelines(pieces):
    factory = {"env_to_module": {"env_to_module_connector": lambda env, spaces, device: PassThrough()},
               "module_to_env": {"module_to_env_connector": lambda env, spaces: PassThrough()}}[pieces]
    assert _plan(_config(**factory)) == "numpy, pipelines called"


@pytest.mark.parametrize("case", ["option off", "random actions", "piece before GetActions", "own forward", "elu",
                                  "exploration object"])  # Box actions: test_numpy_box_actions.py
def test_anything_numpy_inference_cannot_reproduce_keeps_the_torch_path(case):
    config = _config()
    if case == "option off":
        config.env_runners(numpy_inference=False)
    elif case == "piece before GetActions":
        config.env_runners(module_to_env_connector=lambda env, spaces: PassThrough())
        runner = _runner(config)
        runner._module_to_env.prepend(SharpenLogits())
        assert _source(runner).__class__.__name__ == "TorchModuleActions"
        return
    elif case == "own forward":
        config.rl_module(rl_module_spec=RLModuleSpec(module_class=OwnForward))
    elif case == "elu":
        config.rl_module(model_config={"fcnet_activation": "elu"})
    elif case == "exploration object":
        config.env_runners(exploration_config={"type": "EpsilonGreedy"})
    assert _plan(config, random_actions=case == "random actions") is None


def test_logits_and_log_probs_match_the_torch_module():
    runner = _runner(_config(num_envs_per_env_runner=64))
    obs = runner._cached_to_module[Columns.OBS].numpy()
    out = _numpy_policy(runner)(obs, explore=True)
    logits = _torch_forward(runner.module, obs)
    np.testing.assert_allclose(out[Columns.ACTION_DIST_INPUTS], logits, rtol=1e-5, atol=1e-6)
    expected_logp = torch.log_softmax(torch.from_numpy(logits), -1).numpy()[np.arange(64), out[Columns.ACTIONS]]
    np.testing.assert_allclose(out[Columns.ACTION_LOGP], expected_logp, rtol=1e-5, atol=1e-6)
    assert out[Columns.ACTIONS].dtype == np.int64 and out[Columns.ACTION_LOGP].dtype == np.float32
    assert out[Columns.ACTION_DIST_INPUTS].dtype == np.float32


def test_sampled_actions_follow_the_softmax_of_the_logits():
    logits = np.array([[0.0, 1.0, -1.0], [2.0, 0.0, 0.0]], np.float32)
    probs = torch.softmax(torch.from_numpy(logits), -1).numpy()
    identity = NumpyMLP([(np.eye(3, dtype=np.float32), logits[0] * 0, None)])  # passes its input through
    policy = NumpyCategoricalPolicy(identity, np.random.default_rng(0))
    draws = np.stack([policy(np.repeat(logits, 1000, 0), True)[Columns.ACTIONS] for _ in range(10)])
    for row in range(2):
        frequencies = np.bincount(draws[:, row * 1000:(row + 1) * 1000].ravel(), minlength=3) / 10_000
        np.testing.assert_allclose(frequencies, probs[row], atol=0.015)


@pytest.mark.parametrize("custom_piece", [False, True])
def test_greedy_sampling_gives_the_same_episodes_as_the_torch_path(custom_piece, monkeypatch):
    numpy_steps = []
    numpy_call = NumpyCategoricalPolicy.__call__
    monkeypatch.setattr(NumpyCategoricalPolicy, "__call__",
                        lambda policy, obs, explore: numpy_steps.append(obs) or numpy_call(policy, obs, explore))
    pieces = {"env_to_module_connector": lambda env, spaces, device: ScaleObservations()} if custom_piece else {}
    results = []
    for numpy_inference in (True, False):
        torch.manual_seed(0)
        runner = EnvRunner(config=_config(numpy_inference=numpy_inference, **pieces))
        with torch.no_grad():  # clear margins between the logits: float rounding must not decide the argmax
            runner.module.pi[-1].weight.mul_(100)
        results.append(runner.sample(num_timesteps=200, explore=False))
        if numpy_inference:  # every step went through the numpy policy, with the pipelines when customised
            assert len(numpy_steps) == 200 // 4
            assert _plan_of(runner) == ("numpy, pipelines called" if custom_piece else "numpy, pipelines skipped")
    assert len(numpy_steps) == 200 // 4  # and none with numpy_inference=False
    assert [len(e) for e in results[0]] == [len(e) for e in results[1]]
    for a, b in zip(*results):
        np.testing.assert_array_equal(a.get_actions(), b.get_actions())
        np.testing.assert_array_equal(a.get_observations(), b.get_observations())
        np.testing.assert_allclose(a.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS),
                                   b.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(a.get_extra_model_outputs(Columns.ACTION_LOGP),
                                      b.get_extra_model_outputs(Columns.ACTION_LOGP))


def test_seeded_runs_repeat_and_new_weights_are_used_at_once():
    first, second = _runner(), _runner()
    for a, b in zip(first.sample(num_timesteps=100), second.sample(num_timesteps=100)):
        np.testing.assert_array_equal(a.get_actions(), b.get_actions())
    # A weight sync copies into the parameters in place; the numpy views see it without a rebuild.
    new_weights = _runner(weights_seed=1).module.get_state()
    first.set_state({"rl_module": new_weights})
    obs = first._cached_to_module[Columns.OBS].numpy()
    out = _numpy_policy(first)(obs, explore=True)
    np.testing.assert_allclose(out[Columns.ACTION_DIST_INPUTS], _torch_forward(first.module, obs), rtol=1e-5,
                               atol=1e-6)
    with torch.no_grad():
        first.module.pi[-1].weight.add_(1.0)  # also an in-place change made by hand
    np.testing.assert_allclose(_numpy_policy(first)(obs, True)[Columns.ACTION_DIST_INPUTS],
                               _torch_forward(first.module, obs), rtol=1e-5, atol=1e-6)


def test_a_restored_runner_continues_the_same_random_stream():
    runner = _runner()
    runner.sample(num_timesteps=40)
    state = runner.get_state()
    expected = runner.sample(num_timesteps=60)
    restored = _runner(weights_seed=5)
    restored.set_state(state)
    for a, b in zip(restored.sample(num_timesteps=60), expected):
        np.testing.assert_array_equal(a.get_actions(), b.get_actions())
        np.testing.assert_array_equal(a.get_observations(), b.get_observations())


def test_after_a_numpy_sample_the_torch_path_starts_from_the_latest_observations():
    runner = _runner()
    runner.sample(num_timesteps=40)
    latest = np.stack([episode.get_observations(-1) for episode in runner._episodes])
    np.testing.assert_array_equal(runner._cached_to_module[Columns.OBS].numpy(), latest)
