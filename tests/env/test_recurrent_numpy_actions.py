"""The stateful fast path (env/sampling/recurrent_numpy_actions.py): when it runs, and that the episodes it
records hold what the module's torch forward computes, step by step, with the state reset at episode starts."""
import numpy as np
import pytest
import torch
from gymnasium.wrappers import TimeLimit

from relayrl import ConnectorV2, DefaultModelConfig, PPOConfig
from relayrl.core.columns import Columns
from relayrl.env.sampling import plan_sampling
from relayrl.env.sampling.recurrent_numpy_actions import RecurrentNumpyActions
from relayrl.env.sampling.step_log_recorder import StepLogRecorder
from relayrl.env.sampling.torch_actions import TorchModuleActions
from relayrl.env.sampling.vector_step_log import VectorStepLog
from relayrl.episodes.single_agent_episode import SingleAgentEpisode
from relayrl.modules.numpy_recurrent_forward import NumpyRecurrentForward
from relayrl.testing import StatelessCartPole


def short_stateless_cartpole(config):
    return TimeLimit(StatelessCartPole(config), max_episode_steps=12)  # episodes end inside every sample


def lstm_config(share=False, **env_runners):
    # NoFilter: with use_lstm=True PPO's defaults add a MeanStdFilter, whose pipeline step turns the fast path off.
    env_runners = {"num_envs_per_env_runner": 3, "rollout_fragment_length": 10, "observation_filter": "NoFilter",
                   **env_runners}
    return (PPOConfig().environment(short_stateless_cartpole).env_runners(**env_runners)
            .rl_module(model_config=DefaultModelConfig(use_lstm=True, lstm_cell_size=8, fcnet_hiddens=[8],
                                                       vf_share_layers=share, max_seq_len=4))
            .debugging(seed=5))


def runner_of(config):
    algo = config.build_algo()
    algo.env_runner.sample(num_timesteps=3)  # resets the envs: the plan needs the first batch
    return algo


class PassThrough(ConnectorV2):  # a custom piece that changes nothing
    def __call__(self, *, rl_module, batch, episodes, **kwargs):
        return batch


def test_default_lstm_runner_uses_the_fast_path_and_the_step_log():
    algo = runner_of(lstm_config())
    try:
        plan = plan_sampling(algo.env_runner, explore=True, random_actions=False, num_timesteps=30)
        assert type(plan.actions) is RecurrentNumpyActions and type(plan.recorder) is StepLogRecorder
    finally:
        algo.stop()


@pytest.mark.parametrize("change", ["numpy_inference_off", "custom_piece"])
def test_the_pipelines_run_where_the_fast_path_does_not_apply(change):
    config = lstm_config(numpy_inference=False) if change == "numpy_inference_off" else \
        lstm_config(env_to_module_connector=lambda env=None, spaces=None, device=None: PassThrough())
    algo = runner_of(config)
    try:
        plan = plan_sampling(algo.env_runner, explore=True, random_actions=False, num_timesteps=30)
        assert type(plan.actions) is TorchModuleActions
        assert algo.env_runner.sample(num_timesteps=30)  # and it still samples
    finally:
        algo.stop()


def _replay(module, episode):
    """The module's torch forward, one step at a time over the chunk, from the state before it."""
    if episode.t_started == 0:
        state = module.get_initial_state()
    else:
        state = episode.get_extra_model_outputs(Columns.STATE_OUT, -1, neg_index_as_lookback=True)
    state = {k: torch.as_tensor(v)[None] if not isinstance(v, dict) else
             {kk: torch.as_tensor(vv)[None] for kk, vv in v.items()} for k, v in state.items()}
    logits, states = [], []
    for t in range(len(episode)):
        batch = {Columns.OBS: torch.as_tensor(episode.get_observations(t), dtype=torch.float32)[None, None],
                 Columns.STATE_IN: state}
        with torch.no_grad():
            out = module.forward_exploration(batch)
        state = out[Columns.STATE_OUT]
        logits.append(out[Columns.ACTION_DIST_INPUTS][0, 0].numpy())
        states.append(state)
    return np.stack(logits), states


