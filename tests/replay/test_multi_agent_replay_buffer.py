"""MultiAgentEpisodeReplayBuffer: each agent's steps go to its module's buffer, chunks continue across cuts,
modules sample independently, priorities per module, state round trip, clear errors."""
import numpy as np
import pytest
from replay_chunks import make_chunk

from relayrl.episodes.multi_agent_episode import MultiAgentEpisode
from relayrl.replay import MultiAgentEpisodeReplayBuffer, MultiAgentPrioritizedEpisodeReplayBuffer
from relayrl.testing.compare import assert_same_tree


def by_id(agent_id, episode, **kwargs):
    return {"a": "left", "b": "right", "c": "right"}[agent_id]


def turn_based_episode(num_steps: int):
    """Agents a and b take turns (a at even env steps); c acts every step. Obs = [env step, agent index]."""
    episode = MultiAgentEpisode(agent_to_module_mapping_fn=by_id)
    obs = lambda t, agent: np.array([t, "abc".index(agent)], np.float32)  # noqa: E731
    episode.add_env_reset(observations={"a": obs(0, "a"), "c": obs(0, "c")})
    for t in range(1, num_steps + 1):
        acting = ["a" if t % 2 else "b", "c"]  # who observed at t - 1 acts now
        next_turn = ["b" if t % 2 else "a", "c"]
        episode.add_env_step(observations={agent: obs(t, agent) for agent in next_turn},
                             actions={agent: t for agent in acting}, rewards={agent: 1.0 for agent in acting})
    return episode


def test_agent_steps_go_to_their_modules_buffers():
    buffer = MultiAgentEpisodeReplayBuffer(capacity=100, seed=0)
    buffer.add([turn_based_episode(6)])
    assert sorted(buffer.module_ids) == ["left", "right"]
    # a observed at 0, 2, 4, 6 and acted at 1, 3, 5: 3 steps; b observed at 1, 3, 5 and acted at 2, 4, 6: 2 steps
    # (its action at 6 hangs until it observes again); c: 6 steps.
    assert len(buffer.module_buffer("left")) == 3
    assert len(buffer.module_buffer("right")) == 2 + 6
    batch = buffer.sample(32)
    assert set(batch) == {"left", "right"} and all(len(b["obs"]) == 32 for b in batch.values())
    assert set(batch["left"]["obs"][:, 1]) == {0.0}  # only agent a's observations in module left's rows
    assert set(batch["right"]["obs"][:, 1]) <= {1.0, 2.0}
    only_left = buffer.sample(4, modules_to_sample=["left"])
    assert list(only_left) == ["left"]


def test_chunks_of_one_agent_continue_across_cuts():
    episode = turn_based_episode(4)
    successor = episode.cut()
    for t in range(5, 9):
        agent = "a" if t % 2 else "b"
        successor.add_env_step(observations={"b" if t % 2 else "a": np.array([t, 0], np.float32),
                                             "c": np.array([t, 2], np.float32)},
                               actions={agent: t, "c": t}, rewards={agent: 1.0, "c": 1.0})
    buffer = MultiAgentEpisodeReplayBuffer(capacity=100, seed=0)
    buffer.add([episode])
    buffer.add([successor])
    right = buffer.module_buffer("right")
    assert right.get_num_episodes() == 2  # b and c, each one episode though added in two chunks
    # n-step transitions run across the cut: some 3-step returns of agent c start before it and end after it.
    batch = buffer.sample(200, n_step=3, gamma=1.0, modules_to_sample=["right"])["right"]
    c_rows = batch["obs"][:, 1] == 2.0
    crossing = c_rows & (batch["obs"][:, 0] == 3.0)
    assert crossing.any() and np.all(batch["rewards"][crossing] == 3.0)


def test_single_agent_episodes_go_to_their_module():
    buffer = MultiAgentEpisodeReplayBuffer(capacity=10, seed=0)
    buffer.add([make_chunk(0, 0, 5)])
    assert buffer.module_ids == ["default_policy"] and len(buffer) == 5


def test_prioritized_updates_one_modules_priorities():
    buffer = MultiAgentPrioritizedEpisodeReplayBuffer(capacity=100, alpha=1.0, seed=0)
    buffer.add([turn_based_episode(10)])
    batch = buffer.sample(8, beta=0.4)
    right_before = buffer.module_buffer("right")._sum_tree.root
    buffer.update_priorities(np.full(8, 5.0), batch["left"]["indices"], module_id="left")
    assert buffer.module_buffer("left")._sum_tree.root > 4.0
    assert buffer.module_buffer("right")._sum_tree.root == right_before


def test_state_round_trip_samples_the_same():
    buffer = MultiAgentPrioritizedEpisodeReplayBuffer(capacity=100, seed=3)
    buffer.add([turn_based_episode(10)])
    state = buffer.get_state()
    restored = MultiAgentPrioritizedEpisodeReplayBuffer(capacity=100, seed=99)
    restored.check_state(state, _Where())
    restored.set_state(state)
    assert_same_tree(buffer.sample(16), restored.sample(16), "sample")


def test_errors():
    with pytest.raises(ValueError, match="replay_mode='independent'"):
        MultiAgentEpisodeReplayBuffer(replay_mode="lockstep")
    with pytest.raises(ValueError, match="capacity"):
        MultiAgentEpisodeReplayBuffer(capacity=0)
    with pytest.raises(ValueError, match="no module has stored transitions"):
        MultiAgentEpisodeReplayBuffer().sample(4)
    with pytest.raises(TypeError, match="MultiAgentEpisode or SingleAgentEpisode"):
        MultiAgentEpisodeReplayBuffer().add([{"obs": 1}])


class _Where:
    """A stand-in for checkpoint locations (a path that grows with `/`)."""

    def __truediv__(self, other):
        return self

    def error(self, message):
        return ValueError(message)
