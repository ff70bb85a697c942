""""They resume tomorrow": a user's script (its own classes defined in it) trains 2 iterations and saves in one
process; a second process imports that script, restores (`Algorithm.from_checkpoint(path, trusted=[script])`) and
trains 1 more. What should continue is compared across the two processes: the iteration count, the env steps, the
weights before the next update, and each feature mix's own state."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

# Shared by every script: digests and counters printed as one JSON line, and the default save / resume steps.
_PRELUDE = '''
import hashlib
import json
import sys

import gymnasium as gym
import numpy as np

from relayrl import Algorithm


def weights_digest(algo):
    digest = hashlib.sha256()
    for module_id, weights in sorted(algo.get_weights().items()):
        for name, array in sorted(weights.items()):
            digest.update(f"{module_id}/{name}".encode())
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def facts(algo):
    return {"iteration": algo.iteration, "weights": weights_digest(algo),
            "env_steps": algo._counters.get("num_env_steps_sampled_lifetime", 0), **mix_facts(algo)}


def mix_facts(algo):  # a script adds its mix's own state
    return {}


def result_facts(result):  # and what the next result should say
    return {}


def tree_digest(tree):
    """A state (dicts, lists, numbers, arrays) as one hash: equal states, equal digests."""
    digest = hashlib.sha256()

    def visit(value):
        if isinstance(value, dict):
            for key in sorted(value, key=str):
                digest.update(repr(key).encode())
                visit(value[key])
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)
        elif isinstance(value, np.ndarray) or hasattr(value, "numpy"):
            array = np.asarray(value)
            digest.update(f"{array.dtype}{array.shape}".encode() + np.ascontiguousarray(array).tobytes())
        else:
            digest.update(repr(value).encode())
    visit(tree)
    return digest.hexdigest()


def save(path):
    algo = make_config().build_algo()
    for _ in range(2):
        algo.train()
    algo.save_to_path(path)
    out = facts(algo)
    result = algo.train()  # the run without the interruption, for comparison
    out["after"] = {**facts(algo), **result_facts(result)}
    algo.stop()
    return out


def restore(path):  # a script may restore another way (build_algo + restore_from_path)
    return Algorithm.from_checkpoint(path, trusted=[sys.modules[__name__]])


def resume(path):
    algo = restore(path)
    out = facts(algo)
    result = algo.train()
    out.update(next_iteration=result["training_iteration"],
               next_env_steps=result["num_env_steps_sampled_lifetime"], after={**facts(algo), **result_facts(result)})
    algo.stop()
    return out
'''

_MAIN = '''

if __name__ == "__main__":
    print("FACTS", json.dumps(save(sys.argv[1])))
'''

_RESUME = "import json, sys, user_script; print('FACTS', json.dumps(user_script.resume(sys.argv[1])))"


def _facts(run):
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads([line for line in run.stdout.splitlines() if line.startswith("FACTS ")][-1][6:])


def save_and_resume(tmp_path, script: str, timeout=120):
    """Writes `user_script.py` (the prelude, `script`, a `__main__` that saves), runs it, then resumes in a new
    process that imports it; returns (facts when saved, facts when resumed, the resuming process's stderr)."""
    (tmp_path / "user_script.py").write_text(_PRELUDE + textwrap.dedent(script) + _MAIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path)] + sys.path), "OMP_NUM_THREADS": "1"}
    path = str(tmp_path / "checkpoint")
    run = dict(cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout)
    saved = _facts(subprocess.run([sys.executable, "user_script.py", path], **run))
    second = subprocess.run([sys.executable, "-c", _RESUME, path], **run)
    return saved, _facts(second), second.stderr


def assert_continues(saved, resumed, steps_per_iteration=None, identical=True):
    assert resumed["iteration"] == saved["iteration"] == 2
    assert resumed["env_steps"] == saved["env_steps"] > 0
    assert resumed["weights"] == saved["weights"]  # before the next update
    assert resumed["next_iteration"] == 3 and resumed["next_env_steps"] > saved["env_steps"]
    if steps_per_iteration is not None:
        assert resumed["next_env_steps"] == saved["env_steps"] + steps_per_iteration
    assert resumed["after"]["weights"] != saved["weights"]  # and it trained on
    if identical:  # as the uninterrupted run did
        assert resumed["after"] == saved["after"]


