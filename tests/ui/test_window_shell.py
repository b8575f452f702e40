"""The window's shell: font, language switch, bad input, remembered settings, thread hygiene."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

from kvstudio.charts.fonts import register_bundled_font, supports_hangul
from kvstudio.files.resources import TRANSLATIONS_DIR
from kvstudio.labs.course import COURSE
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.app.startup import model_choice_from_args, parse_args
from kvstudio.ui.run.engine_adapter import ModelChoice, choice_of
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def test_bundled_font_has_hangul() -> None:
    family = register_bundled_font()
    assert family is not None and "Nanum" in family
    assert supports_hangul(QFont(family), "토")
    assert supports_hangul(QFont(family), "캐")


def test_app_font_is_the_bundled_one(make_window) -> None:  # type: ignore[no-untyped-def]
    make_window()
    assert "Nanum" in QApplication.font().family()
    assert supports_hangul(QApplication.font())


def test_korean_translation_is_shipped() -> None:
    assert (TRANSLATIONS_DIR / "kvstudio_ko.qm").stat().st_size > 1000
    assert (TRANSLATIONS_DIR / "kvstudio_ko.ts").exists()
    # A formula in Korean says 바이트, not the English "bytes" (#33: "2·L·T·H_kv·d·bytes")
    import xml.etree.ElementTree as ET

    root = ET.parse(TRANSLATIONS_DIR / "kvstudio_ko.ts").getroot()
    english = [t.text for t in root.iter("translation") if t.text and "·bytes" in t.text]
    assert english == []
    # A Korean range is "최소~최대": a hyphen or dash is a line-break opportunity, and a
    # narrow chart title broke as "최소-/최대" (#33); "~" is none, and is how Korean writes it
    broken = [t.text for t in root.iter("translation")
              if t.text and ("최소-최대" in t.text or "최소–최대" in t.text)]
    assert broken == []


def test_language_switch_changes_labels(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(language="en")
    english = window.controls.step_button.text()
    assert english == "Step ▸"
    window.language_actions["ko"].trigger()
    qtbot.waitUntil(lambda: window.controls.step_button.text() != english, timeout=HANG_GUARD_MS)
    assert window.controls.step_button.text() == "한 토큰 ▸"
    assert window.tabs.tabText(0) == "실시간"
    assert window.tokens_plot.plot_item.titleLabel.text.startswith("단계별")
    assert window.settings.language() == "ko"
    window.language_actions["en"].trigger()
    qtbot.waitUntil(lambda: window.controls.step_button.text() == english, timeout=HANG_GUARD_MS)


def test_empty_prompt_gives_a_message_and_keeps_the_prompt(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    window.generation.set_prompt("   ")
    window.controls.step_button.click()
    qtbot.waitUntil(lambda: "empty" in window.last_problem, timeout=HANG_GUARD_MS)
    assert window.generation.prompt() == "   "
    assert window.controller.store.current is None


def test_too_long_a_run_gives_a_message(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=4000)  # the tiny model has 1024 positions
    window.generation.set_prompt("긴 질문입니다")
    window.controls.step_button.click()
    qtbot.waitUntil(lambda: "positions" in window.last_problem, timeout=HANG_GUARD_MS)
    assert window.generation.prompt() == "긴 질문입니다"


def test_bad_checkpoint_folder_is_a_message_and_keeps_the_model(qtbot, make_window,
                                                                tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    before = window.controller.model
    window.model_panel.model_chosen.emit(ModelChoice("folder", str(tmp_path)))
    qtbot.waitUntil(lambda: "config.json" in window.last_problem, timeout=HANG_GUARD_MS)
    assert window.controller.model is before
    window.controls.step_button.click()  # the old model still steps
    qtbot.waitUntil(lambda: window.controller.store.current is not None
                    and len(window.controller.store.current.records) == 1, timeout=HANG_GUARD_MS)


def test_settings_are_remembered(qtbot, make_window, settings_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    window.sampling.temperature_box.setValue(1.25)
    window.sampling.top_k_box.setValue(20)
    window.controls.set_mode("recompute")
    window.generation.set_prompt("기억해 주세요")
    window.close()
    saved = AppSettings(QSettings(str(settings_path), QSettings.Format.IniFormat))
    rs = saved.run_settings()
    assert rs.sampling.temperature == pytest.approx(1.25)
    assert rs.sampling.top_k == 20 and rs.mode == "recompute"
    assert saved.prompt() == "기억해 주세요"
    assert saved.model_choice().kind == "embedded-chat"
    assert saved.geometry() is not None
    # Opened again: the status bar names the remembered mode before any step (#33: it said
    # "Mode: Cached" under a dock that said Recompute), and follows the dock's switch.
    again = make_window()
    assert again.controls.mode() == "recompute" and again.controller.shown().current is None
    assert again.status.field_text("mode") == "Mode: Recompute"
    again.controls.set_mode("cached")
    assert again.status.field_text("mode") == "Mode: Cached"


def test_every_plot_exposes_its_plot_item(make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    plots = window.plots()
    assert set(plots) == {"tokens_fed", "step_time", "cache_bytes", "answers"}
    for plot in plots.values():
        assert plot.plot_item is plot.getPlotItem()


def test_language_follows_the_system_locale_unless_chosen() -> None:
    from PySide6.QtCore import QLocale

    from kvstudio.charts.i18n import resolve_language

    assert resolve_language("system", QLocale("ko_KR")) == "ko"
    assert resolve_language("system", QLocale("de_DE")) == "en"
    assert resolve_language("en", QLocale("ko_KR")) == "en"


def test_model_flag_becomes_the_model_menu_choice(tmp_path: Path) -> None:
    pth = tmp_path / "full_sft_512.pth"
    args = parse_args(["--model", str(pth)])
    choice = model_choice_from_args(args.model, args.tokenizer)
    assert (choice.kind, choice.path, choice.tokenizer_path) == ("pth", str(pth), str(tmp_path))
    tok = tmp_path / "tok"
    assert model_choice_from_args(str(pth), str(tok)).tokenizer_path == str(tok)
    assert model_choice_from_args(str(tmp_path)) == ModelChoice("folder", str(tmp_path))
    assert model_choice_from_args("ko-base").kind == "embedded-base"
    assert parse_args([]).model is None


def test_model_picker_names_an_opened_folder(qtbot, make_window, tiny_model, tokenizer,  # type: ignore[no-untyped-def]
                                             tmp_path: Path) -> None:
    from kvstudio.files.checkpoints import save_model_folder

    window = make_window()
    panel = window.model_panel
    assert panel.shown_choice() == "embedded-chat"
    folder = save_model_folder(tiny_model, tokenizer, tmp_path / "my-model")
    panel.model_chosen.emit(ModelChoice("folder", str(folder)))
    qtbot.waitUntil(lambda: choice_of(window.controller.model).kind == "folder",
                    timeout=HANG_GUARD_MS)
    # The combo names the folder's model instead of still showing an embedded one.
    assert panel.shown_choice() == "opened"
    assert "my-model" in panel.model_box.currentText()
    panel.model_chosen.emit(ModelChoice("embedded-base"))
    qtbot.waitUntil(lambda: choice_of(window.controller.model).kind == "embedded-base",
                    timeout=HANG_GUARD_MS)
    assert panel.shown_choice() == "embedded-base"
    assert panel.model_box.count() == 2  # the opened entry is gone with its model


def test_a_fresh_settings_folder_opens_on_the_course_preset(tmp_path: Path) -> None:
    """The dock's sliding window W started at 32 on a fresh settings folder while the
    course preset, the labs, the command line and the docs say 64."""
    fresh = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    run = fresh.run_settings()
    assert run.cache.window == COURSE.window == 64
    assert run.max_new_tokens == COURSE.new_tokens
    assert run.sampling == COURSE.sampling
