"""The window under faults (issue 14): damaged run files, long steps at close, costly runs,
labs that time the model, a bad model at start-up, and a full disk during a slide pack."""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from kvstudio.engine import costs
from kvstudio.files import folder_write
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.classroom import ClassroomExtras
from kvstudio.ui.run.engine_adapter import ModelChoice, RunCost, choice_of
from tests.ui.background_child import BackgroundChildren, Child
from tests.ui.waits import HANG_GUARD_MS, model_thread_caught_up

pytestmark = pytest.mark.usefixtures("qapp")
REPO = Path(__file__).resolve().parents[2]


def _extras(window, tmp_path: Path) -> ClassroomExtras:  # type: ignore[no-untyped-def]
    extras = window.classroom
    assert isinstance(extras, ClassroomExtras)
    extras.exporter.folder = tmp_path
    extras.exporter.width = 480
    extras.exporter.folder_chooser = lambda *a: str(tmp_path / "pack")
    return extras


def _run_to_end(qtbot, window, steps: int) -> None:  # type: ignore[no-untyped-def]
    window.controller.run_to_end()
    qtbot.waitUntil(
        lambda: window.controller.store.current is not None
        and len(window.controller.store.current.records) == steps,
        timeout=HANG_GUARD_MS,
    )
    window.controller.pacer.flush()


CHILDREN = BackgroundChildren(REPO)
SLOW_CLOSE_TEST = "test_closing_during_a_step_longer_than_the_stop_timeout_exits_cleanly"


