"""Token labels never overlap: the top-p chart's axis keeps the top and the chosen token's
labels at every width (shortened with "…" where the two would touch, as "⟨EC 98⟩너무" did in
a narrow presenter) and leaves out any other label that would touch one already drawn."""

from __future__ import annotations

import itertools

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QFont, QFontMetricsF, QImage, QPainter

from kvstudio.charts.plots.token_axis import LABEL_GAP, TokenAxis
from tests.ui.settle import settle
from tests.ui.waits import HANG_GUARD_MS

pytestmark = pytest.mark.usefixtures("qapp")
TOKENS = ["⟨EC 98⟩", "너무", "정말", "⟨EB 8B⟩", "그리고", "␣아주", "많이", "…", "좋아요", "음"]


def _drawn(axis: TokenAxis) -> list[tuple[float, float, float, str]]:
    """(left, right, centre, text) of every label the axis draws now, left to right."""
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        font = axis.style["tickFont"]
        if font is not None:
            painter.setFont(font)
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    assert specs is not None
    return [(r.left(), r.right(), r.center().x(), text) for r, _, text in specs[2]]


def _plot(qtbot, width: int, points: float) -> tuple[pg.PlotWidget, TokenAxis]:  # type: ignore[no-untyped-def]
    axis = TokenAxis()
    plot = pg.PlotWidget(axisItems={"bottom": axis})
    qtbot.addWidget(plot)
    font = QFont()
    font.setPointSizeF(points)
    axis.setStyle(tickFont=font)
    plot.setXRange(-0.6, len(TOKENS) - 0.4, padding=0)
    plot.resize(width, 200)
    plot.show()
    qtbot.waitExposed(plot, timeout=HANG_GUARD_MS)
    return plot, axis


# A chart's width and tick font: the narrowest plot on screen (160 px of bars) and a slide's
# large font in a narrow presenter.
SIZES = [(180, 9.0), (260, 9.0), (420, 9.0), (900, 9.0), (260, 16.0), (420, 16.0), (900, 16.0)]


@pytest.mark.parametrize(("width", "points"), SIZES)
@pytest.mark.parametrize("chosen", [1, 3, 6])
def test_labels_never_touch_and_the_top_and_chosen_always_show(
        qtbot, width: int, points: float, chosen: int) -> None:  # type: ignore[no-untyped-def]
    _plot_held, axis = _plot(qtbot, width, points)  # (held: the axis maps through its view)
    first = sorted({0, chosen} | {i for i in range(0, len(TOKENS), 2) if abs(i - chosen) != 1})
    axis.setTicks([[(float(i), TOKENS[i]) for i in first],
                   [(float(i), TOKENS[i]) for i in range(len(TOKENS)) if i not in first]])
    axis.set_kept([0.0, float(chosen)])
    drawn = _drawn(axis)
    for (_, right, _, text), (left, _, _, other) in itertools.pairwise(drawn):
        assert left >= right + LABEL_GAP - 0.5, (width, points, text, other)
    spacing = axis._pixel_of(1.0) - axis._pixel_of(0.0)  # (pixels from bar to bar)
    for value in (0, chosen):  # drawn at their bars, whole or shortened with "…"
        x = axis._pixel_of(float(value))
        nearest = min(drawn, key=lambda label: max(label[0] - x, x - label[1], 0.0))
        left, right, _, text = nearest
        assert max(left - x, x - right, 0.0) <= spacing / 2, (width, points, value, drawn)
        assert text == TOKENS[value] or text.endswith("…"), (width, points, value, drawn)
    if width >= 900 and points <= 9:
        assert len(drawn) == len(TOKENS)  # room for all: none left out, none shortened
        assert [text for *_, text in drawn] == TOKENS


@pytest.mark.parametrize("height", [150, 260, 600])
def test_row_labels_never_touch(qtbot, height: int) -> None:  # type: ignore[no-untyped-def]
    """The inspector's row labels ("3: 하면", "4: 좋을까") ran into each other when ten rows
    had 121 px; a row label that would touch the one above is left out."""
    axis = TokenAxis("left")
    plot = pg.PlotWidget(axisItems={"left": axis})
    qtbot.addWidget(plot)
    plot.setYRange(0, len(TOKENS), padding=0)
    axis.setTicks([[(row + 0.5, f"{row}: {text}") for row, text in enumerate(TOKENS)]])
    plot.resize(400, height)
    plot.show()
    qtbot.waitExposed(plot, timeout=HANG_GUARD_MS)
    qtbot.waitUntil(lambda: abs(axis.height() - (height - 22)) < 40,  # laid out at that size
                    timeout=HANG_GUARD_MS)
    settle(qtbot)  # painted and laid out again: the axis is as wide as its labels
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    assert specs is not None
    line = QFontMetricsF(axis.style["tickFont"] or QFont()).height()  # a label's real height
    rows = sorted(rect.center().y() for rect, _, _ in specs[2])
    assert rows, height
    for above, below in itertools.pairwise(rows):
        assert below - above >= line - 0.5, (height, rows, line)
    if height >= 600:
        assert len(rows) == len(TOKENS)  # room for every row: none left out
