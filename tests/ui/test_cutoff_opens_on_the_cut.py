"""Issue #33: the top-p / top-k lab opens, after a run, on the widest top-p cut."""

from __future__ import annotations

from lab_helpers import run_stepped, show_lab

from kvstudio.charts.plots.token_axis import distinct_ticks
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.labs.cutoff_lab import TopPTopKPanel
from kvstudio.ui.slides.export_menu import ChartExporter


def test_opens_on_the_step_with_the_most_top_p_survivors(  # type: ignore[no-untyped-def]
    qtbot, exporter: ChartExporter, tiny_handle: LoadedModel
) -> None:
    panel = show_lab(qtbot, TopPTopKPanel, exporter, tiny_handle)
    panel.new_tokens.setValue(5)
    run_stepped(qtbot, panel)
    view = panel.lab_view
    counts = [s.record.survivors_top_p[0] for s in view.steps]
    widest = max(range(len(counts)), key=lambda i: (counts[i], -i))
    assert widest != len(counts) - 1  # else the old "open on the last step" passes too
    shown = view.shown_step()
    assert shown.step == view.steps[widest].step
    assert panel.table.currentRow() == widest
    head = panel.headline()
    assert f"Step {shown.step}, the widest cut" in head and f"{counts[widest]:,}" in head
    ticks = view.dist_plot.getAxis("bottom")._tickLevels  # type: ignore[attr-defined]
    labels = {}
    for level in ticks:
        for x, text in level:
            labels[int(x)] = text
    labels = {x: text for x, text in labels.items() if x < len(shown.token_texts)}  # bars
    for i, a in labels.items():
        for j, b in labels.items():
            if i != j and shown.token_texts[i] != shown.token_texts[j]:
                assert a != b
    panel.shutdown()


def test_distinct_ticks_tell_clashing_tokens_apart() -> None:
    ticks = distinct_ticks(["‹|im_…", "‹|im_…", "a"], ["<|im_start|>", "<|im_end|>", "a"])
    assert len(set(ticks)) == 3 and ticks[2] == "a"
    assert distinct_ticks(["a", "a"], ["a", "a"]) == ["a", "a"]


def test_the_chosen_token_is_marked(  # type: ignore[no-untyped-def]
    qtbot, exporter: ChartExporter, tiny_handle: LoadedModel
) -> None:
    panel = show_lab(qtbot, TopPTopKPanel, exporter, tiny_handle)
    panel.new_tokens.setValue(5)
    panel.temperature.setValue(0.05)  # sharp: the choice lies among the bars
    run_stepped(qtbot, panel)
    view = panel.lab_view
    inside = [i for i, s in enumerate(view.steps) if s.chosen_rank is not None]
    assert inside  # some step chose one of the bars drawn
    panel.show_step(inside[0])
    shown = view.shown_step()
    mark = view._chosen_mark
    assert mark.isVisible() and "chosen" in mark.textItem.toPlainText()
    assert mark.pos().x() == float(shown.chosen_rank)
    panel.shutdown()
