"""Envs that fail on purpose, to test fault tolerance (crashes, dying processes, hangs).

`FaultyEnv` is a `CountingEnv` that, on one chosen remote EnvRunner, fails once at a chosen step
(or, with `fail_always`, every time one of its envs reaches that step):

env_config keys (plus CountingEnv's):
  failure ("raise"): "raise" raises `FaultyEnvError` (the actor survives, its call fails), "exit"
    calls `os._exit(1)` (the actor's process dies), "hang" sleeps forever (the call times out).
  fail_on_worker (1): the worker_index whose env fails; None: any runner (the first one to get there).
  fail_at_step (5): the env step (counted over the env's lifetime) at which it fails; a pair
    [low, high] draws the step at random from `seed` (default 0).
  marker: a file path. The first env to fail creates it (atomically); while it exists no env fails
    again, so a restarted runner samples normally. Required (unless fail_always): every failure is
    then exactly once.
  fail_always (False): no marker; every env of fail_on_worker fails when its own step count
    (over its lifetime, so a rebuilt env counts from 0 again) reaches fail_at_step. With
    fail_at_step <= the steps of one sample(), each sample() fails; with fail_at_step between one
    and two samples' steps, a restarted runner's first sample() succeeds and its second fails.
  step_sleep_s (0.0): sleep per step, to make a sample() long enough to be interrupted.
"""
import os
import time

import numpy as np

from relayrl.testing.envs import CountingEnv


class FaultyEnvError(RuntimeError):
    """The failure a FaultyEnv raises (so a test can look for its name in the error)."""


class FaultyEnv(CountingEnv):
    def __init__(self, config=None):
        config = config if config is not None else {}
        super().__init__(config)
        self.fail_always = bool(config.get("fail_always", False))
        if "marker" not in config and not self.fail_always:
            raise ValueError("FaultyEnv needs env_config['marker']: a file path that makes it fail only once "
                             "(or fail_always=True)")
        self.marker = None if self.fail_always else str(config["marker"])
        self.failure = config.get("failure", "raise")
        if self.failure not in ("raise", "exit", "hang"):
            raise ValueError(f"FaultyEnv failure must be 'raise', 'exit' or 'hang', got {self.failure!r}")
        self.fail_on_worker = config.get("fail_on_worker", 1)
        at = config.get("fail_at_step", 5)
        if isinstance(at, (list, tuple)):
            at = int(np.random.default_rng(config.get("seed", 0)).integers(at[0], at[1]))
        self.fail_at_step = int(at)
        self.step_sleep_s = float(config.get("step_sleep_s", 0.0))
        self.steps_taken = 0

    def _should_fail(self) -> bool:
        if self.steps_taken != self.fail_at_step:
            return False
        if self.fail_on_worker is not None and self.worker_index != self.fail_on_worker:
            return False
        if self.fail_always:
            return True
        try:  # O_EXCL: exactly one env (over all processes) wins the right to fail
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def step(self, action):
        self.steps_taken += 1
        if self.step_sleep_s:
            time.sleep(self.step_sleep_s)
        if self._should_fail():
            if self.failure == "exit":
                os._exit(1)
            if self.failure == "hang":
                while True:
                    time.sleep(3600)
            raise FaultyEnvError(f"FaultyEnv on worker_index={self.worker_index} failed at step {self.steps_taken}")
        return super().step(action)
