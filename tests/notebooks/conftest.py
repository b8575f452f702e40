"""The course notebooks start executing as soon as the session has collected its tests.

Executing them takes about half a minute, nearly all of it in the notebook kernel, a
process of its own that the test process only waits for. Started here, in a child
(`execute_all.start`), when a selected test needs them (the `executed` fixture), the
kernel runs on the machine's other core while the tests before the notebooks run on
this one; `notebook_run` hands that run to `test_notebooks`, which waits for it and
reads what it wrote. Nothing is left behind: the folder goes at the session's end.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from execute_all import NotebookRun, start

_started: list[NotebookRun] = []


def _start() -> NotebookRun:
    run = start(Path(tempfile.mkdtemp(prefix="kvstudio-notebooks-")))
    _started.append(run)
    return run


def pytest_collection_finish(session: pytest.Session) -> None:
    extra = all(importlib.util.find_spec(name) is not None
                for name in ("nbclient", "nbformat", "ipykernel", "jupyter_rfb"))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # every worker collects every test: the fixture starts the run when needed
    if extra and any("executed" in getattr(item, "fixturenames", ())
                     for item in session.items):
        _start()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for run in _started:
        if run.process.poll() is None:  # an interrupted session: the kernel follows its parent
            run.process.kill()
            run.process.wait()
        shutil.rmtree(run.folder, ignore_errors=True)
    _started.clear()


@pytest.fixture(scope="session")
def notebook_run() -> NotebookRun:
    """The notebooks' execution this session started at collection (or now, if it did not)."""
    return _started[0] if _started else _start()
