"""Callbacks and custom metrics: hook order and counts, dispatch order, chaining, result mutation, metrics."""
import pytest

import relayrl
from relayrl import PPOConfig
from relayrl.algorithms.algorithm_config import AlgorithmConfig
from relayrl.algorithms.options import UnknownOptionError
from relayrl.callbacks import (
    CALLBACK_HOOKS,
    CallbackDispatch,
    DefaultCallbacks,
    RLlibCallback,
    make_multi_callbacks,
    overrides_hook,
)
from relayrl.env.env_runner import EnvRunner
from relayrl.testing import CountingEnv

EPISODE_HOOKS = ("on_episode_created", "on_episode_start", "on_episode_step", "on_episode_end")


def counting_config(episode_len=3, num_envs=1, fragment=4, train_batch_size=12):
    return (
        PPOConfig()
        .environment(CountingEnv, env_config={"episode_len": episode_len})
        .env_runners(num_envs_per_env_runner=num_envs, rollout_fragment_length=fragment)
        .training(train_batch_size=train_batch_size, minibatch_size=4, num_epochs=1)
        .debugging(seed=0)
    )


def recorder(log, tag="A"):
    """A callbacks class appending (tag, hook, env_index, chunk length, reset?) to `log`."""

    class Recorder(RLlibCallback):
        def on_algorithm_init(self, *, algorithm, metrics_logger=None, **kwargs):
            assert algorithm.env_runner is not None and metrics_logger is algorithm.metrics
            log.append((tag, "on_algorithm_init"))

        def on_train_result(self, *, algorithm, metrics_logger=None, result, **kwargs):
            log.append((tag, "on_train_result"))

        def on_environment_created(self, *, env_runner, metrics_logger=None, env, env_context, **kwargs):
            assert env is env_runner.env and metrics_logger is env_runner.metrics
            assert env_context.worker_index == env_runner.worker_index
            log.append((tag, "on_environment_created"))

        def _episode(self, hook, episode, env_runner, metrics_logger, env, env_index, rl_module, **kwargs):
            assert env is env_runner.env and metrics_logger is env_runner.metrics
            assert rl_module is env_runner.module and 0 <= env_index < env.num_envs
            log.append((tag, hook, env_index, len(episode), episode.is_reset))

        def on_episode_created(self, **kwargs):
            self._episode("on_episode_created", **kwargs)

        def on_episode_start(self, **kwargs):
            self._episode("on_episode_start", **kwargs)

        def on_episode_step(self, **kwargs):
            self._episode("on_episode_step", **kwargs)

        def on_episode_end(self, *, prev_episode_chunks=None, **kwargs):
            assert kwargs["episode"].is_done and not kwargs["episode"].is_numpy
            self._episode("on_episode_end", **kwargs)

        def on_sample_end(self, *, env_runner=None, metrics_logger=None, samples, **kwargs):
            log.append((tag, "on_sample_end", sum(len(e) for e in samples)))

    return Recorder


def episode_events(log, env_index=None):
    return [e[1:4] for e in log if e[1] in EPISODE_HOOKS and (env_index is None or e[2] == env_index)]


def test_hooks_are_keyword_only_no_ops_and_alias():
    assert DefaultCallbacks is RLlibCallback
    assert relayrl.RLlibCallback is RLlibCallback and relayrl.DefaultCallbacks is RLlibCallback
    assert relayrl.make_multi_callbacks is make_multi_callbacks
    callback = RLlibCallback()
    for hook in CALLBACK_HOOKS:
        with pytest.raises(TypeError):
            getattr(callback, hook)(None)  # keyword-only
    assert callback.on_episode_end(episode=None, env_index=0, anything=1) is None
    assert not any(overrides_hook(RLlibCallback, hook) for hook in CALLBACK_HOOKS)
    dispatch = CallbackDispatch(AlgorithmConfig())
    assert all(dispatch.handlers(hook) == () for hook in CALLBACK_HOOKS)


