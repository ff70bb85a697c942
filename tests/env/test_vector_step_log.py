"""VectorStepLog: the EnvRunner's bulk recording gives exactly the episodes per-step recording gives."""
import numpy as np
import pytest
import torch

from relayrl import ConnectorV2, PPOConfig
from relayrl.connectors import AddObservationsFromEpisodesToBatch, BatchIndividualItems, NumpyToTensor
from relayrl.env.env_runner import EnvRunner
from relayrl.env.sampling.step_log_recorder import StepLogRecorder
from relayrl.episodes.single_agent_episode import SingleAgentEpisode
from relayrl.env.sampling.vector_step_log import VectorStepLog
from relayrl.testing import CountingEnv
from relayrl.testing.compare import assert_same_tree


class Float64FinalObsEnv(CountingEnv):
    """CountingEnv whose final observation is float64 (the others float32), with per-step infos."""

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return (obs.astype(np.float64) if terminated or truncated else obs), reward, terminated, truncated, info


def _varied_lengths(ctx):
    return CountingEnv({"episode_len": 3 + 2 * ctx.vector_index})


SCENARIOS = {
    "cartpole": dict(env="CartPole-v1", runners=dict(num_envs_per_env_runner=4, rollout_fragment_length=25)),
    "infos-and-lookback": dict(env=_varied_lengths, runners=dict(num_envs_per_env_runner=3, rollout_fragment_length=4,
                                                                  episode_lookback_horizon=2)),
    "complete-episodes": dict(env="CartPole-v1", runners=dict(num_envs_per_env_runner=3, rollout_fragment_length=10,
                                                              batch_mode="complete_episodes")),
    "num-episodes": dict(env="CartPole-v1", runners=dict(num_envs_per_env_runner=3), sample=dict(num_episodes=5)),
    "clipped-rewards": dict(env=_varied_lengths, runners=dict(num_envs_per_env_runner=2, rollout_fragment_length=6),
                            environment=dict(clip_rewards=2.5)),
    "float64-final-obs": dict(env=Float64FinalObsEnv, env_config={"episode_len": 4},
                              runners=dict(num_envs_per_env_runner=2, rollout_fragment_length=5)),
    "continuous-actions": dict(env="Pendulum-v1", runners=dict(num_envs_per_env_runner=2, rollout_fragment_length=120)),
}


def _config(scenario, per_step: bool):
    config = PPOConfig().environment(scenario["env"], env_config=scenario.get("env_config", {}),
                                     **scenario.get("environment", {}))
    config.env_runners(**scenario["runners"]).debugging(seed=0)
    if per_step:  # an on_episode_step callback reads the episodes at every step: no step log
        config.callbacks(on_episode_step=lambda **kwargs: None)
    return config


def _column(buffer):
    data = buffer.data
    return {"lookback": buffer.lookback, "finalized": buffer.finalized,
            "types": type(data) if buffer.finalized else [type(item) for item in data],
            "dtype": getattr(data, "dtype", None), "data": data if buffer.finalized else list(data)}


def _contents(episode: SingleAgentEpisode) -> dict:
    """Everything an episode holds except its random id and wall-clock times."""
    columns = {name: _column(getattr(episode, name)) for name in ("observations", "actions", "rewards")}
    columns.update({("extra", k): _column(v) for k, v in episode.extra_model_outputs.items()})
    return {"columns": columns, "infos": list(episode.infos.data), "infos_lookback": episode.infos.lookback,
            "t": (episode.t_started, episode.t), "done": (episode.is_terminated, episode.is_truncated)}


def _run(scenario, per_step: bool):
    torch.manual_seed(0)
    runner = EnvRunner(config=_config(scenario, per_step))
    assert (StepLogRecorder.plan(runner, 8, False) is None) == per_step  # the two runs really take different paths
    calls = []
    for _ in range(4):
        episodes = runner.sample(**scenario.get("sample", {}))
        calls.append(([_contents(e) for e in episodes], [_contents(e) for e in runner._episodes]))
    runner.stop()
    return calls


@pytest.mark.parametrize("name", SCENARIOS)
def test_logged_steps_give_the_episodes_per_step_recording_gives(name):
    logged, per_step = _run(SCENARIOS[name], per_step=False), _run(SCENARIOS[name], per_step=True)
    assert sum(len(returned) for returned, _ in logged) > 0
    assert_same_tree(logged, per_step, name, strict_types=True)


