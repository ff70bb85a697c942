"""Every run resumes, on any env: save -> a fresh algorithm -> restore -> train.

For PPO, DQN, SAC, IMPALA with an LSTM, APPO, multi-agent PPO and a Policy-API algorithm, each on
(a) a gymnasium id (its state is captured: the resumed run is bit-identical to the uninterrupted one),
(b) an env class keeping a gymnasium env in an attribute (`self.inner = gym.make(...)`, whose state a checkpoint
    cannot hold: the restored runner starts fresh episodes, keeps weights, optimizer, counters and replay buffer,
    and says so once in the log), and
(c) a register_env creator of such an env,
through restore_from_path (into a fresh algorithm) and from_checkpoint (the env passed again where it is not
nameable). The default run takes one combination per algorithm, the slow run the whole matrix (a Tune trial
restore: tests/tune/test_resume_custom_env.py).
"""
import copy
import itertools
import logging

import gymnasium as gym
import pytest

from relayrl import (
    APPOConfig,
    DQNConfig,
    IMPALAConfig,
    PPOConfig,
    SACConfig,
    register_env,
)
from relayrl.algorithms.algorithm import Algorithm
from relayrl.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
from relayrl.env.multi_agent_env import MultiAgentEnv, make_multi_agent
from relayrl.modules.default_model_config import DefaultModelConfig
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.testing.compare import assert_same_tree
from relayrl.testing.envs import InnerGymEnv

FRESH = "Resuming with fresh episodes"


class TwoInnerCartPoles(MultiAgentEnv):
    """The same for two agents: a gymnasium env per agent in an attribute; the episode ends when one ends."""

    def __init__(self, config=None):
        self.agents = self.possible_agents = [0, 1]
        super().__init__()
        self.inner = [gym.make("CartPole-v1") for _ in self.agents]
        self.observation_spaces = {a: env.observation_space for a, env in enumerate(self.inner)}
        self.action_spaces = {a: env.action_space for a, env in enumerate(self.inner)}

    def reset(self, *, seed=None, options=None):
        return {a: env.reset(seed=None if seed is None else seed + a)[0] for a, env in enumerate(self.inner)}, {}

    def step(self, action_dict):
        observations, rewards, terminateds, truncateds = {}, {}, {}, {}
        for a, action in action_dict.items():
            observations[a], rewards[a], terminateds[a], truncateds[a], _ = self.inner[a].step(action)
        terminateds["__all__"], truncateds["__all__"] = any(terminateds.values()), any(truncateds.values())
        return observations, rewards, terminateds, truncateds, {}


MultiAgentCartPole = make_multi_agent("CartPole-v1")  # copies of a gymnasium id: captured (its own get_state)


class PPOPolicyAlgorithm(Algorithm):
    """A Policy-API algorithm: RLlib's old-stack PPO policy, one learn_on_batch per iteration."""

    @classmethod
    def get_default_policy_class(cls, config):
        return PPOTorchPolicy


register_env("resume-inner-gym-env", lambda env_config: InnerGymEnv(env_config))
register_env("resume-two-inner-cartpoles", lambda env_config: TwoInnerCartPoles(env_config))


def _by_agent(agent_id, episode=None, **kwargs):
    return f"p{agent_id}"


_ENVS = {  # env kind -> (env, env_config) for single-agent algorithms on an env of `env_id`
    "gym_id": lambda env_id: (env_id, {}),
    "env_class": lambda env_id: (InnerGymEnv, {"id": env_id}),
    "register_env": lambda env_id: ("resume-inner-gym-env", {"id": env_id}),
}
_MULTI_AGENT_ENVS = {"gym_id": (MultiAgentCartPole, {"num_agents": 2}), "env_class": (TwoInnerCartPoles, {}),
                     "register_env": ("resume-two-inner-cartpoles", {})}


def _config(algorithm: str, env_kind: str):
    small = {"fcnet_hiddens": [8]}
    if algorithm == "MultiAgentPPO":
        env, env_config = _MULTI_AGENT_ENVS[env_kind]
        config = (PPOConfig().environment(env, env_config=env_config)
                  .training(train_batch_size=64, minibatch_size=32, num_epochs=1)
                  .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=_by_agent))
    else:
        env, env_config = _ENVS[env_kind]("Pendulum-v1" if algorithm == "SAC" else "CartPole-v1")
        config = {
            "PPO": lambda: PPOConfig().training(train_batch_size=64, minibatch_size=32, num_epochs=1),
            "DQN": lambda: DQNConfig().training(num_steps_sampled_before_learning_starts=32, train_batch_size=16)
            .reporting(min_sample_timesteps_per_iteration=40),
            "SAC": lambda: SACConfig().training(num_steps_sampled_before_learning_starts=32, train_batch_size=16)
            .reporting(min_sample_timesteps_per_iteration=40),
            "IMPALA_LSTM": lambda: IMPALAConfig().env_runners(rollout_fragment_length=10).training(train_batch_size=40)
            .reporting(min_sample_timesteps_per_iteration=40),
            "APPO": lambda: APPOConfig().env_runners(rollout_fragment_length=10).training(train_batch_size=40)
            .reporting(min_sample_timesteps_per_iteration=40),
            "PolicyPPO": lambda: PolicyAlgorithmConfig(algo_class=PPOPolicyAlgorithm)
            .training(train_batch_size=64, model=small),
        }[algorithm]().environment(env, env_config=env_config)
    if algorithm == "IMPALA_LSTM":
        small = DefaultModelConfig(fcnet_hiddens=[8], use_lstm=True, lstm_cell_size=8, max_seq_len=5)
    elif algorithm in ("DQN", "SAC"):
        small = {**small, "head_fcnet_hiddens": [8]}
    if algorithm != "PolicyPPO":
        config = config.rl_module(model_config=small)
    return config.env_runners(num_envs_per_env_runner=2).debugging(seed=3, logger_config={"type": "none"})


