"""Issue #33: the top-p lab says why it shows its step, marks a chosen token past the 20
bars, tells special tokens apart and puts the vocabulary on its survivors axis.

Each check measures what is drawn: the bar item's bars and pens, the chosen mark's scene
rectangle, the tick labels each axis draws now (pyqtgraph's own draw specs), the status
label's text.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lab_helpers import run_stepped, show_lab
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QImage, QPainter

from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.labs.cutoff_lab import TopPTopKPanel
from kvstudio.ui.slides.export_menu import ChartExporter
from tests.ui.waits import HANG_GUARD_MS

SIZE = (1366, 768)


def tick_rects(axis: Any) -> list[tuple[str, QRectF]]:
    """Every tick label `axis` draws now, with its rect in scene px (pyqtgraph's specs)."""
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        font = axis.style["tickFont"]
        if font is not None:
            painter.setFont(font)
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(text, axis.mapRectToScene(rect)) for rect, _, text in texts]


def _ran(qtbot: Any, exporter: ChartExporter, model: LoadedModel) -> TopPTopKPanel:
    panel = show_lab(qtbot, TopPTopKPanel, exporter, model, size=SIZE)
    panel.new_tokens.setValue(3)
    run_stepped(qtbot, panel)
    return panel


def _bars(panel: TopPTopKPanel) -> tuple[list[float], list[float], list[Any]]:
    opts = panel.cutoff_view._bars.opts
    return [float(x) for x in opts["x"]], [float(h) for h in opts["height"]], opts["pens"]


def test_the_status_and_headline_say_why_the_step_is_shown(  # type: ignore[no-untyped-def]
    qtbot, exporter: ChartExporter, tiny_handle: LoadedModel
) -> None:
    panel = _ran(qtbot, exporter, tiny_handle)
    view = panel.cutoff_view
    shown = view.shown_step()
    vocab = shown.vocab_size
    assert vocab > 0 and vocab == shown.record.survivors_top_k[0]  # top-k off: every token
    why = (f"Step {shown.step}: the widest cut, {shown.record.survivors_top_p[0]:,} "
           f"survivors of {vocab:,}; p = {view.params['top_p']:g}")
    assert why in panel.status.text()
    assert panel.status.text().startswith("Finished. Text:")
    assert f"Step {shown.step}, the widest cut" in panel.headline()
    assert f"of {vocab:,} tokens" in panel.headline()
    others = [i for i in range(len(view.steps)) if view.steps[i] is not shown]
    panel.table.setCurrentCell(others[0], 0)  # another step: no "widest" claim
    assert view.shown_step() is view.steps[others[0]]
    assert "widest" not in panel.headline() and "widest" not in panel.status.text()
    panel.shutdown()


def test_a_chosen_token_past_the_bars_gets_a_bar_and_its_rank(  # type: ignore[no-untyped-def]
    qtbot, exporter: ChartExporter, tiny_handle: LoadedModel
) -> None:
    panel = _ran(qtbot, exporter, tiny_handle)
    view = panel.cutoff_view
    index = 0
    step = replace(view.steps[index], chosen_rank=None, chosen_place=57,
                   chosen_text="연락", chosen_probability_before=0.004)
    view.steps[index] = step
    panel.show_step(index)
    n = len(step.probabilities)
    xs, heights, pens = _bars(panel)
    assert len(xs) == n + 1 and xs[-1] == n + 1  # one bar more, after a gap
    assert heights[-1] > 0 and pens[-1].widthF() == 3  # outlined as the chosen one
    mark = view._chosen_mark
    assert mark.isVisible() and "rank 57" in mark.textItem.toPlainText()
    box = view.dist_plot.getViewBox()
    # Drawn whole, inside the plot: a TextItem takes its place from the view's transform
    # when the view next updates (on a loaded machine the layout may still move first).
    qtbot.waitUntil(lambda: box.sceneBoundingRect().contains(mark.sceneBoundingRect()),
                    timeout=5000)
    drawn = dict((text, rect) for text, rect in tick_rects(view.dist_plot.getAxis("bottom")))
    assert "연락" in drawn  # its label is drawn under it
    last_bar = view.dist_plot.getViewBox().mapViewToScene(QPointF(n - 1, 0)).x()
    assert drawn["연락"].center().x() > last_bar  # under its bar, past the 20
    note = "chosen: 연락, rank 57, outside the top 20"
    assert note in panel.headline() and note in panel.status.text()
    panel.shutdown()


def test_special_tokens_that_start_alike_are_labelled_apart(  # type: ignore[no-untyped-def]
    qtbot, exporter: ChartExporter, tiny_handle: LoadedModel
) -> None:
    panel = _ran(qtbot, exporter, tiny_handle)
    view = panel.cutoff_view
    index = 0
    texts = list(view.steps[index].token_texts)
    texts[0], texts[6] = "<|im_end|>", "<|im_start|>"
    view.steps[index] = replace(view.steps[index], token_texts=tuple(texts), chosen_rank=6)
    panel.show_step(index)
    drawn = [text for text, _ in tick_rects(view.dist_plot.getAxis("bottom"))]
    assert "<|im_end|>" in drawn and "<|im_start|>" in drawn  # both kept, both whole
    assert len(drawn) == len(set(drawn))
    panel.shutdown()


def test_the_survivors_axis_has_a_tick_at_the_vocabulary(  # type: ignore[no-untyped-def]
    qtbot, exporter: ChartExporter, tiny_handle: LoadedModel
) -> None:
    panel = _ran(qtbot, exporter, tiny_handle)
    view = panel.cutoff_view
    vocab = view.steps[0].record.survivors_top_k[0]  # top-k off: every token
    assert vocab == view.steps[0].vocab_size
    ticks = tick_rects(view.surv_plot.getAxis("left"))
    texts = [text for text, _ in ticks]
    assert f"{vocab:,}" in texts, texts
    rects = [rect for _, rect in ticks]
    for i, a in enumerate(rects):  # drawn apart
        for b in rects[i + 1:]:
            assert not a.intersects(b), texts
    panel.shutdown()


def test_a_low_plot_keeps_the_p_label_and_the_chosen_mark_whole(  # type: ignore[no-untyped-def]
    qtbot, exporter: ChartExporter, tiny_handle: LoadedModel
) -> None:
    panel = _ran(qtbot, exporter, tiny_handle)
    view = panel.cutoff_view
    index = 0
    step = view.steps[index]
    tall = (0.95, *[0.05 / (len(step.probabilities) - 1)] * (len(step.probabilities) - 1))
    view.steps[index] = replace(step, probabilities=tall, chosen_rank=0, top_k_mass=1.0)
    panel.show_step(index)
    view.layout_widget.setFixedHeight(260)  # the presenter's 120 px plot at 1366×768
    qtbot.waitUntil(lambda: view.dist_plot.getViewBox().height() < 140, timeout=HANG_GUARD_MS)
    view.layout_widget.grab()  # drawn: the view box maps with its new range
    box = view.dist_plot.getViewBox().sceneBoundingRect()
    label = view._p_level.label
    assert view._p_level.isVisible()
    assert box.contains(label.sceneBoundingRect()), (box, label.sceneBoundingRect())
    mark = view._chosen_mark
    assert mark.isVisible()
    assert box.contains(mark.sceneBoundingRect()), (box, mark.sceneBoundingRect())
    panel.shutdown()
