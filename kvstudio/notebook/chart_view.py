"""A lab's chart in a notebook: the window's own plot items, drawn live in the browser.

Owns `chart_frame` / `chart_png` (the chart rendered at a notebook size by the
export's renderer, `kvstudio.charts.render.render_image`, in its on-screen
colours), `ChartWidget` (a ``pyqtgraph.jupyter`` view over jupyter_rfb whose
Qt view is the lab panel's chart itself, not a copy: what the notebook shows
is what the window's lab draws and exports) and `LiveCharts` (one widget per
chart of a lab, refreshed as records arrive, and left with a PNG in its output
for viewers without widgets: GitHub, nbconvert, a CI log).
"""

from __future__ import annotations

import asyncio
import base64
import threading
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
from PySide6.QtGui import QImage

from kvstudio.charts.canvas import SlideCanvas
from kvstudio.charts.chart_data import ChartLike
from kvstudio.charts.render import render_image, render_png
from kvstudio.notebook.environment import in_jupyter

WIDTH, HEIGHT = 960, 440  # a chart's size in a notebook cell (CSS px)
MIN_WIDTH, MIN_HEIGHT = 200, 150  # smaller frames are refused (an unreadable chart)
REFRESH_INTERVAL_S = 0.3  # live frames at most this often while a lab runs


def notebook_canvas(width: int = WIDTH, height: int = HEIGHT) -> SlideCanvas:
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        raise ValueError(f"A chart needs at least {MIN_WIDTH}×{MIN_HEIGHT} px, "
                         f"got {width}×{height}.")
    return SlideCanvas("notebook", int(width), int(height))


