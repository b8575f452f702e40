"""Tick labels that never run together: one rule for every chart's axes.

Owns `keep_ticks_apart` (an axis draws only the tick labels that keep clear of
each other; every tick mark stays), which the sizing rules (``sizing.py``) turn
on for each lab and slide chart's axes.
"""

from __future__ import annotations

import pyqtgraph as pg

TICK_GAP = 4.0  # px kept free between two tick labels along an x axis, at least


def keep_ticks_apart(axis: pg.AxisItem) -> None:
    """Draw only the tick labels of `axis` that keep clear of each other.

    pyqtgraph draws every fixed tick's label, and a level of minor labels when the
    level's total length fits, however they crowd: the projector's context ticks ran
    together on a narrow chart ("2565121K…8K16K32K"), a log axis' labels piled up at the
    top of each decade on a slide ("6·10⁻⁵" over "7·10⁻⁵"). Here each label, in pyqtgraph's
    order (the main level first, left to right or bottom up), is drawn only if it keeps
    `TICK_GAP` px from every label already kept beside it (on a y axis: overlaps none by
    more than a pixel); its tick mark stays.
    """
    if getattr(axis, "ticks_apart", False):
        return
    axis.ticks_apart = True
    generate = axis.generateDrawSpecs
    along_x = axis.orientation in ("top", "bottom")

    def apart(painter: object) -> object:
        specs = generate(painter)
        if specs is None:
            return specs
        axis_spec, tick_specs, text_specs = specs
        kept: list[tuple[object, ...]] = []
        for spec in text_specs:
            # Across a y axis, pyqtgraph's rects are already the glyphs' height (0.8 of a
            # line): rows one line apart touch, and each keeps its label.
            rect = spec[0].adjusted(-TICK_GAP, 0, TICK_GAP, 0) if along_x else spec[0].adjusted(
                0, 0.5, 0, -0.5)
            if not any(rect.intersects(other[0]) for other in kept):
                kept.append(spec)
        return axis_spec, tick_specs, kept

    axis.generateDrawSpecs = apart
