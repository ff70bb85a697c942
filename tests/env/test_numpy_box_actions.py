"""The EnvRunner's numpy inference for Box actions (env/sampling/numpy_gaussian_policies.py, numpy_policies.py;
the PPO and SAC modules' numpy_forward): when it runs, and that it samples what the torch path samples."""
import numpy as np
import pytest
import torch

from relayrl import ConnectorV2, PPOConfig
from relayrl.algorithms.sac import SACConfig
from relayrl.algorithms.sac.default_sac_rl_module import DefaultSACTorchRLModule
from relayrl.core.columns import Columns
from relayrl.env.env_runner import EnvRunner
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.env.multi_agent_env_runner import MultiAgentEnvRunner
from relayrl.env.sampling import plan_actions
from relayrl.env.sampling.direct_numpy_actions import DirectNumpyActions
from relayrl.env.sampling.multi_agent_plan import plan_multi_agent_actions
from relayrl.env.sampling.numpy_gaussian_policies import NumpyDiagGaussianPolicy, NumpySquashedGaussianPolicy
from relayrl.env.sampling.numpy_policies import numpy_policy_for
from relayrl.modules.distributions import TorchSquashedGaussian
from relayrl.modules.numpy_forward import NumpyMLP
from relayrl.modules.squashed_gaussian import TanhSquashedGaussian
from relayrl.modules.rl_module_spec import RLModuleSpec

MODULES = ["ppo", "ppo free_log_std", "ppo log_std clipped", "sac"]


def _config(kind="ppo", **env_runners):
    env_runners = {"num_envs_per_env_runner": 4, "rollout_fragment_length": 50, **env_runners}
    if kind == "sac":
        config = SACConfig()
    else:
        config = PPOConfig().rl_module(model_config={"free_log_std": kind == "ppo free_log_std",
                                                     "log_std_clip_param": 0.3 if "clipped" in kind else 20.0})
    return config.environment("Pendulum-v1").env_runners(**env_runners).debugging(seed=3)


def _runner(config, weights_seed=0, explore=True) -> EnvRunner:
    torch.manual_seed(weights_seed)
    runner = EnvRunner(config=config)
    runner.sample(num_timesteps=8, explore=explore)  # resets the envs; the plan needs the first batch
    torch.manual_seed(weights_seed)  # the numpy path's first plan drew from torch's generator (inference_rng)
    with torch.no_grad():  # spread means and log-stds well away from the near-zero initial head
        pi = runner.module.pi[-1]
        pi.weight.normal_(0.0, 0.5)
        pi.bias.normal_(0.0, 0.5)
        if getattr(runner.module, "_free_log_std", False):
            runner.module.log_std.copy_(torch.tensor([-0.7]))
    return runner


def _observations(n=256):
    rng = np.random.default_rng(0)
    angle = rng.uniform(-np.pi, np.pi, n)
    return np.stack([np.cos(angle), np.sin(angle), rng.uniform(-8, 8, n)], -1).astype(np.float32)


def _torch_get_actions(module, obs, explore, actions=None):
    """What the torch path computes: the module's forward, then GetActions' distribution (actions given or not)."""
    with torch.inference_mode():
        forward = module.forward_exploration if explore else module.forward_inference
        inputs = forward({Columns.OBS: torch.from_numpy(obs)})[Columns.ACTION_DIST_INPUTS]
        cls = module.get_exploration_action_dist_cls() if explore else module.get_inference_action_dist_cls()
        dist = cls.from_logits(inputs)
        if not explore:
            dist = dist.to_deterministic()
        actions = dist.sample() if actions is None else torch.from_numpy(actions)
        return inputs.numpy(), actions.numpy(), dist.logp(actions).numpy()


def _kind_of(runner):
    source = plan_actions(runner, explore=True)
    return type(source).__name__, type(getattr(source, "policy", None)).__name__


@pytest.mark.parametrize("kind", MODULES)
def test_the_default_ppo_and_sac_modules_act_in_numpy_for_box_actions(kind):
    expected = NumpySquashedGaussianPolicy if kind == "sac" else NumpyDiagGaussianPolicy
    assert _kind_of(_runner(_config(kind))) == ("DirectNumpyActions", expected.__name__)


def _episodes(config, monkeypatch, *, direct: bool, explore=True):
    """A seeded runner's episodes, its default pipelines skipped (`direct`) or called around the numpy policy."""
    with monkeypatch.context() as patch:
        if not direct:
            patch.setattr(DirectNumpyActions, "plan", classmethod(lambda cls, *args: None))
        runner = _runner(config, explore=explore)
        assert _kind_of(runner)[0] == ("DirectNumpyActions" if direct else "NumpyActions")
        return [episode for _ in range(5) for episode in runner.sample(num_timesteps=60, explore=explore)]