def test_env_runner_episode_hooks_fire_in_documented_order():
    log = []
    runner = EnvRunner(config=counting_config().callbacks(recorder(log)))
    assert log == [("A", "on_environment_created")]
    runner.sample()  # 4 steps: one episode of 3, then 1 step of the next
    assert episode_events(log) == [
        ("on_episode_created", 0, 0), ("on_episode_start", 0, 0),
        ("on_episode_step", 0, 1), ("on_episode_step", 0, 2), ("on_episode_step", 0, 3),
        ("on_episode_end", 0, 3),
        ("on_episode_created", 0, 0), ("on_episode_start", 0, 0), ("on_episode_step", 0, 1),
    ]
    # created: before the reset data is in the episode; start: after it.
    assert [e[4] for e in log if e[1] == "on_episode_created"] == [False, False]
    assert [e[4] for e in log if e[1] == "on_episode_start"] == [True, True]
    assert log[-1] == ("A", "on_sample_end", 4)
    del log[:]
    runner.sample()  # the cut episode continues (2 steps), then a new one (2 steps)
    assert episode_events(log) == [
        ("on_episode_step", 0, 1), ("on_episode_step", 0, 2), ("on_episode_end", 0, 2),
        ("on_episode_created", 0, 0), ("on_episode_start", 0, 0),
        ("on_episode_step", 0, 1), ("on_episode_step", 0, 2),
    ]
    assert log[-1] == ("A", "on_sample_end", 4)
    runner.stop()


def test_every_sub_env_gets_its_hooks_with_its_index():
    log = []
    runner = EnvRunner(config=counting_config(num_envs=3, fragment=3).callbacks(recorder(log)))
    runner.sample()  # 3 steps per env: exactly one full episode each
    for i in range(3):
        hooks = [e[0] for e in episode_events(log, i)]
        assert hooks == ["on_episode_created", "on_episode_start", "on_episode_step", "on_episode_step",
                         "on_episode_step", "on_episode_end", "on_episode_created", "on_episode_start"]
    assert sum(1 for e in log if e[1] == "on_sample_end") == 1
    runner.stop()


def test_complete_episodes_and_num_episodes_call_sample_end_and_episode_end():
    log = []
    runner = EnvRunner(config=counting_config(episode_len=2).env_runners(batch_mode="complete_episodes")
                       .callbacks(recorder(log)))
    episodes = runner.sample(num_episodes=3)
    assert len(episodes) == 3
    assert sum(1 for e in log if e[1] == "on_episode_end") == 3
    assert log[-1] == ("A", "on_sample_end", 6)
    runner.stop()


def test_prev_episode_chunks_hold_the_earlier_chunks():
    seen = []

    def on_episode_end(*, episode, prev_episode_chunks, **kwargs):
        seen.append((episode.id_, len(episode), [(c.id_, len(c)) for c in prev_episode_chunks]))

    runner = EnvRunner(config=counting_config(episode_len=3, fragment=4).callbacks(on_episode_end=on_episode_end))
    first = runner.sample()  # episode 1 done (3 steps) + episode 2 cut after 1 step
    second = runner.sample()  # episode 2 ends after 2 more steps
    assert seen[0][2] == [] and seen[0][1] == 3
    cut_chunk = first[-1]
    assert seen[1] == (cut_chunk.id_, 2, [(cut_chunk.id_, 1)])
    assert second[0].id_ == cut_chunk.id_
    assert runner._prev_chunks.keys() == {second[-1].id_}  # only the ongoing episode is remembered
    runner.sample(force_reset=True)
    assert second[-1].id_ not in runner._prev_chunks  # dropped episodes are forgotten
    runner.stop()


def test_per_event_callables_run_after_class_methods_in_list_order():
    log = []
    config = counting_config().callbacks(
        recorder(log),
        on_episode_end=[lambda **kw: log.append(("f1", "on_episode_end")),
                        lambda **kw: log.append(("f2", "on_episode_end"))],
        on_sample_end=lambda *, samples, **kw: log.append(("g", "on_sample_end")),
    )
    runner = EnvRunner(config=config)
    runner.sample()
    ends = [e[:2] for e in log if e[1] == "on_episode_end"]
    assert ends == [("A", "on_episode_end"), ("f1", "on_episode_end"), ("f2", "on_episode_end")]
    assert [e[0] for e in log if e[1] == "on_sample_end"] == ["A", "g"]
    runner.stop()


