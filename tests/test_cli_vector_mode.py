"""`relayrl train` samples with the env's own vector env where nothing in the run needs SYNC's separate
envs, and says so; a mode named on the command line, or any option that needs SYNC, keeps SYNC."""
import pytest

from relayrl.algorithms.ppo.ppo_config import PPOConfig
from relayrl.cli.vector_mode import pick_vector_mode
from tests.test_cli import SMALL, json_line, run_cli


def cartpole(**options) -> PPOConfig:
    return PPOConfig().update_from_dict({"env": "CartPole-v1", **options})


def test_cartpole_with_eight_envs_gets_its_own_vector_env_and_a_line_that_says_so():
    config = cartpole()
    note = pick_vector_mode(config, given={"env": "CartPole-v1"})
    assert config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
    assert "CartPole-v1's own vector env" in note and "--gym-env-vectorize-mode SYNC" in note


@pytest.mark.parametrize("options, given", [
    ({"gym_env_vectorize_mode": "SYNC"}, {"gym_env_vectorize_mode": "SYNC"}),  # named: kept
    ({"gym_env_vectorize_mode": "ASYNC"}, {"gym_env_vectorize_mode": "ASYNC"}),
    ({"num_envs_per_env_runner": 1}, {}),  # one env gains nothing
    ({"horizon": 100}, {}),  # wraps each sub-env
    ({"record_video_every_n_episodes": 10}, {}),
    ({"evaluation_interval": 1, "evaluation_config": {"horizon": 50}}, {}),  # the evaluation's envs too
    ({"restart_failed_sub_environments": True}, {}),
    ({"env": "Pendulum-v1"}, {}),  # no vector entry point
])
def test_sync_is_kept_where_the_run_names_it_or_needs_it(options, given):
    config = cartpole(**options)
    before = config.gym_env_vectorize_mode
    assert pick_vector_mode(config, given) is None
    assert config.gym_env_vectorize_mode == before


def test_a_multi_agent_run_keeps_sync():
    config = cartpole().multi_agent(policies={"default_policy"})
    assert pick_vector_mode(config, {}) is None and config.gym_env_vectorize_mode == "SYNC"


def test_atari_gets_ale_pys_vector_env_only_when_sampling_in_this_process():
    pytest.importorskip("ale_py.vector_env")
    local = PPOConfig().update_from_dict({"env": "ALE/Pong-v5"})
    assert "ALE/Pong-v5's own vector env" in pick_vector_mode(local, {})
    remote = PPOConfig().update_from_dict({"env": "ALE/Pong-v5", "num_env_runners": 2})
    assert pick_vector_mode(remote, {}) is None and remote.gym_env_vectorize_mode == "SYNC"


def test_the_cli_run_shows_and_reports_the_mode_it_sampled_with(capsys):
    code, out, _ = run_cli(capsys, "train", "PPO", *SMALL, "--stop-iters", "1", "--json")
    assert code == 0
    assert "CartPole-v1's own vector env" in out
    summary = json_line(out)
    assert summary["gym_env_vectorize_mode"] == "VECTOR_ENTRY_POINT"
    assert summary["training_iteration"] == 1 and summary["num_env_steps_sampled_lifetime"] >= 256
    assert "vector env" in out and "VECTOR_ENTRY_POINT" in out.split("summary")[1]

    code, out, _ = run_cli(capsys, "train", "PPO", *SMALL, "--stop-iters", "1", "--json",
                           "--gym-env-vectorize-mode", "SYNC")
    assert code == 0 and "own vector env" not in out
    assert json_line(out)["gym_env_vectorize_mode"] == "SYNC"


def test_the_help_says_what_the_cli_picks(capsys):
    code, out, _ = run_cli(capsys, "train", "PPO", "--help")
    flat = " ".join(out.split())
    assert code == 0 and "(default: 'SYNC', or 'VECTOR_ENTRY_POINT' where the env has one" in flat