class ReadsLatestObservation(ConnectorV2):
    """A custom env-to-module piece that checks the episodes are up to date at every step."""

    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        for episode in episodes:
            assert len(episode.observations) == len(episode) + 1
            assert episode.get_observations(-1)[0] == len(episode)  # CountingEnv: obs[0] is the step
        return batch


def test_a_piece_that_reads_episodes_sees_every_step():
    config = PPOConfig().environment(CountingEnv, env_config={"episode_len": 5}).env_runners(
        num_envs_per_env_runner=2, rollout_fragment_length=7,
        env_to_module_connector=lambda env, spaces, device: ReadsLatestObservation())
    runner = EnvRunner(config=config)
    assert StepLogRecorder.plan(runner, 8, False) is None
    assert sum(len(e) for e in runner.sample()) == 14
    runner.stop()


# -- the log on its own ------------------------------------------------------------------------------
def _step(t, n=2, logp_dtype=np.float32):
    return (np.full((n, 3), t, np.float32), np.arange(n, dtype=np.int64) + t, np.full(n, float(t)),
            {"action_logp": np.full(n, -t, logp_dtype)})


def _fresh_episode(n_obs_value=0.0):
    episode = SingleAgentEpisode()
    episode.add_env_reset(np.full(3, n_obs_value, np.float32), {"reset": True})
    return episode


def test_an_ended_episode_takes_its_rows_numpyd_with_final_observation_and_info():
    log = VectorStepLog(num_envs=2, capacity=2)  # grows past its first capacity
    for t in range(1, 6):
        observations, actions, rewards, extras = _step(t)
        assert log.write(observations, actions, rewards, extras, [{"t": t}, {}] if t == 2 else None)
    episode = _fresh_episode()
    log.hand_over(0, episode, final_observation=np.full(3, 99.0, np.float32), final_info={"final": 1},
                  terminated=True)
    assert episode.is_numpy and episode.is_terminated and len(episode) == 5
    np.testing.assert_array_equal(episode.get_observations()[:, 0], [0, 1, 2, 3, 4, 99])
    np.testing.assert_array_equal(episode.get_actions(), [1, 2, 3, 4, 5])
    assert episode.get_rewards().dtype == np.float64 and episode.get_return() == 15.0
    assert episode.get_extra_model_outputs("action_logp").dtype == np.float32
    assert episode.get_infos() == [{"reset": True}, {}, {"t": 2}, {}, {}, {"final": 1}]
    # Sub-env 1's episode goes on: it takes its steps as items (rewards as Python floats), unchanged rows.
    ongoing = _fresh_episode()
    log.hand_over(1, ongoing)
    assert not ongoing.is_numpy and len(ongoing) == 5 and ongoing.get_observations(-1)[0] == 5.0
    assert [type(r) for r in ongoing.get_rewards()] == [float] * 5
    ongoing.add_env_step(np.zeros(3, np.float32), 0, 1.0, extra_model_outputs={"action_logp": np.float32(0)})
    assert len(ongoing) == 6


def test_the_next_episode_starts_after_the_row_its_predecessor_ended_in():
    log = VectorStepLog(num_envs=1, capacity=8)
    for t in range(1, 4):
        log.write(*_step(t, n=1), None)
    log.hand_over(0, _fresh_episode(), final_observation=np.zeros(3, np.float32), truncated=True)
    log.write(*_step(4, n=1), None)
    successor = _fresh_episode(3.0)
    log.hand_over(0, successor)
    np.testing.assert_array_equal([o[0] for o in successor.get_observations()], [3.0, 4.0])
    log.hand_over(0, successor)  # nothing new: a no-op
    assert len(successor) == 1


def test_a_final_observation_of_another_dtype_is_stacked_as_per_step_recording_would():
    log = VectorStepLog(num_envs=1, capacity=4)
    log.write(*_step(1, n=1), None)
    log.write(*_step(2, n=1), None)
    episode = _fresh_episode()
    log.hand_over(0, episode, final_observation=np.full(3, 7.0), terminated=True)  # float64
    assert episode.get_observations().dtype == np.float64
    np.testing.assert_array_equal(episode.get_observations()[:, 0], [0.0, 1.0, 7.0])


@pytest.mark.parametrize("change", ["dtype", "shape", "keys", "list", "dict"])
def test_a_step_that_does_not_fit_the_columns_is_refused_and_nothing_is_written(change):
    log = VectorStepLog(num_envs=2, capacity=4)
    assert log.write(*_step(1), None)
    observations, actions, rewards, extras = _step(2)
    if change == "dtype":
        extras = {"action_logp": extras["action_logp"].astype(np.float64)}
    elif change == "shape":
        observations = observations[:, :2]
    elif change == "keys":
        extras = {"vf_preds": extras["action_logp"]}
    elif change == "list":
        actions = list(actions)
    else:
        extras = {"action_logp": {"a": extras["action_logp"]}}
    assert not log.write(observations, actions, rewards, extras, None)
    assert log.rows == 1


