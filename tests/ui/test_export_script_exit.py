"""The example-pack script ends cleanly: its tear-down deletes every chart without a crash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # runs the cache inspector on ko-chat in a new process


def test_the_inspector_pack_exits_cleanly(tmp_path: Path) -> None:
    """The inspector's wrapping titles read the chart's export button when resized; deleting
    the chart resized them from inside the plot's destructor and the process died with
    SIGSEGV (exit -11) after writing the pack. Tear-down now detaches them first."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "export_examples.py"), str(tmp_path),
         "--lang", "ko", "--only", "cache-inspector"],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "lab-cache-inspector.png").stat().st_size > 0
