"""A run that read through Ray Data ends quietly: stopping the algorithm closes each shard's iteration while Ray is
up (relayrl/distributed/offline_ray_data.py). Before, the open iterators were closed at interpreter exit, after
ray.shutdown(), and Ray Data printed "Ray is not initialized" tracebacks from its stats actor."""
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import sys
    import gymnasium as gym, numpy as np, pyarrow as pa, pyarrow.parquet as pq, ray
    from relayrl import BCConfig

    folder = sys.argv[1]
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(64, 4)).astype(np.float32)
    pq.write_table(pa.table({"obs": list(obs), "new_obs": list(obs), "actions": rng.integers(0, 2, 64),
                             "rewards": np.ones(64), "terminateds": np.zeros(64, bool),
                             "truncateds": np.zeros(64, bool)}), folder + "/rows.parquet")
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    algo = (BCConfig().environment(observation_space=gym.spaces.Box(-10, 10, (4,), np.float32),
                                   action_space=gym.spaces.Discrete(2))
            .offline_data(input_=folder, input_reader="ray_data")
            .training(train_batch_size=16).rl_module(model_config={"fcnet_hiddens": [8]})
            .debugging(seed=0, logger_config={"type": "none"})).build_algo()
    algo.train()  # one pass of 4 batches; the pass's end is found by starting the next one, left open
    algo.stop()
    ray.shutdown()
    print("DONE")
""")


@pytest.mark.slow
def test_a_ray_data_run_exits_without_tracebacks(tmp_path):
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "DONE" in done.stdout, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "Ray is not initialized" not in done.stderr, done.stderr[-3000:]
