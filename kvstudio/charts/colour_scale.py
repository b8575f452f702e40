"""A heat map's colour scale: its bar in the window, and its scale on a slide without one.

Owns `ColourBar`, a non-interactive pyqtgraph `ColorBarItem` laid out in the
row under a heat map's plot, in the same column, so it shares the map's width
(the Cache inspector's K, V and attention maps each get one). The map's own
levels stay the lab's; the bar is told the same levels with `show`. The bar
is linked to its map (`ColorBarItem.setImageItem`), which is how a slide
knows the map's scale is already drawn: every map's scale appears once, in
the window and on its slide.

Also owns `ColourScale` (the plots sharing one colour map and its levels, sampled
into a few colours), `colour_scales` (found from a chart's ImageItems, leaving
out those a pyqtgraph ColorBarItem in the same scene already explains, such as
the Cache inspector's `ColourBar`) and
`scale_paths` (one row of "K rows, V rows  −0.8 ▮▮▮▮ 0.8 · attention  0 ▮▮▮▮ 0.41",
as filled paths, so PNG, PDF and SVG draw the same thing). ``render.py``
puts the row under the headline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QFont, QFontMetricsF, QPainterPath

from kvstudio.charts.canvas import scene_of
from kvstudio.charts.chart_data import ChartLike, plot_items
from kvstudio.charts.plotted_data import plain_text

STEPS = 24  # colour samples per scale
BAR_HEIGHT = 14  # px of colour bar (its tick labels come below)


class ColourBar:
    """The colour bar under one heat map."""


    def __init__(self, grid: pg.GraphicsLayout, row: int, column: int,
                 colour_map: pg.ColorMap, image: pg.ImageItem) -> None:
        self.bar = pg.ColorBarItem(values=(0.0, 1.0), width=BAR_HEIGHT, colorMap=colour_map,
                                   interactive=False, orientation="horizontal",
                                   colorMapMenu=False)
        self.bar.setImageItem(image)  # the map this bar explains (a slide then adds no scale)
        self.bar.getViewBox().setMenuEnabled(True)  # a right click exports the chart here too
        for side in ("bottom", "top", "left", "right"):
            axis = self.bar.getAxis(side)
            axis.setPen(pg.mkPen("#444"))
            axis.setTextPen(pg.mkPen("#222"))
        grid.addItem(self.bar, row=row, col=column)
        self.bar.setVisible(False)  # nothing to read before the first map

    def show(self, low: float, high: float, colour_map: pg.ColorMap | None = None) -> None:
        """Scale the bar (and its map) to the map's levels (and colours)."""
        if colour_map is not None:
            self.bar.setColorMap(colour_map)
        self.bar.setLevels((low, high))
        self.bar.setVisible(True)

    def hide(self) -> None:
        self.bar.setVisible(False)


@dataclass(frozen=True)
class ColourScale:
    label: str  # the titles of the plots that use it
    colours: tuple[str, ...]  # low → high
    low: float
    high: float


def _explained(chart: ChartLike) -> set[int]:
    """ids of the ImageItems a ColorBarItem in the chart's scene already explains."""
    scene = scene_of(plot_items(chart)[0]) if plot_items(chart) else None
    out: set[int] = set()
    for item in scene.items() if scene is not None else []:
        if isinstance(item, pg.ColorBarItem):
            for ref in getattr(item, "img_list", []):
                image = ref()
                if image is not None:
                    out.add(id(image))
    return out


def colour_scales(chart: ChartLike) -> list[ColourScale]:
    """The colour scales a slide of `chart` must show (none if every map has its bar)."""
    explained = _explained(chart)
    groups: dict[tuple[tuple[str, ...], float, float], list[str]] = {}
    for plot in plot_items(chart):
        for item in plot.items:
            if not isinstance(item, pg.ImageItem) or item.image is None or id(item) in explained:
                continue
            cmap = item.getColorMap()
            levels = item.getLevels()
            if cmap is None or levels is None or np.ndim(levels) != 1:
                continue
            low, high = float(levels[0]), float(levels[1])
            sampled = tuple(cmap.map(np.linspace(0.0, 1.0, STEPS), mode=pg.ColorMap.QCOLOR))
            colours = tuple(c.name() for c in sampled)
            title = plain_text(plot.titleLabel.text).split("\n")[0].split(":")[0].strip()
            groups.setdefault((colours, round(low, 6), round(high, 6)), []).append(title)
    return [ColourScale(", ".join(t for t in titles if t), colours, low, high)
            for (colours, low, high), titles in groups.items()]


def _number(value: float) -> str:
    return (f"{value:.2g}" if value != 0 else "0").replace("-", "−")


def scale_paths(scales: Sequence[ColourScale], font: QFont, x: float, baseline: float,
                width: float, text_colour: str) -> list[tuple[QPainterPath, str]]:
    """The scales as filled paths on one row starting at (x, baseline), cut at `width`."""
    metrics = QFontMetricsF(font)
    height = metrics.ascent() * 0.8
    bar = max(metrics.horizontalAdvance("0") * 10, 40.0)
    out: list[tuple[QPainterPath, str]] = []
    at = x

    def text(value: str) -> None:
        nonlocal at
        path = QPainterPath()
        path.addText(QPointF(at, baseline), font, value)
        out.append((path, text_colour))
        at += metrics.horizontalAdvance(value)

    for index, scale in enumerate(scales):
        if at > x + width - bar:
            break
        text(("  ·  " if index else "") + (f"{scale.label}  " if scale.label else "")
             + _number(scale.low) + " ")
        step = bar / len(scale.colours)
        for k, colour in enumerate(scale.colours):
            path = QPainterPath()
            path.addRect(QRectF(at + k * step, baseline - height, step + 0.6, height))
            out.append((path, colour))
        at += bar
        text(" " + _number(scale.high))
    return out
