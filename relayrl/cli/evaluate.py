"""`relayrl evaluate CHECKPOINT [--episodes N] [--video-dir DIR] [--render] [--explore] [--trust MODULE ...]`.

CHECKPOINT is a checkpoint folder or a `relayrl train` run folder (its newest checkpoint_* is used). Loads a checkpoint (Algorithm.from_checkpoint: the trust rules of docs/checkpoints.md apply; `--trust`
names modules whose classes and functions the checkpoint may use), runs its policy on one env built
from the stored config (greedy unless --explore), prints each episode's return and the mean, and with
--video-dir writes one mp4 per episode (imageio with its ffmpeg plugin: pip install "relayrl[video]").
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import tempfile
from typing import List, Optional, Sequence

from relayrl.cli.flags import UserError

__all__ = ["run_evaluate", "evaluate_checkpoint"]

PROG = "relayrl evaluate"
IN_PROCESS = {"num_env_runners": 0, "evaluation_num_env_runners": 0, "num_learners": 0}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Run a checkpoint's policy; print returns, record videos.")
    parser.add_argument("checkpoint", metavar="CHECKPOINT",
                        help="a checkpoint folder (algo.save()), or a relayrl train run folder (its newest checkpoint)")
    parser.add_argument("--episodes", type=int, default=5, help="episodes to run (default 5)")
    parser.add_argument("--video-dir", default=None, help="write an mp4 of each episode into this folder")
    parser.add_argument("--render", action="store_true", help="render to a window (the env's render_mode='human')")
    parser.add_argument("--explore", action="store_true", help="sample actions instead of the greedy ones")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode (then seed + 1, ...)")
    parser.add_argument("--trust", nargs="*", default=[], metavar="MODULE",
                        help="modules the checkpoint may name classes and functions from (from_checkpoint trusted=)")
    return parser


def run_evaluate(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.episodes < 1:
        raise UserError(f"--episodes must be >= 1, got {args.episodes}", prog=PROG)
    checkpoint = find_checkpoint(args.checkpoint)
    print(f"checkpoint: {checkpoint}")
    from relayrl.checkpoints.errors import CheckpointError

    try:
        returns = evaluate_checkpoint(checkpoint, episodes=args.episodes, video_dir=args.video_dir,
                                      render=args.render, explore=args.explore, seed=args.seed, trusted=args.trust)
    except CheckpointError as error:  # a tampered, corrupt or foreign checkpoint: its one-line reason, no traceback
        raise UserError(_for_the_command_line(error), prog=PROG) from None
    for i, ret in enumerate(returns):
        print(f"episode {i}: return {ret:.2f}")
    print(f"mean return over {len(returns)} episodes: {sum(returns) / len(returns):.2f}")
    return 0


def _for_the_command_line(error) -> str:
    """A name the checkpoint may not use is trusted from Python with `trusted=`; here with --trust."""
    from relayrl.checkpoints.untrusted_names import UntrustedNames

    if isinstance(error, UntrustedNames):  # every name the checkpoint holds that is not trusted: their modules
        return error.for_the_command_line()
    message = str(error)
    if "trusted=" not in message:
        return message
    return (f"{message} From the command line: --trust MODULE (importable here, e.g. through PYTHONPATH); for a class "
            "defined in the script that saved the checkpoint (`__main__`), --trust that script's module name "
            "(train.py: --trust train).")


def find_checkpoint(path: str, prog: str = PROG) -> str:
    """`path` if it is a checkpoint, else the newest `checkpoint_*` inside it (a `relayrl train` run folder)."""
    from relayrl.checkpoints.format import MANIFEST

    if not os.path.isdir(path):
        raise UserError(f"no checkpoint folder at {path}", prog=prog)
    if os.path.isfile(os.path.join(path, MANIFEST)):
        return path
    found = sorted(name for name in os.listdir(path)
                   if name.startswith("checkpoint_") and os.path.isfile(os.path.join(path, name, MANIFEST)))
    if not found:
        raise UserError(f"{path} is neither a checkpoint (no {MANIFEST}) nor a run folder with checkpoint_* "
                        "folders: train with `relayrl train ... --checkpoint-freq N` or save with algo.save()",
                        prog=prog)
    return os.path.join(path, found[-1])


class _FreshEpisodesNoteFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        from relayrl.checkpoints.env_state import FRESH_EPISODES_NOTE

        return record.msg is not FRESH_EPISODES_NOTE


@contextlib.contextmanager
def _without_the_fresh_episodes_note():
    """The restored runner's note that training resumes with fresh episodes (and how to keep a curriculum's level)
    concerns training; `relayrl evaluate` steps an env of its own, so the note would only confuse."""
    relayrl_logger, note_filter = logging.getLogger("relayrl"), _FreshEpisodesNoteFilter()
    relayrl_logger.addFilter(note_filter)
    try:
        yield
    finally:
        relayrl_logger.removeFilter(note_filter)


def evaluate_checkpoint(checkpoint: str, *, episodes: int = 5, video_dir: Optional[str] = None, render: bool = False,
                        explore: bool = False, seed: int = 0, trusted=()) -> List[float]:
    """The returns of `episodes` episodes of the checkpoint's policy (and their videos in `video_dir`)."""
    from relayrl import Algorithm
    from relayrl.env.env_context import EnvContext
    from relayrl.env.registry import make_env_creator

    writer = _VideoWriter(video_dir) if video_dir else None  # first: an unwritable folder fails before any work
    # The policy runs in this process: no remote EnvRunners or Learners (a run trained with them started Ray here).
    with _without_the_fresh_episodes_note():  # the episodes below run on their own env, not the runner's
        algo = Algorithm.from_checkpoint(checkpoint, trusted=list(trusted) or None, config_overrides=IN_PROCESS)
    try:
        if algo.learner_group is not None:  # act with the Learner's weights: the trained ones (a remote IMPALA
            algo.sync_weights()             # run's checkpoint before 2026-12-05 held an untrained local runner)
        env_config = dict(algo.config.env_config)
        if video_dir or render:
            env_config["render_mode"] = "human" if render and not video_dir else "rgb_array"
        env = make_env_creator(algo.config.env)(EnvContext(env_config, 0))
        returns = []
        for episode in range(episodes):
            obs, _ = env.reset(seed=seed + episode)
            frames = [env.render()] if writer else []
            total, done, state = 0.0, False, None  # state: a recurrent module's memory, carried step to step
            while not done:
                if algo.config.is_multi_agent:
                    obs, reward, done = _multi_agent_step(algo, env, obs, explore)
                    total += reward
                else:
                    action, state, _ = algo.compute_single_action(obs, state, explore=explore, full_fetch=True)
                    state = state if _holds_state(state) else None
                    obs, reward, terminated, truncated, _ = env.step(action)
                    total += float(reward)
                    done = terminated or truncated
                if writer:
                    frames.append(env.render())
            returns.append(total)
            if writer:
                writer.write(frames, f"episode_{episode:03d}_return_{total:.0f}.mp4")
        env.close()
        return returns
    finally:
        algo.stop()


