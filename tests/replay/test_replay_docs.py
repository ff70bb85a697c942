"""The python snippets in docs/replay.md run, in order, in one namespace."""
import pathlib
import re

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "replay.md"


def test_docs_snippets_run():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 5
    namespace = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    assert namespace["restored"].get_num_timesteps() == namespace["buffer"].get_num_timesteps()
    namespace["runner"].stop()
