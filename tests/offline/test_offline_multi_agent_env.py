"""Multi-agent BC whose config env is the user's MultiAgentEnv with per-agent spaces (`observation_spaces` by agent,
no single `observation_space`): the modules get their agents' spaces, the rows are checked against the trained
module's, the env evaluates every iteration, and a checkpoint restored with `from_checkpoint` trains on to the
weights of the uninterrupted run."""
import json
import textwrap

import gymnasium as gym
import numpy as np
import torch

from relayrl import Algorithm, BCConfig
from relayrl.env.multi_agent_env import MultiAgentEnv


class HeroAndRival(MultiAgentEnv):
    """Two agents with different spaces: "hero" sees CartPole-shaped observations, "rival" three numbers and
    picks among three actions. Five steps an episode; an agent earns 1 for action 1."""

    def __init__(self, config=None):
        super().__init__()
        self.agents = self.possible_agents = ["hero", "rival"]
        self.observation_spaces = {"hero": gym.spaces.Box(-5.0, 5.0, (4,), np.float32),
                                   "rival": gym.spaces.Box(-1.0, 1.0, (3,), np.float32)}
        self.action_spaces = {"hero": gym.spaces.Discrete(2), "rival": gym.spaces.Discrete(3)}
        self.t = 0

    def _obs(self):
        return {"hero": np.full(4, self.t / 10, np.float32), "rival": np.full(3, -self.t / 10, np.float32)}

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return self._obs(), {}

    def step(self, actions):
        self.t += 1
        rewards = {agent: float(action == 1) for agent, action in actions.items()}
        return self._obs(), rewards, {"__all__": self.t >= 5}, {"__all__": False}, {}


def _mapping(agent_id, *args, **kwargs):
    return agent_id


def _config(rows):
    return (BCConfig().environment(HeroAndRival)
            .multi_agent(policies={"hero", "rival"}, policy_mapping_fn=_mapping, policies_to_train=["hero"])
            .offline_data(input_=rows, dataset_num_iters_per_learner=2)
            .training(train_batch_size=32).rl_module(model_config={"fcnet_hiddens": [8]})
            .evaluation(evaluation_interval=1, evaluation_duration=2)
            .debugging(seed=0, logger_config={"type": "none"}))


def _hero_weights(algo):
    return {k: torch.as_tensor(v).clone() for k, v in algo.learner_group.get_weights()["hero"].items()}


def test_a_users_multi_agent_env_gives_each_module_its_agents_spaces(cartpole_rows, tmp_path):
    algo = _config(cartpole_rows).build_algo()  # (AttributeError: no `observation_space`, before)
    try:
        modules = algo.learner_group._learner.module
        assert modules["hero"].observation_space.shape == (4,) and modules["hero"].action_space.n == 2
        assert modules["rival"].observation_space.shape == (3,) and modules["rival"].action_space.n == 3
        for _ in range(2):
            result = algo.train()
        assert np.isfinite(result["learners"]["hero"]["policy_loss"])
        assert set(result["evaluation"]["env_runners"]["module_episode_returns_mean"]) == {"hero", "rival"}
        path = algo.save_to_path(str(tmp_path / "ckpt"))
        algo.train()
        uninterrupted = _hero_weights(algo)
    finally:
        algo.stop()
    restored = Algorithm.from_checkpoint(path, trusted=[__name__])
    try:
        assert restored.train()["num_env_steps_trained_lifetime"] == 3 * 2 * 32
        assert all(torch.equal(uninterrupted[k], v) for k, v in _hero_weights(restored).items())
    finally:
        restored.stop()


def test_a_single_agent_config_on_a_multi_agent_env_names_the_multi_agent_config(cartpole_rows):
    config = BCConfig().environment(HeroAndRival).offline_data(input_=cartpole_rows)  # (AttributeError, before)
    try:
        config.build_algo()
    except ValueError as error:
        assert "HeroAndRival is a MultiAgentEnv" in str(error) and "config.multi_agent(" in str(error)
    else:
        raise AssertionError("a single-agent BC was built on a MultiAgentEnv")


def test_rows_that_fit_another_agents_space_are_refused_naming_the_column(cartpole_rows):
    config = _config(cartpole_rows).multi_agent(policies_to_train=["rival"])  # CartPole rows, rival's (3,) space
    algo = config.build_algo()
    try:
        try:
            algo.train()
        except ValueError as error:
            assert "column 'obs'" in str(error) and "[3]" in str(error)
        else:
            raise AssertionError("rows of shape [4] trained a module whose observations have shape [3]")
    finally:
        algo.stop()


TWINS_MODULE = """
import gymnasium as gym
import numpy as np

from relayrl.env.multi_agent_env import MultiAgentEnv


class Twins(MultiAgentEnv):
    def __init__(self, config=None):
        super().__init__()
        self.agents = self.possible_agents = ["left", "right"]
        self.observation_spaces = {a: gym.spaces.Box(-5.0, 5.0, (4,), np.float32) for a in self.agents}
        self.action_spaces = {a: gym.spaces.Discrete(2) for a in self.agents}
        self.t = 0

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return {a: np.zeros(4, np.float32) for a in self.agents}, {}

    def step(self, actions):
        self.t += 1
        obs = {a: np.full(4, self.t / 10, np.float32) for a in self.agents}
        return obs, {a: float(x) for a, x in actions.items()}, {"__all__": self.t >= 5}, {"__all__": False}, {}
"""


def test_command_line_bc_on_a_users_multi_agent_env_class(cartpole_rows, tmp_path, monkeypatch, capsys):
    """`relayrl train BC --env my_module:MultiAgentEnvClass` (one module every agent maps to; AttributeError before)
    then `relayrl evaluate` of its checkpoint."""
    from relayrl.cli import main

    (tmp_path / "twins_envs.py").write_text(textwrap.dedent(TWINS_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    logdir = ["--logger-config", json.dumps({"type": "json", "logdir": str(tmp_path / "run")})]
    assert main(["train", "BC", "--input", cartpole_rows, "--env", "twins_envs:Twins", "--stop-iters", "1",
                 "--train-batch-size", "32", *logdir]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "run"), "--episodes", "2", "--trust", "twins_envs"]) == 0
    assert "mean return over 2 episodes" in capsys.readouterr().out
