"""The docs run: every ```python block of README.md and docs/**/*.md runs as written.

Convention: by default each ```python block is a whole program and runs alone, in a fresh Python
process (working directory: an empty temp folder; PYTHONPATH: this checkout). An HTML comment on the
line right before a block's opening fence (invisible on GitHub) changes that:

    <!-- doc-test: continues -->              the block goes on from the previous ```python block of the
                                              same file: the two (and any earlier ones the previous one
                                              continues) run as one program
    <!-- doc-test: slow (reason) -->          the program runs only with `pytest -m slow` (e.g. starts Ray)
    <!-- doc-test: skip (reason) -->          the block is not run; the reason is required and must be
                                              something the test machine lacks ("needs a GPU", "needs a
                                              Ray cluster address"), never a broken snippet

Directives combine with ";": `<!-- doc-test: continues; slow (starts Ray) -->`. A program is slow if
any of its blocks is. A block that continues a skipped block is skipped too.
"""
from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
from typing import List, Optional

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^```(\w*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*doc-test:\s*(.*?)\s*-->\s*$")
ONE_DIRECTIVE = re.compile(r"^(continues|slow|skip)\s*(?:\((.+)\))?$")


@dataclasses.dataclass
class Block:
    path: pathlib.Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    continues: bool = False
    slow: Optional[str] = None  # the reason, if slow
    skip: Optional[str] = None  # the reason, if skipped


@dataclasses.dataclass
class Program:
    blocks: List[Block]

    @property
    def id(self) -> str:
        first = self.blocks[0]
        lines = "+".join(str(b.line) for b in self.blocks)
        return f"{first.path.relative_to(ROOT)}:{lines}"

    @property
    def code(self) -> str:
        return "\n".join(b.code for b in self.blocks)

    @property
    def slow(self) -> Optional[str]:
        return next((b.slow for b in self.blocks if b.slow), None)

    @property
    def skip(self) -> Optional[str]:
        return next((b.skip for b in self.blocks if b.skip), None)


def parse_directives(text: str, where: str) -> dict:
    found = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        match = ONE_DIRECTIVE.match(part)
        if match is None:
            raise ValueError(f"{where}: unknown doc-test directive {part!r} (continues, slow (reason), skip (reason))")
        name, reason = match.groups()
        if name in ("slow", "skip") and not reason:
            raise ValueError(f"{where}: `{name}` needs a reason: `{name} (why)`")
        found[name] = reason or True
    return found


def fenced_blocks(path: pathlib.Path) -> List[Block]:
    """Every fenced block of a markdown file, with the doc-test directives written right before it."""
    lines = path.read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        start, language = i, match.group(1)
        end = start + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        if end == len(lines):
            raise ValueError(f"{path.name}:{start + 1}: unclosed code fence")
        block = Block(path, start + 1, language, "\n".join(lines[start + 1:end]) + "\n")
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        directive = DIRECTIVE.match(lines[before].strip()) if before >= 0 else None
        if directive is not None:
            if language != "python":
                raise ValueError(f"{path.name}:{start + 1}: doc-test directives only apply to ```python blocks")
            found = parse_directives(directive.group(1), f"{path.name}:{before + 1}")
            block.continues = bool(found.get("continues"))
            block.slow = found.get("slow")
            block.skip = found.get("skip")
        blocks.append(block)
        i = end + 1
    return blocks


def doc_programs(paths=DOCS) -> List[Program]:
    programs = []
    for path in paths:
        previous: Optional[Program] = None
        for block in fenced_blocks(path):
            if block.language != "python":
                continue
            if block.continues:
                if previous is None:
                    raise ValueError(f"{path.name}:{block.line}: `continues`, but no python block before it")
                programs.remove(previous)
                previous = Program(previous.blocks + [block])
            else:
                previous = Program([block])
            programs.append(previous)
    return programs


def _param(program: Program):
    marks = []
    if program.skip:
        marks.append(pytest.mark.skip(reason=program.skip))
    elif program.slow:
        marks.append(pytest.mark.slow)
    return pytest.param(program, id=program.id, marks=marks)


PROGRAMS = doc_programs()


