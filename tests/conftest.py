"""Shared pytest fixtures (keep small; other test files may append theirs)."""

from __future__ import annotations

import os

os.environ["ZERO9_CHECK_DIRECT"] = "1"  # every direct call of a compiled step checked (numba_cache.Direct)

import pytest  # noqa: E402

from zero9.arena.gtpclient import find_gnugo  # noqa: E402


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


# The integration tier: modules that start servers, engines, worker processes, browsers or whole
# commands, each module over about 10 s of a full run on the 2-core CPU (``--durations=0``, 2026-11-29),
# and every test marked slow. ``pytest -m "not integration"`` is the fast tier, what a student runs while
# editing (about two and a half minutes there); ``bash scripts/test.sh`` runs everything.
INTEGRATION_MODULES = frozenset({
    "test_autotrain", "test_client", "test_client_distrust", "test_concurrent", "test_docs_commands",
    "test_durability", "test_durability_concurrent", "test_first_hour", "test_gnugo_diff",
    "test_gtp_leelaz", "test_in_flight", "test_match", "test_multisize", "test_opponents", "test_ray",
    "test_ray_server", "test_review", "test_selfplay_straddle", "test_server", "test_server_attacks",
    "test_server_autogtp", "test_server_flow", "test_server_postgres", "test_threads", "test_tutorials",
    "test_net_finite", "test_user_paths",  # whole commands, on bad files
})


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if item.path.stem in INTEGRATION_MODULES or item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.integration)
