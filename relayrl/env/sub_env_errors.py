"""An error raised while making a sub-env, told with the env, the sub-env and its env_config.

A user's env class that rejects its env_config raises in `__init__`. The error reaches the caller as it is
(its own type and message), with a note (`note_env_creation`) naming the env, the sub-env and the env_config.

ASYNC: gymnasium's AsyncVectorEnv makes sub-env 0 in the runner's process (for its spaces) and every sub-env
again in its own worker process, outside the worker's error handling: an `__init__` that raises there (only for
some `vector_index`, say) kills the worker, and the runner only sees the pipe break (ConnectionResetError).
`raise_the_sub_env_error` then makes the other sub-envs in the runner's process, one at a time, so the env's own
error is raised; only if none fails here does the broken pipe reach the caller, with a note saying where to look.
"""
from typing import Callable, Sequence


def note_env_creation(error: BaseException, env_label: str, where: str, env_config) -> None:
    error.add_note(f"(raised making the env {env_label} for {where} with env_config {dict(env_config)!r})")


def raise_the_sub_env_error(make_fns: Sequence[Callable], broken_pipe: BaseException):
    """Make each sub-env here (closing it again) so the first that raises raises its own error; else re-raise
    `broken_pipe`, the AsyncVectorEnv's failure to start its workers."""
    for make in make_fns:
        make().close()
    broken_pipe.add_note("(an AsyncVectorEnv worker process died while making its sub-env; its traceback is "
                         "printed above. gym_env_vectorize_mode='SYNC' raises the env's error here instead)")
    raise broken_pipe
