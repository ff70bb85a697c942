"""The helper classes at RLlib's example paths (relayrl/examples/...), which RLlib's example scripts import and
users copy: each does what its RLlib namesake is documented to do, in a tiny run."""
import gymnasium as gym
import numpy as np
import pytest
import torch

from relayrl.algorithms.ppo import PPOConfig
from relayrl.core.columns import ALL_MODULES, Columns
from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec


def _tiny_ppo(config):
    return config.training(train_batch_size=128, minibatch_size=64, num_epochs=1).debugging(
        seed=0, logger_config={"type": "none"})


def _train(config, iterations: int = 1):
    algo = config.build_algo()
    try:
        results = [algo.train() for _ in range(iterations)]
        return algo, results
    finally:
        algo.stop()


# -- VPG: a custom algorithm, Learner and module --------------------------------------------------------------

def test_compute_returns_to_go_sums_the_discounted_rewards_to_the_chunks_end():
    from relayrl.connectors.learner.compute_returns_to_go import ComputeReturnsToGo
    from relayrl.env.single_agent_episode import SingleAgentEpisode

    episode = SingleAgentEpisode()
    episode.add_env_reset(observation=np.zeros(1, np.float32))
    for reward in (1.0, 2.0, 3.0):
        episode.add_env_step(observation=np.zeros(1, np.float32), action=0, reward=reward)
    batch = ComputeReturnsToGo(gamma=0.5)(rl_module=None, batch={}, episodes=[episode])
    (returns,) = batch[Columns.RETURNS_TO_GO].values()
    np.testing.assert_allclose(np.concatenate([np.atleast_1d(r) for r in returns]),
                               [1 + 0.5 * 2 + 0.25 * 3, 2 + 0.5 * 3, 3.0])


def test_vpg_samples_whole_episodes_and_trains_on_returns_to_go():
    from relayrl.examples.algorithms.classes.vpg import VPGConfig

    config = VPGConfig().environment("CartPole-v1").training(num_episodes_per_train_batch=4, lr=5e-4).debugging(
        seed=0, logger_config={"type": "none"})
    algo = config.build_algo()
    try:
        before = [p.detach().clone() for p in algo.learner_group._learner.module.parameters()]
        result = algo.train()
        after = list(algo.learner_group._learner.module.parameters())
    finally:
        algo.stop()
    assert result["env_runners"]["num_episodes"] >= 4  # whole episodes, one batch of them per update
    assert result["num_env_steps_sampled_lifetime"] == result["num_env_steps_trained_lifetime"]
    stats = result["learners"]["default_policy"]
    assert stats["returns_to_go_mean"] > 1.0 and "mean_weight" in stats
    assert any(not torch.equal(b, a) for b, a in zip(before, after))
    assert "episode_timesteps_sampled_ema" in result


def test_shared_encoder_policies_train_the_encoder_with_one_optimizer():
    """Two VPG policies behind one encoder (a module of the MultiRLModule no agent maps to): one Adam over all
    parameters, registered for ALL_MODULES, steps the encoder with both policies' gradients."""
    from relayrl.examples.algorithms.classes.vpg import VPGConfig
    from relayrl.examples.envs.classes.multi_agent import MultiAgentCartPole
    from relayrl.examples.learners.classes.vpg_torch_learner_shared_optimizer import VPGTorchLearnerSharedOptimizer
    from relayrl.examples.rl_modules.classes.vpg_using_shared_encoder_rlm import (
        SHARED_ENCODER_ID,
        SharedEncoder,
        VPGMultiRLModuleWithSharedEncoder,
        VPGPolicyAfterSharedEncoder,
    )

    single = gym.make("CartPole-v1")
    head = {"embedding_dim": 16, "hidden_dim": 16}
    spec = MultiRLModuleSpec(multi_rl_module_class=VPGMultiRLModuleWithSharedEncoder, rl_module_specs={
        SHARED_ENCODER_ID: RLModuleSpec(module_class=SharedEncoder, model_config={"embedding_dim": 16},
                                        observation_space=single.observation_space,
                                        action_space=single.action_space),
        "p0": RLModuleSpec(module_class=VPGPolicyAfterSharedEncoder, model_config=head),
        "p1": RLModuleSpec(module_class=VPGPolicyAfterSharedEncoder, model_config=head)})
    config = (VPGConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
              .training(learner_class=VPGTorchLearnerSharedOptimizer, num_episodes_per_train_batch=2, lr=1e-2)
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, episode, **kw: f"p{agent_id}")
              .rl_module(rl_module_spec=spec).debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        learner = algo.learner_group._learner
        assert list(learner._optimizers) == [ALL_MODULES]
        encoder = learner.module[SHARED_ENCODER_ID]
        before = [p.detach().clone() for p in encoder.parameters()]
        result = algo.train()
        assert any(not torch.equal(b, a) for b, a in zip(before, encoder.parameters()))
        # The runners' copy acts through the encoder too, and gets its new weights.
        runner_encoder = algo.env_runner.module[SHARED_ENCODER_ID]
        assert all(torch.equal(a, b) for a, b in zip(encoder.parameters(), runner_encoder.parameters()))
    finally:
        algo.stop()
    assert {"p0", "p1"} <= set(result["learners"])


