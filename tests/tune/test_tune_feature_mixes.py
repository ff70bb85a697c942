"""Tune and PBT mixed with other features, as a user's script mixes them: PBT on a multi-agent config with a frozen
policy, Tune over an offline algorithm (evaluation, checkpoints, a restored experiment), search spaces inside
`model_config` and `DefaultModelConfig`, PBT ranking on the evaluation metric (local and remote evaluation runners),
IMPALA trials with remote runners on a small cluster, and a stop criterion on an evaluation metric that is missing
before the first evaluation."""
import hashlib
import json
import os
import sys
import time

import gymnasium as gym
import numpy as np
import pytest

from relayrl import IMPALA, PPO, IMPALAConfig, MultiAgentEnv, PPOConfig
from relayrl.algorithms.bc import BC, BCConfig
from relayrl.testing.envs import CountingEnv

tune = pytest.importorskip("ray.tune")
ray_cloudpickle = pytest.importorskip("ray.cloudpickle")
ray_cloudpickle.register_pickle_by_value(sys.modules[__name__])  # trial actors cannot import this module

LRS = [1e-4, 2e-4, 3e-4, 4e-4]


def _run_config(tmp_path, name, **kwargs):
    return tune.RunConfig(storage_path=str(tmp_path / "results"), name=name, verbose=0, **kwargs)


def _hash(state: dict) -> str:
    digest = hashlib.sha256()
    for name, value in sorted(state.items()):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    return digest.hexdigest()


def _events(log_path):
    return [json.loads(line) for line in open(log_path).read().splitlines()]


def _write(log_path, record):
    with open(log_path, "a") as f:
        f.write(json.dumps(record) + "\n")


# -- 1. PBT on a multi-agent config: two policies, one trained -------------------------------------------------------

class TwoWalkers(MultiAgentEnv):
    """Two agents on a line, rewarded for stepping right; episodes end after 6 steps."""

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
        return ({a: self._obs(a) for a in actions}, rewards, {"__all__": self.t >= 6}, {"__all__": False}, {})


def map_agent(agent_id, episode=None, **kwargs):
    return "learner" if agent_id == "a0" else "fixed"


class RecordingMultiAgentPPO(PPO):
    log_path = None  # set by the test before Tune ships the class

    def _record(self, event, **fields):
        weights = self.get_weights(["learner", "fixed"])
        learner = self.learner_group.foreach_learner(lambda learner: learner)[0]
        _write(self.log_path, {
            "event": event, "trial": self.trial_id, "iteration": self.iteration, "seed": self.config.seed,
            "lr": self.config.lr, "optimizer_lr": learner.get_optimizer("learner").param_groups[0]["lr"],
            "learner": _hash(weights["learner"]), "fixed": _hash(weights["fixed"]), **fields})

    def setup(self, config):
        super().setup(config)
        # A frozen policy of this trial's own (as if loaded from elsewhere): an exploit must copy the donor's.
        rng = np.random.default_rng(int(hashlib.sha256(self.trial_id.encode()).hexdigest()[:8], 16))
        fixed = self.get_weights(["fixed"])["fixed"]
        self.set_weights({"fixed": {k: rng.normal(size=v.shape).astype(v.dtype) for k, v in fixed.items()}})
        self._record("setup")

    def load_checkpoint(self, checkpoint):
        super().load_checkpoint(checkpoint)
        self._record("restore")

    def step(self):
        result = super().step()
        self._record("result", score=result["env_runners"]["module_episode_returns_mean"]["learner"])
        return result