def test_a_first_step_that_cannot_be_columns_is_refused():
    log = VectorStepLog(num_envs=2, capacity=4)
    observations, actions, rewards, extras = _step(1)
    assert not log.write({"a": observations}, actions, rewards, extras, None)  # Dict observations
    assert not log.write(observations, actions, rewards.astype(np.float32), extras, None)
    assert not log.write(observations[:1], actions[:1], rewards[:1], {}, None)  # not one row per sub-env
    assert log.rows == 0


def test_dropped_rows_are_not_handed_over():
    log = VectorStepLog(num_envs=1, capacity=4)
    log.write(*_step(1, n=1), None)
    log.drop_pending()
    log.write(*_step(2, n=1), None)
    episode = _fresh_episode(1.0)
    log.hand_over(0, episode)
    assert len(episode) == 1 and episode.get_actions(0) == 2


def test_a_sub_env_whose_module_outputs_change_falls_back_to_per_step_recording():
    class SwitchToFloat64(ConnectorV2):
        """A module-to-env piece changing the log-probs' dtype after a few steps (so `write` refuses)."""
        BATCHED_SAFE, WRITES_EPISODES, READS_EPISODES = True, False, False

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.calls = 0

        def __call__(self, *, rl_module, batch, episodes, **kwargs):
            self.calls += 1
            if self.calls > 3:
                batch["action_logp"] = np.asarray(batch["action_logp"], np.float64)
            return batch

    config = PPOConfig().environment(CountingEnv, env_config={"episode_len": 3}).env_runners(
        num_envs_per_env_runner=2, rollout_fragment_length=8,
        module_to_env_connector=lambda env, spaces: SwitchToFloat64())
    runner = EnvRunner(config=config)
    assert StepLogRecorder.plan(runner, 8, False) is not None
    episodes = runner.sample()
    assert sum(len(e) for e in episodes) == 16
    for episode in episodes:  # every step is in its episode, in order
        np.testing.assert_array_equal(episode.get_observations()[:, 0], np.arange(episode.t_started, episode.t + 1))
    runner.stop()


def test_a_custom_piece_that_declares_it_leaves_episodes_alone_keeps_column_recording():
    class ScaleObservations(ConnectorV2):
        BATCHED_SAFE, WRITES_EPISODES, READS_EPISODES = True, False, False

        def __call__(self, *, rl_module, batch, episodes, **kwargs):
            batch["obs"] = batch["obs"] * 0.5  # runs after AddObservations: a whole array
            return batch

    config = PPOConfig().environment(CountingEnv, env_config={"episode_len": 4}).env_runners(
        num_envs_per_env_runner=2, rollout_fragment_length=6)
    runner = EnvRunner(config=config)
    runner._env_to_module.insert_after("AddObservationsFromEpisodesToBatch", ScaleObservations())
    assert StepLogRecorder.plan(runner, 8, False) is not None
    episodes = runner.sample()
    assert sum(len(e) for e in episodes) == 12
    for episode in episodes:  # the episodes keep the env's own observations
        np.testing.assert_array_equal(episode.get_observations()[:, 0], np.arange(episode.t_started, episode.t + 1))
    runner.stop()


def test_a_subclass_with_its_own_call_does_not_inherit_its_parents_declaration():
    class ReadsEpisodesToo(NumpyToTensor):  # NumpyToTensor declares READS_EPISODES = False
        def __call__(self, *, rl_module, batch, episodes, **kwargs):
            for episode in episodes:
                assert episode.get_observations(-1)[0] == len(episode)  # CountingEnv: obs[0] is the step
            return super().__call__(rl_module=rl_module, batch=batch, episodes=episodes, **kwargs)

    config = PPOConfig().environment(CountingEnv, env_config={"episode_len": 4}).env_runners(
        num_envs_per_env_runner=2, rollout_fragment_length=6, add_default_connectors_to_env_to_module_pipeline=False,
        env_to_module_connector=lambda env, spaces, device: [AddObservationsFromEpisodesToBatch(),
                                                              BatchIndividualItems(), ReadsEpisodesToo()])
    runner = EnvRunner(config=config)
    assert StepLogRecorder.plan(runner, 8, False) is None
    assert sum(len(e) for e in runner.sample()) == 12
    runner.stop()
