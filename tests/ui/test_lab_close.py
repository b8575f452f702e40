"""Closing the window while a lab runs ends the process after the step it is in.

Cancel used to be checked only between a speculative lab's whole runs (and a
beam lab's transformers check): closing during one hid the window, then kept
the process alive for the rest of the run (91 s measured on ko-chat). Now a
speculative run yields after every round, so the lab thread stops after the
round it is in. The check is how many target forwards ran after the close was
asked for (a round is at most k + 1 of them), never a time; the seconds from
the close to the end of the script's tear-down are printed for the record. The script
starts when the session has collected this test and runs beside the tests before it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.ui.background_child import BackgroundChildren, Child

HANG_GUARD_S = 200  # not a time limit: only a process that never ends stops here
SCRIPT = "tests.ui.lab_close_app"  # run with -m from the repository root
ROOT = Path(__file__).resolve().parents[2]


CHILDREN = BackgroundChildren(ROOT)
TEST = "test_closing_during_a_speculative_run_stops_after_the_round"


def _app() -> Child:
    """The window script, closed during a speculative run (its own process)."""
    return CHILDREN.child(TEST, lambda folder: [
        sys.executable, "-m", SCRIPT, str(folder / "settings.ini")])


def start_in_background(items: list[pytest.Item]) -> None:
    """Started once the session has collected this test (``tests/conftest.py``)."""
    if any(item.name == TEST for item in items):
        _app()


def stop_in_background() -> None:
    CHILDREN.stop()


def test_closing_during_a_speculative_run_stops_after_the_round() -> None:
    code, output = _app().finish(timeout=2 * HANG_GUARD_S)  # a hang guard only
    lines = output.splitlines()
    closing = next((x for x in lines if x.startswith("closing")), None)
    assert closing is not None, output
    # The script stamps its lines: "exited" says how long after the close it got there.
    print(next((x for x in lines if x.startswith("exited")), "no exit"))  # for the record only
    assert code == 0, output
    assert "exited" in output, output
    after = next(int(x.split()[-1]) for x in lines if x.startswith("forwards after close"))
    assert after <= 4 + 1, output  # the round in progress (k = 4 drafts: 5 forwards at most)
