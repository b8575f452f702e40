"""Closing the window while a lab runs ends the process after the step it is in.

Cancel used to be checked only between a speculative lab's whole runs (and a
beam lab's transformers check): closing during one hid the window, then kept
the process alive for the rest of the run (91 s measured on ko-chat). Now a
speculative run yields after every round, so the lab thread stops after the
round it is in. The check is how many target forwards ran after the close was
asked for (a round is at most k + 1 of them), never a time; the seconds from
the close to the exit are printed for the record.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HANG_GUARD_S = 200  # not a time limit: only a process that never ends stops here
SCRIPT = "tests.ui.lab_close_app"  # run with -m from the repository root
ROOT = Path(__file__).resolve().parents[2]


def test_closing_during_a_speculative_run_stops_after_the_round(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", SCRIPT, str(tmp_path / "settings.ini")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
    )
    lines: list[str] = []
    closed_at = None
    assert process.stdout is not None
    deadline = time.monotonic() + HANG_GUARD_S
    for line in process.stdout:
        lines.append(line.rstrip())
        if line.startswith("closing"):
            closed_at = time.monotonic()
        if time.monotonic() > deadline:
            process.kill()
            break
    code = process.wait(timeout=HANG_GUARD_S)
    ended = time.monotonic()
    output = "\n".join(lines)
    assert closed_at is not None, output
    print(f"process ended {ended - closed_at:.2f} s after the close")  # for the record only
    assert code == 0, output
    assert "exited" in output, output
    after = next(int(x.split()[-1]) for x in lines if x.startswith("forwards after close"))
    assert after <= 4 + 1, output  # the round in progress (k = 4 drafts: 5 forwards at most)