def test_a_module_no_agent_maps_to_needs_its_class_and_spaces():
    from relayrl.examples.envs.classes.multi_agent import MultiAgentCartPole

    spec = MultiRLModuleSpec(rl_module_specs={"extra": RLModuleSpec(model_config={})})
    config = (PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
              .multi_agent(policies={"p0"}, policy_mapping_fn=lambda agent_id, episode, **kw: "p0")
              .rl_module(rl_module_spec=spec))
    with pytest.raises(ValueError, match="`extra`, which is not among the policies.*module_class"):
        config.build_algo()


# -- custom PPO Learners -------------------------------------------------------------------------------------

def test_ppo_with_a_weight_regularizer_term_from_training_args():
    from relayrl.examples.learners.classes.custom_ppo_loss_fn_learner import PPOTorchLearnerWithWeightRegularizerLoss

    config = _tiny_ppo(PPOConfig().environment("CartPole-v1").training(
        learner_class=PPOTorchLearnerWithWeightRegularizerLoss, learner_config_dict={"regularizer_coeff": 0.02}))
    assert config.learner_class is PPOTorchLearnerWithWeightRegularizerLoss  # training() takes them, as in RLlib
    _, (result,) = _train(config)
    assert "mean_weight" in result["learners"]["default_policy"]


def test_separate_value_function_optimizer_with_its_own_learning_rate():
    from relayrl.examples.learners.classes.separate_vf_lr_and_optimizer_learner import (
        PPOTorchLearnerWithSeparateVfOptimizer,
    )

    config = _tiny_ppo(PPOConfig().environment("CartPole-v1").training(
        learner_class=PPOTorchLearnerWithSeparateVfOptimizer, learner_config_dict={"lr_vf": 1e-3}, lr=2e-4))
    algo, _ = _train(config)
    learner = algo.learner_group._learner
    optimizers = dict(learner.get_optimizers_for_module("default_policy"))
    assert {name: opt.param_groups[0]["lr"] for name, opt in optimizers.items()} == {"optim_for_pi": 2e-4,
                                                                                        "optim_for_vf": 1e-3}
    module = learner.module["default_policy"]
    vf_ids = {id(p) for p in [*module.vf.parameters(), *module.vf_encoder.parameters()]}
    assert {id(p) for g in optimizers["optim_for_vf"].param_groups for p in g["params"]} == vf_ids
    assert not vf_ids & {id(p) for g in optimizers["optim_for_pi"].param_groups for p in g["params"]}


def test_separate_optimizers_need_separate_networks():
    from relayrl.examples.learners.classes.separate_vf_lr_and_optimizer_learner import (
        PPOTorchLearnerWithSeparateVfOptimizer,
    )

    config = _tiny_ppo(PPOConfig().environment("CartPole-v1").learners(
        learner_class=PPOTorchLearnerWithSeparateVfOptimizer).rl_module(model_config={"vf_share_layers": True}))
    with pytest.raises(ValueError, match="vf_share_layers=False"):
        config.build_algo()


# -- envs and connector pieces --------------------------------------------------------------------------------

