"""Every code snippet of seeds 000, 002, 003 and 004 runs on relayrl with `ray.rllib` replaced by `relayrl` and no
other edit. tests/porting/seed_snippets/ holds them copied from the seeds with that substitution made and nothing
else (relayrl holds no code that imports `ray.rllib`; the seeds never name relayrl, so replacing `relayrl` back
gives the seeds' text). The test supplies only what a snippet leaves to
the reader (`config`, the env, the place a fragment goes); the seeds' own bugs are named in docs/porting.md
("The seeds' own bugs") and pinned here, so the list stays true."""
import ast
import os
import subprocess
import sys
import textwrap
import warnings

import gymnasium as gym
import numpy as np
import pytest

import relayrl
from relayrl import DQNConfig, IMPALAConfig, PPOConfig, RLlibCallback
from relayrl.connectors import FrameStacking
from relayrl.testing.envs import CountingEnv
from relayrl.testing.no_ray_rllib import env_without_ray_rllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(relayrl.__file__)))
SNIPPETS = os.path.join(os.path.dirname(__file__), "seed_snippets")


def snippet(name: str) -> str:
    """The seed's text, ported: stored with the one substitution made."""
    with open(os.path.join(SNIPPETS, name)) as f:
        return f.read()


def run(name: str, **namespace) -> dict:
    namespace.setdefault("__name__", "seed_snippet")
    exec(compile(snippet(name), name, "exec"), namespace)
    return namespace


def dict_entries(name: str):
    """A fragment of `"key": value,` lines (the seeds' "configs that go into Algorithm.config"), in order and with
    repeated keys kept."""
    tree = ast.parse("{" + snippet(name) + "}", mode="eval").body
    return [(ast.literal_eval(k), ast.literal_eval(v)) for k, v in zip(tree.keys, tree.values)]


def tiny(config):
    return (config.env_runners(num_envs_per_env_runner=1).training(train_batch_size=64, minibatch_size=32,
                                                                   num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0, logger_config={"type": "none"}))


# -- seed 000 ----------------------------------------------------------------------------------------------------

PRELUDE_000 = '''
import gymnasium as gym, numpy as np
from ray import tune

TASK_FILE = {task_file!r}

class YourEnv(gym.Env):  # the seed's placeholder env: an env with set_task()
    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)
    def __init__(self, config=None):
        self.task = 0
    def set_task(self, task):
        self.task = task
        with open(TASK_FILE, "a") as f:
            f.write(f"{{task}}\\n")
    def reset(self, *, seed=None, options=None):
        self.t = 0
        return np.zeros(1, np.float32), {{}}
    def step(self, action):
        self.t += 1
        return np.zeros(1, np.float32), 30.0, self.t >= 5, False, {{}}  # return 150: above the seed's bar of 100

_Tuner = tune.Tuner
def _tuner_with_a_stop(*args, **kwargs):  # the seed's run has no stop criterion: it would train forever
    kwargs.setdefault("run_config", tune.RunConfig(stop={{"training_iteration": 2}}, verbose=0,
                                                   storage_path={storage!r}))
    return _Tuner(*args, **kwargs)
tune.Tuner = _tuner_with_a_stop
'''


