"""Exploration inside the EnvRunner: config wiring, the timestep it sees, and the explore switch table."""
import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.env.env_runner import EnvRunner
from relayrl.exploration import EpsilonGreedy, Exploration, StochasticSampling
from relayrl.testing.envs import CountingEnv


class Recorder(Exploration):
    """Always action `fixed_action`; records what the runner passes."""

    def __init__(self, action_space, *, fixed_action: int = 1, **kwargs):
        super().__init__(action_space, **kwargs)
        self.fixed_action = fixed_action
        self.calls, self.before, self.starts = [], [], []

    def get_exploration_action(self, *, action_distribution, timestep, explore=True):
        self.calls.append((explore, timestep, tuple(action_distribution.inputs.shape)))
        actions = torch.full(action_distribution.inputs.shape[:-1], self.fixed_action, dtype=torch.long)
        return actions, None

    def before_compute_actions(self, *, timestep=None, explore=None, **kwargs):
        self.before.append((explore, timestep))

    def on_episode_start(self, policy=None, *, environment=None, episode=None, env_index=None, **kwargs):
        self.starts.append(env_index)


def config(num_envs=2, explore=True, **exploration):
    return (PPOConfig().environment(CountingEnv, env_config={"episode_len": 3, "num_actions": 3})
            .env_runners(num_envs_per_env_runner=num_envs, explore=explore, exploration_config=exploration)
            .debugging(seed=0))


def test_default_is_stochastic_sampling_on_the_fast_path():
    runner = EnvRunner(config=config())
    assert type(runner.exploration) is StochasticSampling and runner._use_exploration is False
    runner.sample(num_timesteps=10)
    assert runner.num_env_steps_sampled_lifetime == 10
    random_start = EnvRunner(config=config(type="StochasticSampling", random_timesteps=4))
    assert random_start._use_exploration is True


def test_custom_class_reaches_runner_and_picks_the_actions():
    runner = EnvRunner(config=config(type=Recorder, fixed_action=2))
    assert isinstance(runner.exploration, Recorder) and runner.exploration.fixed_action == 2
    episodes = runner.sample(num_timesteps=12)
    assert all((np.asarray(e.get_actions()) == 2).all() for e in episodes)
    logp = np.concatenate([e.get_extra_model_outputs("action_logp") for e in episodes])
    assert (logp == 0).all()  # None from get_exploration_action is stored as zeros
    assert runner.exploration.calls[0] == (True, 0, (2, 3))


def test_timestep_is_the_runners_lifetime_env_step_count():
    runner = EnvRunner(config=config(type=Recorder))
    runner.sample(num_timesteps=6)
    runner.sample(num_timesteps=4)
    assert [t for _, t, _ in runner.exploration.calls] == [0, 2, 4, 6, 8]
    assert [t for _, t in runner.exploration.before] == [0, 2, 4, 6, 8]
    assert runner.num_env_steps_sampled_lifetime == 10


def test_on_episode_start_gets_each_sub_env_index():
    runner = EnvRunner(config=config(type=Recorder))
    runner.sample(num_timesteps=8)  # episodes of 3 steps: reset (0, 1), then both restart at step 3
    assert runner.exploration.starts == [0, 1, 0, 1]


@pytest.mark.parametrize("config_explore, call_explore, expected", [
    (True, None, True), (True, False, False), (False, None, False), (False, True, True)])
def test_sample_explore_table(config_explore, call_explore, expected):
    runner = EnvRunner(config=config(explore=config_explore, type=Recorder))
    runner.sample(num_timesteps=2, explore=call_explore)
    assert {explore for explore, _, _ in runner.exploration.calls} == {expected}


def test_epsilon_greedy_on_ppo_logits_decays_with_sampling():
    runner = EnvRunner(config=config(num_envs=4, type="EpsilonGreedy", initial_epsilon=1.0, final_epsilon=0.0,
                                     epsilon_timesteps=400))
    first = runner.sample(num_timesteps=200)
    assert runner.exploration.get_info()["cur_epsilon"] == pytest.approx(1.0 - 196 / 400)
    runner.sample(num_timesteps=400)
    assert runner.exploration.get_info()["cur_epsilon"] == 0.0
    # epsilon 0: every action is the argmax of the module's logits for that observation
    late = runner.sample(num_timesteps=40, explore=True)
    for episode in late:
        obs = torch.as_tensor(np.asarray(episode.get_observations())[:-1])
        logits = runner.module.forward_inference({"obs": obs})["action_dist_inputs"]
        assert (logits.argmax(-1).numpy() == np.asarray(episode.get_actions())).all()
    assert len(first) > 0


def test_algorithm_default_exploration_comes_from_the_config_class():
    class EpsilonPPOConfig(PPOConfig):
        def get_default_exploration_config(self):
            return {"type": "EpsilonGreedy", "epsilon_timesteps": 50}

    cfg = EpsilonPPOConfig().environment(CountingEnv)
    runner = EnvRunner(config=cfg)
    assert isinstance(runner.exploration, EpsilonGreedy) and runner.exploration.epsilon(50) == 0.05
    # an explicit exploration_config wins
    runner = EnvRunner(config=cfg.copy().env_runners(exploration_config={"type": "Random"}))
    assert type(runner.exploration).__name__ == "Random"


def test_bad_exploration_config_fails_when_the_algorithm_is_built():
    with pytest.raises(ValueError, match="Did you mean `SoftQ`"):
        config(type="SoftQQ").build_algo()
    with pytest.raises(ValueError, match="exploration_config must be"):
        config().env_runners(exploration_config="EpsilonGreedy")


def test_evaluation_runners_use_explore_false():
    cfg = config(type=Recorder).evaluation(evaluation_interval=1, evaluation_duration=2,
                                           evaluation_config=PPOConfig.overrides(explore=False))
    algo = cfg.training(train_batch_size=8, minibatch_size=8, num_epochs=1).build_algo()
    try:
        algo.train()
        eval_calls = algo.eval_env_runner_group.local_env_runner.exploration.calls
        train_calls = algo.env_runner.exploration.calls
        assert eval_calls and {e for e, _, _ in eval_calls} == {False}
        assert train_calls and {e for e, _, _ in train_calls} == {True}
    finally:
        algo.stop()


def test_evaluation_config_exploration_overrides():
    base = config(type="EpsilonGreedy", epsilon_timesteps=50)
    same_type = base.copy().evaluation(evaluation_config={"exploration_config": {"final_epsilon": 0.0}})
    assert same_type.get_evaluation_config_object().exploration_config == {
        "type": "EpsilonGreedy", "epsilon_timesteps": 50, "final_epsilon": 0.0}
    other_type = base.copy().evaluation(evaluation_config={"exploration_config": {"type": "Random"}})
    assert other_type.get_evaluation_config_object().exploration_config == {"type": "Random"}
