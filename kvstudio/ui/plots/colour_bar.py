"""A heat map's colour bar: a horizontal bar under the map that reads colour as value.

Owns `ColourBar`, a non-interactive pyqtgraph `ColorBarItem` laid out in the
row under a heat map's plot, in the same column, so it shares the map's width
(the Cache inspector's K, V and attention maps each get one). The map's own
levels stay the lab's; the bar is told the same levels with `show`.

The bar is linked to its map (`ColorBarItem.setImageItem`), which is how a
slide knows the map's scale is already drawn: ``slides/colour_scale.py`` puts
a `ColourScale` in the headline row only for a map that has no bar, so every
map's scale appears once, in the window and on its slide.
"""

from __future__ import annotations

import pyqtgraph as pg

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
