"""Checkpoints: train PPO, save, keep training; rebuild the algorithm from the checkpoint alone and
check it continues bit-identically. Also exports the policy as TorchScript.

PPO trains until a stop criterion holds (`--stop-iters`, `--stop-reward`, `--stop-timesteps`: any one
stops), saves a checkpoint, then the original and the copy restored from the checkpoint each train as
many iterations again.

    python examples/checkpoint_restore.py --stop-iters 3
"""
import os
import shutil
import tempfile

import torch

from relayrl import Algorithm, PPOConfig
from relayrl.connectors import MeanStdFilter
from relayrl.testing.example_script import add_rllib_example_script_args, should_stop


def make_filter(env=None, spaces=None, device=None):
    # A module-level function: stored in the checkpoint by name (a lambda would have to be passed again).
    # Loading never calls a function a checkpoint names unless you trust it: from_checkpoint(trusted=[make_filter]).
    return MeanStdFilter()


def main(argv=None):
    parser = add_rllib_example_script_args(default_reward=450.0, default_iters=3, default_timesteps=100_000)
    args = parser.parse_args(argv)
    stop = {"env_runners/episode_return_mean": args.stop_reward, "training_iteration": args.stop_iters,
            "num_env_steps_sampled_lifetime": args.stop_timesteps}

    config = (
        PPOConfig()
        .environment("CartPole-v1")
        # SYNC: gymnasium's env objects, whose state the checkpoint holds, so the ongoing episodes go on bit for bit.
        # Left unset, CartPole samples with its own (faster) vector env, and a restored run starts new episodes.
        .env_runners(num_envs_per_env_runner=4, env_to_module_connector=make_filter, gym_env_vectorize_mode="SYNC")
        .training(train_batch_size=512, minibatch_size=128, num_epochs=4)
        .checkpointing(export_native_model_files=True)
        .debugging(seed=args.seed, logger_config={"type": "none"})
    )
    algo = config.build_algo()
    while not should_stop(stop, algo.train()):
        pass
    iterations = algo.iteration
    workdir = tempfile.mkdtemp(prefix="relayrl_example_")
    save_result = algo.save(os.path.join(workdir, "checkpoint"))
    print("checkpoint:", save_result.checkpoint.path)

    # Keep training the original ...
    returns = [algo.train()["env_runners"]["episode_return_mean"] for _ in range(iterations)]
    # ... and a copy rebuilt from the checkpoint alone: same config, weights, optimizer, RNGs, envs.
    restored = Algorithm.from_checkpoint(save_result.checkpoint.path, trusted=[make_filter])
    restored_returns = [restored.train()["env_runners"]["episode_return_mean"] for _ in range(iterations)]
    print("returns after the checkpoint:", returns)
    print("returns after restoring     :", restored_returns)
    weights, restored_weights = algo.get_module().state_dict(), restored.get_module().state_dict()
    identical = returns == restored_returns and all(torch.equal(weights[k], restored_weights[k]) for k in weights)
    print("bit-identical continuation:", identical)

    # The policy as TorchScript: loads with plain `torch.jit.load`, no relayrl needed.
    model_file = algo.export_policy_model(os.path.join(workdir, "export"))
    print("TorchScript policy:", model_file)
    algo.stop()
    restored.stop()
    shutil.rmtree(workdir)
    if not identical:
        raise SystemExit("the restored algorithm did not continue identically")


if __name__ == "__main__":
    main()