# 1. Multi-agent PPO: the script's MultiAgentEnv and mapping function, two policies, one trained, one with an LSTM.
_MULTI_AGENT = '''
from relayrl import MultiAgentEnv, PPOConfig
from relayrl.modules.rl_module_spec import MultiRLModuleSpec, RLModuleSpec


class TwoWalkers(MultiAgentEnv):
    """Two agents on a line; each is rewarded for stepping right, the episode ends after 6 steps."""

    def __init__(self, config=None):
        super().__init__()
        self.agents = self.possible_agents = ["a0", "a1"]
        self.observation_spaces = {a: gym.spaces.Box(-10, 10, (2,), np.float32) for a in self.agents}
        self.action_spaces = {a: gym.spaces.Discrete(2) for a in self.agents}

    def reset(self, *, seed=None, options=None):
        self.t, self.pos = 0, {a: 0.0 for a in self.agents}
        return {a: self._obs(a) for a in self.agents}, {}

    def _obs(self, agent):
        return np.array([self.pos[agent], self.t], np.float32)

    def step(self, actions):
        self.t += 1
        for agent, action in actions.items():
            self.pos[agent] += 1.0 if action == 1 else -1.0
        rewards = {a: float(actions[a] == 1) for a in actions}
        done = self.t >= 6
        return ({a: self._obs(a) for a in actions}, rewards, {"__all__": done}, {"__all__": False}, {})


def map_agent(agent_id, episode=None, **kwargs):
    return "learner" if agent_id == "a0" else "fixed"


def make_config():
    return (PPOConfig().environment(TwoWalkers)
            .env_runners(num_envs_per_env_runner=2, rollout_fragment_length=12)
            .training(train_batch_size=24, minibatch_size=12, num_epochs=1)
            .multi_agent(policies={"learner", "fixed"}, policy_mapping_fn=map_agent,
                         policies_to_train=["learner"])
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
                "learner": RLModuleSpec(model_config={"use_lstm": True, "lstm_cell_size": 8, "max_seq_len": 4,
                                                      "fcnet_hiddens": [8]}),
                "fixed": RLModuleSpec(model_config={"fcnet_hiddens": [8]})}))
            .debugging(seed=3, logger_config={"type": "none"}))


def mix_facts(algo):
    trained = algo.config.policies_to_train
    return {"mapping": algo.config.policy_mapping_fn("a1") + "/" + algo.config.policy_mapping_fn("a0"),
            "env": algo.config.env.__name__, "to_train": sorted(trained) if trained else None,
            "fixed": hashlib.sha256(np.concatenate([np.ravel(w) for _, w in
                                    sorted(algo.get_weights(["fixed"])["fixed"].items())]).tobytes()).hexdigest()}
'''


def test_multi_agent_ppo_with_a_script_env_mapping_fn_and_one_lstm_policy(tmp_path):
    saved, resumed, _ = save_and_resume(tmp_path, _MULTI_AGENT)
    assert_continues(saved, resumed)
    assert resumed["mapping"] == "fixed/learner" and resumed["env"] == "TwoWalkers"
    assert resumed["to_train"] == saved["to_train"] == ["learner"]
    assert resumed["after"]["fixed"] == resumed["fixed"] == saved["fixed"]  # the untrained policy stays as it was


