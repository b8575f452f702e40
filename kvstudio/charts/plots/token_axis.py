"""An axis of token labels that never overlap, whatever its width.

Owns `TokenAxis`: a pyqtgraph axis whose tick labels are thinned where they
would touch (pyqtgraph draws every label of the first tick level, so the top
token's and the chosen token's labels ran together as "⟨EC 98⟩너무" in a
narrow presenter). Some ticks are kept whatever the room (the most likely and
the chosen token): where two of those would touch they are both shortened to
their share of the room with "…"; any other label that would touch one
already placed is left out (its bar is still drawn). It decides when the axis
is drawn, with the font and width it is drawn at: on screen, on a slide and
in the presenter. Also `token_tick` (a token's short label) and
`distinct_ticks` (short labels of different tokens that never read the same).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QPainter

LABEL_GAP = 6.0  # pixels between two labels, at least

TextSpec = tuple[QRectF, object, str]  # pyqtgraph's (rect, flags, text) of one label


class TokenAxis(pg.AxisItem):
    """An axis whose labels never overlap; `set_kept` names the ticks always labelled (on a
    bottom axis). On a left or right axis (the inspector's rows) a label that would touch
    the one above it is left out."""

    def __init__(self, orientation: str = "bottom", **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)
        self._kept: tuple[float, ...] = ()

    def set_kept(self, values: Iterable[float]) -> None:
        """The tick values whose labels are always drawn, most important first."""
        self._kept = tuple(values)
        self.picture = None  # drawn again with the new choice
        self.update()

    def generateDrawSpecs(self, p: QPainter) -> tuple[object, object, list[TextSpec]] | None:  # type: ignore[override]
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return None
        axis_spec, tick_specs, text_specs = specs
        return axis_spec, tick_specs, self.clear_labels(p, list(text_specs))

    def _pixel_of(self, value: float) -> float | None:
        """Where `value` lies along the axis, in the axis' own coordinates."""
        view = self.linkedView()
        if view is None:
            return None
        return float(self.mapFromScene(view.mapViewToScene(QPointF(value, 0.0))).x())

    def _kept_text(self, value: float) -> str | None:
        for level in self._tickLevels or []:
            for tick, text in level:
                if tick == value:
                    return str(text)
        return None

    def clear_labels(self, p: QPainter, specs: list[TextSpec]) -> list[TextSpec]:
        """The labels to draw: the kept ones first, then the others from left to right
        where they touch none already placed.

        A kept label is drawn under its bar, moved inside the axis' ends (where pyqtgraph
        drops a label that crosses one) and, where two kept labels would touch, each
        shortened with "…" to its side of the half-way point between their bars.
        """
        if self.orientation in ("left", "right"):
            return _thinned_rows(specs, QFontMetricsF(p.font()).height())
        bounds = self.boundingRect()
        metrics = QFontMetricsF(p.font())
        flags = specs[0][1] if specs else Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
        top = bounds.top() + max(0.0, float(self.style["tickLength"])) \
            + float(self.style["tickTextOffset"][1])
        kept: list[tuple[float, str, float]] = []  # (pixel, text, full width)
        for value in self._kept:
            x, text = self._pixel_of(value), self._kept_text(value)
            if x is None or text is None or not bounds.left() <= x <= bounds.right():
                continue
            if all(abs(x - other) >= 1.0 for other, _, _ in kept):
                kept.append((x, text, metrics.horizontalAdvance(text)))
        kept.sort()
        height = metrics.height() * 0.8  # pyqtgraph's measure of a label's height
        # Each one centred under its bar, inside the axis' ends; where two neighbours would
        # touch, each keeps its side of the half-way point between their bars.
        limits = [[bounds.left(), bounds.right()] for _ in kept]
        wanted = [_inside(x - width / 2, width, bounds.left(), bounds.right())
                  for x, _, width in kept]
        for index in range(len(kept) - 1):
            (x, _, width), (next_x, _, _) = kept[index], kept[index + 1]
            if wanted[index] + width + LABEL_GAP > wanted[index + 1]:
                middle = (x + next_x) / 2
                limits[index][1] = min(limits[index][1], middle - LABEL_GAP / 2)
                limits[index + 1][0] = max(limits[index + 1][0], middle + LABEL_GAP / 2)
        placed: list[TextSpec] = []
        for (x, text, width), (low, high) in zip(kept, limits, strict=True):
            room = max(high - low, 0.0)
            if width > room:
                text = metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
                width = min(metrics.horizontalAdvance(text), room)
            if text:  # (no room at all for it: left out rather than drawn over a neighbour)
                left = _inside(x - width / 2, width, low, high)
                placed.append((QRectF(left, top, width, height), flags, text))
        kept_pixels = [x for x, _, _ in kept]
        others = [spec for spec in specs
                  if all(abs(spec[0].center().x() - x) >= 1.0 for x in kept_pixels)]
        for spec in sorted(others, key=lambda spec: spec[0].left()):
            if not any(_touch(spec[0], rect) for rect, _, _ in placed):
                placed.append(spec)
        return sorted(placed, key=lambda spec: spec[0].left())


def _touch(a: QRectF, b: QRectF) -> bool:
    """Whether two labels overlap or sit closer than the gap, side by side."""
    return a.left() < b.right() + LABEL_GAP and b.left() < a.right() + LABEL_GAP


def _inside(left: float, width: float, low: float, high: float) -> float:
    """`left` moved so that [left, left + width] lies between `low` and `high` (from `low`
    where it is wider)."""
    return max(min(left, high - width), low)


def _thinned_rows(specs: list[TextSpec], line: float) -> list[TextSpec]:
    """Row labels from the top down, each left out where its line (`line` px high: the
    font's, not pyqtgraph's 0.8 of it) would touch the one above (ten rows in 121 px ran
    into each other in the inspector at 1280×720)."""
    kept: list[TextSpec] = []
    for spec in sorted(specs, key=lambda spec: spec[0].center().y()):
        if not kept or spec[0].center().y() - kept[-1][0].center().y() >= line:
            kept.append(spec)
    return kept


BYTE_PIECES = re.compile(r"(?:<0x[0-9A-F]{2}>)+")


def token_tick(text: str, limit: int = 6) -> str:
    """A token as a tick label: a part of a character shows its bytes whole ("⟨EC 9E⟩")."""
    if BYTE_PIECES.fullmatch(text):
        return "⟨" + " ".join(re.findall(r"<0x([0-9A-F]{2})>", text)) + "⟩"
    shown = text.replace("\n", "↵").replace(" ", "␣")
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def distinct_ticks(ticks: list[str], tokens: tuple[str, ...] | list[str]) -> list[str]:
    """Tick labels of different tokens never read the same: a clash shows the tokens whole
    ("<|im_start|>" and "<|im_end|>", not "<|im_…" twice), or, where they still read the
    same, gets its rank."""
    out = list(ticks)
    for i, tick in enumerate(ticks):
        clash = any(ticks[j] == tick and tokens[j] != tokens[i]
                    for j in range(len(ticks)) if j != i)
        if clash:
            whole = token_tick(tokens[i], len(tokens[i]) + 1)
            unique = all(token_tick(tokens[j], len(tokens[j]) + 1) != whole
                         for j in range(len(ticks)) if j != i and ticks[j] == tick)
            out[i] = whole if unique else f"{tick}#{i + 1}"
    return out
