"""`AddOtherAgentsRowIndexToXYPos` (RLlib's example piece): a MultiAgentObservationPreprocessor that gives each
agent of `DoubleRowCorridorEnv` the row of the other agent, which it needs to learn to meet it. It shows that a
multi-agent preprocessor sees all agents' observations at once and may give each agent a different space:

- agent_0: `Dict(agent=Discrete(2 * length): its cell as one index, other_agent_row=Discrete(3))`;
- agent_1: `Box(3,)`: its row and column, then agent_0's row.

The other agent's row is 2 once that agent is done.
"""
import gymnasium as gym
import numpy as np

from relayrl.connectors.env_to_module.observation_preprocessor import MultiAgentObservationPreprocessor

_DONE_ROW = 2


class AddOtherAgentsRowIndexToXYPos(MultiAgentObservationPreprocessor):
    def recompute_output_observation_space(self, input_observation_space, input_action_space):
        position_space = input_observation_space["agent_0"]
        self._length = int(position_space.high[1]) + 1  # Box bounds are inclusive
        return gym.spaces.Dict({
            "agent_0": gym.spaces.Dict({"agent": gym.spaces.Discrete(2 * self._length),
                                        "other_agent_row": gym.spaces.Discrete(3)}),
            "agent_1": gym.spaces.Box(0, self._length - 1, shape=(3,), dtype=np.float32),
        })

    def preprocess(self, observations, episode):
        row_0 = observations["agent_0"][0] if "agent_0" in observations else _DONE_ROW
        row_1 = observations["agent_1"][0] if "agent_1" in observations else _DONE_ROW
        new = {}
        if "agent_0" in observations:
            row, col = observations["agent_0"]
            new["agent_0"] = {"agent": int(row * self._length + col), "other_agent_row": int(row_1)}
        if "agent_1" in observations:
            row, col = observations["agent_1"]
            new["agent_1"] = np.array([row, col, row_0], dtype=np.float32)
        return new
