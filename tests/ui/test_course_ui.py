"""The window starts from the course preset: the dock, Sample ×N, the labs, the cache lab."""

from __future__ import annotations

from lab_helpers import run_lab, show_lab

from kvstudio.labs.course import COURSE, NOTEBOOK
from kvstudio.labs.sampling.temperature import TemperatureLabResult
from kvstudio.ui.labs import (
    CacheKindsPanel,
    CacheVsRecomputePanel,
    LengthSweepPanel,
    QuantizedCachePanel,
    TemperaturePanel,
    TopPTopKPanel,
)
from kvstudio.ui.panels.answer_panel import AnswerPanel
from kvstudio.ui.panels.sampling_panel import SamplingPanel
from kvstudio.ui.plots.answer_histogram import AnswerHistogramPlot
from kvstudio.ui.run.engine_adapter import DEFAULT_PROMPT, AnswerCounts, RunSettings


def test_the_dock_and_sample_n_start_from_the_preset(qtbot) -> None:  # type: ignore[no-untyped-def]
    dock = SamplingPanel()
    qtbot.addWidget(dock)
    assert dock.sampling() == COURSE.sampling
    assert dock.run_settings("cached").max_new_tokens == COURSE.new_tokens
    answers = AnswerPanel()
    qtbot.addWidget(answers)
    assert answers.samples_box.value() == COURSE.samples
    assert answers.length_box.value() == COURSE.answer_tokens  # was 8 live, 16 in the lab
    assert answers.temperatures_edit.text() == COURSE.temperatures_text()
    assert DEFAULT_PROMPT == COURSE.question
    spec = dock.cache_spec()
    assert (spec.window, spec.max_length) == (COURSE.window, COURSE.static_length)
    assert RunSettings().sampling == COURSE.sampling


def test_temperature_lab_top_p_is_the_docks(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    dock = SamplingPanel()
    qtbot.addWidget(dock)
    panel = show_lab(qtbot, TemperaturePanel, exporter, tiny_handle)
    assert panel.sampling().top_p == dock.sampling().top_p == COURSE.top_p  # was 1.0 vs 0.85
    assert panel.sampling().top_k == dock.sampling().top_k
    assert panel.prompt.text() == COURSE.question
    assert panel.temperatures.text() == COURSE.temperatures_text()
    assert panel.new_tokens.value() == COURSE.answer_tokens
    assert panel.settings_label.isVisible()
    assert "top-p 0.85" in panel.settings_label.text()
    assert "The course preset" in panel.settings_label.text()
    panel.samples.setValue(3)
    panel.new_tokens.setValue(3)
    panel.temperatures.setText("0.5, 1.2")
    result = run_lab(qtbot, panel)
    assert isinstance(result, TemperatureLabResult)
    assert result.cached.settings.top_p == dock.sampling().top_p
    assert "top-p 0.85" in panel.headline()  # the slide prints the settings that made it
    assert panel.numbers()["top_p"] == COURSE.top_p
    panel.top_p.setValue(1.0)  # the label keeps saying what made the chart on screen
    assert "top-p 0.85" in panel.settings_label.text()
    panel.shutdown()


def test_a_changed_setting_is_shown_on_screen(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, TemperaturePanel, exporter, tiny_handle)
    panel.top_p.setValue(1.0)
    assert "Changed from the course preset: top-p off (course 0.85)" in panel.settings_label.text()
    panel.shutdown()


def test_top_p_lab_starts_at_the_course_settings(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, TopPTopKPanel, exporter, tiny_handle)
    assert panel.sampling() == COURSE.sampling  # was T 0.90 and top-k 10
    assert panel.settings_label.isVisible() and "top-k off" in panel.settings_label.text()
    panel.shutdown()


def test_the_notebook_case_is_one_click(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, CacheVsRecomputePanel, exporter, tiny_handle)
    assert (panel.prompt_tokens.value(), panel.new_tokens.value()) == (183, 64)
    panel.choose_preset("notebook")
    assert (panel.prompt_tokens.value(), panel.new_tokens.value()) == (
        NOTEBOOK.prompt_tokens, NOTEBOOK.new_tokens)
    panel.choose_preset("course")
    assert (panel.prompt_tokens.value(), panel.new_tokens.value()) == (183, 64)
    panel.shutdown()


def test_the_cache_labs_start_from_the_preset(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    kinds = show_lab(qtbot, CacheKindsPanel, exporter, tiny_handle)
    assert (kinds.prompt_tokens.value(), kinds.new_tokens.value(), kinds.window_size.value()) == (
        COURSE.prompt_tokens, COURSE.new_tokens, COURSE.window)
    sweep = show_lab(qtbot, LengthSweepPanel, exporter, tiny_handle)
    assert sweep.vary.currentData() == COURSE.sweep_vary
    assert sweep.fixed.value() == COURSE.sweep_fixed
    quant = show_lab(qtbot, QuantizedCachePanel, exporter, tiny_handle)
    assert (quant.prompt_tokens.value(), quant.new_tokens.value()) == (183, 64)
    for panel in (kinds, sweep, quant):
        panel.shutdown()


def test_the_answer_chart_says_which_settings_made_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    plot = AnswerHistogramPlot()
    qtbot.addWidget(plot)
    plot.show_counts(AnswerCounts((0.3, 0.85), ((("a", 2),), (("a", 1), ("b", 1))), 2,
                                  answer_tokens=COURSE.answer_tokens, sampling=COURSE.sampling))
    assert plot.headline().splitlines()[-1] == (
        "Settings: top-k off · top-p 0.85 · penalty 1 · seed 42 · ≤ 32 tokens · no chat template")


def test_the_cache_lab_says_it_runs_greedy(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, CacheVsRecomputePanel, exporter, tiny_handle)
    assert panel.settings_label.isVisible()
    assert "Greedy in both modes, not the course's T 0.85" in panel.settings_label.text()
    assert panel.settings_label.text().endswith("the course preset")
    panel.choose_preset("notebook")
    assert panel.settings_label.text().endswith("the seed notebook's case")
    panel.shutdown()
