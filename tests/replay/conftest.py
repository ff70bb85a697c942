"""Fixtures for the replay tests (the chunk builders live in replay_chunks.py: a conftest module
cannot be imported by name, other test folders have their own conftest)."""
import pytest
from replay_chunks import make_chunk


@pytest.fixture
def chunk():
    return make_chunk
