"""The slide pack in the class's language, with one numbers.json layout from both writers.

`scripts/export_examples.py --lang ko|en` writes its slides in that language
(headlines in numbers.json, rendered on the PNGs), with Korean particles that
fit the word before them (never "이(가)"); the window's Lecture → Export slide
pack and the script write numbers.json with the same top-level keys; the
pack's folder may be a new one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from PySide6.QtWidgets import QFileDialog

from kvstudio.charts.canvas import canvas_named
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.classroom import ClassroomExtras, install
from kvstudio.ui.slides.export_menu import folder_dialog
from kvstudio.ui.slides.numbers import NUMBERS_VERSION, TOP_LEVEL_KEYS
from tests.ui.waits import HANG_GUARD_MS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "export_examples.py"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
pytestmark = pytest.mark.usefixtures("qapp")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("export_examples", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("export_examples", module)  # dataclasses look their module up
    spec.loader.exec_module(sys.modules["export_examples"])
    return sys.modules["export_examples"]


def _run_script(tmp_path: Path, language: str) -> dict[str, object]:
    out = tmp_path / language / "new-folder"  # a folder that does not exist yet
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--lang", language, "--only", "cache-inspector", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads((out / "numbers.json").read_text("utf-8"))
    assert isinstance(document, dict)
    assert (out / "lab-cache-inspector.png").stat().st_size > 0
    return document


@pytest.mark.slow
def test_export_examples_writes_korean_slides_with_right_particles(tmp_path: Path) -> None:
    document = _run_script(tmp_path, "ko")
    assert document["language"] == "ko"
    headlines = document["headlines"]
    assert isinstance(headlines, dict) and headlines
    text = "\n".join(headlines.values())
    assert HANGUL.search(text), text
    for mixed in ("이(가)", "을(를)", "은(는)", "와(과)", "(으)로"):
        assert mixed not in text
    assert tuple(document)[: len(TOP_LEVEL_KEYS)] == TOP_LEVEL_KEYS


@pytest.mark.slow
def test_export_examples_writes_english_slides_on_request(tmp_path: Path) -> None:
    document = _run_script(tmp_path, "en")
    assert document["language"] == "en"
    text = "\n".join(document["headlines"].values())  # type: ignore[union-attr]
    assert text and not HANGUL.search(text), text


def test_window_and_script_write_one_numbers_layout(  # type: ignore[no-untyped-def]
    qtbot, make_window, tiny_handle: LoadedModel, tmp_path: Path
) -> None:
    window = make_window(max_new_tokens=4)
    extras = getattr(window, "classroom", None)
    if not isinstance(extras, ClassroomExtras):
        extras = install(window)
    extras.exporter.canvas = canvas_named("16:9 small")
    extras.exporter.folder_chooser = lambda *a: str(tmp_path / "window" / "pack")  # new folders
    window.controller.run_to_end()
    qtbot.waitUntil(lambda: window.controller.store.current is not None
                    and len(window.controller.store.current.records) == 4, timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    assert extras.export_slide_pack()
    from_window = json.loads((tmp_path / "window" / "pack" / "numbers.json").read_text("utf-8"))

    script = _script()
    live = script.live_charts(tiny_handle)
    for plot in live.plots.values():
        qtbot.addWidget(plot)  # closed and deleted with the test, like every chart a test makes
    from_script = script.pack_numbers(tiny_handle, "en", live, {})

    keys = set(TOP_LEVEL_KEYS)
    assert keys <= set(from_window) and keys <= set(from_script)
    assert from_window["version"] == from_script["version"] == NUMBERS_VERSION
    assert from_window["language"] == "en"
    assert set(from_window["live"]) == {"cached"}
    assert set(from_script["live"]) == {"cached", "recompute"}  # the same per-mode records
    assert set(from_window["live"]["cached"]) == set(from_script["live"]["cached"])
    assert from_window["samples"] is None  # no Sample ×N yet: null, not missing
    assert set(from_script["samples"]) >= {"prompt", "temperatures", "sampling", "model"}
    # Each result names its own model, and a greedy run says greedy, not "temperature 0.0"
    # (#33: numbers.json said ko-base for answers ko-chat wrote after a model switch).
    cached = from_window["live"]["cached"]
    assert cached["model"] == window.controller.model.name
    assert cached["greedy"] is (cached["temperature"] == 0)
    assert from_script["samples"]["model"] == tiny_handle.name
    assert all(t["greedy"] is (t["temperature"] == 0)
               for t in from_script["samples"]["temperatures"])


def test_the_pack_folder_dialog_accepts_a_new_folder_name(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dialog = folder_dialog(None, "pack", str(tmp_path))
    assert dialog.fileMode() == QFileDialog.FileMode.AnyFile  # a name that does not exist yet
    assert dialog.acceptMode() == QFileDialog.AcceptMode.AcceptSave
    dialog.deleteLater()


def test_the_pack_folder_dialog_takes_an_existing_folder(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Choose takes what the name box says (#33: an existing folder could not be picked, the
    save dialog entered it instead): nothing typed, the folder on show; an existing folder's
    name, that folder; a new name, the new folder."""
    (tmp_path / "slides").mkdir()
    for typed, expected in (("", tmp_path), ("slides", tmp_path / "slides"),
                            ("new-pack", tmp_path / "new-pack")):
        dialog = folder_dialog(None, "pack", str(tmp_path))
        qtbot.addWidget(dialog)
        box = dialog.name_box()
        assert box is not None
        box.setText(typed)
        dialog.accept()
        assert dialog.result() == QFileDialog.DialogCode.Accepted
        assert Path(dialog.chosen) == expected, typed


