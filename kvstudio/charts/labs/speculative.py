"""The speculative-decoding lab's view: the rounds of one run, its cache rows, α, tokens per call.

Owns `SpeculativeView`, which shows

- the rounds of one run (`show_run`; by default k = 4): every drafted token
  marked accepted (✓, green), rejected (✗, red) or never judged (·, grey), the
  target's correction or bonus token (blue), and both caches' rows after the
  round with the rows appended (+) and cropped (−) (`rounds_view`, a text view);
- a chart of that run's cache rows per round and of the rows appended and
  cropped per round;
- a chart of the acceptance rate α against k and of tokens per target call
  against k, measured (solid) beside the formula (1 − α^(k+1)) / (1 − α)
  (dashed);
- a table of the totals per draft kind and k.

Exports get a headline, data tables from the result (the per-round rows of
the run shown, the per-k totals) and numbers. When ko-draft does not fit the
model (another tokenizer), only prompt lookup ran and the status line says why.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QTextBrowser

from kvstudio.charts.chart_data import DataTable, table_at
from kvstudio.charts.labs.base import (
    LabView,
    fill_legend,
    grid_and_legend,
    marked_line,
    name_plot,
    plots_in_a_row,
    series_colour,
)
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.messages import localize
from kvstudio.engine.tokenizer import TokenTexts

if TYPE_CHECKING:
    from kvstudio.engine.strategies.drafters import DraftKind
    from kvstudio.labs import speculative as lab
else:
    lab = LazyModule("kvstudio.labs.speculative")  # torch loads when the lab first runs

KINDS: tuple[DraftKind, ...] = ("model", "prompt-lookup")
TARGET, DRAFT = series_colour(0), series_colour(1)  # the two caches
TARGET_CUT, DRAFT_CUT = series_colour(5), series_colour(4)  # their cropped rows
ACCEPTED, REJECTED, UNJUDGED, TARGET_TOKEN = "#009E73", "#D55E00", "#888888", "#0072B2"
BAR = 0.38  # bar width: target left of the round, draft right of it
SHOWN_K = 4  # the run whose rounds are shown first


class SpeculativeView(LabView):
    key = "speculative"
    draw_while_running = False  # the result holds every round; timings stay undisturbed

    def result_type(self) -> type:
        return lab.SpeculativeLabResult

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shown_index = -1  # the run whose rounds are shown (-1: the first at k = 4)
        self.rounds_view = QTextBrowser()
        self.rounds_view.setMinimumHeight(140)

        self.rounds_chart, (self.rows_plot, self.moves_plot) = plots_in_a_row(2)
        grid_and_legend(self.rows_plot, self.moves_plot, x_grid=False)
        for plot in (self.rows_plot, self.moves_plot):
            plot.getAxis("left").enableAutoSIPrefix(False)
        # Both caches often hold the same rows: the target's wider line shows beneath.
        self._target_rows = marked_line(self.rows_plot, TARGET, "o", 11, width=6)
        self._draft_rows = marked_line(self.rows_plot, DRAFT, "s", 7)
        self._bars = {
            key: pg.BarGraphItem(x=[], height=[], width=BAR, brush=colour, pen=None)
            for key, colour in (("target+", TARGET), ("target-", TARGET_CUT),
                                ("draft+", DRAFT), ("draft-", DRAFT_CUT))
        }
        for bar in self._bars.values():
            self.moves_plot.addItem(bar)
        self.add_chart("speculative-rounds", self.rounds_chart)

        self.k_chart, (self.alpha_plot, self.calls_plot) = plots_in_a_row(2)
        grid_and_legend(self.alpha_plot, self.calls_plot)
        dashed = Qt.PenStyle.DashLine
        self._alpha = {k: marked_line(self.alpha_plot, series_colour(i), "o", 7)
                       for i, k in enumerate(KINDS)}
        self._measured = {k: marked_line(self.calls_plot, series_colour(i), "o", 7)
                          for i, k in enumerate(KINDS)}
        self._formula = {
            k: self.calls_plot.plot([], [], pen=pg.mkPen(series_colour(i), width=2, style=dashed))
            for i, k in enumerate(KINDS)
        }
        self.add_chart("speculative-k", self.k_chart)
        self.retranslate()

    def kind_name(self, kind: str) -> str:
        return self.tr("draft model") if kind == "model" else self.tr("prompt lookup")

    def run_names(self) -> list[str]:
        """Each run of the result, as the window's "Show rounds of" box lists it."""
        result = self.finished()
        runs = [] if result is None else result.runs
        return [f"{self.kind_name(run.draft_kind)}, k = {run.k}" for run in runs]

    def retranslate(self) -> None:
        super().retranslate()
        self.rounds_view.setPlaceholderText(self.tr("Run the lab to see every round here."))
        name_plot(self.rows_plot, self.tr("Cache rows after each round"),
                  self.tr("round (0 = prefill)"), self.tr("rows"))
        name_plot(self.moves_plot, self.tr("Rows appended (+) and cropped (−)"),
                  self.tr("round (prefill left out)"), self.tr("rows"))
        name_plot(self.alpha_plot, self.tr("Acceptance rate α vs k"), "k", "α")
        name_plot(self.calls_plot, self.tr("Tokens per target call vs k"), "k",
                  self.tr("tokens per call"))
        fill_legend(self.rows_plot, [(self._target_rows, self.tr("target")),
                                     (self._draft_rows, self.tr("draft model"))])
        fill_legend(self.moves_plot, [
            (self._bars["target+"], self.tr("target +")),
            (self._bars["target-"], self.tr("target −")),
            (self._bars["draft+"], self.tr("draft +")), (self._bars["draft-"], self.tr("draft −"))])
        fill_legend(self.alpha_plot, [(self._alpha[kind], self.kind_name(kind)) for kind in KINDS])
        fill_legend(self.calls_plot, [entry for kind in KINDS for entry in (
            (self._measured[kind], self.kind_name(kind)),
            (self._formula[kind], self.tr("formula ({0})").format(self.kind_name(kind))))])
        self.show_result(self.result)

    def clear(self) -> None:
        for item in (self._target_rows, self._draft_rows, *self._alpha.values(),
                     *self._measured.values(), *self._formula.values()):
            item.setData([], [])
        for bar in self._bars.values():
            bar.setOpts(x=[], height=[])
        self.rounds_view.clear()
        self.shown_index = -1
        self.table.set_rows([], [])

    # ---- the result ---------------------------------------------------------------------------
    def shown(self) -> lab.SpecRunResult | None:
        result = self.finished()
        if result is None or not result.runs:
            return None
        index = self.shown_index
        return result.runs[index] if 0 <= index < len(result.runs) else result.runs[0]

    def show_run(self, index: int) -> None:
        """Show the rounds of the result's run `index`."""
        self.shown_index = index
        if self.finished() is not None:
            self._draw_rounds()
            self.check_legends()

    def draw_result(self, result: lab.SpeculativeLabResult) -> None:
        if not 0 <= self.shown_index < len(result.runs):
            self.shown_index = next((i for i, r in enumerate(result.runs) if r.k == SHOWN_K), 0)
        self._draw_rounds()
        self._draw_ks(result)
        self._fill_table(result)

    def status_of(self, result: lab.SpeculativeLabResult) -> str:
        if not result.draft_note:
            return ""
        return self.tr("Done. Only prompt lookup ran: {0}").format(localize(result.draft_note))

    def _draw_rounds(self) -> None:
        run = self.shown()
        if run is None:
            return
        rounds = run.rounds
        x = np.arange(len(rounds), dtype=float)
        self._target_rows.setData(x, [float(r.target_length) for r in rounds])
        if all(r.draft_length is not None for r in rounds):
            self._draft_rows.setData(x, [float(r.draft_length or 0) for r in rounds])
        else:
            self._draft_rows.setData([], [])
        verify = rounds[1:]  # the prefill's P rows would dwarf every round's few
        vx = np.arange(1, len(rounds), dtype=float)
        self._bars["target+"].setOpts(
            x=vx - BAR / 2, height=[r.target_appended for r in verify])
        self._bars["target-"].setOpts(
            x=vx - BAR / 2, height=[-r.target_cropped for r in verify])
        has_draft = run.draft_kind == "model"
        self._bars["draft+"].setOpts(
            x=vx + BAR / 2 if has_draft else [],
            height=[r.draft_appended for r in verify] if has_draft else [])
        self._bars["draft-"].setOpts(
            x=vx + BAR / 2 if has_draft else [],
            height=[-r.draft_cropped for r in verify] if has_draft else [])
        self.rounds_view.setHtml(self.rounds_html(run))

    def rounds_html(self, run: lab.SpecRunResult) -> str:
        """Every round of `run`, its tokens marked, as the rounds view shows it."""
        # Single tokens as the candidate chips show them: half a syllable as its bytes, never �.
        texts = TokenTexts(self.tokenizer) if self.tokenizer is not None else str

        def piece(token: int) -> str:
            return html.escape(texts(token).replace("\n", "⏎") or "·")

        lines = [
            "<p>" + html.escape(self.tr(
                "✓ accepted · ✗ rejected · grey: after a rejection, never judged · blue: the "
                "target's own token. Rows: after the round (+ appended, − cropped)."
            )) + "</p>"
        ]
        for r in run.rounds:
            parts = []
            for i, token in enumerate(r.drafted):
                if i < r.accepted:
                    parts.append(f'<span style="color:{ACCEPTED}">✓{piece(token)}</span>')
                elif i == r.accepted:
                    parts.append(f'<span style="color:{REJECTED}">✗{piece(token)}</span>')
                else:
                    parts.append(f'<span style="color:{UNJUDGED}">·{piece(token)}</span>')
            if r.next_token is not None:
                label = (self.tr("bonus") if r.bonus else self.tr("prefill") if r.index == 0
                         else self.tr("correction"))
                parts.append(f'<b style="color:{TARGET_TOKEN}">+{piece(r.next_token)}</b> '
                             f"({html.escape(label)})")
            rows = self.tr("target {0} (+{1} −{2})").format(
                r.target_length, r.target_appended, r.target_cropped)
            if r.draft_length is not None:
                rows += " · " + self.tr("draft {0} (+{1} −{2})").format(
                    r.draft_length, r.draft_appended, r.draft_cropped)
            lines.append(f"<div><b>{r.index}</b>&nbsp; {' '.join(parts)} &nbsp;"
                         f'<span style="color:#444">[{html.escape(rows)}]</span></div>')
        return "\n".join(lines)

    def _draw_ks(self, result: lab.SpeculativeLabResult) -> None:
        for kind in KINDS:
            runs = [r for r in result.runs if r.draft_kind == kind]
            ks = [float(r.k) for r in runs]
            self._alpha[kind].setData(ks, [r.alpha for r in runs])
            self._measured[kind].setData(ks, [r.tokens_per_round for r in runs])
            self._formula[kind].setData(ks, [r.expected_tokens_per_round for r in runs])
        self.alpha_plot.setYRange(0, 1, padding=0.05)
        ticks = [(float(k), str(k)) for k in result.ks]
        for plot in (self.alpha_plot, self.calls_plot):
            plot.getAxis("bottom").setTicks([ticks])

    def _fill_table(self, result: lab.SpeculativeLabResult) -> None:
        what = self.tr("identical to greedy") if result.greedy else self.tr("same as plain")
        rows: list[tuple[Any, ...]] = [
            (self.kind_name(r.draft_kind), r.k, r.alpha, r.tokens_per_round,
             r.expected_tokens_per_round, r.calls_per_token, r.seconds.median * 1e3,
             result.speedup(r), r.identical_to_plain)
            for r in result.runs
        ]
        count = result.plain_seconds.count  # the timing policy: a median says of how many
        ms = (self.tr("ms (median of {0})").format(count) if count > 1
              else self.tr("ms (single measurement)"))
        self.table.set_rows(
            [self.tr("draft"), "k", "α", self.tr("tokens / call"), self.tr("formula"),
             self.tr("calls / token"), ms, self.tr("× plain speed"), what],
            rows,
        )
    # ---- export -------------------------------------------------------------------------------
    def headline_of(self, result: lab.SpeculativeLabResult) -> str:
        if not result.runs:
            return ""
        best = max(result.runs, key=lambda r: r.tokens_per_round)
        spread = result.plain_seconds
        timing = (self.tr("median of {0} interleaved repeats").format(spread.count)
                  if spread.count > 1 else self.tr("a single measurement"))
        identical = sum(r.identical_to_plain for r in result.runs)
        lines = [
            self.tr("{0}, {1} new tokens: {2}, k = {3}: α {4:.2f}, {5:.2f} tokens per target "
                    "call (formula {6:.2f}), {7:.2f} target calls per token").format(
                result.target_label, result.new_tokens, self.kind_name(best.draft_kind),
                best.k, best.alpha, best.tokens_per_round, best.expected_tokens_per_round,
                best.calls_per_token),
            self.tr("wall time {0:.0f} ms vs plain {1:.0f} ms ({2})").format(
                best.seconds.median * 1e3, spread.median * 1e3, timing),
        ]
        if result.greedy:
            lines.append(self.tr("identical to greedy: {0} of {1} runs").format(
                identical, len(result.runs)))
        return "\n".join(lines)

    def tables_of(self, result: lab.SpeculativeLabResult) -> list[DataTable]:
        run = self.shown()
        if run is None:
            return []
        rounds = run.rounds
        per_round = [
            (self.tr("drafted"), [len(r.drafted) for r in rounds]),
            (self.tr("accepted"), [r.accepted for r in rounds]),
            (self.tr("target rows"), [r.target_length for r in rounds]),
            (self.tr("target appended"), [r.target_appended for r in rounds]),
            (self.tr("target cropped"), [r.target_cropped for r in rounds]),
        ]
        if run.draft_kind == "model":
            per_round += [
                (self.tr("draft rows"), [r.draft_length or 0 for r in rounds]),
                (self.tr("draft appended"), [r.draft_appended for r in rounds]),
                (self.tr("draft cropped"), [r.draft_cropped for r in rounds]),
            ]
        per_round.append((self.tr("target calls so far"), [r.target_calls for r in rounds]))
        tables = [table_at(
            self.tr("Rounds of {0}, k = {1}").format(self.kind_name(run.draft_kind), run.k),
            self.tr("round (0 = prefill)"), [r.index for r in rounds], per_round)]
        for kind in result.kinds:
            runs = [r for r in result.runs if r.draft_kind == kind]
            tables.append(table_at(self.tr("{0} vs k").format(self.kind_name(kind)), "k",
                                   [r.k for r in runs], [
                ("α", [r.alpha for r in runs]),
                (self.tr("tokens per call (measured)"), [r.tokens_per_round for r in runs]),
                (self.tr("tokens per call (formula)"),
                 [r.expected_tokens_per_round for r in runs]),
                (self.tr("target calls per token"), [r.calls_per_token for r in runs]),
                (self.tr("ms (median)"), [r.seconds.median * 1e3 for r in runs]),
            ]))
        return tables

    def numbers_of(self, result: lab.SpeculativeLabResult) -> dict[str, Any]:
        return {
            "target": result.target_label,
            "draft": result.draft_label,
            "prompt_tokens": result.prompt_tokens,
            "new_tokens": result.new_tokens,
            "greedy": result.greedy,
            "plain_ms": {"median": result.plain_seconds.median * 1e3,
                         "low": result.plain_seconds.low * 1e3,
                         "high": result.plain_seconds.high * 1e3,
                         "repeats": result.plain_seconds.count},
            "runs": [
                {
                    "draft_kind": r.draft_kind, "k": r.k, "alpha": r.alpha,
                    "accepted": r.accepted, "judged": r.verified, "drafted": r.drafted,
                    "tokens_per_call": r.tokens_per_round,
                    "tokens_per_call_formula": r.expected_tokens_per_round,
                    "target_calls": r.target_calls, "generated": r.generated,
                    "calls_per_token": r.calls_per_token,
                    "ms_median": r.seconds.median * 1e3, "identical_to_plain":
                    r.identical_to_plain,
                    "rounds": [
                        {"drafted": list(x.drafted), "accepted": x.accepted,
                         "next_token": x.next_token, "bonus": x.bonus,
                         "target_rows": x.target_length, "target_appended": x.target_appended,
                         "target_cropped": x.target_cropped, "draft_rows": x.draft_length,
                         "draft_appended": x.draft_appended, "draft_cropped": x.draft_cropped,
                         "target_calls": x.target_calls}
                        for x in r.rounds
                    ],
                }
                for r in result.runs
            ],
        }