def _learned_state(algo) -> dict:
    """Weights and optimizer state (a Policy-API algorithm's policies hold both), copied."""
    if algo.learner_group is None:
        state = copy.deepcopy(algo.env_runner.get_state(components=["policy_weights", "policy_states"]))
        for policy_state in state["policy_states"].values():  # (a generator compares by its state)
            rng = policy_state.get("numpy_forward_rng")
            policy_state["numpy_forward_rng"] = None if rng is None else rng.bit_generator.state
        return state
    return copy.deepcopy(algo.learner_group.get_state(components=["learner/rl_module", "learner/optimizer"]))


def _restore(algo, path, config, how: str):
    if how == "restore_from_path":
        fresh = config.build_algo()
        fresh.restore_from_path(path)
        return fresh
    env = None if isinstance(config.env, str) else config.env  # an env class of this module: given again
    trusted = [PPOPolicyAlgorithm] if isinstance(algo, PPOPolicyAlgorithm) else None
    return Algorithm.from_checkpoint(path, env=env, config_overrides={"policy_mapping_fn": _by_agent}
                                     if config.is_multi_agent else None, trusted=trusted)


def _check_resume(algorithm: str, env_kind: str, how: str, tmp_path, caplog):
    config = _config(algorithm, env_kind)
    algo = config.build_algo()
    restored = None
    exact = env_kind == "gym_id"  # captured: the resumed run is the uninterrupted one
    try:
        algo.train()
        path = algo.save_to_path(tmp_path / "checkpoint")
        saved, saved_iteration, saved_counters = _learned_state(algo), algo.iteration, dict(algo._counters)
        if exact:  # the uninterrupted run goes on first (the restore sets the global RNGs back to the saved ones)
            algo.train()
            uninterrupted = _learned_state(algo)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="relayrl"):
            restored = _restore(algo, path, config, how)
            assert restored.iteration == saved_iteration and dict(restored._counters) == saved_counters
            assert_same_tree(saved, _learned_state(restored), "weights and optimizer")
            buffer = getattr(algo, "local_replay_buffer", None)
            if buffer is not None:
                assert len(restored.local_replay_buffer) > 0
            result = restored.train()
        fresh_notes = [r for r in caplog.records if FRESH in r.getMessage()]
        assert result["training_iteration"] == saved_iteration + 1
        assert result["num_env_steps_sampled_lifetime"] > saved_counters["num_env_steps_sampled_lifetime"]
        if exact:
            assert not fresh_notes
            assert_same_tree(uninterrupted, _learned_state(restored), "weights after one more iteration")
        else:
            assert len(fresh_notes) == 1, [r.getMessage() for r in caplog.records]
            assert "inner holds a" in fresh_notes[0].getMessage()
    finally:
        algo.stop()
        if restored is not None:
            restored.stop()


ALGORITHMS = ["PPO", "DQN", "SAC", "IMPALA_LSTM", "APPO", "MultiAgentPPO", "PolicyPPO"]
ENV_KINDS = list(_ENVS)
HOWS = ["restore_from_path", "from_checkpoint"]
# The default run: one combination per algorithm, going round the env kinds and the two ways to restore.
DEFAULT = [(a, ENV_KINDS[(i + 1) % 3], HOWS[i % 2]) for i, a in enumerate(ALGORITHMS)]


@pytest.mark.parametrize("algorithm,env_kind,how", DEFAULT)
def test_resume(algorithm, env_kind, how, tmp_path, caplog):
    _check_resume(algorithm, env_kind, how, tmp_path, caplog)


# The slow run: every other combination.
REST = [c for c in itertools.product(ALGORITHMS, ENV_KINDS, HOWS) if c not in DEFAULT]


@pytest.mark.slow
@pytest.mark.parametrize("algorithm,env_kind,how", REST)
def test_resume_matrix(algorithm, env_kind, how, tmp_path, caplog):
    _check_resume(algorithm, env_kind, how, tmp_path, caplog)
