"""A NaN or inf gradient (with a finite loss) never reaches the weights: PPO, DQN and SAC raise before any
optimizer steps and leave weights and optimizer state bit for bit as they were, or, with
config.debugging(on_nonfinite_gradient="skip"), skip the step, count it and train on."""
import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn

from relayrl import AlgorithmConfig, DQNConfig, Learner, PPOConfig, RLModule, SACConfig
from relayrl.algorithms.dqn.dqn_learner import DQNLearner
from relayrl.algorithms.ppo.ppo_learner import PPOLearner
from relayrl.algorithms.sac.sac_learner import SACLearner
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.learner.learner import NUM_NONFINITE_GRADIENT_SKIPS_LIFETIME
from relayrl.learner.nonfinite_gradients import FiniteGradientCheck, NonFiniteGradientError
from relayrl.learner.optimizers import make_adam
from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec
from relayrl.testing import CorridorEnv

SKIPS = NUM_NONFINITE_GRADIENT_SKIPS_LIFETIME


def nan_gradient_term(tensor: torch.Tensor) -> torch.Tensor:
    """Exactly 0.0 in value, but d/dx sqrt(x - x) at 0 is inf: the loss stays finite, its gradient does not."""
    return torch.sqrt(tensor - tensor.detach()).sum()


class PoisonMixin:
    """Adds a zero-valued term with an infinite gradient to the loss while `poison` says so: None (never),
    "always", or "every_other" loss call. `poison_target(module_id)` picks the tensor it goes through."""

    poison = None
    calls = 0

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        loss = super().compute_loss_for_module(module_id=module_id, config=config, batch=batch, fwd_out=fwd_out)
        self.calls += 1
        if self.poison == "always" or (self.poison == "every_other" and self.calls % 2 == 0):
            loss = loss + nan_gradient_term(self.poison_target(module_id))
        return loss

    def poison_target(self, module_id):  # default: the module's last trained parameter (a head's bias)
        return last_trained_parameter(self.module[module_id])[1]


def last_trained_parameter(module):
    return [(name, p) for name, p in module.named_parameters() if p.requires_grad][-1]  # no target nets


class PoisonedPPOLearner(PoisonMixin, PPOLearner):
    pass


class PoisonedDQNLearner(PoisonMixin, DQNLearner):
    pass


class PoisonedSACLearner(PoisonMixin, SACLearner):
    def poison_target(self, module_id):  # only alpha's optimizer sees it: the critics' and actor's must not step
        return self.curr_log_alpha[module_id]


def ppo_algo(mode="raise"):
    return (PPOConfig().environment(CorridorEnv).env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=64, minibatch_size=16, num_epochs=2)  # grad_clip=0.5 (PPO's default)
            .rl_module(model_config={"fcnet_hiddens": [8]}).learners(learner_class=PoisonedPPOLearner)
            .debugging(seed=0, logger_config={"type": "none"}, on_nonfinite_gradient=mode).build_algo())


def dqn_algo(mode="raise"):
    return (DQNConfig().environment(CorridorEnv)
            .training(train_batch_size_per_learner=8, num_steps_sampled_before_learning_starts=8)
            .rl_module(model_config={"fcnet_hiddens": [8], "head_fcnet_hiddens": [8]})
            .learners(learner_class=PoisonedDQNLearner).reporting(min_sample_timesteps_per_iteration=16)
            .debugging(seed=0, logger_config={"type": "none"}, on_nonfinite_gradient=mode).build_algo())


def sac_algo(mode="raise"):
    return (SACConfig().environment("Pendulum-v1")
            .training(train_batch_size_per_learner=8, num_steps_sampled_before_learning_starts=8)
            .rl_module(model_config={"fcnet_hiddens": [8]}).learners(learner_class=PoisonedSACLearner)
            .reporting(min_sample_timesteps_per_iteration=16)
            .debugging(seed=0, logger_config={"type": "none"}, on_nonfinite_gradient=mode).build_algo())


ALGOS = {"PPO": ppo_algo, "DQN": dqn_algo, "SAC": sac_algo}


def learner_of(algo):
    return algo.learner_group._learner


