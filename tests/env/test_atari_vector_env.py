"""`ALE/...` ids with gym_env_vectorize_mode="VECTOR_ENTRY_POINT": ale-py's AtariVectorEnv, with relayrl's Atari
env_config keys and the same observation layout as the SYNC path (channels last, newest screen last)."""
import logging

import numpy as np
import pytest
import torch

pytest.importorskip("ale_py.vector_env")  # the `atari` extra; the test extra installs it

from relayrl import PPOConfig  # noqa: E402
from relayrl.env.atari_vector_env import game_of  # noqa: E402
from relayrl.env.env_runner import EnvRunner  # noqa: E402
from relayrl.env.native_vector_env import make_native_vector_env  # noqa: E402


def runner(env_config=None, mode="vector_entry_point", num_envs=2):
    torch.manual_seed(0)
    config = (PPOConfig().environment("ALE/Pong-v5", env_config=env_config or {})
              .env_runners(num_envs_per_env_runner=num_envs, gym_env_vectorize_mode=mode)
              .debugging(seed=0))
    return EnvRunner(config=config)


def test_ale_ids_step_in_ale_pys_vector_env_with_the_sync_paths_observations():
    native, sync = runner(), runner(mode="SYNC")
    try:
        assert type(native.env.unwrapped).__name__ == "AtariVectorEnv"
        assert native.env.single_observation_space == sync.env.single_observation_space  # (84, 84, 4) uint8
        episodes = native.sample(num_timesteps=120)
        assert sum(len(e) for e in episodes) == 120
        for episode in episodes:
            obs = episode.get_observations()
            assert obs.shape[1:] == (84, 84, 4) and obs.dtype == np.uint8
            # Each step pushes one new screen in last: the older three are the previous step's newest three.
            for before, after in zip(obs[:-1], obs[1:]):
                np.testing.assert_array_equal(after[..., :3], before[..., 1:])
            assert episode.get_rewards().dtype.kind in "fi"
    finally:
        native.stop()
        sync.stop()


def test_env_config_keys_map_onto_ale_pys_arguments():
    small = runner({"dim": 64, "framestack": 2, "fire_reset": False, "noop_max": 0, "frame_skip": 2})
    try:
        assert small.env.single_observation_space.shape == (64, 64, 2)
        episode = small.sample(num_timesteps=4)[0]
        assert episode.get_observations().shape[1:] == (64, 64, 2)
    finally:
        small.stop()


def test_raw_frames_fall_back_to_sync_with_a_warning(caplog):
    config = (PPOConfig().environment("ALE/Pong-v5", env_config={"atari_preprocessing": False})
              .env_runners(gym_env_vectorize_mode="vector_entry_point"))
    with caplog.at_level(logging.WARNING, logger="relayrl"):
        assert make_native_vector_env(config, num_envs=2) is None  # the runner then builds SYNC envs
    assert "atari_preprocessing=False" in caplog.text and "using SYNC" in caplog.text


def test_an_unknown_env_config_key_names_env_config():
    with pytest.raises(TypeError, match="env_config=.*'SYNC'"):
        runner({"no_such_option": 1})


@pytest.mark.parametrize("env_id, game", [("ALE/Pong-v5", "pong"), ("ALE/SpaceInvaders-v5", "space_invaders"),
                                          ("ALE/MontezumaRevenge-v5", "montezuma_revenge")])
def test_game_names(env_id, game):
    assert game_of(env_id) == game


def test_the_vector_env_plays_the_same_games_as_sync():
    """The fast path must not change what is learned: with the two random parts off (no-op starts, sticky actions)
    and no FIRE at reset, ale-py's vector env and SYNC's gymnasium wrappers give the same screens (frame skip,
    max-pooling, grayscale, resize), bit for bit, and the same rewards. They differ only in the stack's padding at
    reset: SYNC repeats the first screen (FrameStackObservation), ale-py pads with zeros (docs/atari.md)."""
    from relayrl.env.atari_vector_env import make_atari_vector_env
    from relayrl.env.wrappers.atari_wrappers import make_atari_env, register_atari_envs

    register_atari_envs()
    config = {"repeat_action_probability": 0.0, "noop_max": 0, "fire_reset": False}
    sync, vector = make_atari_env("ALE/Pong-v5", dict(config)), make_atari_vector_env("ALE/Pong-v5", dict(config), 1)
    try:
        sync_obs, _ = sync.reset(seed=3)
        vector_obs, _ = vector.reset(seed=3)
        np.testing.assert_array_equal(vector_obs[0][..., -1], sync_obs[..., -1])
        assert all(np.array_equal(sync_obs[..., k], sync_obs[..., -1]) for k in range(3))  # padding: the first screen
        assert not vector_obs[0][..., :3].any()  # padding: zeros
        actions = np.random.default_rng(0).integers(6, size=300)
        sync_rewards, vector_rewards = [], []
        for t, action in enumerate(actions):
            sync_obs, sync_reward, *_ = sync.step(int(action))
            vector_obs, vector_reward, *_ = vector.step(np.array([action]))
            newest = slice(max(0, 3 - t - 1), None)  # the screens after the reset's padding
            np.testing.assert_array_equal(vector_obs[0][..., newest], sync_obs[..., newest])
            sync_rewards.append(sync_reward)
            vector_rewards.append(float(vector_reward[0]))
        assert sync_rewards == vector_rewards and any(sync_rewards)  # a point was scored: the games really ran
    finally:
        sync.close()
        vector.close()


def test_on_the_same_games_the_fast_path_learns_exactly_what_sync_learns(monkeypatch):
    """docs/atari.md#what-the-fast-path-learns: with the games made the same on both paths (no no-op starts, sticky
    actions or FIRE at reset, and SYNC's stack padded with zeros as ale-py pads it) and one Learner thread, PPO on
    ale-py's vector env and on SYNC's wrappers samples the same actions and ends with the same weights, bit for bit:
    the runner's stepping, recording and the Learner's pipeline do not depend on the vector mode."""
    import gymnasium as gym

    class ZeroPadded(gym.wrappers.FrameStackObservation):
        def __init__(self, env, stack_size, **_):
            super().__init__(env, stack_size, padding_type="zero")

    monkeypatch.setattr(gym.wrappers, "FrameStackObservation", ZeroPadded)

    def train(mode):
        config = (PPOConfig().environment("ALE/Pong-v5", clip_rewards=True, env_config={
                      "repeat_action_probability": 0.0, "noop_max": 0, "fire_reset": False})
                  .env_runners(num_envs_per_env_runner=2, rollout_fragment_length=32, gym_env_vectorize_mode=mode)
                  .training(train_batch_size=64, minibatch_size=32, num_epochs=2)
                  .learners(num_cpus_per_learner=1)
                  .debugging(seed=0, logger_config={"type": "none"}))
        algo = config.build_algo()
        try:
            stats = [algo.train()["learners"]["default_policy"] for _ in range(3)]
            return stats, {k: v.clone() for k, v in algo.get_module().state_dict().items()}
        finally:
            algo.stop()

    sync_stats, sync_weights = train("SYNC")
    fast_stats, fast_weights = train("VECTOR_ENTRY_POINT")
    for sync, fast in zip(sync_stats, fast_stats):
        for key in ("policy_loss", "vf_loss", "entropy"):
            assert float(fast[key]) == float(sync[key]), key
    assert sync_weights.keys() == fast_weights.keys()
    for name, tensor in sync_weights.items():
        torch.testing.assert_close(fast_weights[name], tensor, rtol=0, atol=0, msg=name)
