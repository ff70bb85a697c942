"""The feature matrix's `record` cells (feature_matrix.py): recording while training (episode rows, RLlib's default),
then the files read back with relayrl's reader hold every step the runner counted."""
import pytest

import feature_matrix as fm
from matrix_checks import refused

from relayrl.offline.episode_rows import ITEM_COLUMN, decode_episode_state, episode_from_state
from relayrl.offline.files import input_files
from relayrl.offline.reader import ParquetFiles
from relayrl.testing.matrix_envs import policy_of_agent

PAIRS = [(a, e) for a in fm.ALGORITHMS for e in fm.ENV_KINDS]


def read_episodes(folder):
    """The recorded episodes (single-agent: a multi-agent episode's agents' episodes), through relayrl's reader."""
    filesystem, files = input_files(str(folder))
    source = ParquetFiles(filesystem, files, required=(ITEM_COLUMN,))
    return [episode_from_state(decode_episode_state(blob))
            for chunk in source.chunks() for blob in chunk.columns[ITEM_COLUMN]]


@pytest.mark.parametrize("algo, env_kind", PAIRS)
def test_record(algo, env_kind, tmp_path):
    config = fm.make_config(algo, env_kind, record=tmp_path / "recording")
    if refused(algo, env_kind, "record", config.build_algo):
        return
    algo_obj = config.build_algo()
    try:
        result = algo_obj.train()
    finally:
        algo_obj.stop()  # (the runner writes what it still holds)
    episodes = read_episodes(tmp_path / "recording")
    if config.is_multi_agent:  # per module: the steps its agents took
        counted = result["env_runners"]["num_module_steps_sampled_lifetime"]
        recorded = {}
        for episode in episodes:
            assert episode.multi_agent_episode_id and episode.module_id == policy_of_agent(episode.agent_id, None)
            recorded[episode.module_id] = recorded.get(episode.module_id, 0) + len(episode)
        assert recorded == counted and set(recorded) == {"p0", "p1"}
    else:
        assert sum(len(e) for e in episodes) == algo_obj.env_runner.num_env_steps_sampled_lifetime > 0
