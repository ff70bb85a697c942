"""`SubEnvFailuresError`: what `restart_failed_sub_environments` raises when rebuilding the envs does not help.

The recovery itself (rebuild the envs, drop the ongoing episodes, go on) is the EnvStepper's (env_stepper.py),
the same for every runner.
"""


class SubEnvFailuresError(RuntimeError):
    """Sub-environments failed more than num_consecutive_env_runner_failures_tolerance times in a row
    (with restart_failed_sub_environments=True)."""
