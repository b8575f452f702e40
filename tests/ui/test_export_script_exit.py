"""The example-pack script ends cleanly: its tear-down deletes every chart without a crash."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.ui.background_child import BackgroundChildren, Child

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # runs the cache inspector on ko-chat in a new process


CHILDREN = BackgroundChildren(ROOT)
TEST = "test_the_inspector_pack_exits_cleanly"


def _script() -> Child:
    """The example-pack script writing the inspector's slide (its own process)."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return CHILDREN.child(TEST, lambda folder: [
        sys.executable, str(ROOT / "scripts" / "export_examples.py"), str(folder / "pack"),
        "--lang", "ko", "--only", "cache-inspector"], env=env)


def start_in_background(items: list[pytest.Item]) -> None:
    """Started once the session has collected this test (``tests/conftest.py``)."""
    if any(item.name == TEST for item in items):
        _script()


def stop_in_background() -> None:
    CHILDREN.stop()


def test_the_inspector_pack_exits_cleanly() -> None:
    """The inspector's wrapping titles read the chart's export button when resized; deleting
    the chart resized them from inside the plot's destructor and the process died with
    SIGSEGV (exit -11) after writing the pack. Tear-down now detaches them first."""
    child = _script()
    code, output = child.finish(timeout=240)
    assert code == 0, output[-2000:]
    assert (child.folder / "pack" / "lab-cache-inspector.png").stat().st_size > 0
