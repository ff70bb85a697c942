"""The simulator side, in this process (threads): ExternalSimulator runs a gymnasium env, SimulatorClient serves a
user's own loop; weights travel on-policy, a simulator that vanishes costs only what it had not sent."""
import threading
import time

import gymnasium as gym
import numpy as np
import pytest
import torch
from external_env_helpers import rllib_episode_state, running, server_config

from relayrl import Algorithm
from relayrl.core.columns import Columns
from relayrl.env.external import ExternalSimulator, SimulatorClient, SimulatorClosed
from relayrl.env.external.rllink_client import RLlinkClient


def sample_at_least(server, steps):
    chunks = []
    while sum(map(len, chunks)) < steps:
        chunks.extend(server.sample())
    return chunks


def logp_under(module, chunks):
    """log pi(action | obs) under `module`'s current weights, per step of the chunks."""
    obs = torch.as_tensor(np.concatenate([c.get_observations()[:-1] for c in chunks]))
    actions = torch.as_tensor(np.concatenate([c.get_actions() for c in chunks]))
    with torch.no_grad():
        logits = module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
    return torch.log_softmax(logits, -1).gather(1, actions[:, None])[:, 0].numpy()


def test_a_simulator_collects_on_policy_with_the_weights_the_server_sends(make_server):
    """Messages smaller than the batch: sample() hands a waiting simulator the current weights (no deadlock, no
    update in between), and after set_state every step is collected with the new weights."""
    server = make_server(config=server_config().env_runners(rollout_fragment_length=16))
    with running(ExternalSimulator("CartPole-v1", port=server.port)) as simulator:
        first = sample_at_least(server, 64)  # 4 messages of 16 steps (rollout_fragment_length 16 x 1 env)
        assert np.allclose(np.concatenate([c.get_extra_model_outputs("action_logp") for c in first]),
                           logp_under(server.module, first), atol=1e-4)
        new_weights = {k: v + 0.5 * np.sign(v) for k, v in server.module.get_state(inference_only=True).items()}
        server.set_state({"rl_module": new_weights})
        second = sample_at_least(server, 64)
        assert np.allclose(np.concatenate([c.get_extra_model_outputs("action_logp") for c in second]),
                           logp_under(server.module, second), atol=1e-4)
        assert not np.allclose(logp_under(server.module, first),
                               np.concatenate([c.get_extra_model_outputs("action_logp") for c in first]), atol=1e-3)
        assert simulator.weights_seq_no == server.weights_seq_no == 1


def test_ppo_trains_from_a_simulator_and_resumes_from_a_checkpoint(tmp_path):
    algo = server_config().build_algo()
    with running(ExternalSimulator("CartPole-v1", port=algo.env_runner.port)):
        for _ in range(2):
            result = algo.train()
    assert result["num_env_steps_sampled_lifetime"] == result["num_env_steps_trained_lifetime"] == 256
    assert result["env_runners"]["num_simulator_connections_lifetime"] == 1
    assert result["env_runners"]["num_episodes"] > 0 and result["env_runners"]["episode_return_mean"] > 5
    algo.save(str(tmp_path))
    algo.stop()
    restored = Algorithm.from_checkpoint(str(tmp_path))  # the server class is in the stored config
    try:
        with running(ExternalSimulator("CartPole-v1", port=restored.env_runner.port)):
            result = restored.train()
        assert (result["training_iteration"], result["num_env_steps_sampled_lifetime"]) == (3, 384)
        assert result["env_runners"]["num_simulator_connections_lifetime"] == 2
    finally:
        restored.stop()


def test_a_vanished_simulator_costs_what_it_had_not_sent(make_server):
    """It got weights, collected, and vanished: its next message is lost (counted, an upper bound) and its
    unfinished episode dropped; a late chunk of that episode trains but counts in no episode return."""
    server = make_server()
    crashed = RLlinkClient(port=server.port)
    crashed.connect()
    crashed.send_episodes([rllib_episode_state(10, terminated=False, id_="cut-short")], wait_for_state=False)
    (chunk,) = server.sample()
    crashed.get_state()
    crashed.close()  # vanishes while "collecting" its next 10 steps
    survivor = RLlinkClient(port=server.port)
    survivor.connect()
    survivor.send_episodes([rllib_episode_state(4, terminated=True, id_="cut-short", start=10.0),
                            rllib_episode_state(7, terminated=True, id_="whole")], wait_for_state=False)
    late, whole = server.sample()
    assert (len(late), len(whole)) == (4, 7)  # both train
    peek = server.metrics.peek
    assert peek("num_env_steps_lost_lifetime") == 10 and peek("num_episodes_dropped_lifetime") == 1
    assert peek("episode_return_mean") == 7.0 and peek("num_episodes_lifetime") == 1  # "cut-short" not counted
    survivor.close()


