"""The sampling plan (relayrl/env/sampling/): a sample() call picks its action source and recorder once,
and the loop that runs them stays short."""
import inspect

import pytest

from relayrl import PPOConfig, RLlibCallback
from relayrl.env.env_runner import EnvRunner
from relayrl.env.sampling import plan_sampling
from relayrl.env.sampling.direct_numpy_actions import DirectNumpyActions
from relayrl.env.sampling.episode_recorder import EpisodeRecorder
from relayrl.env.sampling.numpy_actions import NumpyActions
from relayrl.env.sampling.random_actions import RandomActions
from relayrl.env.sampling.step_log_recorder import StepLogRecorder
from relayrl.env.sampling.torch_actions import TorchModuleActions


class StepWatcher(RLlibCallback):
    def on_episode_step(self, **kwargs):
        pass


def _plan(config, random_actions=False):
    runner = EnvRunner(config=config.env_runners(num_envs_per_env_runner=2).debugging(seed=0))
    runner.sample(num_timesteps=4)
    plan = plan_sampling(runner, explore=True, random_actions=random_actions, num_timesteps=8)
    runner.stop()
    return type(plan.actions), type(plan.recorder)


@pytest.mark.parametrize("case, expected", [
    ("default", (DirectNumpyActions, StepLogRecorder)),
    ("torch inference", (TorchModuleActions, StepLogRecorder)),
    ("random actions", (RandomActions, EpisodeRecorder)),
    ("on_episode_step", (DirectNumpyActions, EpisodeRecorder)),
    ("custom module-to-env piece", (NumpyActions, EpisodeRecorder)),
    ("Box actions", (DirectNumpyActions, StepLogRecorder)),  # the source calls NormalizeAndClipActions itself
    ("Box actions, custom module-to-env piece", (NumpyActions, EpisodeRecorder)),
])
def test_each_sample_call_picks_its_action_source_and_recorder(case, expected):
    from relayrl import ConnectorV2

    class PassThrough(ConnectorV2):
        def __call__(self, *, batch, **kwargs):
            return batch

    config = PPOConfig().environment("Pendulum-v1" if case.startswith("Box actions") else "CartPole-v1")
    if case == "torch inference":
        config.env_runners(numpy_inference=False)
    elif case == "on_episode_step":
        config.callbacks(StepWatcher)
    elif case.endswith("custom module-to-env piece"):
        config.env_runners(module_to_env_connector=lambda env, spaces: PassThrough())
    assert _plan(config, random_actions=case == "random actions") == expected


def test_the_sampling_loop_reads_in_under_40_lines():
    lines = inspect.getsource(EnvRunner._run).splitlines()
    assert len(lines) <= 40, len(lines)


def test_the_old_episode_import_paths_still_work():
    from relayrl.env.infinite_lookback_buffer import InfiniteLookbackBuffer as old_buffer
    from relayrl.env.single_agent_episode import SingleAgentEpisode as old_episode
    from relayrl.episodes import InfiniteLookbackBuffer, SingleAgentEpisode

    assert old_episode is SingleAgentEpisode and old_buffer is InfiniteLookbackBuffer
