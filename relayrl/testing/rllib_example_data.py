"""The data RLlib's offline example scripts read, recorded by relayrl in RLlib's format.

`examples/offline_rl/train_w_bc_finetune_w_ppo.py` reads `rllib/offline/tests/data/cartpole/cartpole-v1_large`, a
parquet dataset of expert CartPole-v1 steps that is in RLlib's source repository but not in its wheel, so the
script fails on RLlib as installed by pip as well as on relayrl. relayrl/testing/rllib_examples.py lays each script
out as the wheel does (`<folder>/rllib/examples/offline_rl/<script>.py`) and, through `provide`, puts this data
where the script looks for it (`<folder>/rllib/offline/...`), for both columns of the table (ported to relayrl, and
RLlib as it ships): the same files at the same place.

The expert: relayrl's PPO trained on CartPole-v1 to a mean return of 450, then EXPERT_STEPS of its greedy steps
recorded as transition rows (`config.offline_data(output=..., output_write_episodes=False)`: RLlib's columns and
layout, docs/offline.md); `pretrain_bc_single_agent_evaluate_as_multi_agent.py` reads the same steps as RLlib's
old-stack SampleBatch JSON (`large.json`). Made once per cache folder (a process-wide temporary one unless given),
~1 min on 2 cores.
"""
import atexit
import os
import shutil
import tempfile
import threading
from typing import Dict, Optional

EXPERT_STEPS = 20_000
CARTPOLE_LARGE = "offline/tests/data/cartpole/cartpole-v1_large"
CARTPOLE_LARGE_JSON = "offline/tests/data/cartpole/large.json"
JSON_ROWS_PER_LINE = 200  # rows per SampleBatch line (RLlib's old stack wrote one per sampled fragment)
# Per script: the data it reads, relative to `rllib/` (where it looks: `Path(__file__).parents[2] / ...`).
SCRIPT_DATA: Dict[str, tuple] = {
    "offline_rl/train_w_bc_finetune_w_ppo.py": (CARTPOLE_LARGE,),
    "offline_rl/pretrain_bc_single_agent_evaluate_as_multi_agent.py": (CARTPOLE_LARGE_JSON,),
}

_lock = threading.Lock()
_default_cache: Optional[str] = None


def expert_cartpole(folder: str, *, config=None, target: float = 450.0, num_timesteps: int = EXPERT_STEPS) -> str:
    """`folder`, holding `num_timesteps` recorded greedy CartPole-v1 steps of a PPO policy (`config`, default
    PPO's) trained to a mean return of `target` (made unless the folder exists)."""
    from relayrl import PPOConfig
    from relayrl.testing.learning import train_and_record

    if not os.path.isdir(folder):
        partial = folder + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        config = config or PPOConfig().environment("CartPole-v1").debugging(seed=0, logger_config={"type": "none"})
        train_and_record(config, partial, num_timesteps, target=target, budget=300_000)
        os.rename(partial, folder)  # complete or absent: an interrupted run is redone, not read half-written
    return folder


def expert_cartpole_json(path: str) -> str:
    """`path`, the expert steps of `expert_cartpole` (the same recording, kept beside `path` in its cache folder)
    as RLlib's old-stack JSON (made unless the file exists)."""
    if not os.path.isfile(path):
        write_sample_batch_json(expert_cartpole(cached(os.path.dirname(path), CARTPOLE_LARGE)), path)
    return path


def write_sample_batch_json(folder: str, path: str) -> str:
    """The transition rows of the parquet files in `folder` written to `path` as RLlib's old-stack JSON:
    SampleBatch lines of JSON_ROWS_PER_LINE rows, obs and new_obs LZ4-packed as RLlib's JsonWriter packs them,
    `dones` for terminateds (complete or absent: written under another name, then renamed)."""
    from relayrl.offline.files import input_files
    from relayrl.offline.reader import ParquetFiles
    from relayrl.offline.sample_batch_json import sample_batch_line

    renames = {"terminateds": "dones"}
    keep = ("eps_id", "obs", "actions", "rewards", "new_obs", "terminateds", "truncateds", "action_logp")
    with open(path + ".partial", "w") as out:
        for rows in ParquetFiles(*input_files(folder)).chunks():
            for start in range(0, len(rows), JSON_ROWS_PER_LINE):
                part = rows.take(slice(start, start + JSON_ROWS_PER_LINE))
                columns = {renames.get(k, k): part.columns[k] for k in keep if k in part.columns}
                out.write(sample_batch_line(columns) + "\n")
    os.rename(path + ".partial", path)
    return path


_MAKERS = {CARTPOLE_LARGE: expert_cartpole, CARTPOLE_LARGE_JSON: expert_cartpole_json}


def default_cache() -> str:
    """A temporary folder for this process's data (removed at exit): one recording per harness run or test session."""
    global _default_cache
    if _default_cache is None:
        _default_cache = tempfile.mkdtemp(prefix="rllib_example_data_")
        atexit.register(shutil.rmtree, _default_cache, True)
    return _default_cache


def cached(cache: str, relative: str) -> str:
    """Where the data for `relative` (a SCRIPT_DATA entry) is kept in `cache`."""
    return os.path.join(cache, relative.replace("/", "__"))


def provide(script: str, rllib_dir: str, cache: Optional[str] = None) -> None:
    """Link the data `script` reads into `rllib_dir` (the `rllib/` folder the script is laid out in), making it
    in `cache` first if it is not there. Scripts that read no such data get nothing."""
    for relative in SCRIPT_DATA.get(script, ()):
        with _lock:  # scripts run in threads: the first makes the data, the others wait for it
            source = _MAKERS[relative](cached(cache or default_cache(), relative))
        target = os.path.join(rllib_dir, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(source, target, target_is_directory=os.path.isdir(source))