# 2. A curriculum: the seed's `on_train_result` sets a task on the script's env class with `foreach_env`.
_CURRICULUM = '''
import collections

from relayrl import PPOConfig, RLlibCallback


class LevelEnv(gym.Env):
    """A corridor whose length grows with the task level (the level is part of the observation)."""

    def __init__(self, config=None):
        self.task = (config or {}).get("start_level", 0)
        self.observation_space = gym.spaces.Box(0, 20, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        if HOLDS_AN_OBJECT:
            self.recent = collections.deque(maxlen=3)  # an object a checkpoint cannot store: envs start fresh

    def set_task(self, task):
        self.task = task

    def reset(self, *, seed=None, options=None):
        self.pos = 0
        return np.array([self.pos, self.task], np.float32), {}

    def step(self, action):
        self.pos += int(action)
        done = self.pos >= 2 + self.task
        return np.array([self.pos, self.task], np.float32), float(done), done, False, {}


class Curriculum(RLlibCallback):
    """The seed's callback: one level more per iteration (up to 3), set on every sub-env."""

    def on_train_result(self, *, algorithm, result, **kwargs):
        task = min(algorithm.iteration, 3)
        algorithm.env_runner_group.foreach_env(lambda env: env.set_task(task))


def make_config():
    return (PPOConfig().environment(LevelEnv).env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=32, minibatch_size=16, num_epochs=1)
            .rl_module(model_config={"fcnet_hiddens": [8]}).callbacks(Curriculum)
            .debugging(seed=1, logger_config={"type": "none"}))


def mix_facts(algo):
    return {"levels": algo.env_runner_group.foreach_env(lambda env: env.unwrapped.task)}
'''


# The documented way to keep the level where the envs start fresh: the callbacks hold it (get_state / set_state go
# into the checkpoint) and re-apply it in on_checkpoint_loaded.
_REAPPLIED = """

class Curriculum(RLlibCallback):
    def __init__(self):
        self.level = 0

    def on_train_result(self, *, algorithm, result, **kwargs):
        self.level = min(self.level + 1, 3)
        level = self.level
        algorithm.env_runner_group.foreach_env(lambda env: env.set_task(level))

    def get_state(self):
        return {"level": self.level}

    def set_state(self, state):
        self.level = state["level"]

    def on_checkpoint_loaded(self, *, algorithm, **kwargs):
        level = self.level
        algorithm.env_runner_group.foreach_env(lambda env: env.set_task(level))
"""


def test_a_curriculums_level_is_kept_with_the_envs_state(tmp_path):
    saved, resumed, _ = save_and_resume(tmp_path, "HOLDS_AN_OBJECT = False\n" + _CURRICULUM)
    assert saved["levels"] == resumed["levels"] == [[2, 2]]  # the level is part of the envs' captured state
    assert_continues(saved, resumed)  # bit for bit, episodes included


def test_a_curriculums_level_on_fresh_envs_is_reapplied_by_on_checkpoint_loaded(tmp_path):
    saved, resumed, log = save_and_resume(tmp_path, "HOLDS_AN_OBJECT = True\n" + _CURRICULUM)
    assert saved["levels"] == [[2, 2]] and resumed["levels"] == [[0, 0]]  # envs made anew: the level is lost,
    assert "Resuming with fresh episodes" in log and "on_checkpoint_loaded" in log  # and the log says how to keep it
    saved, resumed, _ = save_and_resume(tmp_path, "HOLDS_AN_OBJECT = True\n" + _CURRICULUM + _REAPPLIED)
    assert saved["levels"] == resumed["levels"] == [[2, 2]]
    assert_continues(saved, resumed, identical=False)
    assert resumed["after"]["levels"] == saved["after"]["levels"] == [[3, 3]]


