"""RLlib's own example scripts, ported by replacing `ray.rllib` with `relayrl` and nothing else, run on relayrl as
tests/porting/rllib_examples_table.py expects: each that runs still runs, each that fails or is refused fails with
its known reason, so a regression (or a newly running script whose row was not updated) fails the test.

The scripts are RLlib's code: they are read at test time from the installed ray wheel (`ray/rllib/examples/`), whose
version is pinned in the test extra and checked here. Each runs in its own process (and Ray instance) with
`ray.rllib` unimportable (relayrl/testing/no_ray_rllib.py) and RLlib's example flags `--num-env-runners=0
--stop-iters=2 --no-tune` (relayrl/testing/rllib_examples.py: some run under Tune), two at a time; the offline ones
with the data they read (relayrl/testing/rllib_example_data.py, made once per session).
"""
import os
import re

import pytest
from rllib_examples_table import EXPECTED, FAILS, REFUSED, RUNS, DOCS, counts, docs_section, replace_section

from relayrl.testing.rllib_examples import RAY_VERSION, example_scripts, ray_version, run_script, run_scripts

SLOW_SCRIPTS_ENV = "RELAYRL_PORTING_SLOW_SCRIPTS"
# Two quick scripts in the default run (a custom algorithm; a MultiAgentObservationPreprocessor): the full list is slow.
QUICK = ("algorithms/vpg_custom_algorithm.py", "connectors/multi_agent_observation_preprocessor.py")


def test_the_scripts_come_from_the_pinned_ray_wheel():
    assert ray_version() == RAY_VERSION, (
        f"ray {ray_version()} is installed, but tests/porting/rllib_examples_table.py describes ray {RAY_VERSION}'s "
        "example scripts: install the pinned version (pip install -c constraints.txt -e '.[test]') or re-measure "
        "both columns and update RAY_VERSION")


def test_the_table_has_one_row_per_script_in_the_wheel():
    scripts = set(example_scripts())
    assert scripts == set(EXPECTED), {"not in the table": sorted(scripts - set(EXPECTED)),
                                      "not in the wheel": sorted(set(EXPECTED) - scripts)}
    for script, expected in EXPECTED.items():
        assert expected.relayrl in (RUNS, FAILS, REFUSED) and expected.rllib in (RUNS, FAILS), script
        assert (expected.relayrl == RUNS) == (not expected.match), f"{script}: a failing row names its error"
        assert expected.why or (expected.relayrl == expected.rllib == RUNS), f"{script}: say why it does not run"


def test_relayrl_runs_at_least_90_percent_of_what_rllib_runs():
    c = counts()
    assert c["both"] >= 0.9 * c["rllib"], c


def test_docs_table_is_generated_from_the_table():
    with open(DOCS) as f:
        text = f.read()
    assert docs_section() in text, "docs/porting.md is out of date: run `python tests/porting/rllib_examples_table.py`"
    assert replace_section(text) == text


def _check(outcome) -> str:
    """'' if the outcome is what the table says, else what differs."""
    expected = EXPECTED[outcome.script]
    if expected.relayrl == RUNS:
        return "" if outcome.runs else f"expected to run, but {outcome.error_line()}"
    if outcome.runs:
        if expected.either:
            return ""
        return f"runs now (expected {expected.relayrl}): update its row in tests/porting/rllib_examples_table.py"
    if not re.search(expected.match, outcome.output + "\n" + outcome.error_line()):
        return f"fails differently: {outcome.error_line()} (expected /{expected.match}/)"
    return ""


@pytest.mark.parametrize("script", QUICK)
def test_quick_scripts_run(script):
    outcome = run_script(script, timeout=300)
    assert not _check(outcome), outcome.output[-4000:]


@pytest.mark.slow
def test_every_script_does_what_the_table_says():
    """All scripts, two at a time (330 s measured on a shared 2-core machine; the CI budget is 6 min); the slow ones
    (Atari CNNs, scripts that train to a return; minutes each) with
    RELAYRL_PORTING_SLOW_SCRIPTS=1."""
    with_slow = os.environ.get(SLOW_SCRIPTS_ENV) == "1"
    scripts = [s for s, e in EXPECTED.items() if s not in QUICK and (with_slow or not e.slow)]
    _assert_they_do_what_the_table_says(scripts)


def _assert_they_do_what_the_table_says(scripts):
    """Run `scripts` two at a time, each with its row's timeout; one message naming every script that differs."""
    problems = {}
    for outcome in run_scripts(scripts, jobs=2, timeouts={s: EXPECTED[s].timeout for s in scripts}):
        problem = _check(outcome)
        if problem:
            problems[outcome.script] = problem + "\n" + outcome.output[-1500:]
    assert not problems, "\n\n".join(f"{script}: {problem}" for script, problem in problems.items())


OFFLINE_SCRIPTS_THAT_RUN = [s for s, e in EXPECTED.items() if s.startswith("offline_rl/") and e.relayrl == RUNS]


@pytest.mark.slow
def test_the_offline_scripts_that_run_do():
    """RLlib's offline_rl/ scripts that relayrl runs (issue 47's must-show), in CI's slow run although their rows
    are slow (minutes: BC then PPO under Tune, a PPO run recording with 5 evaluation runners): both at once, the
    expert data made once (~1 min), ~2-4 min on a shared 2-core machine."""
    assert len(OFFLINE_SCRIPTS_THAT_RUN) >= 2, OFFLINE_SCRIPTS_THAT_RUN
    _assert_they_do_what_the_table_says(OFFLINE_SCRIPTS_THAT_RUN)
