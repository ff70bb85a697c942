"""`relayrl evaluate CHECKPOINT`: prints each return and the mean, writes one mp4 per episode."""
import os

import gymnasium as gym
import numpy as np

from relayrl import PPOConfig
from relayrl.cli import main


def test_evaluate_prints_returns_and_writes_videos(tmp_path, capsys):
    algo = (PPOConfig().environment("CartPole-v1").training(train_batch_size=256, minibatch_size=64, num_epochs=1)
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    algo.train()
    path = algo.save(str(tmp_path / "ckpt")).checkpoint.path
    algo.stop()
    videos = tmp_path / "videos"
    code = main(["evaluate", path, "--episodes", "2", "--video-dir", str(videos)])
    out = capsys.readouterr().out
    assert code == 0 and "episode 1: return" in out and "mean return over 2 episodes" in out
    files = sorted(os.listdir(videos))
    assert len(files) == 2 and all(f.endswith(".mp4") and os.path.getsize(videos / f) > 0 for f in files)


def test_evaluate_names_a_missing_checkpoint(tmp_path, capsys):
    assert main(["evaluate", str(tmp_path / "nothing")]) == 2
    assert "no checkpoint folder" in capsys.readouterr().err


def test_train_saves_checkpoints_into_its_run_folder_and_evaluate_takes_that_folder(tmp_path, capsys):
    run_dir = tmp_path / "run"
    code = main(["train", "PPO", "--env", "CartPole-v1", "--stop-iters", "3", "--checkpoint-freq", "2",
                 "--train-batch-size", "256", "--minibatch-size", "64", "--num-epochs", "1",
                 "--logger-config", f'{{"type": "json", "logdir": "{run_dir}"}}'])
    err = capsys.readouterr().err
    assert code == 0
    assert sorted(p.name for p in run_dir.iterdir() if p.name.startswith("checkpoint_")) == \
        ["checkpoint_000002", "checkpoint_000003"]  # every 2 iterations, and at the end
    assert f"run folder: {run_dir}" in err and "last checkpoint" in err
    assert main(["evaluate", str(run_dir), "--episodes", "1"]) == 0
    out = capsys.readouterr().out
    assert f"checkpoint: {run_dir / 'checkpoint_000003'}" in out and "mean return over 1 episodes" in out


def test_evaluate_names_a_folder_without_checkpoints(tmp_path, capsys):
    assert main(["evaluate", str(tmp_path)]) == 2
    assert "neither a checkpoint" in capsys.readouterr().err


class _RewardsAction1(gym.Env):
    """10 steps; reward 1 for action 1: the return says which action the policy takes."""
    observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return self.observation_space.low * 0, {}

    def step(self, action):
        self.t += 1
        return self.observation_space.low * 0, float(action == 1), False, self.t >= 10, {}


def test_evaluate_acts_with_the_checkpoints_learner_weights_not_a_stale_runners(tmp_path):
    """A checkpoint whose EnvRunner holds other weights than its Learner (a remote IMPALA run's, written before the
    local runner was kept current): the evaluation acts with the Learner's, the trained ones."""
    from relayrl.cli.evaluate import evaluate_checkpoint

    algo = (PPOConfig().environment(_RewardsAction1).rl_module(model_config={"fcnet_hiddens": [4]})
            .env_runners(num_envs_per_env_runner=1).build_algo())
    try:
        weights = algo.get_weights()["default_policy"]
        prefers = {}
        for action in (0, 1):
            w = {name: np.zeros_like(value) for name, value in weights.items()}
            bias, = [name for name, v in w.items() if name.startswith("pi") and name.endswith("bias") and v.shape == (2,)]
            w[bias][action] = 5.0
            prefers[action] = w
        algo.env_runner.module.set_state(prefers[0])  # the runner: action 0 (return 0)
        algo.learner_group.set_weights({"default_policy": prefers[1]})  # the Learner: action 1 (return 10)
        path = algo.save_to_path(str(tmp_path / "ckpt"))
    finally:
        algo.stop()
    assert evaluate_checkpoint(path, episodes=2, trusted=[_RewardsAction1]) == [10.0, 10.0]


def test_evaluate_does_not_print_trainings_fresh_episodes_note(tmp_path, capsys, caplog):
    """A checkpoint whose envs' state was not captured (ASYNC sub-envs) notes on restore that training resumes with
    fresh episodes; relayrl evaluate steps an env of its own, so it leaves that note out."""
    from relayrl import Algorithm

    algo = (PPOConfig().environment("CartPole-v1")
            .env_runners(num_envs_per_env_runner=2, gym_env_vectorize_mode="ASYNC")
            .training(train_batch_size=128, minibatch_size=64, num_epochs=1)
            .debugging(seed=0, logger_config={"type": "none"}).build_algo())
    algo.train()
    path = algo.save(str(tmp_path / "ckpt")).checkpoint.path
    algo.stop()
    caplog.set_level("WARNING", logger="relayrl")
    assert main(["evaluate", path, "--episodes", "1"]) == 0
    assert "mean return over 1 episodes" in capsys.readouterr().out
    assert "Resuming with fresh episodes" not in caplog.text
    Algorithm.from_checkpoint(path).stop()  # a training restore still says it
    assert "Resuming with fresh episodes" in caplog.text