# 3. DQN with prioritized replay on 2 remote EnvRunners (Ray), resumed on a laptop: num_env_runners=0, the user's
# own config, restore_from_path.
_DQN_TO_A_LAPTOP = '''
from relayrl import DQNConfig


class Drift(gym.Env):
    """A 1-d walk: +1 for moving right, 10 steps an episode."""

    def __init__(self, config=None):
        self.observation_space = gym.spaces.Box(-10, 10, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        self.x, self.t = 0.0, 0
        return np.array([self.x], np.float32), {}

    def step(self, action):
        self.x += 1.0 if action == 1 else -1.0
        self.t += 1
        return np.array([self.x], np.float32), float(action), False, self.t >= 10, {}


def make_config(num_env_runners=0):
    return (DQNConfig().environment(Drift).env_runners(num_env_runners=num_env_runners, rollout_fragment_length=8)
            .training(train_batch_size=16, num_steps_sampled_before_learning_starts=16,
                      replay_buffer_config={"type": "PrioritizedEpisodeReplayBuffer", "capacity": 1000})
            .rl_module(model_config={"fcnet_hiddens": [8], "head_fcnet_hiddens": [8]})
            .reporting(min_sample_timesteps_per_iteration=32)
            .debugging(seed=2, logger_config={"type": "none"}))


_save = save


def save(path):
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    make_config.__defaults__ = (2,)  # on the cluster
    try:
        return _save(path)
    finally:
        ray.shutdown()


def restore(path):
    algo = make_config(num_env_runners=0).build_algo()  # on the laptop: the user's own config, no Ray
    algo.restore_from_path(path)
    return algo


def mix_facts(algo):
    buffer, runners = algo.local_replay_buffer, algo.env_runner_group
    return {"buffer_type": type(buffer).__name__, "buffer": tree_digest(buffer.get_state()),
            "buffer_steps": buffer.get_num_timesteps(), "remote_runners": runners.num_remote_env_runners(),
            "trained": algo._counters["num_env_steps_trained_lifetime"]}
'''


@pytest.mark.slow
def test_dqn_prioritized_replay_saved_on_remote_runners_resumes_without_ray(tmp_path):  # (9-12 s: Ray's start)
    pytest.importorskip("ray")
    saved, resumed, _ = save_and_resume(tmp_path, _DQN_TO_A_LAPTOP, timeout=300)
    assert saved["remote_runners"] == 2 and resumed["remote_runners"] == 0
    assert_continues(saved, resumed, identical=False)
    assert resumed["buffer_type"] == "PrioritizedEpisodeReplayBuffer"
    assert resumed["buffer"] == saved["buffer"] and resumed["buffer_steps"] == saved["buffer_steps"] > 0
    assert resumed["trained"] == saved["trained"] > 0
    assert resumed["after"]["buffer_steps"] == saved["buffer_steps"] + resumed["next_env_steps"] - saved["env_steps"]


# 4. SAC with the script's own env-to-module connector class (built by a lambda, as RLlib's examples do) after
# observation_filter="MeanStdFilter".
_SAC_CONNECTOR = '''
from relayrl import SACConfig
from relayrl.checkpoints import CheckpointError
from relayrl.connectors import ConnectorV2


class ClipAndCount(ConnectorV2):
    """Clips each new observation into [-clip, clip] in the episode and counts them (its checkpointed state)."""

    def __init__(self, input_observation_space=None, input_action_space=None, *, clip=2.0, **kwargs):
        self.clip, self.seen = clip, 0
        super().__init__(input_observation_space, input_action_space, **kwargs)

    def __call__(self, *, rl_module, batch, episodes, explore=None, shared_data=None, **kwargs):
        for episode in self.single_agent_episode_iterator(episodes):
            obs = episode.get_observations(-1)
            episode.set_observations(new_data=np.clip(obs, -self.clip, self.clip).astype(np.float32), at_indices=-1)
            self.seen += 1
        return batch

    def get_state(self, components=None, *, not_components=None, **kwargs):
        return {"seen": self.seen}

    def set_state(self, state):
        self.seen = state["seen"]


def make_config():
    return (SACConfig().environment("Pendulum-v1")
            .env_runners(observation_filter="MeanStdFilter", num_envs_per_env_runner=2,
                         env_to_module_connector=lambda env, spaces, device: ClipAndCount(clip=1.5))
            .training(train_batch_size=16, num_steps_sampled_before_learning_starts=32)
            .rl_module(model_config={"fcnet_hiddens": [8], "head_fcnet_hiddens": [8]})
            .reporting(min_sample_timesteps_per_iteration=32)
            .debugging(seed=4, logger_config={"type": "none"}))


def restore(path):
    global refusal
    try:
        Algorithm.from_checkpoint(path, trusted=[sys.modules[__name__]])
    except CheckpointError as error:  # a lambda is not stored by name: it is given again
        refusal = str(error)
    return Algorithm.from_checkpoint(path, config_overrides={
        "env_to_module_connector": lambda env, spaces, device: ClipAndCount(clip=1.5)})


refusal = None


def mix_facts(algo):
    pieces = list(algo.env_runner._env_to_module)
    return {"pieces": [type(p).__name__ for p in pieces][:2], "refusal": refusal,
            "seen": next(p.seen for p in pieces if isinstance(p, ClipAndCount)),
            "filter": tree_digest(next(p for p in pieces if type(p).__name__ == "MeanStdFilter").get_state())}
'''


