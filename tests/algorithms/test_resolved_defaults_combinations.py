"""The run-dependent defaults (relayrl/algorithms/resolved_defaults/) mixed with the library's other features the way
users mix them: env_config keys, RLlib's env strings, several envs, module specs, evaluation, the CLI, checkpoints."""
import pytest

from relayrl import DefaultModelConfig, DQNConfig, MultiRLModuleSpec, PPOConfig, RLModuleSpec
from relayrl.algorithms.resolved_defaults import forget_resolved_defaults, resolve_defaults
from relayrl.examples.envs.classes.multi_agent import MultiAgentCartPole
from relayrl.examples.envs.classes.stateless_cartpole import StatelessCartPole


def resolved(config):
    """What building does: forget what an earlier build resolved, check, resolve."""
    config = config.copy(copy_frozen=False)
    forget_resolved_defaults(config)
    config.validate()
    return config, resolve_defaults(config, log=False)


def pong(env="ALE/Pong-v5", **env_config) -> PPOConfig:
    pytest.importorskip("ale_py.vector_env")
    return PPOConfig().environment(env, env_config=env_config).env_runners(num_envs_per_env_runner=4)


def lstm(**options) -> PPOConfig:
    return PPOConfig().environment(StatelessCartPole).rl_module(model_config={"use_lstm": True}).update_from_dict(
        options)


# -- the vector env -----------------------------------------------------------------------------------

@pytest.mark.parametrize("env_config", [{"render_mode": "rgb_array"}, {"mode": 0, "difficulty": 0},
                                        {"max_episode_steps": 1000}])
def test_an_env_config_key_only_gym_make_takes_keeps_sync(env_config):
    """ale-py's AtariVectorEnv has no such argument: picking it turned a config SYNC runs into a TypeError."""
    config, notes = resolved(pong(**env_config))
    assert config.gym_env_vectorize_mode == "SYNC" and notes == []


@pytest.mark.parametrize("env_config", [{}, {"dim": 64, "framestack": 2, "frame_skip": 4},
                                        {"repeat_action_probability": 0.0, "full_action_space": True}])
def test_keys_the_vector_env_takes_still_get_it(env_config):
    config, notes = resolved(pong(**env_config))
    assert config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT" and len(notes) == 1


def test_rllibs_module_prefixed_id_gets_it_and_another_evaluation_env_keeps_sync():
    config, _ = resolved(pong("ale_py:ALE/Pong-v5"))
    assert config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
    config, _ = resolved(pong().evaluation(evaluation_interval=1, evaluation_config={"env": "ALE/Breakout-v5"}))
    assert config.gym_env_vectorize_mode == "SYNC"


def test_a_picked_env_with_a_render_mode_builds_and_samples():
    config = pong(render_mode="rgb_array").env_runners(num_envs_per_env_runner=2, rollout_fragment_length=8)
    algo = config.training(train_batch_size=16, minibatch_size=16, num_epochs=1).build_algo()
    try:
        assert algo.config.gym_env_vectorize_mode == "SYNC" and len(algo.env_runner.sample()) > 0
    finally:
        algo.stop()


# -- a stateful module -----------------------------------------------------------------------------------

@pytest.mark.parametrize("envs, runners", [(6, 1), (3, 2), (12, 1)])
def test_envs_whose_rounds_of_32_overshoot_the_batch_keep_whole_sequences(envs, runners):
    """32 x 6 = 192 steps a round overshoot 1,024 by 12.5%: the sequence settings were all dropped (fragments of
    ~170 steps, RLlib's max_seq_len 20, minibatches of 64). Now the longest fragment that fits."""
    config, notes = resolved(lstm(num_envs_per_env_runner=envs, num_env_runners=runners))
    fragment = config.rollout_fragment_length
    assert 16 <= fragment < 32 and config.model_config["max_seq_len"] == fragment + 1
    assert config.minibatch_size == 8 * (fragment + 1) and f"rollout_fragment_length={fragment}" in notes[0]


def test_the_users_train_batch_size_per_learner_is_the_batch_the_sequences_fit():
    """It replaces train_batch_size: the minibatch was sized for the resolved 1,024 (264 > 256), which failed the
    check, so all sequence settings were dropped, and the line said train_batch_size=1024, which had no effect."""
    config, notes = resolved(lstm(train_batch_size_per_learner=256))
    assert config.total_train_batch_size == 256 and "train_batch_size=" not in notes[0]
    assert (config.rollout_fragment_length, config.minibatch_size, config.model_config["max_seq_len"]) == (32, 231, 33)


def test_four_learners_get_minibatches_of_whole_sequences_that_fit_their_share():
    config, _ = resolved(lstm(num_learners=4))
    assert config.train_batch_size_per_learner == 256 and config.minibatch_size == 231
    assert config.model_config["max_seq_len"] == 33