@pytest.mark.slow  # 27-30 s (load 4-8, 2 cores)
def test_pbt_on_two_policies_clones_both_and_keeps_the_frozen_one_frozen(ray_session, tmp_path):
    RecordingMultiAgentPPO.log_path = str(tmp_path / "events.jsonl")
    metric = "env_runners/module_episode_returns_mean/learner"  # RLlib's per-module key
    config = (PPOConfig().environment(TwoWalkers)
              .env_runners(num_envs_per_env_runner=2, rollout_fragment_length=12)
              .training(train_batch_size=24, minibatch_size=12, num_epochs=1, lr=tune.grid_search(LRS))
              .multi_agent(policies={"learner", "fixed"}, policy_mapping_fn=map_agent, policies_to_train=["learner"])
              .rl_module(model_config={"fcnet_hiddens": [8]})
              .debugging(seed=0, logger_config={"type": "none"}))
    scheduler = tune.schedulers.PopulationBasedTraining(
        time_attr="training_iteration", perturbation_interval=2, quantile_fraction=0.25,
        resample_probability=0.0, hyperparam_mutations={"lr": LRS}, synch=True)
    results = tune.Tuner(RecordingMultiAgentPPO, param_space=config,
                         tune_config=tune.TuneConfig(scheduler=scheduler, metric=metric, mode="max"),
                         run_config=_run_config(tmp_path, "pbt_ma", stop={"training_iteration": 4})).fit()
    assert results.num_errors == 0 and len(results) == 4
    assert all(np.isfinite(r.metrics["env_runners"]["module_episode_returns_mean"]["learner"]) for r in results)
    events = _events(RecordingMultiAgentPPO.log_path)
    exploits, frozen = 0, {}  # frozen: each trial's frozen weights since its setup or last restore
    for index, e in enumerate(events):
        if e["event"] == "setup":
            frozen[e["trial"]] = e["fixed"]
        elif e["event"] == "result":
            assert e["fixed"] == frozen[e["trial"]], "the frozen policy changed in training"
        else:  # a restore
            # Synchronous PBT: every trial reached the perturbation step; a paused trial resumes from its own
            # checkpoint, a cloned one from the donor's at that step (the donor may have trained on since).
            donors = [d for d in events[:index] if d["event"] == "result" and d["iteration"] == e["iteration"]
                      and d["learner"] == e["learner"]]
            assert donors, "the restored learner weights match no trial's weights at the perturbation step"
            assert e["fixed"] == donors[0]["fixed"], "the frozen policy was not restored with the trained one"
            assert e["optimizer_lr"] == pytest.approx(e["lr"])  # the perturbed lr is in force
            if donors[0]["trial"] != e["trial"]:
                exploits += 1
                assert e["fixed"] != frozen[e["trial"]]  # (the clone had frozen weights of its own before)
            frozen[e["trial"]] = e["fixed"]
    assert exploits >= 1, "PBT never cloned another trial"
    for trial in frozen:  # the trained policy does train
        trained = [e["learner"] for e in events if e["event"] == "result" and e["trial"] == trial]
        assert len(set(trained)) == len(trained)


# -- 3. Search spaces inside model_config (a dict) and inside DefaultModelConfig ------------------------------------

class ModulePPO(PPO):
    def step(self):
        result = super().step()
        names = self.get_weights()["default_policy"]
        result["custom"] = {"lstm": any("lstm" in name for name in names)}
        return result


