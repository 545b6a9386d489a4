"""Shared pytest fixtures (keep small; other test files may append theirs)."""

from __future__ import annotations

import pytest

from zero9.arena.gtpclient import find_gnugo


@pytest.fixture(scope="session")
def gnugo_path() -> str:
    """Path of GNU Go; skips the test when it is not installed (`apt-get install gnugo`)."""
    path = find_gnugo()
    if path is None:
        pytest.skip("GNU Go not installed (apt-get install -y gnugo)")
    return path


def pytest_sessionstart(session) -> None:
    """Under CI nothing may be skipped for want of a program: the README's test command installs them all."""
    import importlib.util
    import os
    import shutil

    if not os.environ.get("CI"):
        return
    missing = [name for name, found in (
        ("gnugo (apt-get install gnugo)", find_gnugo()),
        ("Xvfb (apt-get install xvfb)", shutil.which("Xvfb")),
        ("gomokubench (pip install gomokubench)", importlib.util.find_spec("libs")),
        ("ray (pip install ray)", importlib.util.find_spec("ray")),
    ) if not found]
    if missing:
        raise pytest.UsageError("CI needs these installed, or tests would skip: " + ", ".join(missing))