@pytest.mark.parametrize("share", [True, False])
def test_recorded_columns_equal_the_torch_forward_step_by_step(share):
    """Logits, log-probs and every state_out leaf (the critic's too) of every recorded step equal the torch
    module's, run step by step from the initial state at episode starts and from the stored state in chunks
    that continue an episode: the batched state is carried across steps and sample() calls and reset per row."""
    algo = runner_of(lstm_config(share=share))
    try:
        runner = algo.env_runner
        chunks = [chunk for _ in range(4) for chunk in runner.sample(num_timesteps=30)]
        # Episodes ended (their sub-env's state reset), started in a call, and went on across calls.
        assert any(c.is_done for c in chunks) and any(c.t_started == 0 for c in chunks[3:])
        assert any(c.t_started > 0 for c in chunks)
        for chunk in chunks:
            logits, states = _replay(runner.module, chunk)
            recorded = chunk.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS)
            np.testing.assert_allclose(recorded, logits, rtol=1e-5, atol=1e-6)
            logp = logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True)
            np.testing.assert_allclose(chunk.get_extra_model_outputs(Columns.ACTION_LOGP),
                                       logp[np.arange(len(chunk)), chunk.get_actions()], rtol=1e-5, atol=1e-5)
            out = chunk.get_extra_model_outputs(Columns.STATE_OUT)
            leaves = [("h",), ("c",)] if share else [(a, b) for a in ("actor", "critic") for b in ("h", "c")]
            for path in leaves:
                got, want = out, [s for s in states]
                for key in path:
                    got, want = got[key], [w[key] for w in want]
                np.testing.assert_allclose(got, np.concatenate([w.numpy() for w in want]), rtol=1e-5, atol=1e-6)
    finally:
        algo.stop()


def test_numpy_step_equals_the_modules_torch_step():
    algo = runner_of(lstm_config(share=False))
    try:
        module = algo.env_runner.module
        forward = module.numpy_recurrent_forward()
        assert isinstance(forward, NumpyRecurrentForward)
        rng = np.random.default_rng(0)
        obs = rng.normal(size=(5, 2)).astype(np.float32)
        state = {k: {"h": rng.normal(size=(5, 1, 8)).astype(np.float32),
                     "c": rng.normal(size=(5, 1, 8)).astype(np.float32)} for k in ("actor", "critic")}
        logits, state_out = forward(obs, state)
        with torch.no_grad():
            out = module.forward_inference({Columns.OBS: torch.from_numpy(obs)[:, None],
                                            Columns.STATE_IN: {k: {kk: torch.from_numpy(vv) for kk, vv in v.items()}
                                                               for k, v in state.items()}})
        np.testing.assert_allclose(logits, out[Columns.ACTION_DIST_INPUTS][:, 0].numpy(), rtol=1e-5, atol=1e-6)
        for k in ("actor", "critic"):
            for kk in ("h", "c"):
                np.testing.assert_allclose(state_out[k][kk], out[Columns.STATE_OUT][k][kk].numpy(), rtol=1e-5,
                                           atol=1e-6)
    finally:
        algo.stop()


def test_step_log_keeps_a_nested_extra_as_leaf_columns():
    log = VectorStepLog(2, capacity=1)  # capacity 1: the columns grow
    episodes = [SingleAgentEpisode(), SingleAgentEpisode()]
    for episode in episodes:
        episode.add_env_reset(np.zeros(2, np.float32), {})
    for t in range(3):
        state = {"actor": {"h": np.full((2, 1, 3), t, np.float32)}, "critic": {"h": np.full((2, 1, 3), -t, np.float32)}}
        assert log.write(np.full((2, 2), t, np.float32), np.array([0, 1]), np.ones(2), {"state_out": state}, None)
    log.hand_over(0, episodes[0], final_observation=np.ones(2, np.float32), final_info={}, terminated=True)
    log.hand_over(1, episodes[1])  # ongoing: items, so it can go on
    assert isinstance(episodes[1].get_extra_model_outputs("state_out", 0)["actor"]["h"], np.ndarray)
    for episode in episodes:
        out = episode.to_numpy().get_extra_model_outputs("state_out")
        np.testing.assert_array_equal(out["actor"]["h"][:, 0, 0], [0, 1, 2])
        np.testing.assert_array_equal(out["critic"]["h"][:, 0, 0], [0, -1, -2])
    assert not log.write(np.zeros((2, 2), np.float32), np.array([0, 1]), np.ones(2), {"state_out": [1, 2]}, None)
