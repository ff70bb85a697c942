"""A multi-agent env is held to the MultiAgentEnv contract at every step, not only its first: a mistake injected
at step 5 (terminateds without "__all__", a reward or a done flag for an agent the env never declared, a reward
"abc", a wrong-shaped observation) raises an EnvAPIError naming the env, the agent, the step and the fix, instead
of an episode that never ends, a reward dropped silently or a raw TypeError/ValueError."""
import gymnasium as gym
import numpy as np
import pytest

from relayrl import PPOConfig
from relayrl.env.env_checks import EnvAPIError
from relayrl.env.multi_agent_env import MultiAgentEnv
from relayrl.env.multi_agent_env_runner import MultiAgentEnvRunner


class FlawedAtStep5(MultiAgentEnv):
    """Two agents with Box(4,) observations; at step 5 of each episode it makes the mistake env_config["flaw"]."""

    def __init__(self, config=None):
        self.agents = self.possible_agents = [0, 1]
        super().__init__()
        self.flaw = (config or {}).get("flaw")
        self.observation_spaces = {a: gym.spaces.Box(-1.0, 1.0, (4,), np.float32) for a in self.agents}
        self.action_spaces = {a: gym.spaces.Discrete(2) for a in self.agents}
        self.t = 0

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return {a: np.zeros(4, np.float32) for a in self.agents}, {}

    def step(self, action_dict):
        self.t += 1
        observations = {a: np.zeros(4, np.float32) for a in self.agents}
        rewards = {a: 1.0 for a in self.agents}
        terminateds, truncateds = {a: False for a in self.agents}, {"__all__": False}
        terminateds["__all__"] = self.t >= 20
        if self.t == 5:
            if self.flaw == "no_all":
                del terminateds["__all__"]
            elif self.flaw == "undeclared_reward":
                rewards["ghost"] = 1.0
            elif self.flaw == "undeclared_truncated":
                truncateds["ghost"] = False
            elif self.flaw == "string_reward":
                rewards[1] = "abc"
            elif self.flaw == "wrong_shape":
                observations[1] = np.zeros(3, np.float32)
        return observations, rewards, terminateds, truncateds, {}


def _runner(flaw):
    config = (PPOConfig().environment(FlawedAtStep5, env_config={"flaw": flaw})
              .env_runners(num_envs_per_env_runner=1)
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, episode, **kw: f"p{agent_id}")
              .rl_module(model_config={"fcnet_hiddens": [8]}))
    return MultiAgentEnvRunner(config=config)


@pytest.mark.parametrize("flaw,names", [
    ("no_all", r"without '__all__'.*set terminateds\['__all__'\] on every step"),
    ("undeclared_reward", r"a reward for agent 'ghost', which is not in its spaces.*declare every agent"),
    ("undeclared_truncated", r"truncateds for agent 'ghost', which is not in its spaces.*declare every agent"),
    ("string_reward", r"the reward 'abc' \(str\) for agent 1; rewards are real numbers: return e.g. float"),
    ("wrong_shape", r"an observation of shape \(3,\) for agent 1; its observation space is Box.*\(4,\)"),
])
def test_a_mistake_at_step_5_is_named(flaw, names):
    runner = _runner(flaw)
    try:
        with pytest.raises(EnvAPIError, match=r"FlawedAtStep5 \(sub-env 0 of EnvRunner worker_index=0\)\.step\(\) "
                                              rf"\(step 5 of the episode\) returned .*{names}"):
            runner.sample(num_timesteps=10)
    finally:
        runner.stop()


def test_a_correct_env_samples_through_many_episodes():
    runner = _runner(None)
    try:
        episodes = runner.sample(num_timesteps=50)
        assert sum(e.env_steps() for e in episodes) == 50 and sum(e.is_done for e in episodes) == 2
    finally:
        runner.stop()