def test_the_users_fragment_that_needs_the_default_batch_keeps_it_and_builds():
    """256-step fragments x 8 envs fill PPO's 2,048 batch exactly; the resolved 1,024 made the build fail on a batch
    the user never set."""
    config, notes = resolved(lstm(rollout_fragment_length=256))
    assert config.train_batch_size == 2048 and "train_batch_size=" not in notes[0]
    assert (config.model_config["max_seq_len"], config.minibatch_size) == (257, 7 * 257)
    algo = lstm(rollout_fragment_length=256).build_algo()  # (it raised ValueError: "... the train batch of 1024")
    try:
        assert algo.config.train_batch_size == 2048
    finally:
        algo.stop()


def test_the_measured_fragment_stays_where_it_fits():
    config, _ = resolved(lstm(num_envs_per_env_runner=3))
    assert config.rollout_fragment_length == 32 and config.minibatch_size == 264


def test_the_users_max_seq_len_sets_the_fragment_and_minibatch():
    config, notes = resolved(lstm(num_envs_per_env_runner=6).rl_module(
        model_config={"use_lstm": True, "max_seq_len": 17}))
    assert (config.rollout_fragment_length, config.minibatch_size, config.model_config["max_seq_len"]) == (16, 136, 17)
    assert "max_seq_len" not in notes[0].split("rollout_fragment_length")[0]


@pytest.mark.parametrize("spec", [
    RLModuleSpec(model_config={"use_lstm": True}),
    MultiRLModuleSpec(rl_module_specs={"p0": RLModuleSpec(model_config={"use_lstm": True}), "p1": RLModuleSpec()}),
])
def test_use_lstm_only_in_a_module_spec_is_said_not_silently_left_feed_forward(spec):
    config = PPOConfig().environment("CartPole-v1")
    if isinstance(spec, MultiRLModuleSpec):
        config = config.environment(MultiAgentCartPole, env_config={"num_agents": 2}).multi_agent(
            policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: f"p{agent_id}")
    config, notes = resolved(config.rl_module(rl_module_spec=spec))
    assert config.minibatch_size == 64 and len(notes) == 1
    assert "use_lstm=True in its own model_config" in notes[0] and "docs/stateful_modules.md" in notes[0]
    config, notes = resolved(config.training(minibatch_size=128))  # the user chose: no hint
    assert notes == []


def test_multi_agent_modules_sharing_the_configs_model_config_get_the_defaults():
    config = (PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda agent_id, *a, **k: f"p{agent_id}")
              .rl_module(model_config={"use_lstm": True}))
    config, _ = resolved(config)
    assert config.rollout_fragment_length == 32 and config.minibatch_size == 264


def test_the_evaluation_runners_inherit_the_resolved_sequences():
    config, _ = resolved(lstm().evaluation(evaluation_interval=1, evaluation_config={"explore": False}))
    evaluation = config.get_evaluation_config_object()
    assert evaluation.model_config["max_seq_len"] == 33 and evaluation.observation_filter == "MeanStdFilter"


def test_a_copy_and_a_dict_of_the_resolved_config_resolve_to_the_same():
    config, notes = resolved(lstm(num_envs_per_env_runner=6))
    again, notes_again = resolved(config)
    assert notes_again == notes and again.to_dict() == config.to_dict()
    from_dict, notes = resolved(PPOConfig.from_dict(config.to_dict()))  # (a Tune dict of it: values count as given)
    assert notes == [] and from_dict.to_dict() == config.to_dict()


@pytest.mark.parametrize("change, expected", [
    (lambda config: config.env_runners(num_envs_per_env_runner=6), (31, 256, 32)),  # was: ValueError on 32 x 6
    (lambda config: config.env_runners(rollout_fragment_length=16), (16, 136, 17)),  # was: max_seq_len 33, mb 264
    (lambda config: config.rl_module(model_config={**config.model_config, "max_seq_len": 11}), (10, 88, 11)),
], ids=["six_envs", "fragment_16", "max_seq_len_11"])
def test_a_copy_of_a_built_stateful_config_changed_resolves_its_sequences_afresh(change, expected):
    algo = lstm(num_epochs=1).build_algo()
    try:
        copy = algo.config.copy(copy_frozen=False)
    finally:
        algo.stop()
    changed = change(copy).build_algo()
    try:
        config = changed.config
        assert (config.rollout_fragment_length, config.minibatch_size, config.model_config["max_seq_len"]) == expected
    finally:
        changed.stop()