def test_default_model_config_takes_a_search_value_and_to_dict_gives_tune_a_dict():
    from relayrl import DefaultModelConfig

    model = DefaultModelConfig(use_lstm=tune.choice([True, False]), fcnet_hiddens=[8])
    config = PPOConfig().environment("CartPole-v1").rl_module(model_config=model)
    as_dict = config.to_dict()["model_config"]
    # The passed fields, marked as a DefaultModelConfig's; Tune resolves the dict.
    assert set(as_dict) == {"__default_model_config__", "use_lstm", "fcnet_hiddens"}
    assert as_dict["fcnet_hiddens"] == [8] and isinstance(as_dict["use_lstm"], tune.search.sample.Categorical)
    # A trial's resolved dict becomes that DefaultModelConfig again, with the same fields given: the defaults a
    # stateful module resolves for the others apply as without Tune (PPO's LSTM fcnet_hiddens=[] is not blocked).
    trial = PPOConfig().environment("CartPole-v1").update_from_dict({"model_config": {**as_dict, "use_lstm": True}})
    resolved = trial._values["model_config"]
    assert isinstance(resolved, DefaultModelConfig) and resolved.use_lstm is True
    assert trial.given_model_fields() == {"use_lstm", "fcnet_hiddens"}
    without_tune = PPOConfig().environment("CartPole-v1").rl_module(
        model_config=DefaultModelConfig(use_lstm=True, fcnet_hiddens=[8]))
    assert trial.model_config == without_tune.model_config
    with pytest.raises(ValueError, match=r"model_config\['use_lstm'\] is still a Ray Tune search space.*Tuner"):
        config.build_algo()
    with pytest.raises(ValueError, match=r"model_config\['use_lstm'\] is still a Ray Tune search space"):
        PPOConfig().environment("CartPole-v1").rl_module(model_config={"use_lstm": tune.choice([True])}).build_algo()
    with pytest.raises(ValueError, match="must be True or False"):  # a resolved value is still checked
        DefaultModelConfig(use_lstm="yes")
    plain = DefaultModelConfig(use_lstm=True)  # no search value: to_dict keeps the dataclass
    assert PPOConfig().rl_module(model_config=plain).to_dict()["model_config"] == plain


@pytest.mark.slow  # 13-20 s
def test_use_lstm_searched_in_a_dict_and_in_a_default_model_config(ray_session, tiny_ppo_config, tmp_path):
    from relayrl import DefaultModelConfig

    seen = []
    for name, model in (
            ("dict", {"fcnet_hiddens": [8], "lstm_cell_size": 8, "use_lstm": tune.grid_search([True, False])}),
            ("dataclass", DefaultModelConfig(fcnet_hiddens=[8], lstm_cell_size=8, max_seq_len=5,
                                             use_lstm=tune.grid_search([True, False])))):
        config = tiny_ppo_config.copy(copy_frozen=False).rl_module(model_config=model)
        results = tune.Tuner(ModulePPO, param_space=config,
                             run_config=_run_config(tmp_path, name, stop={"training_iteration": 1})).fit()
        assert results.num_errors == 0 and len(results) == 2
        for result in results:
            model_config = result.config["model_config"]  # (the dataclass comes back as one: a DefaultModelConfig)
            use_lstm = model_config.use_lstm if name == "dataclass" else model_config["use_lstm"]
            assert result.metrics["custom"]["lstm"] is use_lstm
            seen.append((name, result.metrics["custom"]["lstm"]))
    assert sorted(seen) == [("dataclass", False), ("dataclass", True), ("dict", False), ("dict", True)]


# -- 4. PBT ranking on the evaluation metric, evaluating on a local or a remote runner ------------------------------

class EvaluatingPPO(PPO):
    log_path = None  # set by the test before Tune ships the class

    def _record(self, event, **fields):
        _write(self.log_path, {"event": event, "trial": self.trial_id, "iteration": self.iteration,
                               "learner": _hash(self.get_weights()["default_policy"]), **fields})

    def load_checkpoint(self, checkpoint):
        super().load_checkpoint(checkpoint)
        self._record("restore")

    def step(self):
        result = super().step()
        evaluated = self.eval_env_runner_group.foreach_env_runner(lambda r: r.get_state(components="rl_module"))
        learner = self.get_weights()["default_policy"]
        matches = [_hash(s["rl_module"]) == _hash({k: learner[k] for k in s["rl_module"]}) for s in evaluated]
        self._record("result", evaluated_with_the_learners_weights=matches,
                     returns=result["evaluation"]["env_runners"]["episode_return_mean"])
        return result


