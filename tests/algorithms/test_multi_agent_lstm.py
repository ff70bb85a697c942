"""Multi-agent PPO with stateful (LSTM) modules: each agent's state is carried by the sampler and the Learner's
padded sequences (each module with its own max_seq_len) give exactly what the sampler computed; a stateless
module beside a stateful one gets no time axis and no state."""
import pathlib
import sys

import numpy as np
import pytest
import torch

from relayrl import PPOConfig
from relayrl.core.columns import Columns
from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec
from relayrl.testing.learning import sample_and_learner_batch, train_until
from relayrl.testing.multi_agent_example_envs import MultiAgentStatelessCartPole

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
try:
    from lstm_stateless import LSTM_PPO  # noqa: E402  (benchmarks/ is a folder of scripts)
finally:
    sys.path.pop(0)

LSTM = {"use_lstm": True, "lstm_cell_size": 16, "fcnet_hiddens": [16]}


def ma_config(p1_model_config):
    return (PPOConfig().environment(MultiAgentStatelessCartPole, env_config={"num_agents": 2})
            # Fragments of 7 env steps, agents ending at different times, sequences of 4 and 5 steps.
            .env_runners(num_envs_per_env_runner=2, rollout_fragment_length=7)
            .training(train_batch_size=28, minibatch_size=28, num_epochs=1)
            .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda aid, *a, **kw: f"p{aid}")
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
                "p0": RLModuleSpec(model_config={**LSTM, "max_seq_len": 4}),
                "p1": RLModuleSpec(model_config=p1_model_config)}))
            .debugging(seed=5))


def assert_recomputes_the_sampler(module, batch, seq_len=None):
    """The module's logits for every real step (the loss mask hides padding and GAE's bootstrap steps) equal the
    sampler's."""
    mask = batch[Columns.LOSS_MASK].bool()
    with torch.no_grad():
        logits = module.forward_train(batch)[Columns.ACTION_DIST_INPUTS]
    if seq_len is not None:
        assert logits.shape[1] == seq_len and mask.shape == logits.shape[:2]  # sequences of the module's length
    else:
        assert logits.ndim == 2 and mask.ndim == 1  # no time axis for a stateless module
    torch.testing.assert_close(logits[mask], batch[Columns.ACTION_DIST_INPUTS][mask])


def test_two_lstm_modules_with_their_own_sequence_lengths_recompute_the_sampler_exactly():
    episodes, batch, module = sample_and_learner_batch(ma_config({**LSTM, "max_seq_len": 5}), fragments=6)
    assert any(ep.env_t_started > 0 for ep in episodes) and any(ep.is_done for ep in episodes)
    for module_id, seq_len in (("p0", 4), ("p1", 5)):
        module_batch = batch[module_id]
        h_in = module_batch[Columns.STATE_IN]["h"]
        assert h_in.shape[0] == module_batch[Columns.OBS].shape[0]  # one state per sequence
        assert (h_in.abs().sum((1, 2)) > 0).any()  # sequences starting mid-episode carry a state
        assert_recomputes_the_sampler(module[module_id], module_batch, seq_len)


def test_a_stateless_module_beside_an_lstm_gets_no_time_axis_and_no_state():
    _, batch, module = sample_and_learner_batch(ma_config({"fcnet_hiddens": [16]}), fragments=4)
    assert module["p0"].is_stateful() and not module["p1"].is_stateful()
    assert_recomputes_the_sampler(module["p0"], batch["p0"], 4)
    assert Columns.STATE_IN not in batch["p1"] and Columns.SEQ_LENS not in batch["p1"]
    assert_recomputes_the_sampler(module["p1"], batch["p1"])


@pytest.mark.parametrize("p1", [{**LSTM, "max_seq_len": 5}, {"fcnet_hiddens": [16]}], ids=["lstm", "mlp"])
def test_multi_agent_ppo_with_lstm_modules_trains(p1):
    algo = ma_config(p1).build_algo()
    try:
        for _ in range(2):
            result = algo.train()
        for module_id in ("p0", "p1"):
            assert np.isfinite(result["learners"][module_id]["total_loss"])
    finally:
        algo.stop()


@pytest.mark.slow
def test_two_agents_sharing_an_lstm_learn_stateless_cartpole():
    """Both agents of a two-agent StatelessCartPole (no velocities: memory needed) map to one LSTM module, with the
    single-agent LSTM benchmark's settings and 16 envs. Seeds 0-3 reach a summed mean return of 600 (300 per agent)
    at 172k / 93k / 109k / 129k env steps on a 2-core Intel AVX-512 machine (2026-11-29); this is seed 1."""
    config = (PPOConfig().environment(MultiAgentStatelessCartPole, env_config={"num_agents": 2})
              .env_runners(**{**LSTM_PPO["env_runners"], "num_envs_per_env_runner": 16})
              .training(**LSTM_PPO["training"])
              .rl_module(model_config=LSTM_PPO["model_config"])
              .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: "shared")
              .debugging(seed=1))
    ret, steps = train_until(config, target=600.0, budget=300_000)
    assert ret >= 600.0, (ret, steps)
