"""make_replay_buffer: types by name / class / import path, defaults, clear errors."""
import pytest

from relayrl.replay import (
    EpisodeReplayBuffer,
    MultiAgentEpisodeReplayBuffer,
    MultiAgentPrioritizedEpisodeReplayBuffer,
    PrioritizedEpisodeReplayBuffer,
    make_replay_buffer,
)


class MyBuffer(EpisodeReplayBuffer):
    def __init__(self, capacity=10, *, extra=0, **kwargs):
        super().__init__(capacity, **kwargs)
        self.extra = extra


class StrictBuffer:
    def __init__(self, capacity):
        self.capacity = capacity


def test_built_in_types_and_defaults():
    buffer = make_replay_buffer({"type": "PrioritizedEpisodeReplayBuffer", "capacity": 500, "alpha": 0.6},
                                beta=0.3, seed=1, capacity=99)
    assert isinstance(buffer, PrioritizedEpisodeReplayBuffer)
    assert (buffer.capacity, buffer.alpha, buffer.beta) == (500, 0.6, 0.3)  # config wins over defaults
    assert type(make_replay_buffer({})) is EpisodeReplayBuffer
    assert type(make_replay_buffer({"type": "MultiAgentEpisodeReplayBuffer"})) is MultiAgentEpisodeReplayBuffer
    assert type(make_replay_buffer({"type": "MultiAgentPrioritizedEpisodeReplayBuffer"})) is \
        MultiAgentPrioritizedEpisodeReplayBuffer
    # a multi-agent config: the single-agent type becomes its per-module version
    prioritized = make_replay_buffer({"type": "PrioritizedEpisodeReplayBuffer", "alpha": 0.5}, multi_agent=True)
    assert type(prioritized) is MultiAgentPrioritizedEpisodeReplayBuffer and prioritized.is_prioritized
    assert type(make_replay_buffer({}, multi_agent=True)) is MultiAgentEpisodeReplayBuffer
    # a default the type does not take (alpha for the uniform buffer) is left out
    assert make_replay_buffer({"type": "EpisodeReplayBuffer"}, alpha=0.5, capacity=7).capacity == 7


def test_class_and_import_path_types():
    buffer = make_replay_buffer({"type": MyBuffer, "extra": 3}, capacity=20, batch_size_B=5, whatever=1)
    assert isinstance(buffer, MyBuffer) and (buffer.extra, buffer.capacity, buffer.batch_size_B) == (3, 20, 5)
    path = "relayrl.replay.prioritized_episode_replay_buffer.PrioritizedEpisodeReplayBuffer"
    assert isinstance(make_replay_buffer({"type": path}), PrioritizedEpisodeReplayBuffer)
    strict = make_replay_buffer({"type": StrictBuffer, "capacity": 4}, seed=1)  # seed dropped: not accepted
    assert strict.capacity == 4


@pytest.mark.parametrize("config, error, match", [
    ({"type": "PrioritizedEpisodeReplayBufer"}, ValueError, "Did you mean `PrioritizedEpisodeReplayBuffer`"),
    ({"type": "no.such.module.Buffer"}, ValueError, "cannot import"),
    ({"type": 3}, TypeError, "class or a class name"),
    ({"type": "EpisodeReplayBuffer", "capacty": 10}, ValueError, "unknown key 'capacty'.*Did you mean `capacity`"),
    ({"type": "EpisodeReplayBuffer", "alpha": 0.6}, ValueError, "Accepted keys"),
    ({"type": StrictBuffer, "size": 3}, ValueError, "unknown key 'size'"),
    ("EpisodeReplayBuffer", TypeError, "must be a dict"),
    # RLlib's old-stack names (its old DQN dicts): named as such, with the episode buffers' names
    ({"type": "MultiAgentPrioritizedReplayBuffer"}, ValueError,
     "old-stack buffer of timesteps.*use 'PrioritizedEpisodeReplayBuffer'"),
    ({"type": "ReplayBuffer"}, ValueError, "old-stack buffer.*use 'EpisodeReplayBuffer'"),
    ({"type": "PrioritizedEpisodeReplayBuffer", "prioritized_replay_alpha": 0.6}, ValueError,
     "old-stack key; PrioritizedEpisodeReplayBuffer calls it 'alpha'"),
    ({"type": "EpisodeReplayBuffer", "prioritized_replay_beta": 0.4}, ValueError,
     r"PrioritizedEpisodeReplayBuffer \(type='PrioritizedEpisodeReplayBuffer'\) calls it 'beta'"),
    ({"type": "PrioritizedEpisodeReplayBuffer", "prioritized_replay_eps": 1e-6}, ValueError,
     r"the episode buffers have none \(priorities are \|TD error\| \+ 1e-6\): drop it"),
])
def test_errors(config, error, match):
    with pytest.raises(error, match=match):
        make_replay_buffer(config)


def test_rllib_keys_without_effect_are_accepted():
    buffer = make_replay_buffer({"type": "EpisodeReplayBuffer", "capacity": 5,
                                 "metrics_num_episodes_for_smoothing": 100})
    assert buffer.capacity == 5