def test_sac_with_a_script_connector_class_and_mean_std_filter(tmp_path):
    saved, resumed, _ = save_and_resume(tmp_path, _SAC_CONNECTOR)
    assert "env_to_module_connector" in resumed["refusal"] and "config_overrides" in resumed["refusal"]
    assert resumed["pieces"] == saved["pieces"] == ["MeanStdFilter", "ClipAndCount"]
    assert resumed["filter"] == saved["filter"] and resumed["seen"] == saved["seen"] > 0
    resumed["after"]["refusal"] = None  # (a fact of the resuming process only)
    assert_continues(saved, resumed)


# 5. APPO with an LSTM on the script's env (observations hide the velocity) and evaluation every iteration.
_APPO_LSTM_EVALUATION = '''
from relayrl import APPOConfig


class Blinking(gym.Env):
    """The target is shown only on the first step; acting towards it afterwards needs memory."""

    def __init__(self, config=None):
        self.observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.rng = np.random.default_rng(0)

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.target, self.t = int(self.rng.integers(2)), 0
        return np.array([2 * self.target - 1, 1], np.float32), {}

    def step(self, action):
        self.t += 1
        return np.zeros(2, np.float32), float(action == self.target), False, self.t >= 5, {}


def make_config():
    return (APPOConfig().environment(Blinking).env_runners(num_envs_per_env_runner=2, rollout_fragment_length=10)
            .training(train_batch_size=40)
            .rl_module(model_config={"use_lstm": True, "lstm_cell_size": 8, "max_seq_len": 5, "fcnet_hiddens": [8]})
            .evaluation(evaluation_interval=1, evaluation_num_env_runners=0, evaluation_duration=4)
            .reporting(min_time_s_per_iteration=0, min_sample_timesteps_per_iteration=40)
            .debugging(seed=5, logger_config={"type": "none"}))


def result_facts(result):
    return {"policy_lag": result["learners"]["default_policy"]["diff_num_grad_updates_vs_sampler_policy"],
            "eval_episodes": result["evaluation"]["env_runners"]["num_episodes_lifetime"],
            "eval_steps": result["evaluation"]["env_runners"]["num_env_steps_sampled_lifetime"]}
'''


def test_appo_with_an_lstm_and_evaluation(tmp_path):
    """Training goes on bit for bit; the policy lag (how many updates the sampler's weights are behind) stays
    >= 0 (the Learner's update count was not in the checkpoint: it came back as 0, -3 after a restore)."""
    saved, resumed, _ = save_and_resume(tmp_path, _APPO_LSTM_EVALUATION)
    assert resumed["after"]["policy_lag"] >= 0
    assert resumed["after"]["eval_episodes"] == saved["after"]["eval_episodes"] > 0  # evaluation's counters go on
    assert_continues(saved, resumed)