def test_a_users_own_loop_drives_the_episodes(make_server):
    """SimulatorClient: the user's loop steps the env; messages of 16 steps; after 48 the "trainer" sends new
    weights (set_state), which lets the loop go on."""
    server = make_server(config=server_config().env_runners(rollout_fragment_length=16))
    received = []

    def trainer():
        received.extend(sample_at_least(server, 40))
        server.set_state({"rl_module": server.module.get_state(inference_only=True)})

    collector = threading.Thread(target=trainer, daemon=True)
    collector.start()
    client = SimulatorClient(port=server.port, reconnect_timeout_s=0.5)
    env = gym.make("CartPole-v1")
    obs, info = env.reset(seed=3)
    client.start_episode(obs, info)
    seen = [obs]
    with pytest.raises(RuntimeError, match=r"log_step\(\) called where get_action\(\) comes next"):
        client.log_step(obs, 1.0)
    for _ in range(60):
        action = client.get_action()
        assert env.action_space.contains(action)
        obs, reward, terminated, truncated, info = env.step(action)
        client.log_step(obs, reward, terminated, truncated, info)
        seen.append(obs)
        if terminated or truncated:
            obs, info = env.reset()
            client.start_episode(obs, info)
            seen.append(obs)
    collector.join(10)
    client.close()
    with pytest.raises(SimulatorClosed):
        client.get_action()
    assert sum(map(len, received)) == 48 and client.weights_seq_no == 1
    assert all(c.get_extra_model_outputs("action_logp").shape == (len(c),) for c in received)
    sent = np.concatenate([c.get_observations() for c in received])
    assert all(any(np.array_equal(row, mine) for mine in seen) for row in sent)  # every observation is the loop's
    assert np.array_equal(received[0].get_observations()[0], seen[0])


def test_a_simulator_for_other_spaces_is_refused(make_server):
    server = make_server()
    with pytest.raises(ValueError, match=r"observation space .* does not fit the server's"):
        ExternalSimulator("Pendulum-v1", port=server.port)


def test_config_options_the_wire_cannot_carry_are_passed_by_the_simulator(make_server):
    def no_pieces(env, spaces, device):
        return []

    server = make_server(config=server_config().env_runners(env_to_module_connector=lambda env, spaces, device: []))
    with pytest.raises(ValueError, match="env_to_module_connector.*ExternalSimulator.*config_overrides"):
        ExternalSimulator("CartPole-v1", port=server.port)
    simulator = ExternalSimulator("CartPole-v1", port=server.port,
                                  config_overrides={"env_to_module_connector": no_pieces})
    assert simulator.runner.config.env_to_module_connector is no_pieces
    simulator.close()


def test_evaluation_settings_stay_with_the_server(make_server):
    """Evaluating on a local env beside the server (env_config is merged, so it still holds the port: the env
    creator ignores it); the simulator never evaluates, so it does not need the lambda the wire cannot carry."""
    config = server_config().evaluation(evaluation_interval=1, evaluation_config={
        "env_runner_cls": None, "env": lambda env_config: gym.make("CartPole-v1")})
    server = make_server(config=config)
    simulator = ExternalSimulator("CartPole-v1", port=server.port)
    assert simulator.server_config.evaluation_config is None
    simulator.close()


def test_the_command_line_says_why_it_cannot_start(make_server, capsys):
    from relayrl.env.external.__main__ import main

    server = make_server()
    weights = server.module.get_state(inference_only=True)
    trainer = threading.Thread(target=lambda: server.sample() and server.set_state({"rl_module": weights}))
    trainer.start()  # (an on-policy simulator waits for the weights that follow its batch)
    assert main(["CartPole-v1", "--port", str(server.port), "--max-env-steps", "1", "--seed", "1"]) == 0
    trainer.join(10)
    assert "env steps sent: 128, lost: 0" in capsys.readouterr().out  # one message (the batch: 128 steps)
    assert main(["Pendulum-v1", "--port", str(make_server().port)]) == 1
    assert "does not fit the server's" in capsys.readouterr().err


def test_off_policy_simulators_send_without_waiting(make_server):
    """wait_for_weights=False: EPISODES, then GET_STATE for the current weights; no trainer call is waited on."""
    server = make_server(config=server_config().env_runners(rollout_fragment_length=16))
    with running(ExternalSimulator("CartPole-v1", port=server.port, wait_for_weights=False)) as simulator:
        chunks = sample_at_least(server, 64)
        server.set_state({"rl_module": server.module.get_state(inference_only=True)})
        chunks += sample_at_least(server, 64)
        deadline = time.monotonic() + 10
        while simulator.weights_seq_no != 1 and time.monotonic() < deadline:  # (it fetches them after a send)
            time.sleep(0.01)
    assert sum(map(len, chunks)) >= 128 and simulator.num_env_steps_sent >= 128
    assert simulator.weights_seq_no == 1


def test_stop_ends_a_simulator_that_is_reconnecting_to_a_server_gone_away(make_server):
    """The server stopped under a waiting simulator, which retries for reconnect_timeout_s (60 s): stop() ends
    run() at once, and the message it had sent without an answer counts as lost."""
    server = make_server()
    simulator = ExternalSimulator("CartPole-v1", port=server.port, reconnect_timeout_s=60.0)
    thread = threading.Thread(target=simulator.run, daemon=True)
    thread.start()
    assert sum(map(len, server.sample())) == 128  # (the simulator now waits for weights that never come)
    server.stop()
    deadline = time.monotonic() + 10
    while simulator.num_env_steps_lost == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert simulator.num_env_steps_lost == 128 and thread.is_alive()  # retrying
    simulator.stop()
    thread.join(5)
    assert not thread.is_alive()
    simulator.close()
