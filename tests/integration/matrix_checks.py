"""Checks the feature-matrix tests share: a declared refusal raises its words when the algorithm is built."""
import re

import pytest

import feature_matrix as fm


def refused(algo, env_kind, feature, build) -> bool:
    """If the cell is declared refused: building raises a ValueError with its words (True); else False."""
    words = fm.refusal(algo, env_kind, feature)
    if words is None:
        return False
    with pytest.raises(ValueError, match=re.escape(words)):
        build()
    return True
