"""The presenter view's look: black on white, thick lines, type sized to the screen.

Owns `presenter_style` (the chart style for a projector, relative to the
screen's body text size) and `high_contrast_palette` (the window palette the
presenter view uses); ``presenter.py`` applies both.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

from kvstudio.charts.style import PlotStyle


def presenter_style(body_px: float) -> PlotStyle:
    """Chart style for a projector: black on white, thick lines, type relative to the screen."""
    return PlotStyle(
        background="#ffffff",
        foreground="#000000",
        tick_px=body_px * 0.8,
        label_px=body_px * 0.85,
        title_px=body_px * 0.9,
        legend_px=body_px * 0.75,
        text_px=body_px * 0.8,
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
