"""The presenter view's look: black on white, thick lines, type sized to the screen.

Owns `presenter_style` (the chart style for a projector, relative to the
screen's body text size, its smallest text `CHART_TEXT` of it) and
`high_contrast_palette` (the window palette the presenter view uses) and
`sized_font` (a font at a pixel size);
``presenter.py`` applies both.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QPalette

from kvstudio.charts.style import PlotStyle

CHART_TEXT = 0.92  # a chart's smallest text, in body text heights (1080p: 29 px ≥ 28 px)


def presenter_style(body_px: float) -> PlotStyle:
    """Chart style for a projector: black on white, thick lines, type relative to the screen.

    No text is smaller than `CHART_TEXT` × the body text: ticks and legends were
    0.75–0.8 of it (22–25 px at 1080p), too small for the back row.
    """
    return PlotStyle(
        background="#ffffff",
        foreground="#000000",
        tick_px=body_px * CHART_TEXT,
        label_px=body_px * 0.95,
        title_px=body_px * 1.0,
        legend_px=body_px * CHART_TEXT,
        text_px=body_px * CHART_TEXT,
        axis_pen_px=2.0,
        line_px=4.0,
        bar_pen_px=1.5,
        max_luminance=0.3,
    )


def high_contrast_palette(base: QPalette) -> QPalette:
    palette = QPalette(base)
    black, white = QColor("#000000"), QColor("#ffffff")
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        palette.setColor(group, QPalette.ColorRole.Window, white)
        palette.setColor(group, QPalette.ColorRole.WindowText, black)
        palette.setColor(group, QPalette.ColorRole.Base, white)
        palette.setColor(group, QPalette.ColorRole.Text, black)
        palette.setColor(group, QPalette.ColorRole.Button, QColor("#f4f4f4"))
        palette.setColor(group, QPalette.ColorRole.ButtonText, black)
        palette.setColor(group, QPalette.ColorRole.ToolTipBase, QColor("#ffffe0"))
        palette.setColor(group, QPalette.ColorRole.ToolTipText, black)
    return palette


def sized_font(base: QFont, px: float, bold: bool = False) -> QFont:
    """`base` at `px` pixels (rounded), bold or not."""
    font = QFont(base)
    font.setPixelSize(round(px))
    font.setBold(bold)
    return font
