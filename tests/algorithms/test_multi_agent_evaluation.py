"""Evaluation of multi-agent PPO, DQN, SAC, IMPALA and APPO (two policies): RLlib's evaluation keys per agent
and per module, durations in episodes and timesteps, the trained weights on the evaluation runner, greedy
DQN evaluation, training counters untouched by evaluation, and evaluation parallel to training."""
import numpy as np
import pytest
import torch
from multi_agent_checks import by_id

from relayrl import APPOConfig, DQNConfig, IMPALAConfig, PPOConfig, RLlibCallback, SACConfig
from relayrl.env.multi_agent_env import make_multi_agent

MultiAgentCartPole = make_multi_agent("CartPole-v1")
MultiAgentPendulum = make_multi_agent("Pendulum-v1")
ALGOS = [PPOConfig, DQNConfig, SACConfig, IMPALAConfig, APPOConfig]
EVAL_RUNNER_WEIGHTS = []  # the eval runner's module states, recorded when it samples


class RecordEvalWeights(RLlibCallback):
    def on_sample_end(self, *, env_runner=None, samples, **kwargs):
        if env_runner.config.in_evaluation:
            EVAL_RUNNER_WEIGHTS.append({m: module_state(env_runner.module[m]) for m in ("p0", "p1")})


def module_state(module):
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def matches(runner_state, learner_state):
    """The runner's (maybe inference-only) weights equal the learner's same-named weights."""
    return bool(runner_state) and all(torch.equal(v, learner_state[k]) for k, v in runner_state.items())


def config(config_cls, **evaluation):
    env = MultiAgentPendulum if config_cls is SACConfig else MultiAgentCartPole
    cfg = (config_cls().environment(env, env_config={"num_agents": 2})
           .env_runners(num_envs_per_env_runner=2)
           .rl_module(model_config={"fcnet_hiddens": [16], "head_fcnet_hiddens": [16]})
           .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=by_id)
           .debugging(seed=4, logger_config={"type": "none"}))
    if config_cls is PPOConfig:
        cfg = cfg.training(train_batch_size=256, minibatch_size=64, num_epochs=1)
    elif config_cls in (DQNConfig, SACConfig):
        cfg = cfg.training(num_steps_sampled_before_learning_starts=100, train_batch_size=32).reporting(
            min_sample_timesteps_per_iteration=200)
    else:
        cfg = (cfg.env_runners(rollout_fragment_length=25).training(train_batch_size=200)
               .reporting(min_sample_timesteps_per_iteration=400))
    return cfg.evaluation(**evaluation) if evaluation else cfg


@pytest.fixture(autouse=True)
def clear_records():
    EVAL_RUNNER_WEIGHTS.clear()


@pytest.mark.parametrize("config_cls", ALGOS)
def test_episodes_duration_keys_and_synced_weights(config_cls):
    algo = config(config_cls, evaluation_interval=1, evaluation_duration=3,
                  evaluation_duration_unit="episodes").callbacks(RecordEvalWeights).build_algo()
    try:
        result = algo.train()
        metrics = result["evaluation"]["env_runners"]
        assert metrics["num_episodes"] == metrics["episodes_this_iter"] == 3
        assert set(metrics["agent_episode_returns_mean"]) == {"0", "1"}
        assert set(metrics["module_episode_returns_mean"]) == {"p0", "p1"}
        # Every episode has both agents: the mean episode return is the sum of the agents' means.
        assert metrics["episode_return_mean"] == pytest.approx(sum(metrics["agent_episode_returns_mean"].values()))
        assert metrics["module_episode_returns_mean"] == pytest.approx(
            {"p" + a: r for a, r in metrics["agent_episode_returns_mean"].items()})
        assert set(metrics["num_module_steps_sampled"]) == {"p0", "p1"}
        # The evaluation ran with the weights the learner had after this iteration's training step.
        assert EVAL_RUNNER_WEIGHTS
        for module_id in ("p0", "p1"):
            learner_state = algo.learner_group.get_module(module_id).state_dict()
            assert all(matches(w[module_id], learner_state) for w in EVAL_RUNNER_WEIGHTS), module_id
    finally:
        algo.stop()


@pytest.mark.parametrize("config_cls", ALGOS)
def test_timesteps_duration(config_cls):
    algo = config(config_cls, evaluation_interval=1, evaluation_duration=30,
                  evaluation_duration_unit="timesteps").build_algo()
    try:
        metrics = algo.evaluate()["env_runners"]
        assert metrics["num_env_steps_sampled"] == 30
        assert set(metrics["num_agent_steps_sampled"]) == {"0", "1"}
        assert sum(metrics["num_agent_steps_sampled"].values()) >= 30  # both agents step (until one is done)
    finally:
        algo.stop()


ENV_COUNTERS = ("num_env_steps_sampled_lifetime", "num_env_steps_trained_lifetime", "training_iteration",
                "num_training_step_calls_per_iteration")


