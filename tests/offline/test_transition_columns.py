"""The offline fast path builds the same train batch as the Learner connector pipeline does from the rows' one-step
episodes (BC's, MARWIL's, CQL's and IQL's pipelines); a Learner piece of the user's takes the episode path and sees
every offline row, as it sees sampled episodes (seed 002)."""
import copy

import numpy as np
import pytest
import torch

from relayrl import BCConfig, CQLConfig, IQLConfig, MARWILConfig
from relayrl.connectors.connector_v2 import ConnectorV2
from relayrl.core.columns import DEFAULT_MODULE_ID, Columns
from relayrl.offline.prelearner import OfflinePreLearner


def _build(config):
    return config.rl_module(model_config={"fcnet_hiddens": [8]}).debugging(
        seed=0, logger_config={"type": "none"}).build_algo()


def _in_row_order(batch, group: int = 1):
    """The batch with its rows (or groups of `group` rows: a row and its artificial step) sorted by observation.

    The episode path collects items per episode id, so rows sharing an `eps_id` (steps of one recorded episode)
    come out grouped: the same rows as the fast path's, in another order."""
    keys = batch[Columns.OBS].numpy()[::group]
    order = np.lexsort(keys.T[::-1])
    index = torch.as_tensor((order[:, None] * group + np.arange(group)).reshape(-1))
    return {column: values[index] for column, values in batch.items()}


def _both_paths(algo, num_rows=64, group: int = 1):
    """(fast-path batch, episode-path batch) of the same rows, after the Learner's whole pipeline, in one order."""
    learner = algo.learner_group._learner
    handler = algo.offline_data.rows
    assert handler.prelearner.uses_fast_path
    rows = algo.offline_data.reader.next_batch(num_rows)
    fast = handler.transitions(copy.deepcopy(rows))["batch"]
    module_id = handler.prelearner.module_id  # DEFAULT_MODULE_ID, or multi-agent: the one module trained
    fast = learner._finish_runner_columns(fast)[module_id]
    handler.transitions(rows)  # checks the rows and conforms their columns to the spaces, in place
    episodes = OfflinePreLearner(config=algo.config, spaces=handler.spaces)(rows.columns)["episodes"]
    slow = learner._learner_connector(rl_module=learner.module, batch={}, episodes=episodes, explore=False,
                                      shared_data={})[module_id]
    return _in_row_order(fast, group), _in_row_order(slow, group)


@pytest.mark.parametrize("multi_agent", [False, True])
@pytest.mark.parametrize("config_class", [BCConfig, MARWILConfig])
def test_fast_path_equals_the_episode_path_for_bc_and_marwil(config_class, multi_agent, cartpole_rows):
    config = config_class().environment("CartPole-v1").offline_data(input_=cartpole_rows).training(train_batch_size=64)
    if multi_agent:  # the single-agent rows train the one module "main" (its pipeline maps agents to modules)
        config.multi_agent(policies={"main"}, policy_mapping_fn=lambda *a, **kw: "main")
    algo = _build(config)
    try:
        fast, slow = _both_paths(algo, group=2 if config_class is MARWILConfig else 1)
    finally:
        algo.stop()
    assert set(fast) == set(slow)
    if config_class is MARWILConfig:  # one artificial step per row, outside the loss; GAE's value targets
        assert len(fast[Columns.OBS]) == 128 and fast[Columns.LOSS_MASK].sum() == 64
        assert Columns.VALUE_TARGETS in fast and Columns.ADVANTAGES in fast
    for column in fast:
        assert fast[column].dtype == slow[column].dtype, column
        torch.testing.assert_close(fast[column], slow[column], msg=column)


@pytest.mark.parametrize("config_class", [CQLConfig, IQLConfig])
def test_fast_path_equals_the_episode_path_for_cql_and_iql(config_class, pendulum_rows):
    algo = _build(config_class().environment("Pendulum-v1").offline_data(input_=pendulum_rows)
                  .training(train_batch_size_per_learner=64))
    try:
        fast, slow = _both_paths(algo)
    finally:
        algo.stop()
    assert {Columns.OBS, Columns.NEXT_OBS, Columns.ACTIONS, Columns.REWARDS, Columns.TERMINATEDS} <= set(fast)
    assert set(fast) == set(slow)
    for column in fast:
        torch.testing.assert_close(fast[column], slow[column], msg=column)


class CountRows(ConnectorV2):
    """A user's Learner piece: counts the episodes (rows) it sees and doubles every reward."""

    seen = 0

    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        CountRows.seen += len(episodes)
        for episode in episodes:
            episode.set_rewards(new_data=np.asarray(episode.get_rewards()) * 2.0)
        return batch


def test_a_users_learner_piece_applies_to_offline_rows(cartpole_rows):
    CountRows.seen = 0
    config = (MARWILConfig().environment("CartPole-v1").offline_data(input_=cartpole_rows)
              .training(train_batch_size=32, learner_connector=lambda obs_space, act_space: CountRows()))
    algo = _build(config)
    try:
        assert not algo.offline_data.rows.prelearner.uses_fast_path  # the user's piece: the episode path
        learner = algo.learner_group._learner
        rows = algo.offline_data.reader.next_batch(32)
        rewards = rows.columns[Columns.REWARDS].astype(np.float32)
        episodes = algo.offline_data.rows.transitions(rows)["episodes"]
        batch = learner._learner_connector(rl_module=learner.module, batch={}, episodes=episodes, explore=False,
                                           shared_data={})[DEFAULT_MODULE_ID]
        assert CountRows.seen == 32
        real = batch[Columns.LOSS_MASK].numpy().astype(bool)  # (MARWIL's artificial steps have reward 0)
        np.testing.assert_allclose(batch[Columns.REWARDS].numpy()[real], 2.0 * rewards)
        algo.train()
        assert CountRows.seen == 64
    finally:
        algo.stop()