@pytest.mark.parametrize("kind, env_options", [("ppo", {}), ("sac", {}), ("sac", {"normalize_actions": False,
                                                                                    "clip_actions": True})])
def test_skipping_the_default_pipelines_gives_the_same_episodes(kind, env_options, monkeypatch):
    """The env gets the same `actions_for_env` (the NormalizeAndClipActions piece's own options hold), so the
    observations, actions, rewards and recorded outputs are bit-identical."""
    config = _config(kind).environment(**env_options)
    direct = _episodes(config, monkeypatch, direct=True)
    called = _episodes(config, monkeypatch, direct=False)
    assert len(direct) == len(called) and sum(map(len, direct)) == 5 * 60
    for a, b in zip(direct, called):
        for column in ("observations", "actions", "rewards"):
            x, y = getattr(a, "get_" + column)(), getattr(b, "get_" + column)()
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)
        for key in b.extra_model_outputs:
            np.testing.assert_array_equal(a.get_extra_model_outputs(key), b.get_extra_model_outputs(key))
    actions = np.concatenate([episode.get_actions() for episode in direct])
    assert np.abs(actions).max() > 0.9  # spread module outputs: the env bounds [-2, 2] matter


def test_box_actions_outside_the_bounds_are_clipped_for_the_env_without_the_pipelines():
    """normalize_actions=False, clip_actions=True: actions beyond Pendulum's [-2, 2] reach the env clipped."""
    runner = _runner(_config("ppo").environment(normalize_actions=False, clip_actions=True))
    source = plan_actions(runner, explore=True)
    assert type(source).__name__ == "DirectNumpyActions"
    with torch.no_grad():
        runner.module.pi[-1].bias.copy_(torch.tensor([5.0, -5.0]))  # mean 5, tiny std
    to_env = source(0)
    assert to_env[Columns.ACTIONS].min() > 4.0
    np.testing.assert_array_equal(to_env[Columns.ACTIONS_FOR_ENV], 2.0)


@pytest.mark.parametrize("kind", MODULES)
def test_deterministic_actions_equal_the_torch_modules(kind):
    runner, obs = _runner(_config(kind)), _observations()
    out = numpy_policy_for(runner)(obs, explore=False)
    inputs, actions, logp = _torch_get_actions(runner.module, obs, explore=False)
    np.testing.assert_allclose(out[Columns.ACTION_DIST_INPUTS], inputs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[Columns.ACTIONS], actions, rtol=1e-5, atol=1e-5)  # float32 sums of 256
    np.testing.assert_array_equal(out[Columns.ACTION_LOGP], logp)
    if "clipped" in kind:  # the module's log_std clip binds on these weights: the numpy forward applies it too
        assert np.abs(inputs[:, 1]).max() == pytest.approx(0.3)
    assert np.ptp(out[Columns.ACTIONS]) > 0.5  # the weights spread the actions: the comparison means something


