"""tests/stack_on_hang.py: a child that hangs is stopped with its threads' stacks in the failure."""
import os
import sys

import pytest

from tests.stack_on_hang import run_reporting_hangs

HANGS = "import time\ndef wait_here():\n    time.sleep(60)\nprint('started', flush=True)\nwait_here()\n"


def test_a_hanging_child_is_stopped_and_its_stack_is_in_the_failure():
    with pytest.raises(AssertionError) as failure:
        run_reporting_hangs([sys.executable, "-c", HANGS], timeout=2, env=dict(os.environ))
    text = str(failure.value)
    assert "still ran after 2 s" in text and "started" in text
    assert "wait_here" in text  # the stack faulthandler wrote


def test_a_child_that_ends_gives_its_output():
    proc = run_reporting_hangs([sys.executable, "-c", "print('hi')"], timeout=60, env=dict(os.environ))
    assert (proc.returncode, proc.stdout) == (0, "hi\n")