def test_the_full_pack_shuts_every_lab_down_when_one_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lab that does not finish ends the script with its message, and every lab panel is
    shut down first: a worker thread still running when Qt deleted its panel aborted the
    process ("QThread: Destroyed while thread … is still running", exit 134)."""
    script = _script()
    shut: list[str] = []
    original = script.LabPanel.shutdown

    def recording_shutdown(panel: object) -> bool:
        shut.append(type(panel).__name__)
        return original(panel)

    def failing_run(panel: object, model: object) -> None:
        raise SystemExit(f"{type(panel).__name__} did not finish")

    monkeypatch.setattr(script.LabPanel, "shutdown", recording_shutdown)
    monkeypatch.setattr(script, "run_lab", failing_run)
    monkeypatch.setattr(script, "live_charts", lambda model: script.LiveRuns(
        plots={}, store=None, counts=None, prefill=None, tables={}))
    monkeypatch.setattr(script.twin_lab, "check_installed", lambda: None)
    with pytest.raises(SystemExit, match="did not finish"):
        script.full_pack(None, Path("unused"), "en")
    expected = [script.PANEL_TYPES[lab.key].__name__ for lab in script.LABS]
    assert shut == [*expected, "CacheInspectorPanel"]


def test_the_full_pack_leaves_the_twin_out_without_the_llama_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without gguf and llama-cpp-python (the default install) the twin lab cannot run: the
    pack is built without it and says what to install, instead of ending at that lab."""
    script = _script()
    ran: list[str] = []
    monkeypatch.setattr(script, "run_lab", lambda panel, model: ran.append(panel.spec.key))

    def missing() -> None:
        raise ValueError("pip install 'kvstudio[llama]'")

    monkeypatch.setattr(script.twin_lab, "check_installed", missing)
    twin = script.PANEL_TYPES["twin"](script.ChartExporter())
    sample = script.PANEL_TYPES["sample"](script.ChartExporter())
    try:
        assert not script._run_if_installed(twin, None)
        assert script._run_if_installed(sample, None)
    finally:
        twin.shutdown()
        sample.shutdown()
    assert ran == ["sample"]
