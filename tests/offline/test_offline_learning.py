"""Learning from recorded data (slow; fixed seeds; budgets measured on the development machine, docs/offline.md):

- 50k CartPole-v1 steps recorded from a PPO policy trained to a mean return >= 450 (its greedy actions); BC and
  MARWIL reach an evaluation mean return of 400 within 400 updates of 256 rows;
- IQL (Discrete actions) reaches 400 on the same data within 600 updates;
- BC from the same steps as RLlib's old-stack JSON, as module "main" of a multi-agent config evaluated in
  MultiAgentCartPole against a RandomPolicy, reaches 400 (main's return) within 400 updates;
- PPO fine-tuning BC's weights (400 updates) reaches a mean return of 450 in fewer env steps than PPO from scratch;
- the same BC run through Ray Data with 2 remote Learners (local cluster) reaches the bar in the same budget;
- 10k Pendulum-v1 steps recorded from a SAC run (all its samples, early and late); CQL reaches an evaluation
  mean return of -400 within 1500 updates; IQL's evaluations over its last 500 of 3000 updates average -400 or
  better.

The datasets are made once per session (tmp dir).
"""
import numpy as np
import pytest

from relayrl import BCConfig, CQLConfig, IQLConfig, MARWILConfig, PPOConfig, SACConfig
from relayrl.core.columns import Columns
from relayrl.offline.files import input_files
from relayrl.offline.reader import ParquetFiles, RowStream
from relayrl.testing.learning import train_algo_until, train_and_record

pytestmark = pytest.mark.slow

EXPERT_STEPS = 50_000
UPDATES_PER_ITERATION = 20


def _ppo_config(seed=0):
    return PPOConfig().environment("CartPole-v1").debugging(seed=seed, logger_config={"type": "none"})


def _returns_of_finished_episodes(folder: str) -> np.ndarray:
    fs, files = input_files(folder)
    source = ParquetFiles(fs, files)
    rows = RowStream(source).next_batch(source.num_rows).columns
    totals, done = {}, set()
    for eps_id, reward, term, trunc in zip(rows[Columns.EPS_ID], rows[Columns.REWARDS], rows[Columns.TERMINATEDS],
                                           rows[Columns.TRUNCATEDS]):
        totals[eps_id] = totals.get(eps_id, 0.0) + reward
        if term or trunc:
            done.add(eps_id)
    return np.array([totals[i] for i in done])


@pytest.fixture(scope="session")
def expert_cartpole(tmp_path_factory):
    """(folder of 50k recorded expert steps, PPO's env steps from scratch to a mean return of 450)."""
    folder = tmp_path_factory.mktemp("expert_cartpole")
    scratch_steps = train_and_record(_ppo_config(), str(folder), EXPERT_STEPS, 450.0, 300_000)
    returns = _returns_of_finished_episodes(str(folder))
    assert returns.mean() >= 450.0, returns.mean()
    return str(folder), scratch_steps


def _offline_config(config_class, data, **kwargs):
    return (config_class().environment("CartPole-v1")
            .offline_data(input_=data, dataset_num_iters_per_learner=UPDATES_PER_ITERATION, **kwargs)
            .evaluation(evaluation_interval=1, evaluation_duration=10,
                        evaluation_config={"explore": False, "metrics_num_episodes_for_smoothing": 10})
            .debugging(seed=0, logger_config={"type": "none"}))


def _evaluation_return(result) -> float:
    return result["evaluation"]["env_runners"]["episode_return_mean"]


def _train_to(config, target: float, max_updates: int, *, go_on: bool = False, metric=_evaluation_return):
    """Train until the evaluation's mean return (last 10 greedy episodes) reaches `target` (with `go_on`: for all
    `max_updates`); returns (the algorithm, the best return, the updates it took to reach `target` or None). The
    caller stops the algorithm."""
    algo = config.build_algo()
    updates, best, reached = 0, float("-inf"), None
    while updates < max_updates and (go_on or best < target):
        result = algo.train()
        updates += UPDATES_PER_ITERATION
        best = max(best, metric(result))
        if reached is None and best >= target:
            reached = updates
    return algo, best, reached