@pytest.mark.slow  # 31-40 s for both
@pytest.mark.parametrize("evaluation_runners", [0, 1])
def test_pbt_ranks_on_the_evaluation_metric_and_evaluates_with_the_cloned_weights(
        ray_session, tiny_ppo_config, tmp_path, evaluation_runners):
    EvaluatingPPO.log_path = str(tmp_path / "events.jsonl")
    config = (tiny_ppo_config.copy(copy_frozen=False).training(lr=tune.grid_search(LRS[:2]))
              .evaluation(evaluation_interval=1, evaluation_duration=2, evaluation_num_env_runners=evaluation_runners))
    scheduler = tune.schedulers.PopulationBasedTraining(
        time_attr="training_iteration", perturbation_interval=2, quantile_fraction=0.5,
        resample_probability=0.0, hyperparam_mutations={"lr": LRS}, synch=True)
    results = tune.Tuner(EvaluatingPPO, param_space=config,
                         tune_config=tune.TuneConfig(scheduler=scheduler, mode="max",
                                                     metric="evaluation/env_runners/episode_return_mean"),
                         run_config=_run_config(tmp_path, "pbt_eval", stop={"training_iteration": 4})).fit()
    assert results.num_errors == 0 and len(results) == 2
    events = _events(EvaluatingPPO.log_path)
    clones = [e for i, e in enumerate(events) if e["event"] == "restore" and any(
        d["trial"] != e["trial"] and d["learner"] == e["learner"] for d in events[:i] if d["event"] == "result")]
    assert clones, "PBT never cloned another trial"
    for e in events:
        if e["event"] == "result":  # every evaluation (after a clone too) ran with the weights just trained
            assert e["evaluated_with_the_learners_weights"] == [True] and e["returns"] == 15.0
    for clone in clones:
        after = [e for e in events if e["event"] == "result" and e["trial"] == clone["trial"]
                 and e["iteration"] == clone["iteration"] + 1]
        assert after and after[0]["learner"] != clone["learner"]  # it trained on from the donor's weights


# -- 5. IMPALA trials with a remote EnvRunner each, two trials on 2 CPUs ---------------------------------------------

class TimedIMPALA(IMPALA):
    def step(self):
        result = super().step()
        result["custom"] = {"wall_time": time.time()}
        return result


@pytest.mark.slow  # ~16 s
def test_impala_trials_with_a_remote_runner_each_fit_two_cpus_with_fractions(ray_session, tmp_path):
    config = (IMPALAConfig().environment(CountingEnv, env_config={"episode_len": 5})
              .env_runners(num_env_runners=1, rollout_fragment_length=10)
              .training(train_batch_size=20, lr=tune.grid_search([1e-3, 1e-4]))
              .rl_module(model_config={"fcnet_hiddens": [8]}).debugging(seed=0))
    # By default a trial asks 1 CPU for its own process (which trains) and 1 for its runner, as RLlib's do: on
    # 2 CPUs the trials run one after the other. Fractions (docs/tune.md) let both run at once.
    assert TimedIMPALA.default_resource_request(config.copy(copy_frozen=False).training(lr=1e-3)).bundles == \
        [{"CPU": 1}, {"CPU": 1}]
    config = config.env_runners(num_cpus_per_env_runner=0.5).learners(num_cpus_per_learner=0.5)
    assert TimedIMPALA.default_resource_request(config.copy(copy_frozen=False).training(lr=1e-3)).bundles == \
        [{"CPU": 0.5}, {"CPU": 0.5}]
    results = tune.Tuner(TimedIMPALA, param_space=config,
                         run_config=_run_config(tmp_path, "impala", stop={"training_iteration": 3})).fit()
    assert results.num_errors == 0 and len(results) == 2
    spans = []
    for result in results:
        walls = result.metrics_dataframe["custom/wall_time"]
        assert result.metrics["training_iteration"] == 3
        spans.append((walls.min(), walls.max()))
    (first_a, last_a), (first_b, last_b) = spans
    assert first_a < last_b and first_b < last_a, "the two trials did not run at the same time"


# -- 6. A stop criterion on the evaluation metric with evaluation_interval=2 ------------------------------------------

