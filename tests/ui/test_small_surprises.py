"""Small surprises a lecturer met (issue 22), each fixed: what the button says is what it does,
Enter does what the button next to it does, a stray key never replaces a prompt, and the
projector opens on a chart that reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from kvstudio.charts.plots.token_axis import token_tick
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs import scale
from kvstudio.ui.classroom import ClassroomExtras, install
from kvstudio.ui.labs.chat_lab import ChatPanel
from kvstudio.ui.labs.cutoff_lab import TopPTopKPanel
from kvstudio.ui.labs.projector_lab import OPENING_PRESET, ProjectorPanel
from kvstudio.ui.run.engine_adapter import DEFAULT_PROMPT
from kvstudio.ui.slides.export_menu import ChartExporter
from tests.ui.lab_helpers import run_lab, show_lab
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")


def test_next_scripted_turn_button_sends_it(qtbot, exporter: ChartExporter,  # type: ignore[no-untyped-def]
                                            tiny_handle: LoadedModel) -> None:
    panel = show_lab(qtbot, ChatPanel, exporter, tiny_handle, size=(1200, 800))
    panel.answer_tokens.setValue(3)
    assert "Send" in panel.script_button.text()  # it says what it does
    with qtbot.waitSignal(panel.result_ready, timeout=HANG_GUARD_MS):
        panel.script_button.click()
    turns = panel.lab_view.turns
    assert len(turns) == 1 and turns[0].user_text  # the scripted line went out
    assert panel.shutdown()


def test_enter_in_the_temperatures_field_samples(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=4)
    answers = window.answers
    answers.samples_box.setValue(3)
    answers.length_box.setValue(2)
    answers.temperatures_edit.setText("0.5, 1.5")
    with qtbot.waitSignal(window.controller.sampling_finished, timeout=HANG_GUARD_MS):
        qtbot.keyClick(answers.temperatures_edit, Qt.Key.Key_Return)
    counts = answers.plot.counts
    assert counts is not None and counts.temperatures == (0.5, 1.5)


def test_top_p_prompt_is_not_left_selected(qtbot, exporter: ChartExporter,  # type: ignore[no-untyped-def]
                                           tiny_handle: LoadedModel) -> None:
    panel = show_lab(qtbot, TopPTopKPanel, exporter, tiny_handle)
    panel.activateWindow()
    qtbot.waitUntil(panel.isActiveWindow, timeout=HANG_GUARD_MS)
    panel.prompt.setFocus(Qt.FocusReason.TabFocusReason)  # Qt selects all on Tab focus
    qtbot.waitUntil(lambda: panel.prompt.hasFocus() and not panel.prompt.hasSelectedText(),
                    timeout=HANG_GUARD_MS)
    qtbot.keyClick(panel.prompt, Qt.Key.Key_X)  # a stray key
    assert panel.prompt.text() == DEFAULT_PROMPT + "x"  # added at the end, nothing replaced
    assert panel.shutdown()


def test_a_token_that_is_part_of_a_character_shows_its_bytes_whole() -> None:
    assert token_tick("<0xEC><0x9E>") == "⟨EC 9E⟩"
    assert token_tick("너무") == "너무"


def test_projector_opens_on_a_preset_whose_gpu_lines_are_on_the_chart(  # type: ignore[no-untyped-def]
        qtbot, exporter: ChartExporter, tiny_handle: LoadedModel) -> None:
    panel = show_lab(qtbot, ProjectorPanel, exporter, tiny_handle, size=(1100, 700))
    assert panel.source.currentData() == OPENING_PRESET  # not "the loaded model"
    run_lab(qtbot, panel)
    fits = re.findall(r"(\d+) ✓", panel.headline())
    assert fits, panel.headline()
    first_fit = min(int(g) for g in fits)
    top = panel.lab_view.plot.vb.viewRange()[1][1]
    assert first_fit in scale.GPU_MEMORY_GIB and first_fit < top  # the "✓" line is drawn
    cache = panel.numbers()["cache_bytes"] / scale.GIB
    assert cache < top and cache > top / 20  # the data fill the chart, not lie flat
    assert panel.shutdown()


def test_projector_line_of_the_first_fitting_gpu_for_a_big_run(  # type: ignore[no-untyped-def]
        qtbot, exporter: ChartExporter, tiny_handle: LoadedModel) -> None:
    panel = show_lab(qtbot, ProjectorPanel, exporter, tiny_handle, size=(1100, 700))
    panel.source.setCurrentIndex(panel.source.findData("llama-3.1-8b"))
    run_lab(qtbot, panel)
    fits = [int(g) for g in re.findall(r"(\d+) ✓", panel.headline())]
    top = panel.lab_view.plot.vb.viewRange()[1][1]
    assert not fits or min(fits) < top
    assert panel.shutdown()


def test_slide_pack_goes_into_a_new_folder(qtbot, make_window, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window(max_new_tokens=3)
    extras = getattr(window, "classroom", None)
    if not isinstance(extras, ClassroomExtras):
        extras = install(window)
    target = tmp_path / "not" / "there" / "yet"
    extras.exporter.folder_chooser = lambda *a: str(target)
    window.controller.run_to_end()
    qtbot.waitUntil(lambda: window.controller.store.current is not None
                    and window.controller.store.current.finished, timeout=HANG_GUARD_MS)
    window.controller.pacer.flush()
    assert extras.export_slide_pack()
    assert (target / "numbers.json").is_file()


def test_folded_answers_are_one_labelled_element_not_a_tall_bar(qtbot) -> None:  # type: ignore[no-untyped-def]
    from kvstudio.ui.plots.answer_histogram import MAX_BARS, AnswerHistogramPlot
    from kvstudio.ui.run.engine_adapter import AnswerCounts

    common = [(f"common {i}", 3) for i in range(MAX_BARS - 1)]
    rare = [(f"rare {i}", 1) for i in range(29)]
    counts = AnswerCounts((0.85,), (tuple(common + rare),), len(common) * 3 + 29)
    plot = AnswerHistogramPlot()
    qtbot.addWidget(plot)
    plot.show_counts(counts)
    assert plot.fold_text() == "others: 29 answers, 1 each"
    assert len(plot.folded_answers()) == 29
    heights = [float(h) for h in plot._groups[0].opts["height"]]
    assert heights == [3.0] * (MAX_BARS - 1)  # the temperature's bars: the common answers only
    fold = plot._fold_bar.opts
    assert list(fold["height"]) == [1.0]  # as high as one of them, not 29
    ticks = plot.plot_item.getAxis("bottom")._tickLevels[0]
    assert ticks[-1][1] == "others"
    assert sum(plot.bar_totals()) == counts.samples_per_temperature  # every sample counted
    assert "answer no." in plot.plot_item.getAxis("bottom").labelText  # not "rank"


def test_top_p_chart_labels_the_top_and_the_chosen_token(qtbot, exporter: ChartExporter,  # type: ignore[no-untyped-def]
                                                        tiny_handle: LoadedModel) -> None:
    panel = show_lab(qtbot, TopPTopKPanel, exporter, tiny_handle)
    panel.new_tokens.setValue(3)
    with qtbot.waitSignal(panel.runner.paused, timeout=HANG_GUARD_MS):
        assert panel.run()
    step = panel.lab_view.steps[0]
    first_level = panel.lab_view.dist_plot.getAxis("bottom")._tickLevels[0]
    labelled = {round(x) for x, _ in first_level}
    assert 0 in labelled  # the most likely token
    if step.chosen_rank is not None:
        assert step.chosen_rank in labelled  # never dropped for a neighbour
        assert not {step.chosen_rank - 1, step.chosen_rank + 1} - {0} & labelled
    else:  # past the bars: its own bar after a gap, labelled too
        assert step.chosen_outside() and len(step.token_ids) + 1 in labelled
    second_level = panel.lab_view.dist_plot.getAxis("bottom")._tickLevels[1]
    bars = set(range(len(step.token_ids))) | (
        {len(step.token_ids) + 1} if step.chosen_outside() else set())
    assert labelled | {round(x) for x, _ in second_level} == bars
    panel.cancel()
    assert panel.shutdown()


def test_the_answers_slide_states_the_settings_that_made_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    from kvstudio.engine.records import SamplingSettings
    from kvstudio.ui.plots.answer_histogram import AnswerHistogramPlot
    from kvstudio.ui.run.engine_adapter import AnswerCounts

    counts = AnswerCounts((0.3, 1.5), ((("a", 2),), (("a", 1), ("b", 1))), 2,
                          answer_tokens=8, sampling=SamplingSettings(), use_chat_template=True)
    plot = AnswerHistogramPlot()
    qtbot.addWidget(plot)
    plot.show_counts(counts)
    first, second = plot.headline().splitlines()
    assert "T = 0.3: 1 distinct of 2" in first
    assert second == ("Settings: top-k off · top-p 0.85 · penalty 1 · seed 42 · ≤ 8 tokens · "
                      "chat template")