@pytest.fixture(scope="session")
def bc_weights(expert_cartpole):
    """BC with PPO's network (PPO fine-tunes these weights) for 400 updates: (weights, updates it took to reach 400)."""
    config = _offline_config(BCConfig, expert_cartpole[0]).rl_module(model_config=PPOConfig().model_config)
    algo, best, reached = _train_to(config, 400.0, 400, go_on=True)
    try:
        return algo.learner_group.get_weights(), reached
    finally:
        algo.stop()


def test_bc_reaches_400(bc_weights):
    assert bc_weights[1] is not None and bc_weights[1] <= 400


def test_bc_from_old_stack_json_as_a_multi_agent_module_reaches_400(expert_cartpole, tmp_path):
    """The expert steps as RLlib's old-stack SampleBatch JSON, cloned into module "main" of a multi-agent config
    and evaluated in MultiAgentCartPole next to the old stack's RandomPolicy (RLlib's
    pretrain_bc_single_agent_evaluate_as_multi_agent.py): main's return reaches 400 in BC's budget."""
    import gymnasium as gym

    from relayrl.core.policy_spec import PolicySpec
    from relayrl.examples._old_api_stack.policy.random_policy import RandomPolicy
    from relayrl.examples.envs.classes.multi_agent import MultiAgentCartPole
    from relayrl.testing.rllib_example_data import write_sample_batch_json

    data = write_sample_batch_json(expert_cartpole[0], str(tmp_path / "large.json"))
    cartpole = gym.make("CartPole-v1")
    config = (_offline_config(BCConfig, data).environment(None, observation_space=cartpole.observation_space,
                                                          action_space=cartpole.action_space)
              .multi_agent(policies={"main"}, policy_mapping_fn=lambda *a, **kw: "main")
              .evaluation(evaluation_config=BCConfig.overrides(
                  input_="sampler", explore=False, env=MultiAgentCartPole, env_config={"num_agents": 2},
                  metrics_num_episodes_for_smoothing=10,
                  policies={"main": PolicySpec(), "random": PolicySpec(policy_class=RandomPolicy)},
                  policy_mapping_fn=lambda aid, *a, **kw: "main" if aid == 0 else "random")))
    algo, best, reached = _train_to(config, 400.0, 400,
                                    metric=lambda r: r["evaluation"]["env_runners"]["policy_reward_mean"]["main"])
    random_return = algo.evaluate()["env_runners"]["policy_reward_mean"]["random"]
    algo.stop()
    assert reached is not None, best
    assert random_return < 50  # the opponent acts at random


def test_marwil_reaches_400(expert_cartpole):
    algo, best, reached = _train_to(_offline_config(MARWILConfig, expert_cartpole[0]), 400.0, 400)
    algo.stop()
    assert reached is not None, best


def test_iql_with_discrete_actions_reaches_400(expert_cartpole):
    """RLlib's IQL refuses Discrete actions; relayrl's reads Q(s) at the logged action. Measured: 421 after 240
    updates (seed 0); on 20k steps of the same recipe 444 after 350 and 500 after 550 (RLlib's defaults: 428 after
    550)."""
    config = _offline_config(IQLConfig, expert_cartpole[0]).rl_module(model_config={"fcnet_hiddens": [64, 64]})
    config.training(beta=3.0, tau=0.05, actor_lr=1e-3, critic_lr=3e-3, value_lr=3e-3)
    algo, best, reached = _train_to(config, 400.0, 600)
    algo.stop()
    assert reached is not None, best


def test_bc_then_ppo_reaches_450_in_fewer_env_steps_than_ppo_from_scratch(expert_cartpole, bc_weights):
    """RLlib's train_w_bc_finetune_w_ppo.py flow: BC's module is PPO's, so PPO starts from BC's policy."""
    scratch_steps = expert_cartpole[1]
    algo = _ppo_config().build_algo()
    try:
        algo.learner_group.set_weights(bc_weights[0])
        algo.sync_weights()
        ret, steps = train_algo_until(algo, 450.0, scratch_steps)
    finally:
        algo.stop()
    assert ret >= 450.0 and steps < scratch_steps, (ret, steps, scratch_steps)


