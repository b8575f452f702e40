"""The beam search lab's view: the beam tree, the bytes the reorders copied, the beams of a step.

Owns `BeamSearchView`: two charts from the result record: the beam tree (one column
per step, a node per beam, a segment from the row each beam continues; segments
that copy another row drawn apart from rows that stay, and a short branch with a
cross where a hypothesis ended with eos or the budget) and the bytes the
reorders copied so far against what a paged cache's copies on write would copy.
The beam table lists the beams of one step (`show_step`: beam, parent row,
score, its last tokens) and marks its column on the tree; the results table
holds the returned hypotheses, the byte totals and the transformers check.
Exports get a headline and data tables written from the record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt

from kvstudio.charts.chart_data import DataTable, table_at
from kvstudio.charts.labs.base import (
    LabView,
    fill_legend,
    grid_and_legend,
    name_plot,
    plots_in_a_row,
    series_colour,
)
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.names import format_bytes
from kvstudio.charts.plots.results_table import ByteCount, ResultsTable

if TYPE_CHECKING:
    from kvstudio.labs import beam as lab
else:
    lab = LazyModule("kvstudio.labs.beam")  # torch loads when the lab first runs

KEPT_COLOUR, MOVED_COLOUR, STOPPED_COLOUR = "#8A8A8A", "#D55E00", "#CC79A7"
TAIL_TOKENS = 3  # last tokens a beam table row shows
ENDED_OFFSET = 0.3  # a finished hypothesis is drawn this far below the row it left


class BeamSearchView(LabView):
    key = "beam"
    draw_while_running = False

    def result_type(self) -> type:
        return lab.BeamLabResult

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.step = 0  # the step the beam table lists
        self.layout_widget, (self.tree_plot, self.bytes_plot) = plots_in_a_row(2)
        grid_and_legend(self.tree_plot, self.bytes_plot)
        self.tree_plot.invertY(True)
        self._kept = self.tree_plot.plot([], [], pen=pg.mkPen(KEPT_COLOUR, width=2),
                                         connect="pairs")
        self._moved = self.tree_plot.plot([], [], pen=pg.mkPen(MOVED_COLOUR, width=2.5),
                                          connect="pairs")
        self._nodes = pg.ScatterPlotItem(size=8, pen=None, brush=series_colour(0))
        self._stopped = pg.ScatterPlotItem(size=11, symbol="x", pen=None, brush=STOPPED_COLOUR)
        self._chosen = pg.PlotDataItem([], [], pen=pg.mkPen(series_colour(0), width=1.5,
                                                            style=Qt.PenStyle.DashLine))
        self._ended = self.tree_plot.plot([], [], pen=pg.mkPen(STOPPED_COLOUR, width=2),
                                          connect="pairs")
        for item in (self._nodes, self._stopped):
            self.tree_plot.addItem(item)
        self.tree_plot.addItem(self._chosen, ignoreBounds=True)
        self._lines = {
            "reorder": self.bytes_plot.plot([], [], pen=pg.mkPen(series_colour(1), width=2.5)),
            "index_select": self.bytes_plot.plot(
                [], [], pen=pg.mkPen(series_colour(1), width=2, style=Qt.PenStyle.DashLine)),
            "cow": self.bytes_plot.plot([], [], pen=pg.mkPen(series_colour(2), width=2.5)),
        }
        self.add_chart("beam-search", self.layout_widget)
        self.beam_table = ResultsTable()  # the beams of `step`
        self.retranslate()

    def retranslate(self) -> None:
        super().retranslate()
        name_plot(self.tree_plot, self.tr("Beam tree: the row each beam continues"),
                  self.tr("tokens generated"), self.tr("beam (cache row)"))
        name_plot(self.bytes_plot, self.tr("Bytes copied by reorders, so far"), self.tr("step"),
                  self.tr("KiB"))
        fill_legend(self.tree_plot, [(self._kept, self.tr("stays in its row")),
                                     (self._moved, self.tr("copies another row")),
                                     (self._ended, self.tr("ended (eos or N)"))])
        fill_legend(self.bytes_plot, [
            (self._lines["reorder"], self.tr("reorder: rows moved × row bytes")),
            (self._lines["index_select"], self.tr("index_select: every row")),
            (self._lines["cow"], self.tr("paged: copies on write"))])
        self.show_result(self.result)

    def clear(self) -> None:
        for line in (self._kept, self._moved, self._ended, self._chosen, *self._lines.values()):
            line.setData([], [])
        for scatter in (self._nodes, self._stopped):
            scatter.setData([], [])
        self.step = 0
        self.table.set_rows([], [])
        self.beam_table.set_rows([], [])

    def step_count(self) -> int:
        """Steps of the result shown (0 before a result)."""
        result = self.finished()
        return 0 if result is None else len(result.steps)

    # ---- drawing ----------------------------------------------------------------------------
    def draw_result(self, result: lab.BeamLabResult) -> None:
        """The tree, the bytes, the summary, and the beam table at the last step."""
        if not result.steps:
            return
        self._draw_tree(result)
        steps = np.arange(len(result.steps), dtype=float)
        series = {
            "reorder": result.cumulative_reorder_bytes,
            "index_select": tuple(np.cumsum([s.index_select_bytes for s in result.steps])),
            "cow": result.cumulative_cow_bytes,
        }
        for key, values in series.items():
            self._lines[key].setData(steps, np.asarray(values, dtype=float) / 1024)
        top = max(max(values) for values in series.values()) / 1024
        self.bytes_plot.setYRange(0, max(top, 1.0) * 1.1, padding=0)
        self.show_step(len(result.steps) - 1)
        self._fill_summary(result)

    def _draw_tree(self, result: lab.BeamLabResult) -> None:
        """Nodes at (tokens generated, row); a segment from the parent row one column left."""
        kept: list[tuple[float, float]] = []
        moved: list[tuple[float, float]] = []
        nodes: list[tuple[float, float]] = [(0.0, 0.0)]  # the prompt: one row
        stopped: list[tuple[float, float]] = []
        ends: list[tuple[float, float]] = []
        seen: set[tuple[tuple[int, ...], float]] = set()
        for step in result.steps:
            x = step.step + 1.0
            for row, beam in enumerate(step.beams):
                (kept if beam.parent == row else moved).extend(
                    [(x - 1.0, float(beam.parent)), (x, float(row))])
                (stopped if beam.stopped else nodes).append((x, float(row)))
            for hypothesis in step.finished:  # a branch that ended this step: off its row
                key = (hypothesis.tokens, hypothesis.score)
                if key in seen:
                    continue
                seen.add(key)
                y = hypothesis.parent + ENDED_OFFSET
                ends.extend([(x - 1.0, float(hypothesis.parent)), (x, y)])
                stopped.append((x, y))
        for item, points in ((self._kept, kept), (self._moved, moved), (self._ended, ends)):
            data = np.asarray(points, dtype=float).reshape(-1, 2)
            item.setData(data[:, 0], data[:, 1], connect="pairs")
        for scatter, points in ((self._nodes, nodes), (self._stopped, stopped)):
            data = np.asarray(points, dtype=float).reshape(-1, 2)
            scatter.setData(x=data[:, 0], y=data[:, 1])
        k = result.settings.num_beams
        self.tree_plot.setYRange(-0.5, k - 0.5 + ENDED_OFFSET, padding=0.05)
        self.tree_plot.setXRange(0, len(result.steps), padding=0.03)
        self.tree_plot.getAxis("left").setTicks([[(r, str(r)) for r in range(k)]])

    def show_step(self, index: int) -> None:
        """The beam table for step `index`, and its column marked on the tree."""
        self.step = index
        result = self.result
        if not isinstance(result, lab.BeamLabResult) or not result.steps:
            return
        step = result.steps[max(0, min(index, len(result.steps) - 1))]
        x = step.step + 1.0
        k = result.settings.num_beams
        self._chosen.setData([x, x], [-0.5, k - 0.5])
        tokenizer = self.tokenizer
        rows: list[tuple[Any, ...]] = []
        for row, beam in enumerate(step.beams):
            tail = beam.tokens[-TAIL_TOKENS:]
            text = tokenizer.decode(list(tail)) if tokenizer is not None else str(list(tail))
            text = text.replace("\n", "⏎")
            rows.append((row, beam.parent, beam.score,
                         self.tr("…{0} (ended)").format(text) if beam.stopped else f"…{text}"))
        self.beam_table.set_rows(
            [self.tr("beam"), self.tr("from row"), self.tr("Σ log p"),
             self.tr("last tokens")], rows)
        # Counted as the tree's x axis counts: step s (0 = the prefill) chose token s + 1.
        self.tree_plot.setTitle(self.tr("Beam tree · token {0}: {1} rows moved, {2}").format(
            step.step + 1, step.rows_moved, format_bytes(step.reorder_bytes)), color="#222")

    def _fill_summary(self, result: lab.BeamLabResult) -> None:
        search = result.search
        rows: list[tuple[Any, ...]] = []
        for rank, (hypothesis, text) in enumerate(zip(search.sequences, result.texts,
                                                      strict=True), 1):
            rows.append((self.tr("answer {0}").format(rank), hypothesis.score,
                         _short(text, 18)))
        check = result.transformers
        rows.append((self.tr("same as transformers"),
                     check.same if check.ran else self.tr("not checked"),
                     "generate(num_beams=…)" if check.ran else self.tr("off or unavailable")))
        moved = sum(s.rows_moved for s in result.steps)
        rows.extend([
            (self.tr("rows moved"), moved, self.tr("{0} steps").format(search.steps)),
            (self.tr("reorder (B)"), ByteCount(search.reorder_bytes),
             self.tr("rows moved × row bytes")),
            (self.tr("index_select (B)"), ByteCount(search.index_select_bytes),
             self.tr("every row, every step")),
            (self.tr("paged: copy on write (B)"), ByteCount(search.cow_bytes),
             self.tr("blocks of {0} tokens").format(result.steps[0].block_size)),
        ])
        self.table.set_rows([self.tr("quantity"), self.tr("value"), self.tr("detail")], rows)

    # ---- exports ----------------------------------------------------------------------------
    def headline_of(self, result: lab.BeamLabResult) -> str:
        if not result.steps:
            return ""
        s, search = result.settings, result.search
        first = self.tr("{0} beams, {1} steps: reorders copied {2} (rows moved × row bytes); "
                        "a paged cache would copy {3}").format(
            s.num_beams, search.steps, format_bytes(search.reorder_bytes),
            format_bytes(search.cow_bytes))
        best = search.sequences[0]
        second = self.tr("best answer: score {0:.3f} over {1} tokens (length penalty {2:g})"
                         ).format(best.score, len(best.tokens), s.length_penalty)
        check = result.transformers
        third = (self.tr("same as transformers: yes") if check.ran and check.same
                 else self.tr("same as transformers: no") if check.ran
                 else self.tr("not compared with transformers"))
        return "\n".join((first, second, third))

    def tables_of(self, result: lab.BeamLabResult) -> list[DataTable]:
        if not result.steps:
            return []
        steps = [s.step for s in result.steps]
        copies = [
            (self.tr("reorder, so far (B)"), result.cumulative_reorder_bytes),
            (self.tr("index_select, so far (B)"),
             [int(v) for v in np.cumsum([s.index_select_bytes for s in result.steps])]),
            (self.tr("paged copy on write, so far (B)"), result.cumulative_cow_bytes),
            (self.tr("rows moved"), [s.rows_moved for s in result.steps]),
            (self.tr("blocks shared"), [s.blocks_shared for s in result.steps]),
        ]
        beams: list[tuple[str, list[Any]]] = []
        for row in range(result.settings.num_beams):
            beams.append((self.tr("beam {0}: from row").format(row),
                          [s.beams[row].parent for s in result.steps]))
            beams.append((self.tr("beam {0}: Σ log p").format(row),
                          [s.beams[row].score for s in result.steps]))
        return [table_at(self.tr("Bytes copied by reorders, so far"), self.tr("step"), steps,
                         copies),
                table_at(self.tr("Beam tree"), self.tr("step"), steps, beams)]

    def numbers_of(self, result: lab.BeamLabResult) -> dict[str, Any]:
        s, search = result.settings, result.search
        return {
            "num_beams": s.num_beams,
            "length_penalty": s.length_penalty,
            "early_stopping": s.early_stopping,
            "max_new_tokens": s.max_new_tokens,
            "prompt_tokens": len(result.prompt_ids),
            "steps": search.steps,
            "returned": [{"tokens": list(h.tokens), "score": h.score} for h in search.sequences],
            "parents": [[b.parent for b in step.beams] for step in result.steps],
            "rows_moved": [step.rows_moved for step in result.steps],
            "reorder_bytes": [step.reorder_bytes for step in result.steps],
            "cow_bytes": [step.cow_bytes for step in result.steps],
            "blocks_shared": [step.blocks_shared for step in result.steps],
            "same_as_transformers": result.transformers.same if result.transformers.ran else None,
        }


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