def test_000_curriculum_callback_through_tune_by_name(tmp_path):
    """`tune.Tuner("PPO", param_space={"env": YourEnv, "callbacks": MyCallbacks}).fit()`: the callback's
    `algorithm.workers.foreach_worker(lambda ev: ev.foreach_env(lambda env: env.set_task(task)))` reaches the envs."""
    task_file = tmp_path / "tasks.txt"
    script = tmp_path / "seed_000_curriculum.py"
    script.write_text(PRELUDE_000.format(task_file=str(task_file), storage=str(tmp_path / "results"))
                      + snippet("000_curriculum_tune.txt"))
    env = env_without_ray_rllib(tmp_path / "no_ray_rllib", ROOT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=400, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    tasks = task_file.read_text().split()  # every env, after each of the 2 iterations: return 150 -> task 1
    assert set(tasks) == {"1"} and len(tasks) % 2 == 0, tasks


def exploration_groups():
    """The fragment's numbered settings: each `exploration_config` with the `explore` before it."""
    groups, explore = [], None
    for key, value in dict_entries("000_exploration_config.txt"):
        if key == "explore":
            if explore is not None:
                groups.append({"explore": explore})
            explore = value
        else:
            groups.append({"explore": explore, key: value})
            explore = None
    return groups


@pytest.mark.parametrize("index, config_class, exploration_type", [
    (0, PPOConfig, "StochasticSampling"), (1, PPOConfig, "StochasticSampling"), (2, DQNConfig, "EpsilonGreedy"),
    (3, DQNConfig, "SoftQ"), (4, PPOConfig, "StochasticSampling")])
def test_000_exploration_configs(index, config_class, exploration_type):
    """1) explore off, 2) on, a) DQN EpsilonGreedy, b) DQN SoftQ, c) policy gradients' StochasticSampling."""
    settings = exploration_groups()[index]
    config = tiny(config_class().environment(CountingEnv)).update_from_dict(settings)
    algo = config.build_algo()
    try:
        exploration = algo.env_runner.exploration
        assert type(exploration).__name__ == exploration_type
        assert algo.config.explore is settings["explore"]
        if exploration_type == "EpsilonGreedy":
            assert exploration.get_info()["cur_epsilon"] == 1.0  # initial_epsilon
        algo.compute_single_action(algo.get_module().observation_space.sample())
    finally:
        algo.stop()


def test_000_exploration_fragment_has_five_settings():
    assert len(exploration_groups()) == 5


def test_000_get_global_worker_from_a_callback():
    seen = []

    class Callback(RLlibCallback):
        def on_episode_end(self, **kwargs):
            seen.append(run("000_get_global_worker.txt")["rollout_worker"])

    algo = tiny(PPOConfig().environment(CountingEnv, env_config={"episode_len": 5})).callbacks(Callback).build_algo()
    try:
        algo.train()
        assert seen and all(worker is algo.env_runner for worker in seen)
    finally:
        algo.stop()


# -- seed 002 ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["002_max_seq_len.txt", "002_default_model_config.txt"])
def test_002_max_seq_len_snippets(name):
    """The seed's `...` stands for a number: as written, it is refused naming the key and the fix; with the number
    filled in, the snippet runs."""
    config = tiny(PPOConfig().environment(CountingEnv))
    with pytest.raises(ValueError, match=r"model_config\['max_seq_len'\] must be a positive int up to 10000 .*, "
                                         r"got Ellipsis"):
        run(name, config=config)
        config.build_algo()
    config = tiny(PPOConfig().environment(CountingEnv))
    namespace = {"config": config, "__name__": "seed_snippet"}
    exec(snippet(name).replace("max_seq_len=...", "max_seq_len=20").replace('"max_seq_len": ...', '"max_seq_len": 20'),
         namespace)
    assert config.model_config["max_seq_len"] == 20


# -- seed 003 ----------------------------------------------------------------------------------------------------

def test_003_agent_and_impala_defaults_map_to_todays_options():
    entries = dict(dict_entries("003_agent_defaults.txt"))
    entries.update(dict_entries("003_impala_defaults.txt"))  # "The IMPALA defaults are a little different"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = IMPALAConfig().update_from_dict(entries)
    assert (config.rollout_fragment_length, config.train_batch_size, config.batch_mode) == (
        50, 500, "truncate_episodes")
    assert any("sample_batch_size" in str(w.message) for w in caught)


# -- seed 004 ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["004_learner_connector.txt", "004_learner_connector_list.txt"])
def test_004_placeholder_snippets_are_not_python(name):
    """`MyLearnerConnector(..)`: the seed's placeholder argument is a syntax error (named in docs/porting.md)."""
    with pytest.raises(SyntaxError):
        compile(snippet(name), name, "exec")


def test_004_count_based_intrinsic_rewards():
    # The seed shows `__call__` on its own, after the class: it is the class's method.
    method = textwrap.indent(snippet("004_count_based_call.txt"), "    ")
    namespace = {"__name__": "seed_snippet"}
    exec(snippet("004_count_based_class.txt") + "\n" + method, namespace)
    cls = namespace["CountBasedIntrinsicRewards"]
    config = tiny(PPOConfig().environment(CountingEnv, env_config={"episode_len": 4}))
    run("004_count_based_config.txt", config=config, CountBasedIntrinsicRewards=cls)
    algo = config.build_algo()
    try:
        algo.train()
        (pieces,) = algo.learner_group.foreach_learner(lambda learner: list(learner._learner_connector))
        (piece,) = [p for p in pieces if isinstance(p, cls)]
        # 16 episodes of 4 steps, each with PPO's artificial last timestep (as in RLlib, prepended before the
        # custom pieces): observations 0..4, 16 times each.
        assert sorted((int(obs[0]), n) for obs, n in piece._counts.items()) == [(i, 16) for i in range(5)]
    finally:
        algo.stop()


def test_004_stack_four_observations_space_is_a_seed_bug():
    """Box(low=<shape (x,)>, shape=(4*x,)) is refused by gymnasium: the seed's output space needs tiled bounds."""
    seed_class = run("004_stack_four_observations.txt")["StackFourObservations"]
    with pytest.raises(ValueError, match="low.shape doesn't match provided shape"):
        seed_class(gym.spaces.Box(-1.0, 1.0, (4,), np.float32), gym.spaces.Discrete(2), as_learner_connector=False)


def stack_four_with_tiled_bounds():
    seed_class = run("004_stack_four_observations.txt")["StackFourObservations"]

    class StackFourObservations(seed_class):  # the seed's class, its output space with the bounds tiled
        def recompute_output_observation_space(self, input_observation_space, input_action_space):
            space = input_observation_space
            return gym.spaces.Box(np.tile(space.low, 4), np.tile(space.high, 4), dtype=space.dtype)

    return StackFourObservations


def stack_four_config(learner_piece):
    cls = stack_four_with_tiled_bounds()
    # The seed's "add these lines to your AlgorithmConfig" has no lines after it; these are the ones it means.
    return tiny(PPOConfig().environment("CartPole-v1")).env_runners(
        env_to_module_connector=lambda env, spaces, device: cls(None, None, as_learner_connector=False)).training(
        learner_connector=lambda obs_space, act_space: learner_piece(cls, obs_space, act_space))


def test_004_stack_four_observations_on_the_env_runner():
    """The seed's piece stacks for the action; on the Learner, the built-in FrameStacking stacks the same way."""
    algo = stack_four_config(lambda cls, obs, act: FrameStacking(num_frames=4, as_learner_connector=True)).build_algo()
    try:
        result = algo.train()
        assert algo.get_module().observation_space.shape == (16,)
        assert result["learners"]["default_policy"]["num_module_steps_trained"] > 0
    finally:
        algo.stop()


def test_004_stack_four_observations_as_learner_piece_is_a_seed_bug():
    """Its __call__ ignores as_learner_connector and stacks only the newest frames: one row per episode on the
    Learner, which relayrl refuses naming the cause."""
    config = stack_four_config(lambda cls, obs, act: cls(obs, act, as_learner_connector=True))
    algo = config.build_algo()
    try:
        with pytest.raises(ValueError, match="added `obs` for some timesteps only"):
            algo.train()
    finally:
        algo.stop()


def test_004_builtin_frame_stacking():
    config = tiny(PPOConfig().environment("CartPole-v1"))
    run("004_frame_stacking.txt", config=config)
    algo = config.build_algo()
    try:
        algo.train()
        assert algo.get_module().observation_space.shape == (16,)
    finally:
        algo.stop()


def test_every_snippet_file_is_used():
    used = "".join(open(os.path.join(os.path.dirname(__file__), name)).read()  # this file and test_seed_001_snippets
                   for name in os.listdir(os.path.dirname(__file__)) if name.startswith("test_seed"))
    assert all(name in used for name in os.listdir(SNIPPETS)), sorted(os.listdir(SNIPPETS))


def test_snippets_are_stored_as_the_port_leaves_them():
    for name in os.listdir(SNIPPETS):
        text = snippet(name)
        assert "ray.rllib" not in text, f"{name}: store the snippet with ray.rllib replaced by relayrl"