# 6. The Policy API: the script's old-stack Policy class (seed 001's template) and Algorithm, api_stack(False,
# False), on the script's env with Discrete observations.
_POLICY_API = '''
import torch

from relayrl import Algorithm, Postprocessing, SampleBatch, compute_advantages
from relayrl.policy.policy_algorithm_config import PolicyAlgorithmConfig
from relayrl.policy.policy_template import build_policy_class


class Chain(gym.Env):
    """Five states in a row (Discrete observations); moving right reaches the reward at the end."""

    def __init__(self, config=None):
        self.observation_space, self.action_space = gym.spaces.Discrete(5), gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        self.state, self.t = 0, 0
        return self.state, {}

    def step(self, action):
        self.state, self.t = max(0, min(4, self.state + (1 if action == 1 else -1))), self.t + 1
        return self.state, float(self.state == 4), self.state == 4, self.t >= 12, {}


def returns(policy, sample_batch, other_agent_batches=None, episode=None):
    return compute_advantages(sample_batch, 0.0, policy.config["gamma"], use_gae=False, use_critic=False)


def pg_loss(policy, model, dist_class, train_batch):
    logits, _ = model.from_batch(train_batch)
    logp = dist_class(logits, model).logp(train_batch[SampleBatch.ACTIONS])
    return -torch.mean(logp * train_batch[Postprocessing.ADVANTAGES])


ChainPolicy = build_policy_class("ChainPolicy", "torch", loss_fn=pg_loss, postprocess_fn=returns)


class ChainPG(Algorithm):
    def get_default_policy_class(self, config):
        return ChainPolicy


def make_config():
    return (PolicyAlgorithmConfig(algo_class=ChainPG)
            .api_stack(enable_rl_module_and_learner=False, enable_env_runner_and_connector_v2=False)
            .environment(Chain).env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=48, lr=0.01, model={"fcnet_hiddens": [8]})
            .debugging(seed=6, logger_config={"type": "none"}))


def restore(path):
    if RESTORE_BY == "from_checkpoint":
        return Algorithm.from_checkpoint(path, trusted=[sys.modules[__name__]])
    if RESTORE_BY == "ChainPG.from_checkpoint":  # the class it is called on counts as trusted
        return ChainPG.from_checkpoint(path, trusted=[Chain])
    algo = make_config().build_algo()
    algo.restore_from_path(path)
    return algo


def mix_facts(algo):
    policy = algo.get_policy()
    return {"policy": type(policy).__name__, "algorithm": type(algo).__name__,
            "policy_state": tree_digest({k: v for k, v in policy.get_state().items()  # (the spec names the class's
                                         if k not in ("weights", "policy_spec")}),  # module: __main__ / user_script)
            "global_timestep": int(policy.global_timestep)}
'''


@pytest.mark.parametrize("restore_by", ["from_checkpoint", "ChainPG.from_checkpoint", "restore_from_path"])
def test_a_script_policy_class_and_algorithm_on_discrete_observations(tmp_path, restore_by):
    """The checkpoint names the script's algorithm `__main__:ChainPG`; the resuming process has it as
    `user_script:ChainPG` (it was refused: "holds a __main__:ChainPG, which cannot be restored into a ChainPG";
    and `ChainPG.from_checkpoint` did not count ChainPG as trusted)."""
    saved, resumed, _ = save_and_resume(tmp_path, f"RESTORE_BY = {restore_by!r}\n" + _POLICY_API)
    assert resumed["algorithm"] == "ChainPG" and resumed["policy"] == "ChainPolicy"
    assert resumed["policy_state"] == saved["policy_state"] and resumed["global_timestep"] == saved["global_timestep"]
    assert_continues(saved, resumed)


_ON_REMOTE_RUNNERS = """

_make_config, _save, _restore = make_config, save, restore


def make_config():
    return _make_config().env_runners(num_env_runners=2)


def with_ray(step):
    def run(path):
        import ray

        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            return step(path)
        finally:
            ray.shutdown()
    return run


save = with_ray(_save)
resume = with_ray(resume)
"""


@pytest.mark.slow
def test_a_curriculums_level_on_remote_runners_is_reapplied_by_on_checkpoint_loaded(tmp_path):
    """Remote runners' envs are not in the checkpoint: the callbacks' level goes back to them (without
    on_checkpoint_loaded they resume at level 0). 15 s on 2 idle cores, 22 s under load."""
    pytest.importorskip("ray")
    script = "HOLDS_AN_OBJECT = False\n" + _CURRICULUM + _REAPPLIED + _ON_REMOTE_RUNNERS
    saved, resumed, _ = save_and_resume(tmp_path, script, timeout=300)
    assert saved["levels"] == resumed["levels"] == [[2, 2], [2, 2]]  # two runners, two sub-envs each
    assert resumed["after"]["levels"] == [[3, 3], [3, 3]]
    assert_continues(saved, resumed, identical=False)