def test_double_row_corridor_and_the_other_agents_row():
    from relayrl.examples.connectors.classes.add_other_agents_row_index_to_xy_pos import (
        AddOtherAgentsRowIndexToXYPos,
    )
    from relayrl.examples.envs.classes.multi_agent.double_row_corridor_env import DoubleRowCorridorEnv

    env = DoubleRowCorridorEnv({"length": 4})
    obs, _ = env.reset()
    piece = AddOtherAgentsRowIndexToXYPos(gym.spaces.Dict(env.observation_spaces), None)
    new = piece.preprocess(obs, episode=None)
    assert new["agent_0"] == {"agent": 0, "other_agent_row": 1}
    np.testing.assert_array_equal(new["agent_1"], [1, 3, 0])
    assert piece.observation_space["agent_0"].contains(new["agent_0"])
    # agent_1 walks left to its goal (1, 0): -0.1 per step, +10 at the goal, after which it gets no observation.
    rewards = [env.step({"agent_0": 0, "agent_1": 2})[1]["agent_1"] for _ in range(3)]
    assert rewards == pytest.approx([-0.1, -0.1, 9.9])
    obs, rewards, terminateds, _, _ = env.step({"agent_0": 3})
    assert "agent_1" not in obs and "agent_1" not in rewards and not terminateds["__all__"]
    assert piece.preprocess(obs, episode=None)["agent_0"]["other_agent_row"] == 2  # the other one is done


def test_protobuf_observations_decode_to_cartpoles_state():
    from relayrl.examples.connectors.classes.protobuf_cartpole_observation_decoder import (
        ProtobufCartPoleObservationDecoder,
    )
    from relayrl.examples.envs.classes.cartpole_with_protobuf_observation_space import (
        CartPoleWithProtobufObservationSpace,
        encode,
    )

    env = CartPoleWithProtobufObservationSpace()
    obs, _ = env.reset(seed=3)
    assert obs.dtype == np.uint8 and env.observation_space.contains(obs)
    assert len(encode([0.0, 0.0, 0.0, 0.0])) == len(obs)  # zeros are written too: one length for all messages
    state = np.asarray(env.unwrapped.state, np.float32)
    piece = ProtobufCartPoleObservationDecoder(env.observation_space, env.action_space)
    assert piece.observation_space.shape == (4,)
    from relayrl.env.single_agent_episode import SingleAgentEpisode

    episode = SingleAgentEpisode()
    episode.add_env_reset(observation=obs)
    piece(rl_module=None, batch={}, episodes=[episode])
    np.testing.assert_allclose(episode.get_observations(-1), state, rtol=1e-6)


def test_group_agents_wrapper_turns_two_agents_into_one():
    from relayrl.env.wrappers.group_agents_wrapper import GROUP_INFO, GROUP_REWARDS
    from relayrl.examples.envs.classes.multi_agent.two_step_game import TwoStepGame, TwoStepGameWithGroupedAgents

    env = TwoStepGameWithGroupedAgents({})
    assert env.possible_agents == ["agents"]
    assert env.get_action_space("agents") == gym.spaces.Tuple([gym.spaces.Discrete(2)] * 2)
    obs, _ = env.reset()
    assert obs == {"agents": (0, 3)}
    obs, rewards, terminateds, _, infos = env.step({"agents": np.array([1, 0])})  # agent 0 picks the risky game
    assert obs == {"agents": (2, 5)} and rewards == {"agents": 0.0} and not terminateds["__all__"]
    obs, rewards, terminateds, _, infos = env.step({"agents": (1, 1)})
    assert rewards == {"agents": 8.0} and terminateds == {"__all__": True}
    assert infos["agents"][GROUP_REWARDS] == [4.0, 4.0] and len(infos["agents"][GROUP_INFO]) == 2
    with pytest.raises(ValueError, match="in groups"):
        TwoStepGame({}).with_agent_groups({"a": [0, 1], "b": [1]})


