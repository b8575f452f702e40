"""Elapsed time per step (ms) with the prefill (time to first token) marked, and cumulative time.

Owns the drawing of `StepRecord.elapsed_s` for the latest run of both modes:
per-step lines against the left axis, cumulative dashed against the right;
and, after "Measure TTFT ×k", the repeated prefill's median per mode with its
min–max bar at step 0. The value labels (TTFT, the cumulative totals) are placed
where they cross no line or marker (`_place_labels`, with `end_values.place_clear`):
the TTFT label in the top-left corner, each total beside its line's end or along the
top, inside the plot. They are placed anew only when a placement no longer holds
(`_placement_holds`: new ranges or size, a new text that no longer fits where its
label stands, a line redrawn, or new steps crossing a label), not at every step.
The x axis starts far enough left of step 0 for the markers drawn there (`_x_range`).
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QTimer
from PySide6.QtWidgets import QWidget

from kvstudio.charts.chart_data import DataTable, Series
from kvstudio.charts.plots.end_values import (
    Placement,
    corner_spots,
    curve_data,
    label_rect,
    place_clear,
    scene_points,
    segments,
    spots_around,
)
from kvstudio.charts.plots.names import mode_name
from kvstudio.engine.records import MODES, Mode
from kvstudio.ui.plots.base import MODE_COLOURS, LivePlot, live_curve, mode_pen
from kvstudio.ui.plots.extent import store_steps
from kvstudio.ui.run.store import RunStore

if TYPE_CHECKING:
    from kvstudio.labs.cache.compare import PrefillTimes  # (torch: imported when TTFT is measured)

LABEL_FILL = (255, 255, 255, 210)  # TTFT labels stay readable over the lines
EDGE_GAP_PX = 2.0  # between a marker beside step 0 and the plot's left edge


class StepTimePlot(LivePlot):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        right = self.add_right_axis("")
        self._per_step: dict[Mode, pg.PlotDataItem] = {}
        self._cumulative: dict[Mode, pg.PlotDataItem] = {}
        self._ttft: dict[Mode, pg.ScatterPlotItem] = {}
        self._ttft_label: dict[Mode, pg.TextItem] = {}
        self._end_label: dict[Mode, pg.TextItem] = {}
        for mode in MODES:
            colour = MODE_COLOURS[mode]
            # No per-point symbols: a scatter of hundreds of points costs more to paint
            # than the line, and the line already shows each step.
            line = live_curve(mode_pen(mode, 2))
            cumulative = live_curve(mode_pen(mode, 1.5, dashed=True))
            ttft = pg.ScatterPlotItem(size=14, symbol="star", brush=colour, pen=pg.mkPen("#222"))
            label = pg.TextItem(color=colour, anchor=(0, 1), fill=LABEL_FILL)
            self.plot_item.addItem(line)
            self.plot_item.addItem(ttft)
            self.plot_item.addItem(label)
            right.addItem(cumulative)
            # The cumulative line's end value: cached 246 ms under a recompute-sized
            # 15,000 ms axis reads as flat at zero without it.
            end = pg.TextItem(color=colour, anchor=(1, 1), fill=LABEL_FILL)
            right.addItem(end, ignoreBounds=True)
            self._end_label[mode] = end
            self._per_step[mode], self._cumulative[mode] = line, cumulative
            self._ttft[mode], self._ttft_label[mode] = ttft, label
        self._ttft_both = pg.TextItem(color="#222", anchor=(0, 1), fill=LABEL_FILL)
        self._ttft_both_html: str | None = None  # what `_set_ttft_both` set last
        self.plot_item.addItem(self._ttft_both)
        for empty in self._value_labels():  # (shown once they have a text: `_set_text`)
            empty.setVisible(False)
        self._placement: Placement | None = None  # (None: place the labels at the next refresh)
        self._place_later = QTimer(self)  # after a resize, once the views have their size
        self._place_later.setSingleShot(True)
        self._place_later.setInterval(0)
        self._place_later.timeout.connect(self._after_resize)
        self.plot_item.vb.sigResized.connect(self._place_later.start)
        # Repeated TTFT (median and min–max per mode), drawn beside step 0.
        self._repeats: PrefillTimes | None = None
        self._repeat_bars = {mode: pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), beam=0.2,
                                                   pen=mode_pen(mode, 2)) for mode in MODES}
        self._repeat_median = {mode: pg.ScatterPlotItem(size=11, symbol="d",
                                                        brush=MODE_COLOURS[mode],
                                                        pen=pg.mkPen("#222"))
                               for mode in MODES}
        for mode in MODES:
            self.plot_item.addItem(self._repeat_bars[mode])
            self.plot_item.addItem(self._repeat_median[mode])
        self._y_top = self._total_top = 0.0
        # Before the first run: plain 0…1 axes, not auto-range's guess around the empty label.
        self.set_ranges((0.0, 1.0), (0.0, 1.0), (0.0, 1.0))
        self.retranslate()
        self.show_empty(True)

    def retranslate(self) -> None:
        self.set_title(self.tr("Time per step"))
        self.plot_item.setLabel("bottom", self.tr("step (0 = prefill)"))
        self.set_axis_title("left", self.tr("ms per step"), self.tr("ms"))
        self.set_axis_title("right", self.tr("cumulative ms"), self.tr("Σ ms"))
        self.legend.clear()
        for mode in MODES:
            name = mode_name(mode)
            self.legend.addItem(self._per_step[mode], self.tr("{0}: ms per step").format(name))
            self.legend.addItem(self._cumulative[mode], self.tr("{0}: cumulative").format(name))
        self.legend.addItem(self._ttft["cached"],
                            self.tr("prefill = TTFT (single measurement)"))
        self._ttft_text = self.tr("TTFT {0:.1f} ms")
        self._end_text = self.tr("Σ {0:,.0f} ms")
        self._repeat_name = self.tr("TTFT median of {0} (bar: min–max)")
        if self._repeats is not None:
            self.show_ttft_repeats(self._repeats)
        # {0}: "Cached 5.8 ms · Recompute 6.1 ms"
        self._ttft_both_text = self.tr("TTFT: {0}")  # single samples: the legend says so
        self._ttft_median_text = self.tr("TTFT median of {1}: {0}")

    def refresh(self, store: RunStore) -> None:
        self._store = store
        self.show_empty(store.longest_steps() == 0)
        for mode in MODES:
            trace = store.trace(mode)
            if trace is None or not trace.records:
                self._per_step[mode].setData([], [])
                self._cumulative[mode].setData([], [])
                self._set_star(mode, None)
                continue
            steps = np.asarray(trace.steps, dtype=float)
            ms = np.asarray(trace.step_ms, dtype=float)
            self._per_step[mode].setData(steps, ms)
            self._cumulative[mode].setData(steps, np.asarray(trace.cumulative_ms, dtype=float))
            # Once TTFT has been measured k times the medians stand at step 0 instead of
            # the one cold sample (never both side by side).
            self._set_star(mode, None if self._repeats is not None else float(ms[0]))
        self._label_ttft(store)
        if store.traces():  # the run plus room for the next steps; exactly the run once it ends
            self.set_ranges(self._x_range(store_steps(store)))
        self._fit_y(store)
        self._label_ends(store)

    def _set_star(self, mode: Mode, ms: float | None) -> None:
        """Draw `mode`'s TTFT star at step 0, `ms` high (None: none); set only when it
        moves (once a run, not at every step)."""
        star: tuple[list[float], list[float]] = ([], []) if ms is None else ([0.0], [ms])
        if [list(v) for v in self._ttft[mode].getData()] != [*star]:
            self._ttft[mode].setData(*star)

    def _x_range(self, steps: int) -> tuple[float, float]:
        """The x range for a span of `steps`: from left of step 0 to just past the last step.

        Left of step 0 there is room for the TTFT star (and the repeated TTFT's medians at
        `_REPEAT_X`) whole: 0.6 steps, or more where that is fewer pixels than half a
        marker (on a long run 0.6 steps is a pixel or two and the plot's edge cut the star
        in half). For a marker of half-width h px at x0, with k = (h + gap) / width px,
        x0 − low ≥ k · (high − low) gives low ≤ (x0 − k · high) / (1 − k).
        """
        high, low = steps - 0.4, -0.6
        width = self.plot_item.vb.width()
        if width <= 0:
            return low, high
        for scatter, x0 in ((self._ttft["cached"], 0.0),
                            (self._repeat_median["cached"], min(self._REPEAT_X.values()))):
            k = (_marker_half_width(scatter) + EDGE_GAP_PX) / width
            if k < 0.5:  # (a plot narrower than two markers: keep 0.6 steps)
                low = min(low, (x0 - k * high) / (1 - k))
        return low, high

    def _after_resize(self) -> None:
        """The view has a new size (the window's, or a slide's): the x range's room left of
        step 0 in pixels again, and the labels placed anew."""
        store = self._store
        if store is not None and store.traces():
            self.set_ranges(self._x_range(store_steps(store)))
        self._place_labels()

    def _label_ends(self, store: RunStore) -> None:
        """Write each cumulative line's total at its end (the right axis grows in jumps, so
        a line may end anywhere below its top, and one mode's is often far below)."""
        for mode in MODES:
            label, trace = self._end_label[mode], store.trace(mode)
            if trace is None or not trace.records:
                _set_text(label, "")
                continue
            _set_text(label, self._end_text.format(float(trace.cumulative_ms[-1])))
        if not self._placement_holds():
            self._place_labels()

    def _value_labels(self) -> list[pg.TextItem]:
        """The labels `_place_labels` places: the TTFT ones, then the totals."""
        return [*self._ttft_label.values(), self._ttft_both, *self._end_label.values()]

    def _lines(self) -> list[pg.PlotDataItem]:
        return [*self._per_step.values(), *self._cumulative.values()]

    def _placement_key(self) -> tuple[object, ...]:
        """What moves every label's place: the view's size and position, both views'
        ranges, and which runs have ended (a total then goes beside its line's end)."""
        vb = self.plot_item.vb
        rect = vb.sceneBoundingRect()
        ranges = [vb.viewRange(), *([self.right_view.viewRange()] if self.right_view else [])]
        ends = tuple((t.mode, t.finished) for t in self._store.traces()) if self._store else ()
        return ((rect.x(), rect.y(), rect.width(), rect.height()),
                tuple(tuple(r) for view in ranges for r in view), ends)

    def _placement_holds(self) -> bool:
        """True if the labels can stay where `_place_labels` last put them
        (`Placement.holds`: the same views and runs, lines that only grew clear of them,
        only a running total's text changed, and it still fits)."""
        return self._placement is not None and self._placement.holds(
            self._placement_key(), self._lines(), self._value_labels(),
            set(self._end_label.values()), self.plot_item.vb.sceneBoundingRect())

    def _place_labels(self) -> None:
        """Put each value label where it covers no line, marker or other label, inside the
        plot; again whenever the plot is resized (or laid out on a slide).

        Labels written at their values sat on the curves: at 1366×768 "TTFT: Cached …
        Recompute …" over the first steps' noisy line, at 1920×1080 "누적 662 ms" on the
        recompute line's spike. The TTFT label takes the top-left corner (above step 0)
        or the first clear place along the rows below the top; each total the first clear
        place around its line's end, else along the rows from the top-right corner. The
        y ranges keep the top third above the per-step lines free (`_grow_y`), so the top
        row is usually clear. Where no place is clear: the one crossing fewest lines.
        """
        store = self._store
        vb = self.plot_item.vb
        vb.updateMatrix()  # ranges just set apply when the view paints
        if self.right_view is not None:
            self.right_view.updateMatrix()
        view = vb.sceneBoundingRect()
        self._placement = None
        if store is None or view.width() <= 0 or view.height() <= 0:
            return
        lines, markers = self._drawn_shapes()
        taken: list[QRectF] = []
        placed: dict[pg.TextItem, QRectF] = {}
        for label in [*self._ttft_label.values(), self._ttft_both]:
            if label.textItem.toPlainText():
                size = label_rect(label).size()
                spots = corner_spots(size, view, left=True)
                placed[label] = place_clear(label, size, spots, view, lines, markers, taken)
                taken.append(placed[label])
        for mode in MODES:
            label, trace = self._end_label[mode], store.trace(mode)
            if not label.textItem.toPlainText() or trace is None or not trace.records:
                continue
            end = label.getViewBox().mapViewToScene(  # (the right axis' view)
                QPointF(float(trace.steps[-1]), float(trace.cumulative_ms[-1])))
            size = label_rect(label).size()
            spots = chain(spots_around(size, end), corner_spots(size, view, left=False))
            placed[label] = place_clear(label, size, spots, view, lines, markers, taken)
            taken.append(placed[label])
        labels = self._value_labels()
        self._placement = Placement(
            self._placement_key(), [label.textItem.toPlainText() for label in labels],
            [placed.get(label) for label in labels],
            [curve_data(curve) for curve in self._lines()], lines, markers)

    def _drawn_shapes(self) -> tuple[np.ndarray, list[QRectF]]:
        """What the labels must not cover, in scene coordinates: every line segment drawn
        (rows x0, y0, x1, y1: the per-step and cumulative lines, the min–max bars) and a
        square around each marker (the TTFT stars, the medians)."""
        drawn: list[np.ndarray] = []
        for curve in self._lines():
            x, y = curve_data(curve)
            if len(x):
                drawn.append(segments(scene_points(curve, x, y)))
        markers: list[QRectF] = []
        for scatter in (*self._ttft.values(), *self._repeat_median.values()):
            x, y = scatter.getData()
            half = float(scatter.opts["size"]) / 2
            for px, py in scene_points(scatter, np.asarray(x, float), np.asarray(y, float)):
                markers.append(QRectF(px - half, py - half, 2 * half, 2 * half))
        if self._repeats is not None:
            for mode in MODES:
                value = self._repeats.ttft_ms(mode)
                x = np.full(2, self._REPEAT_X[mode])
                bar = scene_points(self._repeat_bars[mode], x, np.asarray([value.low, value.high]))
                drawn.append(bar.reshape(1, 4))
        return (np.vstack(drawn) if drawn else np.zeros((0, 4))), markers

    def end_labels(self) -> dict[Mode, str]:
        """The end values written on the cumulative lines now (for tests)."""
        return {mode: label.textItem.toPlainText() for mode, label in self._end_label.items()}

    def _label_ttft(self, store: RunStore) -> None:
        """One TTFT label per mode alone; one label naming both when both are drawn.

        The cache does not shorten the prefill, so both modes' stars usually sit at
        the same height, where two labels would cover each other. The shared label
        goes above the higher star and reads like the lesson: both numbers side by side.
        Each label's text is set only when it changes (a new run's first step).
        """
        firsts = {mode: trace.step_ms[0] for mode in MODES
                  if (trace := store.trace(mode)) is not None and trace.records}
        repeats = self._repeats
        if repeats is not None:  # the medians replace the single samples: never side by side
            firsts = {mode: repeats.ttft_ms(mode).median for mode in MODES}
        elif len(firsts) < 2:
            for mode, label in self._ttft_label.items():
                _set_text(label, self._ttft_text.format(firsts[mode]) if mode in firsts else "")
            self._set_ttft_both("")
            return
        for label in self._ttft_label.values():
            _set_text(label, "")
        parts = [f'<span style="color:{MODE_COLOURS[mode]}">'
                 f"{html.escape(mode_name(mode))} {ms:.1f} ms</span>"
                 for mode, ms in firsts.items()]
        if repeats is None:
            text = html.escape(self._ttft_both_text).format(" · ".join(parts))
        else:
            text = html.escape(self._ttft_median_text).format(" · ".join(parts),
                                                              len(repeats.ms["cached"]))
        self._set_ttft_both(text)

    def _set_ttft_both(self, text: str) -> None:
        """Set the shared TTFT label's HTML `text` if it is new."""
        if text != self._ttft_both_html:
            self._ttft_both_html = text
            self._ttft_both.setHtml(text)
        self._ttft_both.setVisible(bool(text))

    def ttft_labels(self) -> list[tuple[str, QRectF]]:
        """The TTFT labels shown: (plain text, rectangle in scene coordinates), for tests."""
        return _shown_labels([*self._ttft_label.values(), self._ttft_both])

    def end_label_rects(self) -> list[tuple[str, QRectF]]:
        """The end labels shown: (plain text, rectangle in scene coordinates), for tests."""
        return _shown_labels(self._end_label.values())

    def _fit_y(self, store: RunStore) -> None:
        """Y ranges only grow, in jumps, and shrink only after a Reset.

        Every range change repaints an axis from scratch (tens of milliseconds on
        a busy machine), so noise and each new run must not rescale the plot.
        """
        traces = store.stepped_traces()
        if not traces:
            self._y_top = self._total_top = 0.0
            return
        top = max(max(t.step_ms) for t in traces)
        total = max(t.cumulative_ms[-1] for t in traces)
        grown = self._grow_y(top)
        if total * 1.3 > self._total_top:
            self._total_top = total * 2.5
            self.set_right_y((0, self._total_top), settle=False)
            grown = True
        if grown:
            self.ranges_changed()

    def _grow_y(self, top: float) -> bool:
        """Raise the left axis to 2.5 × `top` once `top` needs more than 2/3 of it (1.5:
        headroom for the legend); False if it had room."""
        if top * 1.5 <= self._y_top:
            return False
        self._y_top = top * 2.5
        self.plot_item.vb.setRange(yRange=(0, self._y_top), padding=0)
        return True

    def per_step_ms(self, mode: Mode) -> list[float]:
        _, y = self._per_step[mode].getData()
        return [] if y is None else [float(v) for v in y]

    _REPEAT_X: dict[Mode, float] = {"cached": -0.25, "recompute": 0.25}  # noqa: RUF012

    def show_ttft_repeats(self, times: PrefillTimes | None) -> None:
        """Draw a repeated TTFT measurement (None: remove it)."""
        self._repeats = times
        self._placement = None  # new markers and bars beside step 0
        for mode in MODES:
            legend_item = self._repeat_median[mode]
            self.legend.removeItem(legend_item)
            if times is None:
                self._repeat_bars[mode].setData(x=np.zeros(0), y=np.zeros(0))
                self._repeat_median[mode].setData([], [])
                continue
            value = times.ttft_ms(mode)
            x = np.asarray([self._REPEAT_X[mode]])
            y = np.asarray([value.median])
            self._repeat_bars[mode].setData(x=x, y=y, top=np.asarray([value.high - value.median]),
                                            bottom=np.asarray([value.median - value.low]))
            self._repeat_median[mode].setData(x, y)
        if times is not None:
            self.legend.addItem(self._repeat_median["cached"],
                                self._repeat_name.format(len(times.ms["cached"])))
            if self._grow_y(max(times.ttft_ms(m).high for m in MODES)):
                self.ranges_changed()
        if self._store is not None and hasattr(self, "_ttft_median_text"):
            self.refresh(self._store)  # the TTFT labels: medians replace the single samples

    def headline(self) -> str:
        """ms/token per run (median decode step, min–max, k), then TTFT: single or median.

        A single cold TTFT is never set beside a median: once TTFT has been
        measured k times, the headline gives only the medians.
        """
        parts = []
        for trace in self._traces():
            decode, spread = trace.decode_ms_per_token, trace.decode_ms_range
            if decode is not None and spread is not None:
                parts.append(self.tr(
                    "{0}: {1:.2f} ms per generated token (median of {2} decode steps, "
                    "{3:.2f}–{4:.2f})").format(mode_name(trace.mode), decode, spread[2],
                                               spread[0], spread[1]))
        if self._repeats is None:
            singles = [self.tr("{0} {1:.1f} ms").format(mode_name(t.mode), t.ttft_ms)
                       for t in self._traces()]
            if not singles:
                return ""
            ttft = self.tr("TTFT, single measurement: ") + " · ".join(singles) + " " + self.tr(
                "(Lecture → Measure TTFT repeats it)")
        else:
            repeated = [self.tr("{0} {1:.2f} ms ({2:.2f}–{3:.2f})").format(
                mode_name(m), s.median, s.low, s.high)
                for m in MODES for s in [self._repeats.ttft_ms(m)]]
            ttft = self.tr("TTFT median of {0} rounds: ").format(
                len(self._repeats.ms["cached"])) + " · ".join(repeated)
        return " · ".join(parts) + ("\n" if parts else "") + ttft

    def data_tables(self) -> list[DataTable]:
        series: list[Series] = []
        for trace in self._traces():
            name = mode_name(trace.mode)
            steps = tuple(trace.steps)
            series += [
                Series(self.tr("{0}: time of the step (ms)").format(name), steps,
                       tuple(trace.step_ms)),
                Series(self.tr("{0}: time so far (ms)").format(name), steps,
                       tuple(trace.cumulative_ms)),
            ]
        tables = [DataTable(self.tr("Time per step"), self.tr("step (0 = prefill)"),
                            tuple(series))]
        if self._repeats is not None:
            rounds = tuple(range(1, len(self._repeats.ms["cached"]) + 1))
            tables.append(DataTable(
                self.tr("Time to first token, repeated"), self.tr("round"),
                tuple(Series(self.tr("{0}: TTFT (ms)").format(mode_name(m)), rounds,
                             self._repeats.ms[m]) for m in MODES)))
        return tables


def _shown_labels(labels: Iterable[pg.TextItem]) -> list[tuple[str, QRectF]]:
    """The labels with a text: (plain text, rectangle in scene coordinates)."""
    return [(label.textItem.toPlainText(), label_rect(label))
            for label in labels if label.textItem.toPlainText()]


def _set_text(label: pg.TextItem, text: str) -> None:
    """Set `label`'s plain `text` if it is new (setting it lays the text out again); shown
    only with a text: an empty one still paints its white box (at step 0, 0 ms, over the
    TTFT stars)."""
    if label.textItem.toPlainText() != text:
        label.setText(text)
    label.setVisible(bool(text))


def _marker_half_width(scatter: pg.ScatterPlotItem) -> float:
    """How far `scatter`'s markers reach from their centres, px: half the diagonal of the
    marker's square with its pen (what pyqtgraph pads its bounding rect with)."""
    pen = pg.mkPen(scatter.opts["pen"])
    return (float(scatter.opts["size"]) + max(pen.widthF(), 1.0)) * 0.7072