def test_make_multi_callbacks_chains_in_order():
    log = []
    multi = make_multi_callbacks([recorder(log, "A"), recorder(log, "B")])
    assert issubclass(multi, RLlibCallback)
    assert overrides_hook(multi, "on_episode_step") and not overrides_hook(multi, "on_checkpoint_loaded")
    runner = EnvRunner(config=counting_config().callbacks(multi))
    runner.sample()
    assert [e[0] for e in log if e[1] == "on_episode_step"] == ["A", "B"] * 4
    assert [e[0] for e in log if e[1] == "on_environment_created"] == ["A", "B"]
    runner.stop()

    log2 = []
    config = counting_config().callbacks([recorder(log2, "X"), recorder(log2, "Y")])  # a list of classes
    runner = EnvRunner(config=config)
    runner.sample()
    assert [e[0] for e in log2 if e[1] == "on_sample_end"] == ["X", "Y"]
    runner.stop()
    with pytest.raises(TypeError, match="RLlibCallback subclasses"):
        make_multi_callbacks([object])


def test_sample_end_may_mutate_episodes():
    def on_sample_end(*, samples, **kwargs):
        for episode in samples:
            episode.custom_data["tagged"] = True

    runner = EnvRunner(config=counting_config().callbacks(on_sample_end=on_sample_end))
    assert all(e.custom_data["tagged"] for e in runner.sample())
    runner.stop()


class CountingMetrics(RLlibCallback):
    """Logs, per finished episode, a running count (mean/max/sum) and the return tracked in custom_data."""

    def __init__(self):
        super().__init__()
        self.finished = 0

    def on_episode_start(self, *, episode, **kwargs):
        episode.custom_data["return"] = 0.0

    def on_episode_step(self, *, episode, **kwargs):
        episode.custom_data["return"] += float(episode.get_rewards(-1))

    def on_episode_end(self, *, episode, metrics_logger, **kwargs):
        self.finished += 1
        metrics_logger.log_value("count_mean", self.finished, reduce="mean", window=100)
        metrics_logger.log_value("count_max", self.finished, reduce="max")
        metrics_logger.log_value("count_sum", self.finished, reduce="sum")
        metrics_logger.log_value("tracked_return", episode.custom_data["return"], reduce="mean", window=10)


class ResultEditor(RLlibCallback):
    def on_algorithm_init(self, *, algorithm, **kwargs):
        algorithm.init_calls = getattr(algorithm, "init_calls", 0) + 1

    def on_train_result(self, *, algorithm, result, **kwargs):
        result["my_key"] = result["training_iteration"] * 10
        result["env_runners"]["edited"] = True


def test_custom_metrics_and_train_result_mutation():
    # Episodes of 5 steps, 12 steps per iteration: 2 episodes finish per iteration, the third is cut
    # (custom_data travels with the cut, so the tracked return is the whole episode's: 1+2+3+4+5).
    config = counting_config(episode_len=5, fragment="auto", train_batch_size=12)
    algo = config.callbacks(make_multi_callbacks([CountingMetrics, ResultEditor])).build_algo()
    try:
        assert algo.init_calls == 1
        result = algo.train()
        env = result["env_runners"]
        assert env["num_episodes"] == 2
        assert (env["count_mean"], env["count_max"], env["count_sum"]) == (1.5, 2, 3)
        assert env["tracked_return"] == 15.0 and env["episode_return_mean"] == 15.0
        assert result["my_key"] == 10 and env["edited"] is True
        result = algo.train()
        env = result["env_runners"]
        assert (env["count_mean"], env["count_max"], env["count_sum"]) == (2.5, 4, 10)
        assert env["tracked_return"] == 15.0 and result["my_key"] == 20
        assert algo.init_calls == 1
        assert isinstance(algo.callbacks, RLlibCallback)
    finally:
        algo.stop()


class OlderStyleMetrics(RLlibCallback):
    """The seeds' older style: user state in episode.user_data, scalars in episode.custom_metrics."""

    def on_episode_start(self, *, episode, **kwargs):
        episode.user_data["obs_seen"] = []

    def on_episode_step(self, *, episode, **kwargs):
        episode.user_data["obs_seen"].append(float(episode.get_observations(-1)[0]))

    def on_episode_end(self, *, episode, env_index, **kwargs):
        episode.custom_metrics["last_obs"] = episode.user_data["obs_seen"][-1]
        episode.custom_metrics["env_index"] = float(env_index)


