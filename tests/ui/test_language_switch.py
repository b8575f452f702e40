"""A language switch mid-run redraws every visible text at once (walking the widget tree),
error messages come in the window's language, and --lang is remembered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import QLocale, QSettings
from visible_text import visible_texts

from kvstudio.charts.i18n import locale_names_no_language
from kvstudio.charts.messages import TEMPLATES, localize, match
from kvstudio.ui.app.settings import AppSettings
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")
HANGUL = re.compile(r"[\uac00-\ud7a3]")
WORD = re.compile(r"[A-Za-z]{3,}")
# Words that stay as they are in Korean: names, units and the course's symbols.
KEEP = {"KV", "Studio", "TTFT", "KiB", "MiB", "torch", "cpu", "Top", "MiniMind", "pth",
        "tiny", "test", "top", "bytes", "Space", "End", "Home", "Page", "Down", "PNG", "SVG", "PDF",
        "CSV", "chat", "base", "fp32", "bf16", "fp16", "im_end", "im_start",
        "eos"}  # the end-of-answer token's name, as the Korean course writes it


def _steps(qtbot, window, n: int) -> None:  # type: ignore[no-untyped-def]
    for k in range(1, n + 1):
        window.controls.step_button.click()
        qtbot.waitUntil(lambda k=k: window.controller.store.current is not None
                        and len(window.controller.store.current.records) == k,
                        timeout=HANG_GUARD_MS)


def _mid_run_with_a_lab(qtbot, make_window, language: str):  # type: ignore[no-untyped-def]
    """Both modes drawn (cached 3 steps, recompute 2), and the top-p lab one step in."""
    window = make_window(language=language, max_new_tokens=16)
    _steps(qtbot, window, 3)
    window.controls.set_mode("recompute")
    qtbot.waitUntil(lambda: window.controller.store.current_mode == "recompute",
                    timeout=HANG_GUARD_MS)
    _steps(qtbot, window, 2)
    window.controller.pacer.flush()
    lab = window.classroom.labs.panels["cutoff"]
    lab.new_tokens.setValue(3)
    with qtbot.waitSignal(lab.runner.paused, timeout=HANG_GUARD_MS):
        assert lab.run()
    return window, lab


def _switch(qtbot, window, code: str) -> None:  # type: ignore[no-untyped-def]
    window.language_actions[code].trigger()
    qtbot.wait(50)  # Qt posts LanguageChange: one turn of the event loop, no more


def _texts_of_both_tabs(qtbot, window, lab) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    texts = visible_texts(window)
    window.tabs.setCurrentWidget(window.classroom.labs)
    window.classroom.labs.tabs.setCurrentWidget(lab)
    texts += visible_texts(window)
    window.tabs.setCurrentIndex(0)
    return texts


def test_switching_to_korean_mid_run_leaves_no_english(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window, lab = _mid_run_with_a_lab(qtbot, make_window, "en")
    english = _texts_of_both_tabs(qtbot, window, lab)
    # What the issue saw stay behind is on screen before the switch:
    shown = " | ".join(text for _, text in english)
    for phrase in ("run: 2 of 16 new tokens", "TTFT", "measured", "Step 0: chose", "Live: paused"):
        assert phrase in shown
    _switch(qtbot, window, "ko")
    leftovers = [(where, text) for where, text in _texts_of_both_tabs(qtbot, window, lab)
                 if set(WORD.findall(text)) - KEEP]
    assert not leftovers, leftovers
    assert "측정" in window.cache_plot.summary  # the measured-vs-formula title is still there
    assert window.time_plot.ttft_labels()  # and the TTFT label


def test_switching_to_english_mid_run_leaves_no_korean(qtbot, make_window) -> None:  # type: ignore[no-untyped-def]
    window, lab = _mid_run_with_a_lab(qtbot, make_window, "ko")
    assert any(HANGUL.search(text) for _, text in _texts_of_both_tabs(qtbot, window, lab))
    _switch(qtbot, window, "en")
    leftovers = [(where, text) for where, text in _texts_of_both_tabs(qtbot, window, lab)
                 if HANGUL.search(text)]
    assert not leftovers


def test_validation_and_export_messages_come_in_korean(qtbot, make_window,  # type: ignore[no-untyped-def]
                                                      tmp_path: Path) -> None:
    window = make_window(language="ko")
    window.generation.set_prompt("   ")
    window.controls.step_button.click()
    qtbot.waitUntil(lambda: bool(window.last_problem), timeout=HANG_GUARD_MS)
    assert window.last_problem.startswith("프롬프트가 비어 있습니다")
    window.answers.temperatures_edit.setText("abc")
    window.answers.go_button.click()
    assert window.last_problem.startswith("온도 'abc'를 읽을 수 없습니다")

    extras = window.classroom
    (tmp_path / "a-file").write_text("not a folder")
    extras.exporter.folder_chooser = lambda *a: str(tmp_path / "a-file" / "pack")
    assert not extras.export_slide_pack()
    assert HANGUL.search(extras.last_warning), extras.last_warning


def test_every_message_template_matches_itself_and_unknown_ones_pass_through() -> None:
    for template in TEMPLATES:
        values = [f"<{i}>" for i in range(template.count("{"))]
        message = template.format(*values)
        assert match(message) == (template, values)
    assert localize("Something nobody templated.") == "Something nobody templated."


def test_lang_flag_is_remembered(qtbot, make_window, settings_path: Path) -> None:  # type: ignore[no-untyped-def]
    make_window(language="ko")
    assert AppSettings(QSettings(str(settings_path), QSettings.Format.IniFormat)).language() == "ko"


def test_a_c_locale_is_recognised() -> None:
    assert locale_names_no_language(QLocale(QLocale.Language.C))
    assert not locale_names_no_language(QLocale("ko_KR"))
    assert not locale_names_no_language(QLocale("en_US"))


def test_korean_messages_take_the_particle_that_fits_the_value(make_window) -> None:  # type: ignore[no-untyped-def]
    """A translated message never shows "이(가)" marks: each takes the form its value needs."""
    make_window(language="ko")
    assert localize("top_k must be a whole number, got 1.5.") == (
        "top_k는 정수여야 하는데 1.5입니다.")  # k reads 케이: no final consonant, so 는
    message = localize("model.pth does not exist; choose a checkpoint folder.")
    assert "(" not in message.split(";")[0] and "이(가)" not in message and "을(를)" not in message
    assert message.startswith("model.pth가 없습니다.")  # h (에이치): no final consonant


def test_a_korean_packs_csv_columns_are_korean(qapp) -> None:  # type: ignore[no-untyped-def]
    """sample-answers.csv, <mode>-steps.csv and a lab table's unnamed column are written in the
    class's language (#33 found English headers in the Korean pack); English stays as it was."""
    from kvstudio.charts.i18n import LanguageSwitcher
    from kvstudio.charts.plots.results_table import ResultsTable
    from kvstudio.engine.records import SamplingSettings
    from kvstudio.ui.run.engine_adapter import AnswerCounts
    from kvstudio.ui.slides.numbers import answer_rows

    counts = AnswerCounts(temperatures=(0.3,), counts=((("답", 3),),), samples_per_temperature=3,
                          prompt="q", sampling=SamplingSettings())
    table = ResultsTable()
    table.set_rows(["", "Cached"], [("tokens fed", 25)])
    languages = LanguageSwitcher(qapp)
    try:
        assert languages.apply("ko") == "ko"
        assert list(answer_rows(counts)[0]) == ["답 번호", "답", "T = 0.3에서 횟수 (3회 중)"]
        assert next(iter(table.values()[0])) == "항목"
    finally:
        languages.apply("en")
    assert list(answer_rows(counts)[0]) == ["answer no.", "answer", "count at T = 0.3 (of 3)"]
    assert next(iter(table.values()[0])) == "quantity"
