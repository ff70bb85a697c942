"""relayrl/testing/rllib_example_data.py: the data RLlib's offline example scripts read from RLlib's source tree
lies where they look (`Path(__file__).parents[2] / "offline/tests/data/cartpole/cartpole-v1_large"` for a script at
`rllib/examples/offline_rl/`), as RLlib's transition rows, and relayrl's BC trains on it. The expert itself (PPO
trained to a mean return of 450, ~45 s) is made by the slow script runs; a tiny PPO run stands in for it here."""
import pathlib

import pyarrow.parquet as pq

from relayrl import BCConfig, PPOConfig
from relayrl.testing.rllib_example_data import CARTPOLE_LARGE, cached, expert_cartpole, provide

SCRIPT = "offline_rl/train_w_bc_finetune_w_ppo.py"


def test_the_data_lies_where_the_script_looks_and_bc_trains_on_it(tmp_path):
    cache = tmp_path / "cache"
    tiny_ppo = (PPOConfig().environment("CartPole-v1").training(train_batch_size=64, minibatch_size=64, num_epochs=1)
                .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, logger_config={"type": "none"}))
    expert_cartpole(cached(str(cache), CARTPOLE_LARGE), config=tiny_ppo, target=0.0, num_timesteps=100)
    provide(SCRIPT, str(tmp_path / "rllib"), str(cache))
    provide("offline_rl/cartpole_recording.py", str(tmp_path / "rllib"), str(cache))  # reads none: gets none

    script = tmp_path / "rllib" / "examples" / SCRIPT
    data = pathlib.Path(script).parents[2] / "offline/tests/data/cartpole/cartpole-v1_large"  # the script's path
    files = sorted(data.rglob("*.parquet"))
    assert files and {"eps_id", "obs", "actions", "rewards", "new_obs", "terminateds", "truncateds"} <= set(
        pq.read_schema(files[0]).names)
    assert sum(pq.read_metadata(f).num_rows for f in files) >= 100
    assert [p.name for p in (tmp_path / "rllib").iterdir()] == ["offline"]

    algo = (BCConfig().environment("CartPole-v1").offline_data(input_=[data.as_posix()])
            .training(train_batch_size_per_learner=32).rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        result = algo.train()
    finally:
        algo.stop()
    assert result["num_env_steps_trained_lifetime"] >= 32


def test_the_old_stack_json_is_the_same_steps_where_the_multi_agent_script_looks(tmp_path):
    """`pretrain_bc_single_agent_evaluate_as_multi_agent.py` reads `large.json`: the same recording, as RLlib's
    old-stack SampleBatch lines (obs LZ4-packed, `dones`), written once per cache from the parquet one."""
    import json

    from relayrl.offline.files import input_files
    from relayrl.offline.reader import ParquetFiles
    from relayrl.testing.rllib_example_data import JSON_ROWS_PER_LINE

    cache = tmp_path / "cache"
    tiny_ppo = (PPOConfig().environment("CartPole-v1").training(train_batch_size=64, minibatch_size=64, num_epochs=1)
                .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, logger_config={"type": "none"}))
    expert_cartpole(cached(str(cache), CARTPOLE_LARGE), config=tiny_ppo, target=0.0, num_timesteps=300)
    script = "offline_rl/pretrain_bc_single_agent_evaluate_as_multi_agent.py"
    provide(script, str(tmp_path / "rllib"), str(cache))
    data = pathlib.Path(tmp_path / "rllib" / "examples" / script).parents[2] / "offline/tests/data/cartpole/large.json"
    lines = [json.loads(line) for line in data.read_text().splitlines()]
    assert {line["type"] for line in lines} == {"SampleBatch"} and isinstance(lines[0]["obs"], str)
    assert "dones" in lines[0] and len(lines[0]["actions"]) == JSON_ROWS_PER_LINE
    rows = ParquetFiles(*input_files(cached(str(cache), CARTPOLE_LARGE))).num_rows
    assert sum(len(line["actions"]) for line in lines) == rows

    algo = (BCConfig().environment("CartPole-v1").offline_data(input_=str(data))
            .training(train_batch_size_per_learner=32).rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        assert algo.offline_data.num_rows == rows and algo.train()["num_env_steps_trained_lifetime"] == 32
    finally:
        algo.stop()
