"""The default pieces' vectorised fast path and the general per-episode path give identical batches."""
import numpy as np
import pytest
import torch

from relayrl import ConnectorV2, PPOConfig
from relayrl.connectors.common.add_observations_from_episodes_to_batch import AddObservationsFromEpisodesToBatch
from relayrl.connectors.common.batch_individual_items import BatchIndividualItems
from relayrl.connectors.common.numpy_to_tensor import NumpyToTensor
from relayrl.connectors.connector_pipeline_v2 import EnvToModulePipeline
from relayrl.core.columns import Columns
from relayrl.env.env_runner import EnvRunner


class TouchEveryEpisode(ConnectorV2):
    """A custom piece doing per-episode work; its presence switches on the general path around it."""

    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        for episode in self.single_agent_episode_iterator(episodes):
            episode.get_observations(-1)
        return batch


def _runner(custom: bool) -> EnvRunner:
    torch.manual_seed(0)  # same module weights in both runners
    # numpy_inference off: these tests compare the connector pipelines' two paths, which the numpy
    # policy bypasses (tests/env/test_numpy_inference.py compares it with them).
    config = (PPOConfig().environment("CartPole-v1")
              .env_runners(num_envs_per_env_runner=4, rollout_fragment_length=60, numpy_inference=False)
              .debugging(seed=3))
    if custom:
        config.env_runners(env_to_module_connector=lambda env, spaces, device: TouchEveryEpisode(),
                           module_to_env_connector=lambda env, spaces: TouchEveryEpisode())
    return EnvRunner(config=config)


def test_the_custom_piece_really_switches_paths():
    fast, general = _runner(False), _runner(True)
    add_obs = [p for p in fast._env_to_module.connectors if p.name == "AddObservationsFromEpisodesToBatch"][0]
    assert add_obs._downstream_batched_safe and add_obs._upstream_episodes_untouched
    add_obs = [p for p in general._env_to_module.connectors if p.name == "AddObservationsFromEpisodesToBatch"][0]
    assert not add_obs._upstream_episodes_untouched
    unbatch = [p for p in general._module_to_env.connectors if p.name == "UnBatchToIndividualItems"][0]
    assert not unbatch._downstream_batched_safe


def test_env_to_module_and_module_to_env_batches_are_identical():
    fast, general = _runner(False), _runner(True)
    fast.sample(num_timesteps=40)
    episodes = fast._episodes
    obs = np.stack([e.get_observations(-1) for e in episodes])
    fast_batch = fast._env_to_module(rl_module=fast.module, batch={}, episodes=episodes, explore=True,
                                     shared_data={"vector_env_observations": obs})
    general_batch = general._env_to_module(rl_module=general.module, batch={}, episodes=episodes, explore=True,
                                           shared_data={"vector_env_observations": obs})
    assert set(fast_batch) == set(general_batch) == {Columns.OBS}
    assert torch.equal(fast_batch[Columns.OBS], general_batch[Columns.OBS])

    logits = torch.randn(len(episodes), 2)
    torch.manual_seed(1)
    fast_out = fast._module_to_env(rl_module=fast.module, batch={Columns.ACTION_DIST_INPUTS: logits},
                                   episodes=episodes, explore=True)
    torch.manual_seed(1)
    general_out = general._module_to_env(rl_module=general.module, batch={Columns.ACTION_DIST_INPUTS: logits},
                                         episodes=episodes, explore=True)
    assert set(fast_out) == set(general_out)
    for column in fast_out:
        assert isinstance(general_out[column], list) and isinstance(fast_out[column], np.ndarray)
        np.testing.assert_array_equal(np.stack(general_out[column]), fast_out[column])


@pytest.mark.parametrize("explore", [True, False])
def test_sampled_episodes_are_identical_on_both_paths(explore):
    results = []
    for custom in (False, True):
        runner = _runner(custom)
        torch.manual_seed(7)
        episodes = runner.sample(num_timesteps=240, explore=explore)
        results.append(sorted(episodes, key=lambda e: (e.t_started, float(e.get_observations(0)[0]))))
    fast, general = results
    assert len(fast) == len(general) and sum(len(e) for e in fast) == 240
    for a, b in zip(fast, general):
        np.testing.assert_array_equal(a.get_observations(), b.get_observations())
        np.testing.assert_array_equal(a.get_actions(), b.get_actions())
        np.testing.assert_array_equal(a.get_rewards(), b.get_rewards())
        np.testing.assert_array_equal(a.get_extra_model_outputs(Columns.ACTION_LOGP),
                                      b.get_extra_model_outputs(Columns.ACTION_LOGP))
        assert a.is_terminated == b.is_terminated


def _planned(pieces):
    """The pipeline's plan for each piece: (downstream batched-safe, upstream episodes untouched)."""
    pipeline = EnvToModulePipeline(connectors=pieces)
    return [(p._downstream_batched_safe, p._upstream_episodes_untouched) for p in pieces], pipeline


def test_a_subclass_with_its_own_call_does_not_inherit_batched_safe_or_writes_episodes():
    class WritesEpisodes(BatchIndividualItems):  # the parent declares BATCHED_SAFE, not WRITES_EPISODES
        def __call__(self, *, rl_module, batch, episodes, **kwargs):
            for episode in episodes:
                episode.custom_data["seen"] = True
            return super().__call__(rl_module=rl_module, batch=batch, episodes=episodes, **kwargs)

    plan, pipeline = _planned([AddObservationsFromEpisodesToBatch(), WritesEpisodes(), NumpyToTensor()])
    assert plan[0] == (False, True)  # AddObservations must leave per-episode items for WritesEpisodes
    assert plan[2] == (True, False)  # NumpyToTensor sees episodes WritesEpisodes may have changed
    assert not pipeline.BATCHED_SAFE and pipeline.WRITES_EPISODES


def test_a_subclass_restating_the_declarations_keeps_them():
    class Restated(BatchIndividualItems):
        BATCHED_SAFE, WRITES_EPISODES = True, False

        def __call__(self, *, rl_module, batch, episodes, **kwargs):
            return super().__call__(rl_module=rl_module, batch=batch, episodes=episodes, **kwargs)

    class OnlyParentsCall(BatchIndividualItems):  # no __call__ of its own: the parent's declarations hold
        pass

    for piece in (Restated(), OnlyParentsCall()):
        plan, pipeline = _planned([AddObservationsFromEpisodesToBatch(), piece, NumpyToTensor()])
        assert plan == [(True, True)] * 3 and pipeline.BATCHED_SAFE and not pipeline.WRITES_EPISODES


def test_a_nested_pipeline_speaks_for_its_pieces():
    inner = EnvToModulePipeline(connectors=[BatchIndividualItems(), NumpyToTensor()])
    plan, outer = _planned([AddObservationsFromEpisodesToBatch(), inner])
    assert plan[0] == (True, True) and outer.BATCHED_SAFE and not outer.WRITES_EPISODES
    inner.append(TouchEveryEpisode())
    plan, outer = _planned([AddObservationsFromEpisodesToBatch(), inner])
    assert plan[0] == (False, True) and outer.WRITES_EPISODES
