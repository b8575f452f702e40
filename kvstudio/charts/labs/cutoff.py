"""The top-p / top-k lab's view: the next-token distribution and where each filter cuts.

Owns `TopPTopKView`: what top-p really sees at one step: the 20 most likely
next tokens after the temperature and top-k, renormalised (bars cut by top-k
are hollow at their probability before top-k), their cumulative mass as a
line, p as a level and the top-p cut, so the kept mass reads ≥ p; the chosen
token is outlined. Below, the survivors of each filter per step; a row per
step in the table. `show_step` draws any step again (exports show that step);
a finished run opens on the step with the widest top-p cut.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt

from kvstudio.charts.chart_data import DataTable, table_at
from kvstudio.charts.labs.base import LabView, fill_legend, grid_and_legend, name_plot
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.plots.token_axis import TokenAxis, distinct_ticks, token_tick
from kvstudio.engine.records import SamplingSettings
from kvstudio.labs.course import EMPTY_ANSWER, setting_changes, settings_line

if TYPE_CHECKING:
    from kvstudio.labs.sampling import cutoff as lab
else:
    lab = LazyModule("kvstudio.labs.sampling.cutoff")  # torch loads when a lab first runs

KEPT, CUT_P, CUT_K = "#0072B2", "#E69F00", "#888888"
MASS = "#009E73"  # the cumulative-mass line and the p level
Y_TOP = 1.08  # the probability axis' top, at least
HEADROOM_PX = 4.0  # between a text above a level and the plot's top
TOP_TICK_ROOM = 0.3  # decades kept clear of round ticks either side of the largest count


class TopPTopKView(LabView):
    key = "cutoff"

    def result_type(self) -> type:
        return lab.DistributionRun

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.layout_widget.setBackground("w")
        # Token labels never run together ("⟨EC 98⟩너무" in a narrow presenter).
        self.dist_plot = self.layout_widget.addPlot(row=0, col=0,
                                                    axisItems={"bottom": TokenAxis()})
        self.surv_plot = self.layout_widget.addPlot(row=1, col=0)
        self.layout_widget.ci.layout.setRowStretchFactor(0, 3)
        self.layout_widget.ci.layout.setRowStretchFactor(1, 2)
        grid_and_legend(self.dist_plot, self.surv_plot, x_grid=False)
        self._bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=KEPT)
        self.dist_plot.addItem(self._bars)
        self._mass = pg.PlotDataItem([], [], pen=pg.mkPen(MASS, width=2.5), symbol="o",
                                     symbolSize=5, symbolBrush=MASS, symbolPen=None)
        self.dist_plot.addItem(self._mass)
        self._p_level = pg.InfiniteLine(
            angle=0, pen=pg.mkPen(MASS, width=1.5, style=Qt.PenStyle.DashLine), label="",
            labelOpts={"position": 0.97, "color": MASS, "anchors": [(1, 1), (1, 1)]},
        )
        self._p_level.setVisible(False)
        self.dist_plot.addItem(self._p_level, ignoreBounds=True)
        self._chosen_mark = pg.TextItem("", color="#000000", anchor=(0.5, 1))  # "chosen"
        self._chosen_mark.setVisible(False)
        self.dist_plot.addItem(self._chosen_mark, ignoreBounds=True)
        self.dist_plot.setYRange(0, Y_TOP, padding=0)
        self._mark_level = 0.0  # where the chosen mark's text starts (0: no mark)
        # The p label and the chosen mark sit above a level: a low plot (the presenter's
        # 120 px at 1366×768) gets the room they need above it, in pixels.
        self.dist_plot.getViewBox().sigResized.connect(self._fit_headroom)
        self.dist_plot.getViewBox().setMouseEnabled(y=False)
        self._k_line = pg.InfiniteLine(
            angle=90, pen=pg.mkPen("#555", width=2, style=Qt.PenStyle.DashLine), label="",
            labelOpts={"position": 0.55, "color": "#333", "anchors": [(0, 0), (0, 0)]})
        self._p_line = pg.InfiniteLine(
            angle=90, pen=pg.mkPen("#D55E00", width=2), label="",
            labelOpts={"position": 0.42, "color": "#D55E00", "anchors": [(0, 0), (0, 0)]})
        for line in (self._k_line, self._p_line):
            line.setVisible(False)
            self.dist_plot.addItem(line, ignoreBounds=True)
        self.surv_plot.setLogMode(y=True)
        self.dist_plot.getAxis("left").enableAutoSIPrefix(False)
        self._surv_k = self.surv_plot.plot(
            [], [], pen=pg.mkPen("#555", width=2), symbol="o", symbolSize=4, symbolBrush="#555"
        )
        self._surv_p = self.surv_plot.plot(
            [], [], pen=pg.mkPen("#D55E00", width=2), symbol="o", symbolSize=4,
            symbolBrush="#D55E00")
        self.steps: list[lab.DistributionStep] = []
        self.shown: int | None = None  # the step drawn when looking back (None = the latest)
        self.add_chart("top-k-top-p", self.layout_widget)
        self.retranslate()

    def retranslate(self) -> None:
        super().retranslate()
        self.dist_plot.setTitle(
            self.tr("Next-token distribution after temperature and top-k"), color="#222")
        self.dist_plot.setLabel("left", self.tr("probability (renormalised)"))
        fill_legend(self.dist_plot, [(self._mass, self.tr("cumulative mass"))])
        name_plot(self.surv_plot, self.tr("Candidates left after each filter"), self.tr("step"),
                  self.tr("tokens"))
        fill_legend(self.surv_plot, [(self._surv_k, self.tr("after top-k")),
                                     (self._surv_p, self.tr("after top-p"))])
        if self.steps:
            self._fill_table()
            self._draw_step(self.shown_step())

    def settings(self) -> SamplingSettings:
        """The knobs the run is made with."""
        return lab.sampling(self.params)

    def settings_text(self) -> str:
        """The settings line of the run: which settings made it, what differs from the course."""
        return self.sampling_settings_text(self.settings(),
                                           answer_tokens=self.params["new_tokens"])

    def shown_step(self) -> lab.DistributionStep:
        """The step the distribution shows: the one selected in the table, else the latest."""
        return self.steps[-1] if self.shown is None else self.steps[self.shown]

    def show_step(self, index: int | None) -> None:
        """Draw step `index` again (None or the last one: follow the run)."""
        if not self.steps:
            return
        if index is not None and index >= len(self.steps) - 1:
            index = None
        self.shown = index
        self._draw_step(self.shown_step())

    def step_line(self) -> str:
        """What the shown step chose, for the status line (and why it is shown, where it is
        the widest cut)."""
        item = self.shown_step()
        line = self.tr(
            "Step {0}: chose {1!r} (p = {2:.3f} after top-k and top-p renormalised)").format(
            item.step, _chosen_text(item), item.record.chosen_probability[0])
        if item.chosen_outside():
            line += " · " + self.outside_note(item)
        why = self.why_line()
        return why + "\n" + line if self.shown_is_widest() else line

    def shown_is_widest(self) -> bool:
        """Whether the step shown is the run's widest top-p cut (the one a run opens on)."""
        return bool(self.steps) and self.steps[lab.widest_cut(self.steps)] is self.shown_step()

    def why_line(self) -> str:
        """Which step is shown and why: "Step 0: the widest cut, 89 survivors of 6,400;
        p = 0.85" (the widest), else the same without "the widest cut"."""
        item = self.shown_step()
        survivors = item.record.survivors_top_p[0]
        vocab = item.vocab_size or item.record.survivors_top_k[0]
        if self.shown_is_widest():
            return self.tr("Step {0}: the widest cut, {1:,} survivors of {2:,}; p = {3:g}"
                           ).format(item.step, survivors, vocab, self.params["top_p"])
        return self.tr("Step {0}: {1:,} survivors of {2:,}; p = {3:g}").format(
            item.step, survivors, vocab, self.params["top_p"])

    def outside_note(self, item: lab.DistributionStep) -> str:
        """Where a chosen token past the bars ranks: "chosen: 연락, rank 57, outside the
        top 20"."""
        return self.tr("chosen: {0}, rank {1:,}, outside the top {2}").format(
            _chosen_text(item), item.chosen_place, len(item.probabilities))

    def clear(self) -> None:
        self.steps = []
        self.shown = None
        self._bars.setOpts(x=[], height=[])
        for line in (self._k_line, self._p_line):
            line.setVisible(False)
        self._surv_k.setData([], [])
        self._surv_p.setData([], [])
        self._mass.setData([], [])
        self._p_level.setVisible(False)
        self._chosen_mark.setVisible(False)
        self._mark_level = 0.0
        self.dist_plot.setYRange(0, Y_TOP, padding=0)
        self.table.set_rows([], [])

    def show_progress(self, item: object) -> None:
        if not isinstance(item, lab.DistributionStep):
            return
        self.steps.append(item)
        steps = np.arange(len(self.steps), dtype=float)
        self._surv_k.setData(steps, [float(s.record.survivors_top_k[0]) for s in self.steps])
        self._surv_p.setData(steps, [float(s.record.survivors_top_p[0]) for s in self.steps])
        self._label_survivor_axis()
        self._fill_table()
        self.show_step(None)  # a new step: show it

    def _label_survivor_axis(self) -> None:
        """1, 10, 100 … on the log axis, then 2 and 5 … where there is room: pyqtgraph drops
        a tick level that would overlap (its own labels, 1…9 in each decade, overlap)."""
        top = max((s.record.survivors_top_k[0] for s in self.steps), default=1)
        top_log = float(np.log10(max(top, 1)))

        def level(multiples: tuple[int, ...]) -> list[tuple[float, str]]:
            values = [m * 10**e for e in range(7) for m in multiples if m * 10**e <= top * 2]
            return [(float(np.log10(v)), f"{v:,}") for v in values
                    if abs(np.log10(v) - top_log) >= TOP_TICK_ROOM]

        # The largest count (the vocabulary, top-k off) gets its own tick: "6,400", not a
        # line a little above the last power of ten; round ticks next to it make room.
        self.surv_plot.getAxis("left").setTicks(
            [sorted([*level((1,)), (top_log, f"{top:,}")]), level((2, 5))])
        steps = len(self.steps)
        every = max(1, int(np.ceil(steps / 16)))
        self.surv_plot.getAxis("bottom").setTicks(
            [[(float(i), str(i)) for i in range(0, steps, every)]])

    def _draw_step(self, item: lab.DistributionStep) -> None:
        n = len(item.probabilities)
        k = item.top_k_cut
        shown = item.after_top_k()
        heights: list[float] = []
        colours: list[str | None] = []
        pens: list[pg.QtGui.QPen] = []
        for i in range(n):
            if k is not None and i >= k:  # cut by top-k: hollow, at its probability before
                heights.append(item.probabilities[i])
                colours.append(None)
                pens.append(pg.mkPen(CUT_K, width=1.5, style=Qt.PenStyle.DashLine))
                continue
            heights.append(shown[i])
            colours.append(KEPT if i < item.top_p_cut else CUT_P)
            pens.append(pg.mkPen(None))
        xs = [float(i) for i in range(n)]
        chosen: int | None = item.chosen_rank  # the chosen bar's index in xs
        if item.chosen_outside():  # past the bars: drawn after a gap, with its rank
            chosen = n
            xs.append(float(n + 1))
            heights.append(item.chosen_probability_before / max(item.top_k_mass, 1e-12))
            colours.append(KEPT)  # top-k and top-p kept it: it was chosen
            pens.append(pg.mkPen(None))
        if chosen is not None:
            pens[chosen] = pg.mkPen("#000000", width=3)
            outside = item.chosen_outside()
            # Past the bars the mark ends over its bar ("chosen, rank 57 ▼"): the plot's
            # right edge is right there.
            self._chosen_mark.setText(
                self.tr("chosen, rank {0:,}").format(item.chosen_place) + " ▼" if outside
                else "▼ " + self.tr("chosen"))
            self._chosen_mark.setAnchor((1.0, 1.0) if outside else (0.5, 1.0))
            self._chosen_mark.setPos(xs[chosen] + (0.4 if outside else 0.0),
                                     heights[chosen] + 0.06)
        self._chosen_mark.setVisible(chosen is not None)
        self._mark_level = heights[chosen] + 0.06 if chosen is not None else 0.0
        self._bars.setOpts(x=np.asarray(xs, dtype=float), height=np.asarray(heights, dtype=float),
                           brushes=colours, pens=pens)
        kept_by_k = k if k is not None else n
        cumulative = np.cumsum(np.asarray(shown[:kept_by_k], dtype=float))
        self._mass.setData(np.arange(len(cumulative), dtype=float), cumulative)
        # Two tick levels: when the axis is narrow pyqtgraph drops the second, not overlaps.
        # The most likely and the chosen bar always have their labels: they go in the first
        # level (pyqtgraph drops the second when it is crowded), the chosen one's other
        # neighbours in the second.
        tokens = list(item.token_texts)
        if chosen == n:
            tokens.append(_chosen_text(item))
        texts = distinct_ticks([token_tick(t, 6) for t in tokens], tokens)
        first = {i for i in range(0, n, 2) if chosen is None or abs(i - chosen) != 1}
        first.add(0)
        if chosen is not None:
            first.add(chosen)
        bottom = self.dist_plot.getAxis("bottom")
        bottom.setTicks([
            [(xs[i], texts[i]) for i in sorted(first)],
            [(xs[i], texts[i]) for i in range(n) if i not in first],
        ])
        bottom.set_kept([0.0] + ([xs[chosen]] if chosen is not None else []))
        kept = item.record.survivors_top_p[0]
        axis = self.tr("the {0} most likely tokens at step {1}").format(n, item.step)
        if kept > n:  # top-k off: top-p's cut lies past the bars drawn
            axis = self.tr("the {0} most likely tokens at step {1}; top-p keeps {2:,}, "
                           "past the bars (mass {3:.2f})").format(n, item.step, kept,
                                                                  item.kept_mass())
        self.dist_plot.setLabel("bottom", axis)
        self._k_line.setVisible(k is not None)
        if k is not None:
            self._k_line.setValue(k - 0.5)
            self._k_line.label.setFormat(self.tr("top-k = {0}: mass {1:.2f}").format(
                self.params["top_k"], item.top_k_mass))
        p = self.params["top_p"]
        self._p_level.setValue(p)
        self._p_level.label.setFormat(self.tr("p = {0:g}").format(p))
        self._p_level.setVisible(p < 1)
        p_cut = item.top_p_cut
        p_cuts_inside = p_cut < n and (k is None or p_cut < k)
        self._p_line.setVisible(p_cuts_inside)
        if p_cuts_inside:
            self._p_line.setValue(p_cut - 0.5)
            self._p_line.label.setFormat(self.tr("top-p keeps {0}: mass {1:.2f} ≥ {2:g}").format(
                p_cut, item.kept_mass(), p))
        self._fit_headroom()

    def _fit_headroom(self, *_args: object) -> None:
        """The axis' top: Y_TOP, or higher where the p label or the chosen mark (each drawn
        above its level, a fixed number of pixels high) would be cut at the plot's top."""
        height = float(self.dist_plot.getViewBox().height())
        top = Y_TOP
        texts = [(self._p_level, self._p_level.label, float(self.params["top_p"])),
                 (self._chosen_mark, self._chosen_mark, self._mark_level)]
        for shown, text, level in texts:
            need = float(text.boundingRect().height()) + HEADROOM_PX  # (in pixels)
            if shown.isVisible() and level > 0 and height > 2 * need:
                top = max(top, level / (1.0 - need / height))
        self.dist_plot.setYRange(0, top, padding=0)

    def _fill_table(self) -> None:
        rows = [(s.step, token_tick(_chosen_text(s), 14), s.record.chosen_probability[0],
                 s.record.survivors_top_k[0], s.record.survivors_top_p[0]) for s in self.steps]
        self.table.blockSignals(True)  # refilling is not the user choosing a step
        self.table.set_rows([self.tr("step"), self.tr("chosen"), self.tr("p(chosen)"),
                             self.tr("after top-k"), self.tr("after top-p")], rows)
        row = len(rows) - 1 if self.shown is None else self.shown
        if rows:
            self.table.setCurrentCell(row, 0)
        self.table.blockSignals(False)
        if self.shown is None:
            self.table.scrollToBottom()

    def draw_result(self, result: lab.DistributionRun) -> None:
        if self.steps:
            # Open on the widest top-p cut (ties: the earliest), not eos.
            widest = lab.widest_cut(self.steps)
            self.show_step(widest)
            self.table.blockSignals(True)  # the table follows; it is not a new choice
            self.table.setCurrentCell(widest, 0)
            self.table.blockSignals(False)

    def status_of(self, result: lab.DistributionRun) -> str:
        text = self.tr("(empty: eos at step 0)") if result.text == EMPTY_ANSWER else result.text
        done = self.tr("Finished. Text: {0}").format(text)
        return done + "\n" + self.why_line() if self.steps else done

    def headline(self) -> str:
        if not self.steps:
            return ""
        item = self.shown_step()
        settings = self.settings()
        # Why this step: the one a run opens on is the widest top-p cut, and says so.
        step = (self.tr("Step {0}, the widest cut") if self.shown_is_widest()
                else self.tr("Step {0}")).format(item.step)
        vocab = item.vocab_size or item.record.survivors_top_k[0]
        if settings.top_k > 0:
            first = self.tr(
                "{0}: top-k = {1} keeps {2:,} of {7:,} tokens holding {3:.2f} of the "
                "probability; renormalised, top-p = {4:g} keeps {5:,} with mass {6:.2f} ≥ {4:g}"
            ).format(step, settings.top_k, item.record.survivors_top_k[0],
                     item.top_k_mass, settings.top_p, item.record.survivors_top_p[0],
                     item.kept_mass(), vocab)
        else:
            first = self.tr(
                "{0}: top-k off; top-p = {1:g} keeps {2:,} of {4:,} tokens with mass "
                "{3:.2f} ≥ {1:g}"
            ).format(step, settings.top_p, item.record.survivors_top_p[0],
                     item.kept_mass(), vocab)
        second = self.tr("temperature {0:g} · chose «{1}», p = {2:.3f} after both filters"
                         ).format(settings.temperature, _chosen_text(item),
                                  item.record.chosen_probability[0])
        if item.chosen_outside():
            second += " · " + self.outside_note(item)
        return first + "\n" + second + "\n" + self.settings_text()

    def data_tables(self) -> list[DataTable]:
        if not self.steps:
            return []
        item = self.shown_step()
        ranks = tuple(range(1, len(item.probabilities) + 1))
        renormalised = item.after_top_k()
        cumulative = tuple(float(v) for v in np.cumsum(renormalised))
        kept = tuple(i < item.top_p_cut for i in range(len(ranks)))
        steps = self.steps
        return [
            table_at(self.tr("Next-token distribution at step {0}").format(item.step),
                     self.tr("rank (1 = most likely)"), ranks, [
                (self.tr("token"), item.token_texts),
                (self.tr("probability after temperature"), item.probabilities),
                (self.tr("probability after top-k, renormalised"), renormalised),
                (self.tr("cumulative mass after top-k"), cumulative),
                (self.tr("kept by top-k and top-p"), kept),
                (self.tr("chosen"), [i == item.chosen_rank for i in range(len(ranks))]),
            ]),
            table_at(self.tr("Candidates left after each filter"), self.tr("step"),
                     [s.step for s in steps], [
                (self.tr("after top-k (tokens)"), [s.record.survivors_top_k[0] for s in steps]),
                (self.tr("after top-p (tokens)"), [s.record.survivors_top_p[0] for s in steps]),
                (self.tr("kept mass after top-k (probability)"), [s.top_k_mass for s in steps]),
                (self.tr("p(chosen) after both filters"),
                 [s.record.chosen_probability[0] for s in steps]),
            ]),
        ]

    def numbers(self) -> dict[str, Any]:
        settings = self.settings()
        return {
            "settings": {
                "temperature": settings.temperature,
                "top_k": settings.top_k,
                "top_p": settings.top_p,
                "repetition_penalty": settings.repetition_penalty,
                "seed": settings.seed,
            },
            "settings_line": settings_line(settings, answer_tokens=self.params["new_tokens"]),
            "changed_from_course": list(setting_changes(settings)),
            "shown_step": self.shown_step().step if self.steps else None,
            "shown_is_widest_cut": self.shown_is_widest(),
            "steps": [
                {
                    "step": s.step,
                    "chosen": _chosen_text(s),
                    "chosen_rank": s.chosen_place,
                    "vocabulary": s.vocab_size,
                    "token_texts": list(s.token_texts),
                    "probabilities": list(s.probabilities),
                    "top_k_mass": s.top_k_mass,
                    "after_top_k_renormalised": list(s.after_top_k()),
                    "kept_mass_after_top_p": s.kept_mass(),
                    "survivors_top_k": s.record.survivors_top_k[0],
                    "survivors_top_p": s.record.survivors_top_p[0],
                }
                for s in self.steps
            ],
        }


def _chosen_text(step: lab.DistributionStep) -> str:
    rank = step.chosen_rank
    if rank is not None:
        return step.token_texts[rank]
    return step.chosen_text or f"id {step.record.token_ids[0]}"
