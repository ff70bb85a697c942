"""Run a child Python process; if it outlives its timeout, have it print every thread's stack before it is killed.

A ported script once hung in a CI run with nothing printed (killed after 400 s, no output to read). With
PYTHONFAULTHANDLER set, SIGABRT makes the child's faulthandler write all threads' stacks to stderr, so the failure
says where it waited."""
import signal
import subprocess
from types import SimpleNamespace


def run_reporting_hangs(cmd, *, timeout: float, env: dict, **kwargs) -> SimpleNamespace:
    """subprocess.run(cmd, capture_output=True, text=True) with stack dumps on a hang: returns returncode, stdout,
    stderr; raises AssertionError naming the timeout, with the child's output and stacks, if it did not end."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env, "PYTHONFAULTHANDLER": "1"}, **kwargs)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)  # faulthandler dumps every thread's stack, then the process ends
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        raise AssertionError(f"{' '.join(map(str, cmd))} still ran after {timeout} s; its output:\n"
                             f"{out[-3000:]}\n--- stderr (thread stacks at the end) ---\n{err[-8000:]}") from None
    return SimpleNamespace(returncode=proc.returncode, stdout=out, stderr=err)


__all__ = ["run_reporting_hangs"]