def test_older_custom_metrics_style_is_aggregated_to_mean_min_max():
    # Two sub-envs, episodes of 3 steps (the last observation counts to 3): each finished episode
    # reports custom_metrics, aggregated over episodes as <name>_mean/_min/_max.
    config = counting_config(episode_len=3, num_envs=2, fragment=6, train_batch_size=12)
    algo = config.callbacks(OlderStyleMetrics).build_algo()
    try:
        env = algo.train()["env_runners"]
        custom = env["custom_metrics"]
        assert env["num_episodes"] == 4  # 2 per sub-env, cut chunks carry user_data and custom_metrics
        assert custom["last_obs_mean"] == custom["last_obs_min"] == custom["last_obs_max"] == 3.0
        assert (custom["env_index_min"], custom["env_index_max"], custom["env_index_mean"]) == (0.0, 1.0, 0.5)
    finally:
        algo.stop()


class OldStackSignatures(RLlibCallback):
    """Seed 000's callbacks, as the old API stack wrote them: `worker`, `base_env`, `policies`; some without
    **kwargs, so they get only what they name."""

    seen = []

    def on_episode_start(self, *, worker, base_env, policies, episode, env_index, **kwargs):
        self.seen.append(("start", worker, base_env, dict(policies), env_index))
        episode.user_data["steps"] = 0

    def on_episode_step(self, *, worker, episode, env_index):  # no **kwargs
        episode.user_data["steps"] += 1

    def on_episode_end(self, *, worker, base_env, policies, episode, env_index, **kwargs):
        episode.custom_metrics["steps"] = episode.user_data["steps"]

    def on_sample_end(self, *, worker, samples, **kwargs):
        self.seen.append(("sample_end", worker, len(samples)))


def test_old_stack_callback_signatures_run_on_the_new_stack():
    OldStackSignatures.seen = []
    algo = counting_config(episode_len=3, fragment=6, train_batch_size=6).callbacks(OldStackSignatures).build_algo()
    try:
        result = algo.train()
        runner = algo.env_runner
        start = next(event for event in OldStackSignatures.seen if event[0] == "start")
        assert start[1:] == ("start", runner, runner.env, {"default_policy": runner.module}, 0)[1:]
        assert ("sample_end", runner, 2) in OldStackSignatures.seen
        assert result["env_runners"]["custom_metrics"]["steps_mean"] == 3.0
    finally:
        algo.stop()


def test_algorithm_hooks_order_and_per_event_callables():
    log = []
    config = counting_config(fragment="auto").callbacks(
        recorder(log), on_train_result=lambda *, algorithm, result, **kw: log.append(("f", "on_train_result")),
        on_algorithm_init=lambda *, algorithm, **kw: log.append(("f", "on_algorithm_init")))
    algo = config.build_algo()
    try:
        algo_events = [e[:2] for e in log if e[1] in ("on_algorithm_init", "on_train_result")]
        assert algo_events == [("A", "on_algorithm_init"), ("f", "on_algorithm_init")]
        assert log.index(("A", "on_environment_created")) < log.index(("A", "on_algorithm_init"))
        algo.train()
        algo_events = [e[:2] for e in log if e[1] == "on_train_result"]
        assert algo_events == [("A", "on_train_result"), ("f", "on_train_result")]
    finally:
        algo.stop()


def test_config_callbacks_options_dicts_and_errors():
    class MyCallbacks(RLlibCallback):
        pass

    config = PPOConfig().callbacks(MyCallbacks, on_episode_end=print)
    assert config.callbacks_class is MyCallbacks and config.on_episode_end is print
    data = config.to_dict()
    assert data["callbacks"] is MyCallbacks and data["callbacks_on_episode_end"] is print
    again = PPOConfig.from_dict(data)
    assert again.callbacks_class is MyCallbacks and again["callbacks_on_episode_end"] is print
    assert PPOConfig.from_dict({"callbacks": [MyCallbacks, RLlibCallback]}).callbacks_class == [
        MyCallbacks, RLlibCallback]
    assert PPOConfig().callbacks_class is RLlibCallback
    typo = r"unexpected keyword argument 'on_episode_ends'.*Did you mean `on_episode_end`"
    with pytest.raises(TypeError, match=typo):
        PPOConfig().callbacks(on_episode_ends=print)
    with pytest.raises(UnknownOptionError, match="Did you mean `callbacks_on_episode_end`"):
        PPOConfig.from_dict({"callbacks_on_episode_ends": print})
    with pytest.raises(ValueError, match="callbacks_class must be a RLlibCallback subclass"):
        PPOConfig().callbacks(object)
    with pytest.raises(ValueError, match="on_episode_end must be a callable"):
        PPOConfig().callbacks(on_episode_end=[print, 3])