def test_the_cli_keeps_the_users_max_seq_len_and_shows_the_line(capsys):
    from tests.test_cli import json_line, run_cli

    code, out, _ = run_cli(capsys, "train", "PPO", "--env",
                           "relayrl.examples.envs.classes.stateless_cartpole.StatelessCartPole",
                           "--model_config", '{"use_lstm": true, "max_seq_len": 17}', "--num-envs-per-env-runner",
                           "2", "--train-batch-size", "272", "--num-epochs", "1", "--stop-iters", "1", "--json")
    assert code == 0 and "rollout_fragment_length=16, minibatch_size=136" in out.split("summary")[0]
    assert json_line(out)["training_iteration"] == 1


# -- a config copied from a built algorithm, then changed --------------------------------------------------------

@pytest.mark.parametrize("change", [
    lambda config: config.env_runners(horizon=50),  # was: ValueError naming a mode the user never set
    lambda config: config.environment(env_config={"render_mode": "rgb_array"}),  # was: TypeError
    lambda config: config.fault_tolerance(restart_failed_sub_environments=True),  # was: kept silently
    lambda config: config.env_runners(num_env_runners=2),  # was: kept (a thread per core in each runner)
], ids=["horizon", "render_mode", "restart_sub_envs", "remote_runners"])
def test_a_copy_of_a_picked_config_changed_so_it_needs_sync_goes_back_to_sync(change):
    picked, _ = resolved(pong())
    assert picked.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
    config, notes = resolved(change(picked.copy(copy_frozen=False)))
    assert config.gym_env_vectorize_mode == "SYNC" and not config.is_given("gym_env_vectorize_mode")
    assert notes == []


def test_a_copy_of_a_picked_config_left_as_it_was_keeps_it_and_the_users_mode_is_never_changed():
    picked, _ = resolved(pong())
    again, notes = resolved(picked)  # picked afresh, the same
    assert again.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT" and again.to_dict() == picked.to_dict()
    users = pong().env_runners(gym_env_vectorize_mode="VECTOR_ENTRY_POINT", horizon=50)
    assert resolved(users)[0].gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"  # (the build then names the fix)


def test_a_built_algorithms_config_copied_and_given_a_horizon_builds():
    config = pong().env_runners(num_envs_per_env_runner=2, rollout_fragment_length=8).training(
        train_batch_size=16, minibatch_size=16, num_epochs=1)
    algo = config.build_algo()
    try:
        assert algo.config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
        again = algo.config.copy(copy_frozen=False).env_runners(horizon=50).build_algo()
    finally:
        algo.stop()
    try:
        assert again.config.gym_env_vectorize_mode == "SYNC" and len(again.env_runner.sample()) > 0
    finally:
        again.stop()


@pytest.mark.parametrize("config_class, feed_forward", [(PPOConfig, {"lr": 3e-4, "train_batch_size": 2048,
                                                                     "minibatch_size": 64}),
                                                        (DQNConfig, {"lr": 5e-4, "train_batch_size": 64,
                                                                     "training_intensity": 16})])
@pytest.mark.parametrize("new_model", ["replaced", "merged"])
def test_a_copy_of_a_stateful_config_turned_feed_forward_gets_the_feed_forward_defaults(config_class, feed_forward,
                                                                                         new_model):
    """The LSTM's lr, batch, fragments and filter stayed silently (not the user's, but not defaults either)."""
    stateful, _ = resolved(config_class().environment(StatelessCartPole).rl_module(model_config={"use_lstm": True}))
    model = {"use_lstm": False} if new_model == "replaced" else {**stateful.model_config, "use_lstm": False}
    config, notes = resolved(stateful.copy(copy_frozen=False).rl_module(model_config=model))
    assert {name: config._values[name] for name in feed_forward} == feed_forward
    assert config.observation_filter == "NoFilter" and "lstm_cell_size" not in config._values["model_config"]
    assert notes == [] and resolved(config)[0].to_dict() == config.to_dict()


def test_the_users_own_values_stay_when_the_copy_turns_feed_forward():
    stateful, _ = resolved(lstm().training(lr=2e-3))
    config, _ = resolved(stateful.copy(copy_frozen=False).rl_module(model_config={"use_lstm": False}))
    assert config.lr == 2e-3 and config.train_batch_size == 2048


@pytest.mark.parametrize("make_model", [dict, DefaultModelConfig])
def test_a_field_the_user_gives_the_copy_stays_where_it_equals_the_value_resolved(make_model):
    """head_fcnet_hiddens=[64] (PPO's resolved value for an LSTM) given with use_lstm=False was forgotten."""
    stateful, _ = resolved(PPOConfig().environment(StatelessCartPole).rl_module(model_config=make_model(use_lstm=True)))
    assert stateful.model_config["head_fcnet_hiddens"] == [64]
    copy = stateful.copy(copy_frozen=False).rl_module(model_config=make_model(use_lstm=False, head_fcnet_hiddens=[64]))
    config, _ = resolved(copy)
    assert config.model_config["head_fcnet_hiddens"] == [64] and config.model_config["use_lstm"] is False
    assert config.lr == 3e-4 and config.minibatch_size == 64  # the rest is feed-forward again
    copy = stateful.copy(copy_frozen=False).rl_module(model_config=make_model(use_lstm=True, max_seq_len=33))
    config, _ = resolved(copy.env_runners(rollout_fragment_length=16))  # the user's max_seq_len, the resolved one
    assert config.model_config["max_seq_len"] == 33 and config.rollout_fragment_length == 16


