"""core/fast_exit.py: a process that built an Algorithm freezes the GC at exit, after finalizing the garbage
that exists then; RELAYRL_FREEZE_GC_AT_EXIT=0 turns it off."""
import os
import subprocess
import sys

CODE = """
import atexit, gc
from relayrl.algorithms.ppo import PPOConfig

def last():  # registered before the Algorithm is built, so it runs after fast_exit's handler (LIFO)
    print("frozen", gc.get_freeze_count() > 100000, flush=True)

atexit.register(last)
PPOConfig().environment("CartPole-v1").env_runners(num_env_runners=0).build()

class Cycle:
    def __del__(self):
        print("finalized", flush=True)

a = Cycle(); a.me = a  # garbage in a cycle at exit
del a
gc.disable()  # no collection before exit: only fast_exit's (or the interpreter's) finalizes it
"""


def _run(flag: str) -> str:
    env = {**os.environ, "RELAYRL_FREEZE_GC_AT_EXIT": flag}
    return subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, check=True).stdout


def test_garbage_at_exit_is_finalized_then_the_gc_frozen():
    out = _run("1").split()
    assert out[:3] == ["finalized", "frozen", "True"]


def test_off_switch():
    out = _run("0")
    assert "frozen False" in out and "finalized" in out
