"""Did-you-mean suggestions for error messages."""
import difflib
from typing import Iterable


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """Return ' Did you mean `x`?' for the closest candidate, or '' if none is close."""
    matches = difflib.get_close_matches(str(name), list(candidates), n=1, cutoff=0.6)
    return f" Did you mean `{matches[0]}`?" if matches else ""