def test_ppo_learns_grouped_agents_with_a_tuple_action():
    """The group acts with a Tuple of two Discrete actions: one multi-categorical distribution over both."""
    from relayrl.connectors.env_to_module.flatten_observations import FlattenObservations
    from relayrl.examples.envs.classes.multi_agent.two_step_game import TwoStepGameWithGroupedAgents

    config = (PPOConfig().environment(TwoStepGameWithGroupedAgents)
              .env_runners(env_to_module_connector=lambda env, spaces, device: FlattenObservations(multi_agent=True))
              .multi_agent(policies={"p0"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: "p0")
              .training(train_batch_size=512, minibatch_size=128, num_epochs=4, lr=3e-3)
              .debugging(seed=0, logger_config={"type": "none"}))
    _, results = _train(config, iterations=4)
    assert results[-1]["env_runners"]["episode_return_mean"] > results[0]["env_runners"]["episode_return_mean"]
    assert results[-1]["env_runners"]["episode_return_mean"] > 7.0  # the safe game pays 7; only 8 beats it


def test_multi_categorical_sums_its_components():
    from relayrl.modules.distributions import TorchCategorical, TorchMultiCategorical

    logits = torch.randn(5, 2 + 3)
    dist = TorchMultiCategorical.for_sizes([2, 3]).from_logits(logits)
    actions = dist.sample()
    assert actions.shape == (5, 2) and actions.dtype == torch.int64
    first, second = TorchCategorical(logits[:, :2]), TorchCategorical(logits[:, 2:])
    assert torch.allclose(dist.logp(actions), first.logp(actions[:, 0]) + second.logp(actions[:, 1]))
    assert torch.allclose(dist.entropy(), first.entropy() + second.entropy())
    with pytest.raises(ValueError, match="must sum to"):
        TorchMultiCategorical.for_sizes([2, 2]).from_logits(logits)


# -- modules -------------------------------------------------------------------------------------------------

def test_lstm_containing_module_trains_with_ppo_and_appo():
    from relayrl.algorithms.appo import APPOConfig
    from relayrl.examples.envs.classes.stateless_cartpole import StatelessCartPole
    from relayrl.examples.rl_modules.classes.lstm_containing_rlm import (
        LSTMContainingRLModule,
        LSTMContainingRLModuleWithTargetNetwork,
    )

    model = {"lstm_cell_size": 16, "dense_layers": [16], "max_seq_len": 8}
    ppo = _tiny_ppo(PPOConfig().environment(StatelessCartPole).rl_module(
        rl_module_spec=RLModuleSpec(module_class=LSTMContainingRLModule, model_config=model)))
    _, (result,) = _train(ppo)
    assert result["num_env_steps_trained_lifetime"] >= 128
    appo = (APPOConfig().environment(StatelessCartPole).training(train_batch_size=100)
            .rl_module(rl_module_spec=RLModuleSpec(module_class=LSTMContainingRLModuleWithTargetNetwork,
                                                   model_config=model))
            .debugging(seed=0, logger_config={"type": "none"}))
    _, (result,) = _train(appo)
    assert result["num_env_steps_trained_lifetime"] > 0


def test_tiny_atari_cnn_takes_uint8_frames_to_logits_and_values():
    from relayrl.examples.rl_modules.classes.tiny_atari_cnn_rlm import TinyAtariCNN

    module = TinyAtariCNN(observation_space=gym.spaces.Box(0, 255, (42, 42, 4), np.uint8),
                          action_space=gym.spaces.Discrete(6))
    module.make_target_networks()
    frames = torch.randint(0, 256, (3, 42, 42, 4), dtype=torch.uint8)
    out = module.forward_train({Columns.OBS: frames})
    assert out[Columns.ACTION_DIST_INPUTS].shape == (3, 6) and out[Columns.EMBEDDINGS].shape == (3, 256)
    assert module.compute_values({Columns.OBS: frames}).shape == (3,)
    assert torch.allclose(module.forward_target({Columns.OBS: frames})["target_network_action_dist_inputs"],
                          out[Columns.ACTION_DIST_INPUTS])
    with pytest.raises(ValueError, match="must end in 1x1 maps"):
        TinyAtariCNN(observation_space=gym.spaces.Box(0, 255, (84, 84, 4), np.uint8),
                     action_space=gym.spaces.Discrete(6))


class _RenderedCorridor(gym.Env):
    observation_space = gym.spaces.Box(0.0, 5.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)
    render_mode = "rgb_array"

    def __init__(self, config=None):
        self.pos = 0

    def reset(self, *, seed=None, options=None):
        self.pos = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.pos = min(self.pos + int(action), 5)
        return np.array([self.pos], np.float32), 1.0 if self.pos == 5 else -0.1, self.pos == 5, False, {}

    def render(self):
        frame = np.zeros((20, 60, 3), np.uint8)
        frame[:, self.pos * 10:(self.pos + 1) * 10] = 255
        return frame


def test_env_render_callback_logs_the_best_and_worst_episodes_videos():
    from relayrl.examples.envs.env_rendering_and_recording import VIDEO_HEIGHT, VIDEO_WIDTH, EnvRenderCallback

    config = _tiny_ppo(PPOConfig().environment(_RenderedCorridor).callbacks(EnvRenderCallback)
                       .env_runners(num_envs_per_env_runner=2))
    _, (result,) = _train(config)
    videos = result["env_runners"]["episode_videos_best"]
    video = videos[0] if isinstance(videos, list) else videos
    assert video.ndim == 5 and video.shape[0] == 1 and video.shape[2:] == (3, VIDEO_HEIGHT, VIDEO_WIDTH)
    assert "episode_videos_worst" in result["env_runners"]


# -- from the old API stack ------------------------------------------------------------------------------------

def _old_stack_ppo(**training):
    return (PPOConfig().api_stack(enable_rl_module_and_learner=False, enable_env_runner_and_connector_v2=False)
            .environment("CartPole-v1").training(train_batch_size=128, minibatch_size=64, num_epochs=1, **training)
            .debugging(seed=0, logger_config={"type": "none"}))


def test_modelv2_from_an_old_stack_checkpoint_acts_as_the_policy_did(tmp_path):
    """An old-stack PPO's checkpoint holds each policy's own checkpoint (policies/<policy_id>, RLlib's layout);
    ModelV2ToRLModule takes the trained ModelV2 from it and gives the same logits, then trains on the new stack."""
    from relayrl.examples.rl_modules.classes.modelv2_to_rlm import ModelV2ToRLModule

    algo = _old_stack_ppo().build_algo()
    try:
        algo.train()
        policy_dir = tmp_path / "ckpt" / "policies" / "default_policy"
        algo.save(str(tmp_path / "ckpt"))
        obs = np.array([[0.1, -0.2, 0.03, 0.4]], np.float32)
        expected, _ = algo.get_policy().model({"obs": torch.from_numpy(obs)})
    finally:
        algo.stop()
    env = gym.make("CartPole-v1")
    module = ModelV2ToRLModule(observation_space=env.observation_space, action_space=env.action_space,
                               model_config={"policy_checkpoint_dir": str(policy_dir)})
    out = module.forward_inference({Columns.OBS: torch.from_numpy(obs)})
    assert torch.allclose(out[Columns.ACTION_DIST_INPUTS], expected.detach())
    config = _tiny_ppo(PPOConfig().environment("CartPole-v1").rl_module(rl_module_spec=RLModuleSpec(
        module_class=ModelV2ToRLModule, model_config={"policy_checkpoint_dir": str(policy_dir)})))
    _, (result,) = _train(config)
    assert result["num_env_steps_trained_lifetime"] >= 128


def test_modelv2_with_an_lstm_from_an_old_config_is_a_stateful_module():
    from relayrl.examples.rl_modules.classes.modelv2_to_rlm import ModelV2ToRLModule

    old = _old_stack_ppo(model={"fcnet_hiddens": [8], "use_lstm": True, "lstm_cell_size": 8})
    spec = RLModuleSpec(module_class=ModelV2ToRLModule,
                        model_config={"old_api_stack_algo_config": old, "max_seq_len": 8})
    new = _tiny_ppo(old.copy(copy_frozen=False).api_stack(enable_rl_module_and_learner=True,
                                                          enable_env_runner_and_connector_v2=True)
                    .rl_module(rl_module_spec=spec))
    algo, (result,) = _train(new)
    module = algo.learner_group._learner.module["default_policy"]
    assert module.is_stateful() and set(module.get_initial_state()) == {0, 1}
    assert result["num_env_steps_trained_lifetime"] >= 128
    with pytest.raises(ValueError, match="policy_checkpoint_dir"):
        ModelV2ToRLModule(observation_space=gym.spaces.Box(-1, 1, (4,)), action_space=gym.spaces.Discrete(2),
                          model_config={})


# -- the old stack's RandomPolicy (offline_rl's multi-agent evaluation imports it) ----------------------------

def test_random_policy_samples_its_space_and_learns_nothing():
    from relayrl.examples._old_api_stack.policy.random_policy import RandomPolicy

    box = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    policy = RandomPolicy(gym.spaces.Box(-1, 1, (3,)), box, {})
    actions, state_outs, extra = policy.compute_actions({"a": np.zeros((5, 3)), "b": np.zeros((5, 1))})
    assert len(actions) == 5 and all(box.contains(a) for a in actions) and state_outs == [] and extra == {}
    assert policy.learn_on_batch({}) == {} and policy.get_weights() == {}
    assert policy.compute_log_likelihoods(None, np.zeros((4, 3))).shape == (4,)
    unbounded = RandomPolicy(gym.spaces.Box(-1, 1, (3,)), box, {"ignore_action_bounds": True})
    assert np.isinf(unbounded.action_space_for_sampling.high).all()
    assert any(not box.contains(a) for a in unbounded.compute_actions(np.zeros((20, 3)))[0])
