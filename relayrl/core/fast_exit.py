"""Interpreter exit without the garbage collector's repeated passes over torch's objects.

When Python exits it clears every module and runs the cyclic garbage collector over all objects left,
more than once; after `import torch` that is ~175,000 objects and, measured on the 2-core machine,
0.25-0.5 s between a script's last line and the process's end. A process that built an Algorithm
registers `collect_then_freeze` with atexit (once): one collection first (garbage that exists at exit
is still finalized, `__del__` included), then `gc.freeze()`, so the interpreter's own passes skip
the survivors (modules, classes, torch's registries), which the exiting process frees anyway.
What changes: objects that become cyclic garbage only while the interpreter clears modules are not
collected (Python does not promise to run their `__del__` at exit either). `RELAYRL_FREEZE_GC_AT_EXIT=0`
turns it off.
"""
import atexit
import gc
import os

_registered = False


def collect_then_freeze() -> None:
    gc.collect()
    gc.freeze()


def register() -> None:
    global _registered
    if _registered or os.environ.get("RELAYRL_FREEZE_GC_AT_EXIT", "1") == "0":
        return
    atexit.register(collect_then_freeze)
    _registered = True


__all__ = ["collect_then_freeze", "register"]