@pytest.mark.parametrize("program", [_param(p) for p in PROGRAMS])
def test_doc_snippet_runs(program: Program, tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("RELAYRL_RESULTS_DIR", str(tmp_path / "results"))
    proc = subprocess.run([sys.executable, "-c", program.code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, (f"{program.id} failed (exit {proc.returncode}):\n{program.code}\n"
                                  f"--- stdout\n{proc.stdout[-2000:]}\n--- stderr\n{proc.stderr[-4000:]}")


# -- the convention itself -------------------------------------------------------------------------

def test_every_python_block_is_collected_once():
    """No ```python block is lost: each one is in exactly one program."""
    collected = [(b.path, b.line) for p in PROGRAMS for b in p.blocks]
    expected = [(b.path, b.line) for path in DOCS for b in fenced_blocks(path) if b.language == "python"]
    assert sorted(collected) == sorted(expected) and len(set(collected)) == len(collected)


def test_skips_are_rare_and_give_a_reason():
    skipped = [p for p in PROGRAMS if p.skip]
    assert len(skipped) <= 3, [p.id for p in skipped]


def test_directive_parsing(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("```python\na = 1\n```\n\n<!-- doc-test: continues; slow (starts Ray) -->\n"
                   "```python\nprint(a)\n```\n\n<!-- doc-test: skip (needs a GPU) -->\n```python\nb = 2\n```\n"
                   "```bash\nls\n```\n")
    first, second = doc_programs([doc])
    assert [b.line for b in first.blocks] == [1, 6] and first.code == "a = 1\n\nprint(a)\n"
    assert first.slow == "starts Ray" and first.skip is None
    assert second.skip == "needs a GPU"
    doc.write_text("<!-- doc-test: skip -->\n```python\nb = 2\n```\n")
    with pytest.raises(ValueError, match="needs a reason"):
        doc_programs([doc])
    doc.write_text("<!-- doc-test: sometimes -->\n```python\nb = 2\n```\n")
    with pytest.raises(ValueError, match="unknown doc-test directive"):
        doc_programs([doc])


# -- the README's first block and its command lines -----------------------------------------------

README = ROOT / "README.md"
COMMENT = re.compile(r"\s+#\s.*$")


def readme_first_block_commands() -> List[str]:
    block = fenced_blocks(README)[0]
    assert block.language == "bash", "the README's first block is the install / run / test commands"
    return [COMMENT.sub("", line).strip() for line in block.code.splitlines() if line.strip()]


def test_readme_first_block_is_install_run_test_and_ci_runs_those_lines():
    install, run, test = readme_first_block_commands()
    assert "pip install" in install and '-e ".[test]"' in install
    assert run.startswith(".venv/bin/relayrl train ") and "--stop-reward" in run
    assert test == ".venv/bin/python -m pytest -n auto"
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    for command in (install, run, test):
        assert command in ci_lines, f".ci/run does not run the README's `{command}`"


def test_the_test_extra_installs_what_skipping_tests_need():
    """Tests skip without TensorFlow (tests/policy/test_tf_policy.py, seed 001's TF snippets): CI's install (the
    README's first command, the test extra) must install it, so CI runs them."""
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(req.startswith("tensorflow-cpu") for req in extras["test"])
    assert any(req.startswith("tensorflow-cpu") for req in extras["tf"])


# The pages whose `relayrl train` commands the slow suite runs to their stop reward (getting_started.md's shell
# path runs whole, below).
TRAIN_COMMAND_DOCS = [README, ROOT / "docs" / "command_line.md"]


def relayrl_commands(path: pathlib.Path, command: Optional[str] = None) -> List[List[str]]:
    """Every `relayrl ...` command line (of `command` only, if given) in a page's bash blocks, as argv after
    `relayrl`; `--help` lines are left out."""
    commands = []
    for block in fenced_blocks(path):
        if block.language != "bash":
            continue
        for line in block.code.replace("\\\n", " ").splitlines():
            argv = shlex.split(COMMENT.sub("", line))
            if (len(argv) > 1 and argv[0].endswith("relayrl") and command in (None, argv[1])
                    and not {"-h", "--help"} & set(argv)):
                commands.append(argv[1:])
    return commands


def doc_train_commands() -> List[List[str]]:
    return [argv for path in TRAIN_COMMAND_DOCS for argv in relayrl_commands(path, "train")]


def test_the_docs_have_train_commands():
    assert len(relayrl_commands(README, "train")) == 1  # the first block's
    assert len(relayrl_commands(ROOT / "docs" / "command_line.md", "train")) >= 2


def _run_relayrl(argv: List[str], cwd: pathlib.Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "relayrl", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("argv", [pytest.param(argv, id=f"train_command_{i}")
                                  for i, argv in enumerate(doc_train_commands())])
def test_doc_train_command_reaches_its_stop_reward(argv, tmp_path):
    """The `relayrl train` commands of the README and the command-line page are honest: each reaches its stop
    reward (exit status 0)."""
    proc = _run_relayrl([*argv, "--json"], tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["stop_reward_reached"] is True, summary


GETTING_STARTED = ROOT / "docs" / "getting_started.md"


def test_getting_started_shell_path_trains_evaluates_and_plots_one_run():
    commands = [argv[0] for argv in relayrl_commands(GETTING_STARTED)]
    assert commands == ["train", "evaluate", "plot"], commands


@pytest.mark.slow
def test_getting_started_shell_path_runs(tmp_path):
    """The newcomer's path from the shell, as the page writes it: train to the stop reward, evaluate the
    checkpoint, plot the learning curve (the python blocks of the page run in test_doc_snippet_runs)."""
    outputs = []
    for argv in relayrl_commands(GETTING_STARTED):
        proc = _run_relayrl(argv, tmp_path)
        assert proc.returncode == 0, f"relayrl {shlex.join(argv)}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
        outputs.append(proc.stdout)
    assert "mean return over 5 episodes" in outputs[1]
    plots = list(tmp_path.glob("runs/*/progress.png"))
    assert len(plots) == 1 and plots[0].stat().st_size > 10_000, plots