def test_bc_through_ray_data_with_two_remote_learners(expert_cartpole, bc_weights):
    """The embedded BC run's result, read through Ray Data by 2 Learner actors (DDP, each its own shard)."""
    import ray

    ray.init(address="local", num_cpus=4, include_dashboard=False)  # 2 Learners + the Ray Data read tasks
    try:
        config = (_offline_config(BCConfig, expert_cartpole[0]).learners(num_learners=2)
                  .rl_module(model_config=PPOConfig().model_config))
        algo, best, reached = _train_to(config, 400.0, 400)
        algo.stop()
    finally:
        ray.shutdown()
    assert reached is not None, (best, "embedded reached 400 after", bc_weights[1])


@pytest.fixture(scope="session")
def sac_pendulum(tmp_path_factory):
    """Every step of a 10k-step SAC run on Pendulum-v1 (random, improving and good episodes)."""
    folder = tmp_path_factory.mktemp("sac_pendulum")
    algo = (SACConfig().environment("Pendulum-v1").offline_data(output=str(folder), output_write_episodes=False)
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        while algo.train()["num_env_steps_sampled_lifetime"] < 10_000:
            pass
    finally:
        algo.stop()
    return str(folder)


def _pendulum_config(config_class, data, **training):
    """100 updates per train() with two 64-unit layers, each followed by 5 greedy evaluation episodes."""
    return (config_class().environment("Pendulum-v1")
            .offline_data(input_=data, dataset_num_iters_per_learner=100).training(**training)
            .rl_module(model_config={"fcnet_hiddens": [64, 64]})
            .evaluation(evaluation_interval=1, evaluation_duration=5,
                        evaluation_config={"explore": False, "metrics_num_episodes_for_smoothing": 5})
            .debugging(seed=0, logger_config={"type": "none"}))


def test_cql_reaches_minus_400(sac_pendulum):
    config = _pendulum_config(CQLConfig, sac_pendulum, train_batch_size_per_learner=128, bc_iters=0,
                              min_q_weight=1.0, actor_lr=1e-3, critic_lr=3e-3, alpha_lr=3e-3, tau=0.05)
    algo = config.build_algo()
    try:
        updates, ret = 0, float("-inf")
        while updates < 1500 and ret < -400.0:
            ret = algo.train()["evaluation"]["env_runners"]["episode_return_mean"]
            updates += 100
    finally:
        algo.stop()
    assert ret >= -400.0, (ret, updates)


def test_iql_holds_minus_400(sac_pendulum):
    """Not a lucky evaluation: the mean of the evaluations after updates 2600-3000 (25 greedy episodes).

    Measured on the same recipe's data (seeds 0-2): first at -400 or better after 1300-1500 updates, every
    evaluation after 2500 updates within -75..-341; RLlib's defaults (learning rates 3e-4, tau 1.0, beta 0.1) were
    at -650..-1370 over updates 2100-3000."""
    config = _pendulum_config(IQLConfig, sac_pendulum, beta=3.0, tau=0.05, actor_lr=1e-3, critic_lr=3e-3,
                              value_lr=3e-3)
    algo = config.build_algo()
    try:
        returns = [algo.train()["evaluation"]["env_runners"]["episode_return_mean"] for _ in range(30)]
    finally:
        algo.stop()
    assert np.mean(returns[-5:]) >= -400.0, returns


def test_remote_env_runners_record_too(tmp_path):
    """Recording from EnvRunner actors: each writes its own run-<worker index>-* files."""
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False)
    try:
        config = (PPOConfig().environment("CartPole-v1").env_runners(num_env_runners=2, num_envs_per_env_runner=1)
                  .training(train_batch_size=200, minibatch_size=100, num_epochs=1)
                  .offline_data(output=str(tmp_path), output_write_episodes=False)
                  .debugging(seed=0, logger_config={"type": "none"}))
        algo = config.build_algo()
        try:
            sampled = algo.train()["num_env_steps_sampled_lifetime"]
        finally:
            algo.stop()  # the actors write what they hold when they stop
    finally:
        ray.shutdown()
    files = sorted(tmp_path.rglob("*.parquet"))
    workers = {f.parent.name.split("-")[1] for f in files}
    assert workers == {"000001", "000002"}
    import pyarrow.parquet as pq

    assert sum(pq.read_metadata(f).num_rows for f in files) == sampled