def snapshot(learner):
    """Every tensor the update may change: module weights (targets included), optimizer states, SAC's log-alpha."""
    return copy.deepcopy({
        "weights": {mid: learner.module[mid].state_dict() for mid in learner.module.keys()},
        "optimizers": {(mid, name): opt.state_dict() for mid in learner.module.keys()
                       for name, opt in learner.get_optimizers_for_module(mid)},
        "log_alpha": {mid: p.detach() for mid, p in getattr(learner, "curr_log_alpha", {}).items()},
    })


def assert_bit_identical(a, b, path="state"):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b), path
        assert torch.equal(a.view(-1).view(torch.uint8), b.view(-1).view(torch.uint8)), path  # -0.0, NaN bits
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for key in a:
            assert_bit_identical(a[key], b[key], f"{path}/{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_bit_identical(x, y, f"{path}[{i}]")
    else:
        assert a == b, path


def all_finite(state_dict) -> bool:
    return all(torch.isfinite(torch.as_tensor(v)).all() for v in state_dict.values())


def train_until_optimizer_state(algo):
    """Normal iterations until every optimizer has taken a step (so there are moments to protect)."""
    for _ in range(10):
        algo.train()
        states = snapshot(learner_of(algo))["optimizers"].values()
        if all(state["state"] for state in states):
            return
    raise AssertionError("the optimizers never stepped")


# -- raise (the default) ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["PPO", "DQN", "SAC"])
def test_nonfinite_gradient_raises_and_changes_nothing(name):
    algo = ALGOS[name]()
    try:
        train_until_optimizer_state(algo)
        learner = learner_of(algo)
        learner.poison = "always"
        before = snapshot(learner)
        with pytest.raises(FloatingPointError) as info:
            algo.train()
        error = info.value
        assert isinstance(error, NonFiniteGradientError) and error.__cause__ is None
        message = str(error)
        module = learner.module[DEFAULT_MODULE_ID]
        expected = "curr_log_alpha" if name == "SAC" else last_trained_parameter(module)[0]
        assert f"module `{DEFAULT_MODULE_ID}`" in message and f"parameter `{expected}`" in message
        assert (error.module_id, error.parameter) == (DEFAULT_MODULE_ID, expected)
        assert "on_nonfinite_gradient='skip'" in message
        assert_bit_identical(snapshot(learner), before)
        assert all_finite(algo.env_runner.module.state_dict())
        assert learner._pending_stats == {}  # the failed update's stats do not leak into the next result
    finally:
        algo.stop()


def test_error_names_the_poisoned_parameter_not_the_first_one_under_grad_clip():
    """PPO clips by global norm (grad_clip=0.5): the check runs before clipping, which would spread the inf
    into NaN over every parameter, so the message names the one parameter whose gradient is bad."""
    algo = ppo_algo()
    try:
        learner = learner_of(algo)
        names = [name for name, _ in learner.module[DEFAULT_MODULE_ID].named_parameters()]
        learner.poison, target = "always", names[2]
        learner.poison_target = lambda module_id: dict(learner.module[module_id].named_parameters())[target]
        with pytest.raises(NonFiniteGradientError, match=f"parameter `{target}`"):
            algo.train()
    finally:
        algo.stop()


# -- skip ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["PPO", "SAC"])
def test_skip_mode_counts_skips_and_trains_on(name):
    algo = ALGOS[name](mode="skip")
    try:
        learner = learner_of(algo)
        learner.poison = "every_other"
        initial = snapshot(learner)["weights"][DEFAULT_MODULE_ID]
        counts = []
        for _ in range(3):
            result = algo.train()
            counts.append(result["learners"][DEFAULT_MODULE_ID][SKIPS])
        assert 0 < counts[0] < counts[1] < counts[2]  # a lifetime count
        weights = snapshot(learner)["weights"][DEFAULT_MODULE_ID]
        assert all_finite(weights) and all_finite(algo.env_runner.module.state_dict())
        assert any(not torch.equal(weights[k], initial[k]) for k in weights)  # the other minibatches trained
        assert all(p.grad is None or torch.isfinite(p.grad).all() for p in learner.module.parameters())
    finally:
        algo.stop()


class Linear(RLModule):
    def setup(self):
        self.net = nn.Linear(3, 1)

    def _forward(self, batch, **kwargs):
        return {"pred": self.net(batch[Columns.OBS]).squeeze(-1)}


class TwoModuleRegression(Learner):
    """Squared error per module; module "b"'s loss also carries a zero term with an infinite gradient."""

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        loss = torch.mean((fwd_out["pred"] - batch["target"]) ** 2)
        if module_id == "b":
            loss = loss + nan_gradient_term(self.module[module_id].net.bias)
        return loss


@pytest.mark.parametrize("mode", ["raise", "skip"])
def test_only_the_module_with_a_bad_gradient_is_skipped(mode):
    space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    spec = MultiRLModuleSpec(rl_module_specs={mid: RLModuleSpec(module_class=Linear, observation_space=space,
                                                                action_space=space) for mid in ("a", "b")})
    config = AlgorithmConfig().training(lr=0.1, minibatch_size=8).debugging(on_nonfinite_gradient=mode)
    learner = TwoModuleRegression(config=config, module_spec=spec)
    learner.build()
    x = torch.randn(32, 3, generator=torch.Generator().manual_seed(0))
    batch = {mid: {Columns.OBS: x, "target": x.sum(-1)} for mid in ("a", "b")}
    before = snapshot(learner)
    if mode == "raise":
        with pytest.raises(NonFiniteGradientError, match="module `b`: parameter `net.bias`"):
            learner.update(batch=batch)
        assert_bit_identical(snapshot(learner), before)  # the first minibatch raised: "a" did not step either
        return
    results = learner.update(batch=batch)
    after = snapshot(learner)
    assert (results["a"][SKIPS], results["b"][SKIPS]) == (0, 4)  # 32 rows, minibatches of 8
    assert not torch.equal(after["weights"]["a"]["net.weight"], before["weights"]["a"]["net.weight"])
    assert_bit_identical(after["weights"]["b"], before["weights"]["b"])
    assert_bit_identical(after["optimizers"][("b", "default_optimizer")],
                         before["optimizers"][("b", "default_optimizer")])


# -- normal runs ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["raise", "skip"])
def test_normal_run_is_unaffected(mode):
    """No skips: with "skip" the lifetime count is in every result and 0; with "raise" the key is absent."""
    algo = ppo_algo(mode)
    try:
        for _ in range(2):
            results = algo.train()["learners"][DEFAULT_MODULE_ID]
            assert results.get(SKIPS) == (0 if mode == "skip" else None)
        assert all_finite(learner_of(algo).module[DEFAULT_MODULE_ID].state_dict())
    finally:
        algo.stop()


def test_mode_can_change_through_reset_config():
    algo = ppo_algo("raise")
    try:
        learner = learner_of(algo)
        learner.poison = "always"
        assert algo.reset_config({"on_nonfinite_gradient": "skip"}) is True
        assert algo.train()["learners"][DEFAULT_MODULE_ID][SKIPS] > 0
    finally:
        algo.stop()


# -- the check itself ---------------------------------------------------------------------------------------------
def test_check_leaves_gradients_bit_for_bit_and_finds_nan_and_inf():
    params = [torch.nn.Parameter(torch.zeros(4)), torch.nn.Parameter(torch.zeros(2, 3))]
    optimizer = make_adam(params)
    optimizers = {"m": {"opt": optimizer}}
    params[0].grad = torch.tensor([1e-40, -0.0, 5e-45, 3.0])  # subnormals and a negative zero
    params[1].grad = torch.randn(2, 3)
    before = [p.grad.clone() for p in params]
    check = FiniteGradientCheck()
    assert check.all_finite(optimizers, ["m"])
    for grad, old in zip((p.grad for p in params), before):
        assert torch.equal(grad.view(torch.uint8), old.view(torch.uint8))
    for bad, kind in ((float("nan"), "NaN"), (float("inf"), "inf"), (float("-inf"), "inf")):
        params[1].grad[1, 2] = bad
        assert not check.all_finite(optimizers, ["m"])
        culprit = check.first_nonfinite(optimizers, ["m"], lambda mid: {id(params[1]): "layer.weight"})["m"]
        assert (culprit.parameter, culprit.optimizer, culprit.kind) == ("layer.weight", "opt", kind)
        params[1].grad[1, 2] = 0.0
    params[0].grad = None  # parameters without a gradient are left out
    assert check.all_finite(optimizers, ["m"])


class RecordingRegression(Learner):
    """Squared error scaled by `scale`; records the gradients the optimizer is about to apply."""

    scale = 1.0

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        return torch.mean((fwd_out["pred"] - batch["target"]) ** 2) * self.scale

    def apply_gradients(self, gradients_dict):
        self.recorded = [p.grad.clone() for p in gradients_dict[DEFAULT_MODULE_ID]]
        super().apply_gradients(gradients_dict)


def regression_learner(reuse_norm=True, scale=1.0, **training):
    space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    torch.manual_seed(0)
    learner = RecordingRegression(config=AlgorithmConfig().training(**training),
                                  module_spec=RLModuleSpec(module_class=Linear, observation_space=space,
                                                           action_space=space))
    learner.build()
    learner.scale = scale
    learner._base_clipping = reuse_norm  # False: the element check, and the clipping computes its own norm
    return learner


def test_clipping_with_the_checks_norm_gives_the_same_bits():
    x = torch.randn(32, 3, generator=torch.Generator().manual_seed(0))
    batch = {Columns.OBS: x, "target": 100.0 * x.sum(-1)}
    reused, own = (regression_learner(reuse, grad_clip=0.5, minibatch_size=8) for reuse in (True, False))
    for learner in (reused, own):
        learner.update(batch=batch)
    assert_bit_identical(reused.recorded, own.recorded)
    assert_bit_identical(snapshot(reused), snapshot(own))


@pytest.mark.parametrize("reuse_norm", [True, False])
def test_finite_gradients_whose_norm_overflows_are_not_skipped(reuse_norm):
    """Elements around 1e25 are finite, their squared norm is not (float32): clipping by global norm scales
    them to 0 as before; that is not a non-finite gradient."""
    x = torch.randn(32, 3, generator=torch.Generator().manual_seed(0))
    learner = regression_learner(reuse_norm, scale=1e25, grad_clip=0.5, minibatch_size=8)
    learner.config = learner.config.copy(copy_frozen=False).debugging(on_nonfinite_gradient="skip")
    results = learner.update(batch={Columns.OBS: x, "target": x.sum(-1)})
    assert results[DEFAULT_MODULE_ID][SKIPS] == 0
    assert all(torch.equal(g, torch.zeros_like(g)) for g in learner.recorded)


def test_error_survives_pickling():
    """Remote Learners send their errors through Ray (pickle)."""
    algo = ppo_algo()
    try:
        learner_of(algo).poison = "always"
        with pytest.raises(NonFiniteGradientError) as info:
            algo.train()
        copy_ = pickle.loads(pickle.dumps(info.value))
        assert str(copy_) == str(info.value) and copy_.culprits == info.value.culprits
        assert isinstance(copy_, FloatingPointError)
    finally:
        algo.stop()


def test_option_is_validated():
    with pytest.raises(ValueError, match="on_nonfinite_gradient"):
        PPOConfig().debugging(on_nonfinite_gradient="ignore")
    assert PPOConfig().on_nonfinite_gradient == "raise"
    assert np.all(PPOConfig.from_dict({"on_nonfinite_gradient": "skip"}).on_nonfinite_gradient == "skip")


# -- DDP (slow: starts Ray and two Learner actors) --------------------------------------------------------------
@pytest.fixture
def local_ray(request):
    ray = pytest.importorskip("ray")
    import sys

    ray.cloudpickle.register_pickle_by_value(sys.modules[request.module.__name__])  # ship the poisoned Learner
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow  # ~15 s on 2 busy cores
def test_two_ddp_learners_raise_then_skip_in_step(local_ray):
    """Gradients are all-reduced before the check, so every Learner sees the same NaN and decides the same."""
    from relayrl.learner.learner_group import LearnerGroup

    obs, act = gym.spaces.Box(-1.0, 1.0, (4,), np.float32), gym.spaces.Discrete(2)
    spaces = {"__env_single__": (obs, act)}
    config = (PPOConfig().environment(observation_space=obs, action_space=act).debugging(seed=0)
              .training(minibatch_size=16, num_epochs=1, shuffle_batch_per_epoch=False)
              .rl_module(model_config={"fcnet_hiddens": [8]})
              .learners(num_learners=2, learner_class=PoisonedPPOLearner))
    group = LearnerGroup(config=config, module_spec=config.get_rl_module_spec(spaces=spaces), spaces=spaces)
    try:
        rng = np.random.default_rng(0)
        batch = {Columns.OBS: rng.normal(size=(64, 4)).astype(np.float32), Columns.ACTIONS: rng.integers(0, 2, 64),
                 Columns.ACTION_LOGP: np.full(64, -0.7, np.float32),
                 Columns.ADVANTAGES: rng.normal(size=64).astype(np.float32),
                 Columns.VALUE_TARGETS: rng.normal(size=64).astype(np.float32)}
        group.update(batch=batch)  # a normal step first: optimizer state to protect
        group.foreach_learner(lambda learner: setattr(learner, "poison", "always"))
        before = group.foreach_learner(snapshot)
        with pytest.raises(FloatingPointError, match=f"module `{DEFAULT_MODULE_ID}`: parameter `"):
            group.update(batch=batch)
        for old, new in zip(before, group.foreach_learner(snapshot)):
            assert_bit_identical(new, old)
        # reset_config's path for a mutable option: every Learner gets the new config
        group.foreach_learner(lambda learner: learner.apply_hyperparameters(
            learner.config.copy(copy_frozen=False).debugging(on_nonfinite_gradient="skip")))
        group.foreach_learner(lambda learner: setattr(learner, "poison", "every_other"))
        results = group.update(batch=batch)
        assert results[DEFAULT_MODULE_ID][SKIPS] == 2 * 2  # 4 minibatches per Learner, 2 skipped, summed over 2
        first, second = group.foreach_learner(lambda learner: snapshot(learner)["weights"])
        assert_bit_identical(first, second)  # the Learners stayed in step
        assert all_finite(first[DEFAULT_MODULE_ID])
    finally:
        group.shutdown()


# -- the GPU's way: losses read in the gradient check's sync (one sync per minibatch), exercised on the CPU ----------
def defer_loss_checks(monkeypatch):
    build = Learner.build

    def build_deferring(self):
        build(self)
        self._defer_loss_check = True

    monkeypatch.setattr(Learner, "build", build_deferring)


@pytest.fixture
def deferred_loss_check(monkeypatch):
    defer_loss_checks(monkeypatch)


@pytest.mark.parametrize("name", ["PPO", "DQN", "SAC"])
def test_deferred_loss_check_still_raises_for_gradients_and_changes_nothing(deferred_loss_check, name):
    test_nonfinite_gradient_raises_and_changes_nothing(name)


@pytest.mark.parametrize("name", ["PPO", "SAC"])
def test_deferred_loss_check_still_skips_in_skip_mode(deferred_loss_check, name):
    test_skip_mode_counts_skips_and_trains_on(name)


class NaNLossPPOLearner(PPOLearner):
    def compute_loss_for_module(self, **kwargs):
        return super().compute_loss_for_module(**kwargs) * float("nan")


@pytest.mark.parametrize("deferred", [False, True])
def test_a_nan_loss_raises_before_any_step(monkeypatch, deferred):
    if deferred:
        defer_loss_checks(monkeypatch)
    algo = (PPOConfig().environment(CorridorEnv).training(train_batch_size=64, minibatch_size=16, num_epochs=2)
            .rl_module(model_config={"fcnet_hiddens": [8]}).learners(learner_class=NaNLossPPOLearner)
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        learner = learner_of(algo)
        assert learner._defer_loss_check is deferred or learner.device.type != "cpu"
        before = snapshot(learner)
        with pytest.raises(FloatingPointError, match="The loss of module `default_policy` is nan"):
            algo.train()
        assert_bit_identical(snapshot(learner), before)
    finally:
        algo.stop()