def _multi_agent_step(algo, env, obs: dict, explore: bool):
    """One step of a MultiAgentEnv: each agent that observed acts with the module policy_mapping_fn maps it to;
    the return counts every agent's reward (as an episode's return in training results)."""
    from relayrl.connectors.common.agent_to_module_mapping import module_of_agent_before_sampling

    mapping = algo.config.agent_to_module_mapping_fn
    actions = {agent: algo.compute_single_action(agent_obs, policy_id=module_of_agent_before_sampling(mapping, agent),
                                                 explore=explore)
               for agent, agent_obs in obs.items()}
    obs, rewards, terminated, truncated, _ = env.step(actions)
    done = bool(terminated.get("__all__")) or bool(truncated.get("__all__"))
    return obs, float(sum(rewards.values())), done


def _holds_state(state) -> bool:
    """A recurrent module's state out (a dict of arrays); a stateless module gives an empty one."""
    return state is not None and len(state) > 0


class _VideoWriter:
    """mp4 files through imageio's ffmpeg plugin (imported only when videos are asked for)."""

    def __init__(self, folder: str):
        try:
            import imageio  # noqa: F401
            import imageio_ffmpeg  # noqa: F401
        except ImportError:
            raise UserError('videos need imageio and its ffmpeg plugin: pip install "relayrl[video]"',
                            prog=PROG) from None
        try:
            os.makedirs(folder, exist_ok=True)
            with tempfile.TemporaryFile(dir=folder):  # can a file be written there?
                pass
        except OSError as error:
            raise UserError(f"--video-dir {folder}: cannot write videos there ({error.strerror or error})",
                            prog=PROG) from None
        self.folder = folder

    def write(self, frames, name: str, fps: int = 30) -> str:
        from relayrl.env.wrappers.video_files import write_video

        return write_video(frames, os.path.join(self.folder, name), fps=fps)
