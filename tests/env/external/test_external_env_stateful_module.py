"""A stateful module (use_lstm=True) served to an external simulator: the simulator records the LSTM state with
each step ('state_out', a map of arrays per network), which the server used to refuse ('expected a list of items
or an array, got a dict', every message, so train() waited forever); now nested model outputs are checked leaf by
leaf, PPO trains from them, the server records them and recurrent BC reads the recording."""
import numpy as np
import pytest
from external_env_helpers import running, server_config
from relayrl import BCConfig, DefaultModelConfig
from relayrl.env.external import ExternalSimulator
from relayrl.env.external.rllink import RLlinkProtocolError

LSTM = DefaultModelConfig(use_lstm=True, lstm_cell_size=8, fcnet_hiddens=[], head_fcnet_hiddens=[8], max_seq_len=8)


def test_nested_outputs_are_checked_leaf_by_leaf():
    from relayrl.env.external.wire_episodes import _output_column

    expected = {"actor": {"h": (8,), "c": (8,)}}
    steps = [{"actor": {"h": np.zeros(8), "c": np.ones(8)}} for _ in range(3)]  # an unfinalized buffer's items
    column = _output_column(steps, expected, "state_out")
    assert column["actor"]["c"].shape == (3, 8) and column["actor"]["c"][0, 0] == 1
    batched = {"actor": {"h": np.zeros((3, 8)), "c": np.zeros((3, 8))}}
    assert _output_column(batched, expected, "state_out")["actor"]["h"].shape == (3, 8)
    with pytest.raises(RLlinkProtocolError, match=r"state_out\['actor'\]\['h'\]: rows of shape \(4,\)"):
        _output_column({"actor": {"h": np.zeros((3, 4)), "c": np.zeros((3, 8))}}, expected, "state_out")
    with pytest.raises(RLlinkProtocolError, match=r"keys \['actor'\]"):
        _output_column({"critic": {"h": np.zeros((3, 8))}}, expected, "state_out")
    with pytest.raises(RLlinkProtocolError, match="NaN"):
        _output_column({"actor": {"h": np.full((3, 8), np.nan), "c": np.zeros((3, 8))}}, expected, "state_out")


@pytest.mark.timeout(60)  # (before the fix train() waited forever for an accepted message)
def test_ppo_with_an_lstm_trains_from_a_simulator_and_bc_reads_the_recording(tmp_path):
    output = str(tmp_path / "recorded")
    algo = server_config().rl_module(model_config=LSTM).offline_data(output=output).build_algo()
    try:
        with running(ExternalSimulator("CartPole-v1", port=algo.env_runner.port)):
            result = algo.train()
    finally:
        algo.stop()
    assert result["num_env_steps_sampled_lifetime"] >= 128 and result["num_env_steps_trained_lifetime"] > 0
    bc = (BCConfig().environment("CartPole-v1").offline_data(input_=output, input_read_episodes=True)
          .training(train_batch_size=64).rl_module(model_config=LSTM)
          .debugging(seed=0, logger_config={"type": "none"})).build_algo()
    try:
        assert np.isfinite(bc.train()["learners"]["default_policy"]["policy_loss"])
    finally:
        bc.stop()
