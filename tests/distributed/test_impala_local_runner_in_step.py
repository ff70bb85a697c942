"""IMPALA / APPO with remote EnvRunners broadcast weights (and merged MeanStdFilter statistics) to the remote runners
only; the driver's local EnvRunner, which compute_single_action, evaluation syncs and checkpoints' `env_runner`
component read, must still hold the trained weights and filter statistics."""
import numpy as np
import pytest

from relayrl import Algorithm, APPOConfig, IMPALAConfig


def _weights_differ(a, b) -> float:
    return max(float(np.max(np.abs(np.asarray(a[k]) - np.asarray(b[k])))) for k in a)


@pytest.mark.slow
@pytest.mark.parametrize("config_class", [IMPALAConfig, APPOConfig])
def test_local_env_runner_follows_the_learner_and_checkpoints_hold_the_trained_policy(config_class, tmp_path):
    algo = (config_class().environment("CartPole-v1")
            .env_runners(num_env_runners=1, num_envs_per_env_runner=2, rollout_fragment_length=25,
                         observation_filter="MeanStdFilter")
            .training(train_batch_size_per_learner=100)
            .reporting(min_time_s_per_iteration=0, min_sample_timesteps_per_iteration=400)
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    try:
        initial = algo.env_runner.module.get_state(inference_only=True)
        for _ in range(2):
            algo.train()
        algo._learner_thread.stop()  # no update between the two reads below (the thread trains on between calls)
        local = algo.env_runner.module.get_state(inference_only=True)
        learner = algo.learner_group.get_weights(inference_only=True)["default_policy"]
        assert _weights_differ(learner, initial) > 0  # it trained
        assert _weights_differ(learner, local) == 0, "the local EnvRunner kept its initial weights"
        filter_state = algo.env_runner.get_state()["env_to_module_connector"]
        path = algo.save_to_path(str(tmp_path / "ckpt"))
    finally:
        algo.stop()
    assert filter_state["MeanStdFilter"]["stat"]["count"] >= 400  # the remote runners' merged statistics
    restored = Algorithm.from_checkpoint(path, config_overrides={"num_env_runners": 0})
    try:
        assert _weights_differ(learner, restored.env_runner.module.get_state(inference_only=True)) == 0
    finally:
        restored.stop()