@pytest.mark.parametrize("kind", MODULES)
def test_log_probs_of_the_sampled_actions_equal_torchs(kind):
    runner, obs = _runner(_config(kind)), _observations()
    out = numpy_policy_for(runner)(obs, explore=True)
    actions = out[Columns.ACTIONS]
    _, _, logp = _torch_get_actions(runner.module, obs, explore=True, actions=actions)
    if kind != "sac":
        np.testing.assert_allclose(out[Columns.ACTION_LOGP], logp, rtol=1e-5, atol=1e-4)
        return
    # Near +-1, atanh makes the log-prob ill-conditioned in the float32 action: there the numpy policy gives the
    # float64 value (torch's float32 one carries its rounding); elsewhere both agree to float32 precision.
    assert np.abs(actions).max() <= 1.0 and (np.abs(actions) > 0.999).mean() > 0.1  # both regimes are tested
    inner = np.abs(actions[:, 0]) < 0.99
    np.testing.assert_allclose(out[Columns.ACTION_LOGP][inner], logp[inner], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(out[Columns.ACTION_LOGP], _squashed_logp_float64(out[Columns.ACTION_DIST_INPUTS],
                                                                                actions), rtol=1e-5, atol=1e-4)


def test_saturated_squashed_actions_get_torchs_finite_log_probs():
    # A mean far past tanh's range: samples round to +-1, TanhSquashedGaussian.logp clamps them just inside.
    inputs = np.array([[12.0, -3.0], [-9.0, 1.0], [0.2, -20.0]], np.float32)
    policy = NumpySquashedGaussianPolicy(_identity(2), np.random.default_rng(0))
    out = policy(inputs, explore=True)
    assert np.isfinite(out[Columns.ACTION_LOGP]).all() and np.abs(out[Columns.ACTIONS][:2]).min() == 1.0
    np.testing.assert_allclose(out[Columns.ACTION_LOGP], _squashed_logp_float64(inputs, out[Columns.ACTIONS]),
                               rtol=1e-5, atol=1e-4)


def _squashed_logp_float64(inputs, actions):
    """TanhSquashedGaussian.logp in float64 on the float32 actions (clamped inside (-1, 1) at float32's eps)."""
    eps = float(np.finfo(np.float32).eps)
    value = torch.from_numpy(actions).double().clamp(-1 + eps, 1 - eps)
    return TanhSquashedGaussian(torch.from_numpy(inputs).double())._logp_pre_tanh(torch.atanh(value)).numpy()


def _identity(width):
    """A NumpyMLP that passes its input through: the policy samples the inputs it is given."""
    return NumpyMLP([(np.eye(width, dtype=np.float32), np.zeros(width, np.float32), None)])


def _gauss_hermite_moments(mean, std, squash):
    """E[f(mean + std * z)] and its std for z ~ N(0, 1), by Gauss-Hermite quadrature (exact to float precision)."""
    z, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    values = squash(mean[:, None] + std[:, None] * z[None])
    first = (values * w).sum(-1)
    return first, np.sqrt(((values - first[:, None]) ** 2 * w).sum(-1))


@pytest.mark.parametrize("policy_cls", [NumpyDiagGaussianPolicy, NumpySquashedGaussianPolicy])
def test_sampled_actions_follow_the_distribution(policy_cls):
    # Three action dims: moderate, wide (log-std past SAC's max of 2: clamped), narrow and off-centre.
    mean = np.array([0.5, -0.3, 1.5], np.float32)
    log_std = np.array([0.3, 2.5, -1.2], np.float32)
    inputs = np.repeat(np.concatenate([mean, log_std])[None], 40_000, 0)
    policy = policy_cls(_identity(6), np.random.default_rng(0))
    actions = policy(inputs, explore=True)[Columns.ACTIONS]
    low, high = policy_cls.LOG_STD_RANGE
    squash = np.tanh if policy_cls is NumpySquashedGaussianPolicy else (lambda x: x)
    expected_mean, expected_std = _gauss_hermite_moments(mean.astype(np.float64),
                                                         np.exp(np.clip(log_std, low, high)).astype(np.float64),
                                                         squash)
    # Standard errors are below 0.07 (std 12 / 200) for the mean, a few % for the std: these bounds would
    # fail with log_std taken as std, a missing tanh or a missing clamp.
    assert np.all(np.abs(actions.mean(0) - expected_mean) < 4 * expected_std / 200), (actions.mean(0), expected_mean)
    np.testing.assert_allclose(actions.std(0), expected_std, rtol=0.03)
    assert actions.dtype == np.float32 and actions.shape == (40_000, 3)


@pytest.mark.parametrize("kind", ["ppo", "sac"])
@pytest.mark.parametrize("explore", [True, False])
def test_episodes_have_the_torch_paths_columns_dtypes_and_shapes(kind, explore):
    episodes = {}
    for numpy_inference in (True, False):
        runner = _runner(_config(kind, numpy_inference=numpy_inference))
        assert (_kind_of(runner)[0] == "DirectNumpyActions") == numpy_inference
        episodes[numpy_inference] = runner.sample(num_timesteps=40, explore=explore)
    for a, b in zip(episodes[True], episodes[False]):
        assert sorted(a.extra_model_outputs) == sorted(b.extra_model_outputs)
        columns = [(a.get_actions(), b.get_actions())] + [
            (a.get_extra_model_outputs(key), b.get_extra_model_outputs(key)) for key in b.extra_model_outputs]
        for x, y in columns:
            assert (x.dtype, x.shape) == (y.dtype, y.shape)
        assert np.all(a.get_actions() != 0) if explore else True


@pytest.mark.parametrize("kind", ["ppo", "sac"])
def test_greedy_sampling_gives_the_same_episodes_as_the_torch_path(kind, monkeypatch):
    calls = []
    numpy_call = NumpyDiagGaussianPolicy.__call__
    monkeypatch.setattr(NumpyDiagGaussianPolicy, "__call__",
                        lambda policy, obs, explore: calls.append(obs) or numpy_call(policy, obs, explore))
    results = []
    for numpy_inference in (True, False):
        runner = _runner(_config(kind, numpy_inference=numpy_inference), explore=False)
        calls.clear()
        results.append(runner.sample(num_timesteps=100, explore=False))
        if numpy_inference:
            assert len(calls) == 100 // 4
    assert not calls  # every step of the numpy run went through the numpy policy, none of the torch run
    for a, b in zip(*results):
        np.testing.assert_allclose(a.get_actions(), b.get_actions(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(a.get_observations(), b.get_observations(), rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(a.get_extra_model_outputs(Columns.ACTION_LOGP), 0)


@pytest.mark.parametrize("kind", ["ppo", "sac"])
def test_seeded_runs_repeat_and_a_restored_runner_continues_the_stream(kind):
    first, second = _runner(_config(kind)), _runner(_config(kind))
    for a, b in zip(first.sample(num_timesteps=60), second.sample(num_timesteps=60)):
        np.testing.assert_array_equal(a.get_actions(), b.get_actions())
    state = first.get_state()
    expected = first.sample(num_timesteps=60)
    restored = _runner(_config(kind), weights_seed=5)
    restored.set_state(state)
    for a, b in zip(restored.sample(num_timesteps=60), expected):
        np.testing.assert_array_equal(a.get_actions(), b.get_actions())
        np.testing.assert_array_equal(a.get_extra_model_outputs(Columns.ACTION_LOGP),
                                      b.get_extra_model_outputs(Columns.ACTION_LOGP))


def test_the_free_log_std_parameter_is_read_through_a_view():
    runner, obs = _runner(_config("ppo free_log_std")), _observations(8)
    policy = numpy_policy_for(runner)
    with torch.no_grad():
        runner.module.log_std.fill_(-2.5)  # in place, as a weight sync
    np.testing.assert_allclose(policy(obs, explore=True)[Columns.ACTION_DIST_INPUTS][:, 1], -2.5)


class SharpenMean(ConnectorV2):  # a custom piece before GetActions: it changes what gets sampled
    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        batch[Columns.ACTION_DIST_INPUTS] = batch[Columns.ACTION_DIST_INPUTS] * 10
        return batch


class PassThrough(ConnectorV2):
    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        return batch


class OwnSACForward(DefaultSACTorchRLModule):
    def _forward(self, batch, **kwargs):
        out = super()._forward(batch, **kwargs)
        out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] * 0
        return out


class OtherSquashedGaussian(DefaultSACTorchRLModule):  # same forward, a distribution no numpy policy samples
    def setup(self):
        super().setup()
        self.action_dist_cls = TorchSquashedGaussian


@pytest.mark.parametrize("case", ["option off", "exploration object", "piece before GetActions", "own forward",
                                  "other distribution", "elu", "ppo option off", "ppo lstm"])
def test_anything_the_numpy_path_cannot_reproduce_keeps_the_torch_path(case):
    config = _config("ppo" if case.startswith("ppo") else "sac")
    if case.endswith("option off"):
        config.env_runners(numpy_inference=False)
    elif case == "exploration object":
        config.env_runners(exploration_config={"type": "GaussianNoise"})
    elif case == "piece before GetActions":
        config.env_runners(module_to_env_connector=lambda env, spaces: PassThrough())
        runner = _runner(config)
        runner._module_to_env.prepend(SharpenMean())
        assert _kind_of(runner)[0] == "TorchModuleActions"
        return
    elif case == "own forward":
        config.rl_module(rl_module_spec=RLModuleSpec(module_class=OwnSACForward))
    elif case == "other distribution":
        config.rl_module(rl_module_spec=RLModuleSpec(module_class=OtherSquashedGaussian))
    elif case == "elu":
        config.rl_module(model_config={"fcnet_activation": "elu"})
    elif case == "ppo lstm":
        config.rl_module(model_config={"use_lstm": True, "max_seq_len": 8})
    runner = _runner(config)
    assert numpy_policy_for(runner) is None
    assert _kind_of(runner)[0] == "TorchModuleActions"
    runner.sample(num_timesteps=8)  # and the torch path runs


def test_multi_agent_box_modules_keep_the_torch_path():
    config = (SACConfig().environment(make_multi_agent("Pendulum-v1"), env_config={"num_agents": 2})
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, episode, **kw: f"p{agent_id}")
              .env_runners(num_envs_per_env_runner=2).debugging(seed=0))
    runner = MultiAgentEnvRunner(config=config)
    episodes = runner.sample(num_timesteps=20)
    assert type(plan_multi_agent_actions(runner, explore=True)).__name__ == "MultiAgentModuleActions"
    assert sum(len(e) for e in episodes) > 0
