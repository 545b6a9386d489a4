"""Shared pytest fixtures (keep small; other test files may append theirs)."""

from __future__ import annotations

import pytest

from zero9.gtpclient import find_gnugo


@pytest.fixture(scope="session")
def gnugo_path() -> str:
    """Path of GNU Go; skips the test when it is not installed (`apt-get install gnugo`)."""
    path = find_gnugo()
    if path is None:
        pytest.skip("GNU Go not installed (apt-get install -y gnugo)")
    return path