# -- a checkpoint restored in a new process --------------------------------------------------------------------

RESTORE = """
import sys
from relayrl import Algorithm
algo = Algorithm.from_checkpoint(sys.argv[1])
result = algo.train()
print("RESTORED", algo.config.gym_env_vectorize_mode, algo.config.observation_filter, algo.resolved_defaults,
      result["training_iteration"])
algo.stop()
"""


def restore_in_a_new_process(path) -> str:
    import os
    import subprocess
    import sys

    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.getcwd()}
    done = subprocess.run([sys.executable, "-c", RESTORE, str(path)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_stateful_pong_run_with_its_picked_vector_env_restores_and_trains_in_a_new_process(tmp_path):
    """A new process has no ALE ids registered (restoring refused 'ALE/Pong-v5 is not registered'), and the
    restored config counts every value as given, so the MeanStdFilter the LSTM got by default (which skips
    images) was refused as if the user had asked for it on images."""
    config = pong().env_runners(num_envs_per_env_runner=2).rl_module(
        model_config={"use_lstm": True, "lstm_cell_size": 16}).training(train_batch_size=128, num_epochs=1)
    algo = config.build_algo()
    try:
        assert algo.config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
        assert algo.config.observation_filter == "MeanStdFilter"
        algo.train()
        algo.save_to_path(tmp_path)
    finally:
        algo.stop()
    assert "RESTORED VECTOR_ENTRY_POINT MeanStdFilter [] 2" in restore_in_a_new_process(tmp_path)


def test_a_users_filter_on_images_is_still_refused_and_a_dict_of_a_run_is_taken_as_the_run_took_it():
    import gymnasium as gym

    from relayrl.connectors.env_to_module.observation_filter import observation_filter_pieces

    images = gym.spaces.Box(0, 255, (84, 84, 4), "uint8")
    with pytest.raises(ValueError, match="observation_filter='NoFilter'"):
        observation_filter_pieces(PPOConfig().env_runners(observation_filter="MeanStdFilter"), images)
    stateful, _ = resolved(lstm())
    from_run = PPOConfig.from_dict(stateful.to_dict())
    assert from_run.is_given("observation_filter") and observation_filter_pieces(from_run, images) == []
    from_run.env_runners(observation_filter="MeanStdFilter")  # chosen again: the user's
    with pytest.raises(ValueError, match="images"):
        observation_filter_pieces(from_run, images)


# -- RLlib's Atari env_config -----------------------------------------------------------------------------

RLLIB_ATARI_ENV_CONFIG = {"frameskip": 1, "full_action_space": False, "repeat_action_probability": 0.0}


def test_rllibs_raw_frameskip_of_1_builds_in_sync_and_skips_4_frames_in_the_picked_vector_env(monkeypatch):
    """RLlib's Atari configs pass frameskip=1 for the raw env under the preprocessing: SYNC raised gym.make's
    'multiple values for keyword argument frameskip', and the picked vector env stepped every frame (its own
    frameskip=1) where SYNC skips 4."""
    import ale_py.vector_env

    from relayrl.env.atari_vector_env import make_atari_vector_env
    from relayrl.env.wrappers.atari_wrappers import make_atari_env

    make_atari_env("ALE/Pong-v5", RLLIB_ATARI_ENV_CONFIG).close()
    config, _ = resolved(pong("ale_py:ALE/Pong-v5", **RLLIB_ATARI_ENV_CONFIG))
    assert config.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT"
    arguments = {}
    original = ale_py.vector_env.AtariVectorEnv

    def recording(*args, **kwargs):
        arguments.update(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(ale_py.vector_env, "AtariVectorEnv", recording)
    make_atari_vector_env("ALE/Pong-v5", RLLIB_ATARI_ENV_CONFIG, 2).close()
    assert "frameskip" not in arguments and arguments["repeat_action_probability"] == 0.0


def test_a_raw_frameskip_other_than_1_is_refused_naming_frame_skip_in_either_mode():
    from relayrl.env.atari_vector_env import make_atari_vector_env
    from relayrl.env.wrappers.atari_wrappers import make_atari_env

    pytest.importorskip("ale_py.vector_env")
    for make in (lambda: make_atari_env("ALE/Pong-v5", {"frameskip": 4}),
                 lambda: make_atari_vector_env("ALE/Pong-v5", {"frameskip": 4}, 2)):
        with pytest.raises(ValueError, match="'frame_skip'"):
            make()
