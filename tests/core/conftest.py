"""The numeric tests' runs under other CPU kernels start as soon as they are collected.

`test_other_cpus` runs the numeric tests again in two child processes (about 65 CPU-s each,
one core each) and waits for them. Started when the session has collected that
module's tests, the children run beside the tests collected before them instead of
after them; the module's fixture then only waits (and ends them, if the session ends
first).
"""

from __future__ import annotations

import os

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # every worker collects every test: the fixture starts them when it runs
    for item in session.items:
        if "child_runs" in getattr(item, "fixturenames", ()):
            item.module.start_child_runs()  # type: ignore[attr-defined]
            return


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for item in session.items:
        if "child_runs" in getattr(item, "fixturenames", ()):
            item.module.stop_child_runs()  # type: ignore[attr-defined]
            return