def test_a_stop_on_the_evaluation_metric_waits_for_the_first_evaluation(ray_session, tiny_ppo_config, tmp_path):
    config = tiny_ppo_config.copy(copy_frozen=False).evaluation(evaluation_interval=2, evaluation_duration=2)
    results = tune.Tuner(PPO, param_space=config, run_config=_run_config(
        tmp_path, "stop_eval", stop={"evaluation/env_runners/episode_return_mean": 10,
                                     "training_iteration": 5})).fit()
    assert results.num_errors == 0
    metrics = results[0].metrics
    # Iteration 1 has no evaluation key (Tune warns once and goes on); iteration 2 evaluates: 15 >= 10 stops it.
    assert metrics["training_iteration"] == 2 and metrics["evaluation"]["env_runners"]["episode_return_mean"] == 15
    first = json.loads(open(os.path.join(results[0].path, "result.json")).readline())
    assert "evaluation" not in first


# -- 2. Tune over an offline algorithm: a grid over lr, evaluation in the env, an interrupted experiment restored -----

class BCFailingOnce(BC):
    """BC whose iteration 3 fails once: a crash that interrupts the experiment."""

    marker_path = None  # set by the test before Tune ships the class

    def step(self):
        result = super().step()
        if result["training_iteration"] == 3 and not os.path.exists(self.marker_path):
            open(self.marker_path, "w").close()
            raise RuntimeError("deliberate failure in iteration 3")
        return result


@pytest.fixture(scope="module")
def cartpole_rows(tmp_path_factory):
    """~400 CartPole-v1 transition rows from an untrained PPO policy (as tests/offline/conftest.py records)."""
    folder = tmp_path_factory.mktemp("cartpole_rows")
    algo = (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=2)
            .training(train_batch_size=200, minibatch_size=200).rl_module(model_config={"fcnet_hiddens": [8]})
            .offline_data(output=str(folder), output_write_episodes=False)
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        for _ in range(2):
            algo.env_runner.sample()
    finally:
        algo.stop()
    return str(folder)


@pytest.mark.slow  # 11-20 s, plus ~10 s recording the rows
def test_tune_over_bc_restores_an_interrupted_experiment_where_its_data_pass_was(ray_session, cartpole_rows, tmp_path):
    def bc_config(lr):
        return (BCConfig().environment("CartPole-v1").offline_data(input_=cartpole_rows)
                .training(train_batch_size=32, lr=lr).rl_module(model_config={"fcnet_hiddens": [8]})
                .evaluation(evaluation_interval=1, evaluation_duration=2).debugging(seed=0))

    BCFailingOnce.marker_path = str(tmp_path / "failed_once")
    trainable = BCFailingOnce
    run_config = _run_config(tmp_path, "bc", stop={"training_iteration": 4},
                             checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=1, checkpoint_at_end=True))
    first = tune.Tuner(trainable, param_space=bc_config(tune.grid_search([1e-3, 1e-4])),
                       tune_config=tune.TuneConfig(metric="evaluation/env_runners/episode_return_mean", mode="max"),
                       run_config=run_config).fit()
    assert first.num_errors >= 1  # the experiment was interrupted at iteration 3 (one trial; the other ran on)
    results = tune.Tuner.restore(str(tmp_path / "results" / "bc"), trainable=trainable, resume_errored=True).fit()
    assert results.num_errors == 0 and len(results) == 2
    best = results.get_best_result()
    assert best.metrics["evaluation"]["env_runners"]["num_episodes"] >= 2
    for result in results:
        assert result.metrics["training_iteration"] == 4 and len(result.best_checkpoints) == 4
        restored = BC.from_checkpoint(result.checkpoint.path, trusted=[trainable])  # (the test's class)
        try:
            resumed = restored.get_weights()["default_policy"]
        finally:
            restored.stop()
        # The restored trial read on from where its checkpoint was in the data: the weights of a run never stopped.
        algo = bc_config(result.config["lr"]).build_algo()
        try:
            for _ in range(4):
                algo.train()
            uninterrupted = algo.get_weights()["default_policy"]
        finally:
            algo.stop()
        assert _hash(resumed) == _hash(uninterrupted)
