"""Cancel and closing during the beam lab's transformers check do not wait for the check.

The check (transformers' import, the conversion and its ``generate``) is one long
call. It used to run on the lab's thread, where Cancel is checked only between
the items the lab yields: Cancel waited for the whole check (13.2 s measured),
and closing the window kept the process alive until it ended. It now runs on a
daemon thread while the lab keeps yielding.

Here the check is replaced by one that holds until the test lets it go, so
"did Cancel (or the close) wait for the check" is a yes/no fact: whether the
check had finished when the run was cancelled (or the process ended). The hold
is only a hang guard for the old behaviour, never a time limit.
"""

from __future__ import annotations

import inspect
import sys
import threading
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from lab_helpers import show_lab

import kvstudio.labs.beam as beam_module
from kvstudio.labs.beam import TransformersCheck
from kvstudio.ui.labs import BeamSearchPanel
from tests.ui.background_child import BackgroundChildren, Child
from tests.ui.waits import HANG_GUARD_MS, HANG_GUARD_S

HOLD_S = HANG_GUARD_S / 2  # the held check lets go by itself only after this (old behaviour)
SCRIPT = "tests.ui.beam_close_app"  # run with -m from the repository root
ROOT = Path(__file__).resolve().parents[2]


def test_cancel_during_the_transformers_check_does_not_wait_for_it(  # type: ignore[no-untyped-def]
    qtbot, exporter, tiny_handle, monkeypatch
) -> None:
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    def held_check(*_: Any, **__: Any) -> TransformersCheck:
        entered.set()
        release.wait(HOLD_S)
        finished.set()
        return TransformersCheck(False, False, (), "not checked: held by the test")

    generators: list[Generator[Any, None, None]] = []
    real_lab = beam_module.beam_lab

    def recorded_lab(*args: Any, **kwargs: Any) -> Generator[Any, None, None]:
        generator = real_lab(*args, **kwargs)
        generators.append(generator)
        return generator

    monkeypatch.setattr(beam_module, "transformers_check", held_check)
    monkeypatch.setattr(beam_module, "beam_lab", recorded_lab)
    panel = show_lab(qtbot, BeamSearchPanel, exporter, tiny_handle, size=(1100, 700))
    panel.beams.setValue(2)
    panel.new_tokens.setValue(3)
    panel.check_transformers.setChecked(True)
    results: list[object] = []
    panel.result_ready.connect(results.append)
    try:
        assert panel.run()
        qtbot.waitUntil(entered.is_set, timeout=HANG_GUARD_MS)  # the check is running
        with qtbot.waitSignal(panel.runner.cancelled, timeout=HANG_GUARD_MS):
            panel.cancel()
        assert not finished.is_set(), "Cancel waited for the transformers check to end"
        assert len(generators) == 1
        assert inspect.getgeneratorstate(generators[0]) == inspect.GEN_CLOSED
        assert results == []
        assert not panel.runner.busy
        assert panel.cancel_button.isEnabled() is False
    finally:
        release.set()
        for thread in threading.enumerate():  # the check's daemon thread, now let go
            if thread.name == "kvstudio-beam-check":
                thread.join(HANG_GUARD_S)


CHILDREN = BackgroundChildren(ROOT)
CLOSE_TEST = "test_closing_during_the_transformers_check_ends_the_process"


def _close_app() -> Child:
    """The window script, closed during the held check (its own process)."""
    return CHILDREN.child(CLOSE_TEST, lambda folder: [
        sys.executable, "-m", SCRIPT, str(folder / "settings.ini"), str(HOLD_S)])


def start_in_background(items: list[pytest.Item]) -> None:
    """Started once the session has collected this test (``tests/conftest.py``)."""
    if any(item.name == CLOSE_TEST for item in items):
        _close_app()


def stop_in_background() -> None:
    CHILDREN.stop()


def test_closing_during_the_transformers_check_ends_the_process() -> None:
    code, output = _close_app().finish(timeout=3 * HANG_GUARD_S)  # a hang guard only
    assert "closing" in output, output
    assert code == 0, output
    assert "exited" in output, output
    assert "check finished" not in output, output  # the process did not wait for the check
