"""Which env options each kind of runner honours, and the build-time error where one cannot.

Every runner steps its envs through an EnvStepper (env_stepper.py), so the stepper's options are honoured
alike by the single-agent and multi-agent EnvRunners and by both Policy API runners: `clip_rewards`,
`num_envs_per_env_runner`, `restart_failed_sub_environments`, `horizon` / `soft_horizon` /
`no_done_at_end`, `disable_env_checking` (the env checks). What a multi-agent runner cannot do, because
its MultiAgentVectorEnv steps agent dicts in this process, is listed below and raises a ValueError when the
runners are built (EnvRunnerGroup, PolicyWorkerSet), before any env or actor exists, naming the option
and what to set instead. (The single-agent Policy runners take gym_env_vectorize_mode='VECTOR_ENTRY_POINT'
as SYNC with a warning, as any runner does for an env without a vector entry point: env_stepper.py.)

The Policy API's runners (relayrl/policy/rollout/) are built for its policies, so the runner options of the
RLModule EnvRunners that replace or extend the runner are refused there (POLICY_API_REFUSALS, checked when the
PolicyWorkerSet is built). (observation_filter="MeanStdFilter" is honoured: relayrl/policy/rollout/
observation_filters.py keeps RLlib's old-stack filters per policy.)
"""
from dataclasses import dataclass
from typing import Callable

from relayrl.env.vector_env import vectorize_mode_name


@dataclass(frozen=True)
class Refusal:
    option: str
    is_set: Callable  # config -> bool
    why: str
    fix: str


MULTI_AGENT_REFUSALS = (
    Refusal("gym_env_vectorize_mode", lambda c: vectorize_mode_name(c.gym_env_vectorize_mode) != "SYNC",
            "multi-agent envs are stepped in the runner's process (one MultiAgentVectorEnv of agent dicts)",
            "gym_env_vectorize_mode='SYNC' (and num_env_runners > 0 for parallel sampling)"),
    Refusal("record_video_every_n_episodes", lambda c: bool(c.record_video_every_n_episodes) and not c.in_evaluation,
            "videos are recorded for single-agent envs only", "record_video_every_n_episodes=None"),
)

POLICY_API_REFUSALS = (
    Refusal("env_runner_cls", lambda c: getattr(c, "env_runner_cls", None) is not None,
            "the Policy API samples with its own runners, built for its policies (relayrl/policy/rollout/)",
            "env_runner_cls=None, or use an RLModule algorithm (PPO, IMPALA, ...) with your EnvRunner class"),
    Refusal("output", lambda c: getattr(c, "output", None) is not None,
            "the RLModule EnvRunners record episodes (relayrl/offline/writer.py); the Policy API's runners do not",
            "output=None, or record with an RLModule algorithm (PPO, DQN, ...: docs/offline.md)"),
)


def check_runner_options(config, *, multi_agent: bool) -> None:
    """Raise a ValueError for the first option set in `config` that this kind of runner cannot honour."""
    if not multi_agent:
        return
    for refusal in MULTI_AGENT_REFUSALS:
        if refusal.is_set(config):
            raise ValueError(f"{refusal.option}={getattr(config, refusal.option)!r} is not available for multi-agent "
                             f"envs: {refusal.why}. Set {refusal.fix}.")



def check_policy_runner_options(config) -> None:
    """Raise a ValueError for the first option set in `config` that the Policy API's runners cannot honour."""
    for refusal in POLICY_API_REFUSALS:
        if refusal.is_set(config):
            raise ValueError(f"{refusal.option}={getattr(config, refusal.option)!r} is not available with the Policy "
                             f"API: {refusal.why}. Set {refusal.fix}.")
