"""The notebook API outside Jupyter: plain Python, no display, text progress, files written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import os
from kvstudio import notebook as kv
print("platform", os.environ["QT_QPA_PLATFORM"])
run = kv.cache_kinds(prompt_tokens=8, new_tokens=4)
print(run.records[0])
print(kv.export(run, "kinds.svg"))
"""


def test_a_script_runs_headless_with_text_progress(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "platform offscreen" in done.stdout  # set for the user: there is no display
    assert "cache kinds: done" in done.stdout  # the text progress line's last state
    assert "[" in done.stdout and "]" in done.stdout  # the bar itself
    svg = (tmp_path / "kinds.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<path" in svg