def _slow_close_app() -> Child:
    """The window script closed during a step longer than the stop timeout (its own
    process, started once the session has collected the test: ``tests/conftest.py``)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "QT_QPA_PLATFORM": "offscreen"}
    return CHILDREN.child(SLOW_CLOSE_TEST, lambda folder: [
        sys.executable, "-m", "tests.ui.slow_close_app", str(folder / "s.ini")],
        env=env, stderr_apart=True)


def start_in_background(items: list[pytest.Item]) -> None:
    if any(item.name == SLOW_CLOSE_TEST for item in items):
        _slow_close_app()


def stop_in_background() -> None:
    CHILDREN.stop()


def test_closing_during_a_step_longer_than_the_stop_timeout_exits_cleanly() -> None:
    """A step outlasting the 0.2 s stop timeout: the thread is parked, the process exits 0."""
    child = _slow_close_app()
    code, stdout = child.finish(timeout=240)  # a hang guard only
    stderr = child.stderr()
    assert code == 0, stderr[-2000:]
    assert "step started" in stdout and "closed" in stdout
    assert "parked 1" in stdout  # the step outlasted the timeout: parked, not destroyed
    assert "after waiting 0" in stdout  # and it ended before the process did
    assert "left for the exit hook 0" in stdout  # nothing for PySide to delete at exit
    assert "Destroyed while thread" not in stderr


def test_a_damaged_run_file_is_a_message_and_the_runs_stay(
    qtbot, make_window, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    window = make_window(max_new_tokens=4)
    extras = _extras(window, tmp_path)
    _run_to_end(qtbot, window, 4)
    good = tmp_path / "good.kvrun.json"
    assert extras.save_run(str(good))
    bars = window.tokens_plot.bar_heights("cached")
    doc = json.loads(good.read_text(encoding="utf-8"))
    doc["runs"][0]["max_new_tokens"] = 10**18  # froze the window before: a 10^18-point curve
    bad = tmp_path / "huge.kvrun.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    fifo = tmp_path / "pipe.kvrun.json"
    os.mkfifo(fifo)
    for path, message in ((bad, "max_new_tokens"), (fifo, "not a regular file")):
        assert not extras.open_run(str(path))
        assert message in extras.last_warning
        window.controller.pacer.flush()
        assert window.tokens_plot.bar_heights("cached") == bars  # what was drawn stays
    assert len(window.controller.store.current.records) == 4
    assert extras.open_run(str(good))  # a good file still opens


def test_a_costly_run_asks_first_and_can_be_cancelled(
    qtbot, make_window, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    window = make_window(max_new_tokens=8)
    monkeypatch.setattr(costs, "COST_WARNING_TOKENS", 50)
    asked: list[RunCost] = []
    answer = {"go": False}

    def confirm(cost: RunCost) -> bool:
        asked.append(cost)
        return answer["go"]

    window.controller.confirm_cost = confirm
    window.controls.set_mode("recompute")
    window.generation.set_prompt("KV 캐시는 무엇인가요?")
    window.controller.step()
    assert len(asked) == 1
    cost = asked[0]
    p = cost.prompt_tokens
    assert cost.tokens_fed == p * 8 + 8 * 7 // 2  # the recompute formula, P·N + N(N−1)/2
    model_thread_caught_up(qtbot, window)
    assert window.controller.store.current is None  # cancelled: nothing ran
    answer["go"] = True
    window.controls.set_mode("cached")
    window.controller.step()
    qtbot.waitUntil(lambda: window.controller.store.current is not None
                    and len(window.controller.store.current.records) == 1, timeout=HANG_GUARD_MS)
    assert window.controller.measured_steps > 0
    asked.clear()
    window.controls.set_mode("recompute")  # restarts the run on screen: asks first
    assert len(asked) == 1 and asked[0].seconds is not None  # from the measured speed
    window.controller.step()
    qtbot.waitUntil(lambda: window.controller.store.current_mode == "recompute",
                    timeout=HANG_GUARD_MS)
    window.controller.step()
    assert len(asked) == 1  # asked once per run, not per step
    from kvstudio.ui.panels.cost_dialog import cost_message

    text = cost_message(asked[0])
    assert f"{asked[0].tokens_fed:,}" in text and "N(N−1)/2" in text


def test_live_steps_wait_while_a_lab_measures_times(
    qtbot, make_window, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    window = make_window(max_new_tokens=6)
    extras = _extras(window, tmp_path)
    lab = extras.labs.panels["sweep"]
    assert lab.run()
    assert extras.labs.timing and window.controller.held
    window.controller.step()
    window.controller.step()
    assert window.controller.queued_steps == 2
    assert window.controller.store.current is None  # nothing ran beside the lab
    qtbot.waitUntil(lambda: not extras.labs.timing, timeout=HANG_GUARD_MS)
    qtbot.waitUntil(
        lambda: window.controller.store.current is not None
        and len(window.controller.store.current.records) == 2,
        timeout=HANG_GUARD_MS,
    )
    assert not window.controller.held and window.controller.queued_steps == 0


def test_a_bad_model_at_start_up_falls_back_and_is_not_remembered(
    qtbot, make_window, settings_path: Path, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    window = make_window()
    empty = tmp_path / "empty.pth"
    empty.write_bytes(b"")
    window.model_panel.model_chosen.emit(ModelChoice("pth", str(empty), str(tmp_path)))
    qtbot.waitUntil(lambda: "empty" in window.last_problem, timeout=HANG_GUARD_MS)
    assert window.controller.model is not None  # the loaded model stays
    window.close()
    # Start-up with a failing --model: a message, the embedded model, and the setting unchanged.
    settings = AppSettings(QSettings(str(settings_path), QSettings.Format.IniFormat))
    settings.set_model_choice(ModelChoice("embedded-base"))
    settings.sync()
    again = make_window()
    again.controller.model = None
    again.start(ModelChoice("folder", str(tmp_path / "missing")))
    qtbot.waitUntil(lambda: "missing" in again.last_problem, timeout=HANG_GUARD_MS)
    qtbot.waitUntil(lambda: again.controller.model is not None, timeout=HANG_GUARD_MS)
    assert choice_of(again.controller.model) == ModelChoice()  # the embedded fallback
    assert again.settings.model_choice().path != str(tmp_path / "missing")


def test_slide_pack_reexport_on_a_full_disk_keeps_the_earlier_pack(
    qtbot, make_window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    window = make_window(max_new_tokens=4)
    extras = _extras(window, tmp_path)
    _run_to_end(qtbot, window, 4)
    assert extras.export_slide_pack()
    pack = tmp_path / "pack"
    before = {p.name: p.read_bytes() for p in pack.iterdir()}
    assert len(before) >= 8
    real = folder_write._write_file
    calls = {"n": 0}

    def fills_up(path: Path, data: bytes) -> None:
        calls["n"] += 1
        if calls["n"] > 4:
            path.write_bytes(data[: len(data) // 3])
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(folder_write, "_write_file", fills_up)
    window.controller.reset()
    _run_to_end(qtbot, window, 4)
    assert not extras.export_slide_pack()
    assert "disk is full" in extras.last_warning
    assert {p.name: p.read_bytes() for p in pack.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    # A pack to a new folder on a full disk leaves no empty folder.
    extras.exporter.folder_chooser = lambda *a: str(tmp_path / "new-pack")
    assert not extras.export_slide_pack()
    assert not (tmp_path / "new-pack").exists()