@pytest.mark.parametrize("config_cls", [PPOConfig, DQNConfig])
def test_evaluation_does_not_change_training_counters(config_cls):
    plain = config(config_cls).build_algo()
    evaluated = config(config_cls, evaluation_interval=1, evaluation_duration=2).build_algo()
    try:
        previous = None
        for _ in range(2):
            expected, got = plain.train(), evaluated.train()
            evaluated.evaluate()  # an extra evaluation between iterations
            assert got["evaluation"]["env_runners"]["num_episodes"] == 2
            # Env-step counters follow the batch sizes, so they match a run without evaluation exactly. (Agent
            # steps depend on the sampled trajectories, which differ: the evaluation runner draws random numbers.)
            assert {k: got[k] for k in ENV_COUNTERS} == {k: expected[k] for k in ENV_COUNTERS}
            assert got["env_runners"]["num_env_steps_sampled_lifetime"] == got["num_env_steps_sampled_lifetime"]
            # Lifetime agent steps grow by exactly the training runner's steps of this iteration.
            runners = got["env_runners"]
            for key in ("num_agent_steps_sampled", "num_module_steps_sampled"):
                before = previous["env_runners"][key + "_lifetime"] if previous else {}
                assert runners[key + "_lifetime"] == {k: before.get(k, 0) + n for k, n in runners[key].items()}
            previous = got
    finally:
        plain.stop()
        evaluated.stop()


class RecordDQNActions(RLlibCallback):
    """Per runner kind (eval or train): how many actions equal the module's greedy (argmax-Q) action."""
    greedy = {True: [0, 0], False: [0, 0]}  # in_evaluation -> [greedy actions, all actions]

    def on_sample_end(self, *, env_runner=None, samples, **kwargs):
        counts = RecordDQNActions.greedy[bool(env_runner.config.in_evaluation)]
        for episode in samples:
            for agent_id, agent_episode in episode.agent_episodes.items():
                actions = np.asarray(agent_episode.get_actions())
                if len(actions) == 0:
                    continue
                obs = torch.as_tensor(np.asarray(agent_episode.get_observations())[:len(actions)])
                module = env_runner.module[by_id(agent_id, episode)]
                with torch.no_grad():
                    q = module.forward_inference({"obs": obs})["action_dist_inputs"]
                counts[0] += int((q.argmax(-1).numpy() == actions).sum())
                counts[1] += len(actions)


def test_dqn_evaluation_is_greedy_by_default():
    RecordDQNActions.greedy = {True: [0, 0], False: [0, 0]}
    # epsilon 1.0 throughout training: the training runner acts at random, evaluation must not.
    algo = (config(DQNConfig, evaluation_interval=1, evaluation_duration=4)
            .training(epsilon=[(0, 1.0), (10 ** 9, 1.0)]).callbacks(RecordDQNActions).build_algo())
    try:
        assert algo.evaluation_config.explore is False and algo.config.explore is True
        algo.train()
        (eval_greedy, eval_all), (train_greedy, train_all) = RecordDQNActions.greedy[True], RecordDQNActions.greedy[False]
        assert eval_all > 20 and eval_greedy == eval_all
        assert train_all >= 200 and train_greedy < 0.8 * train_all  # random: about half greedy on 2 actions
    finally:
        algo.stop()


def test_parallel_evaluation_uses_weights_from_before_the_step():
    algo = (config(PPOConfig, evaluation_interval=1, evaluation_duration=2, evaluation_parallel_to_training=True)
            .callbacks(RecordEvalWeights).build_algo())
    try:
        for _ in range(2):
            before = {m: module_state(algo.learner_group.get_module(m)) for m in ("p0", "p1")}
            EVAL_RUNNER_WEIGHTS.clear()
            result = algo.train()
            metrics = result["evaluation"]["env_runners"]
            assert metrics["num_episodes"] == 2 and set(metrics["module_episode_returns_mean"]) == {"p0", "p1"}
            assert EVAL_RUNNER_WEIGHTS
            for module_id in ("p0", "p1"):
                after = algo.learner_group.get_module(module_id).state_dict()
                assert not all(torch.equal(v, after[k]) for k, v in before[module_id].items())  # it trained
                assert all(matches(w[module_id], before[module_id]) for w in EVAL_RUNNER_WEIGHTS), module_id
    finally:
        algo.stop()


def test_evaluation_with_its_own_policy_mapping():
    """RLlib's pattern: evaluate one policy on both sides (the other policy is mapped to by no agent there)."""
    from relayrl.algorithms.algorithm_config import AlgorithmConfig

    both_p0 = AlgorithmConfig.overrides(policy_mapping_fn=lambda agent_id, episode, **kwargs: "p0")
    algo = (config(PPOConfig, evaluation_interval=1, evaluation_duration=2, evaluation_config=both_p0)
            .callbacks(RecordEvalWeights).build_algo())
    try:
        result = algo.train()
        metrics = result["evaluation"]["env_runners"]
        assert set(metrics["module_episode_returns_mean"]) == {"p0"}
        assert set(metrics["agent_episode_returns_mean"]) == {"0", "1"}
        assert set(result["env_runners"]["module_episode_returns_mean"]) == {"p0", "p1"}
        for module_id in ("p0", "p1"):  # the unmapped module exists there too, with the trained weights
            learner_state = algo.learner_group.get_module(module_id).state_dict()
            assert all(matches(w[module_id], learner_state) for w in EVAL_RUNNER_WEIGHTS), module_id
    finally:
        algo.stop()