def chart_frame(chart: ChartLike, width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """The chart as an RGBA array (height, width, 4), as the window draws it, at this size."""
    image = render_image(chart, notebook_canvas(width, height), style=None, headline=None)
    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    row = image.bytesPerLine() // 4
    pixels = np.frombuffer(image.constBits(), np.uint8, count=image.sizeInBytes())
    return pixels.reshape(image.height(), row, 4)[:, : image.width()].copy()  # (H, W, 4)


def chart_png(chart: ChartLike, width: int = WIDTH, height: int = HEIGHT) -> bytes:
    """The chart as PNG bytes at a notebook size (on-screen colours, no headline)."""
    return render_png(chart, notebook_canvas(width, height), style=None, headline=None)


_widget_class: type | None = None


def widget_class() -> type:
    """`ChartWidget`, defined on first use: jupyter_rfb is only needed in Jupyter."""
    global _widget_class
    if _widget_class is not None:
        return _widget_class
    from pyqtgraph.jupyter.GraphicsView import GraphicsView

    class ChartWidget(GraphicsView):  # type: ignore[misc, valid-type]
        """``pyqtgraph.jupyter``'s view with the lab panel's chart as its Qt view.

        pyqtgraph's Jupyter views render their Qt view on request (no event
        loop); here that view is the lab panel's own ``GraphicsLayoutWidget`` /
        ``PlotWidget`` (no mouse zoom or pan, as in the window: ``fixed_view``),
        and every frame is the export renderer's picture of its plot items.
        """

        def __init__(self, chart: Any, width: int, height: int) -> None:
            super().__init__(css_width=f"{width}px", css_height=f"{height}px")
            # The thread that owns the Qt items (a cell's, the kernel's main thread) and its
            # event loop: ipykernel 7 can deliver the browser's messages on a subshell thread,
            # and a render from there raced an export on the main thread (curves drawn
            # against the wrong axes); such calls are handed to this loop instead.
            self.qt_thread = threading.current_thread()
            try:
                self.qt_loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:
                self.qt_loop = None
            blank = self.gfxView  # type: ignore[has-type]  # pyqtgraph's own, empty view
            blank.deleteLater()  # the lab's chart replaces it
            self.gfxView = chart  # pyqtgraph sends the browser's pointer events to it
            self.chart_view = chart
            self.logical_size = (width, height)
            # Not pyqtgraph's connect_viewbox_redraw: an export lays the chart out on its slide
            # and back, and each range change would queue a frame of that passing state.
            # Frames come from the run (`LiveCharts.refresh`), the browser's resizes and its
            # pointer and wheel events (`handle_event`).

        def handle_event(self, event: dict[str, Any]) -> None:
            """A browser resize changes only the frame's size: every frame lays the chart out
            at that size for its render (as an export does) and puts it back, so the lab
            panel's widget keeps its own geometry; pointer and wheel events go to pyqtgraph."""
            if self._off_qt_thread():
                self.qt_loop.call_soon_threadsafe(self.handle_event, event)  # type: ignore[union-attr]
                return
            if event.get("event_type") == "resize":
                self.logical_size = (max(1, int(event["width"])), max(1, int(event["height"])))
                self.pixel_ratio = event.get("pixel_ratio", 1.0)
                self.request_draw()
                return
            super().handle_event(event)
            if event.get("event_type") == "wheel":  # pyqtgraph redraws after pointer events
                self.request_draw()

        def _off_qt_thread(self) -> bool:
            return threading.current_thread() is not self.qt_thread and self.qt_loop is not None

        def _draw_on_qt_thread(self) -> None:
            self.send_frame(self.get_frame())

        def get_frame(self) -> np.ndarray | None:
            """The chart now; None (drawn and sent from the Qt thread) when called elsewhere."""
            if self._off_qt_thread():
                self.qt_loop.call_soon_threadsafe(self._draw_on_qt_thread)  # type: ignore[union-attr]
                return None  # jupyter_rfb then sends nothing; `send_frame` follows
            width, height = self.logical_size  # a tiny cell still gets a readable chart
            return chart_frame(self.chart_view, max(MIN_WIDTH, width), max(MIN_HEIGHT, height))

        def _repr_mimebundle_(self, **kwargs: Any) -> Any:
            """The live widget, plus the chart as PNG for front ends without widgets."""
            result = super()._repr_mimebundle_(**kwargs)
            data = result[0] if isinstance(result, tuple) else result
            if isinstance(data, dict):
                width, height = self.logical_size
                png = chart_png(self.chart_view, width, height)
                data["image/png"] = base64.b64encode(png).decode("ascii")
            return result

    _widget_class = ChartWidget
    return ChartWidget


class LiveCharts:
    """A lab's charts in the running cell: live widgets in Jupyter, nothing in a terminal."""

    def __init__(self, charts: Mapping[str, ChartLike], width: int = WIDTH,
                 height: int = HEIGHT, show: bool = True) -> None:
        self.charts = dict(charts)
        self.width, self.height = width, height
        self.widgets: list[Any] = []
        self.handles: list[Any] = []
        self._sent = 0.0
        if not (show and in_jupyter()):
            return
        try:
            cls = widget_class()
        except ImportError:  # no jupyter_rfb: the PNG at the end still shows the chart
            self.widgets = []
        else:
            from IPython.display import display

            for chart in self.charts.values():
                widget = cls(chart, width, height)
                self.widgets.append(widget)
                self.handles.append(display(widget, display_id=True))

    @property
    def live(self) -> bool:
        return bool(self.widgets)

    def refresh(self, force: bool = False) -> None:
        """Send each widget a new frame (at most every REFRESH_INTERVAL_S unless forced).

        A cell that runs a lab keeps the kernel busy, so jupyter_rfb's own drawing
        (scheduled on the kernel's event loop) would wait for the end; frames are
        pushed instead, a few a second.
        """
        now = time.monotonic()
        if not self.widgets or (not force and now - self._sent < REFRESH_INTERVAL_S):
            return
        self._sent = now
        for widget in self.widgets:
            widget.send_frame(widget.get_frame())

    def finish(self) -> None:
        """The last frame, and the outputs rewritten to hold the finished chart's PNG."""
        if not in_jupyter():
            return
        from IPython.display import Image, display

        if not self.widgets:  # Jupyter without jupyter_rfb: the finished chart as a PNG
            for chart in self.charts.values():
                display(Image(chart_png(chart, self.width, self.height)))
            return
        self.refresh(force=True)
        for widget, handle in zip(self.widgets, self.handles, strict=True):
            if handle is not None:
                handle.update(widget)
