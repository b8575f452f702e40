"""The chat lab's view: a conversation's turns, with the cache kept and re-fed.

Owns `ChatView`: per turn, three charts (prompt tokens fed, bars, with the
running totals, lines; the time to the first token; the bytes the cache holds),
a row per turn in the table, the transcript as HTML (the window shows it above
the charts) and the last turn's summary as the status line. A run is one turn
(``kvstudio.labs.chat.lab.run``): each result adds a turn; `reset` starts over.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject

from kvstudio.charts.chart_data import DataTable, Series
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
from kvstudio.charts.plots.results_table import CHECK, CROSS, Shown, gap_text
from kvstudio.labs.course import EMPTY_ANSWER

if TYPE_CHECKING:
    from kvstudio.labs.chat import session as chat
else:
    chat = LazyModule("kvstudio.labs.chat.session")  # torch loads when the chat first runs

REUSE, REFEED = series_colour(0), series_colour(1)
BAR_WIDTH = 0.38


class ChatView(LabView):
    key = "chat"
    draw_while_running = False  # it times every turn; a redraw would land inside the timing

    def result_type(self) -> type:
        return chat.ChatTurn

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.turns: list[chat.ChatTurn] = []
        self.layout_widget, (self.fed_plot, self.ttft_plot, self.bytes_plot) = plots_in_a_row(3)
        grid_and_legend(self.fed_plot, self.ttft_plot, self.bytes_plot, x_grid=False)
        for plot in (self.fed_plot, self.ttft_plot, self.bytes_plot):
            plot.getAxis("left").enableAutoSIPrefix(False)
        self._fed_reuse = pg.BarGraphItem(x=[], height=[], width=BAR_WIDTH, brush=REUSE)
        self._fed_refeed = pg.BarGraphItem(x=[], height=[], width=BAR_WIDTH, brush=REFEED)
        self.fed_plot.addItem(self._fed_reuse)
        self.fed_plot.addItem(self._fed_refeed)
        dashed = pg.QtCore.Qt.PenStyle.DashLine
        self._sum_reuse = self.fed_plot.plot([], [], pen=pg.mkPen(REUSE, width=2, style=dashed))
        self._sum_refeed = self.fed_plot.plot([], [], pen=pg.mkPen(REFEED, width=2, style=dashed))
        self._ttft_reuse = marked_line(self.ttft_plot, REUSE, "o", 9)
        self._ttft_refeed = marked_line(self.ttft_plot, REFEED, "s", 9)
        self._bytes_reuse = marked_line(self.bytes_plot, REUSE, "o", 13, width=6)
        self._bytes_refeed = marked_line(self.bytes_plot, REFEED, "s", 9)  # the same bytes: on top
        self.add_chart("chat", self.layout_widget)
        self.retranslate()

    def empty_hint(self) -> str:
        return self.tr("Send a turn to fill these charts.")

    def retranslate(self) -> None:
        super().retranslate()
        name_plot(self.fed_plot, self.tr("Prompt tokens fed per turn"), self.tr("turn"),
                  self.tr("tokens (dashed: running total)"))
        name_plot(self.ttft_plot, self._ttft_title(), self.tr("turn"), self.tr("ms"))
        name_plot(self.bytes_plot, self.tr("KV cache after each turn (equal both ways)"),
                  self.tr("turn"), self.tr("KiB"))
        reuse, refeed = self.tr("reuse"), self.tr("re-feed")
        for plot, a, b in (
            (self.fed_plot, self._fed_reuse, self._fed_refeed),
            (self.ttft_plot, self._ttft_reuse, self._ttft_refeed),
            (self.bytes_plot, self._bytes_reuse, self._bytes_refeed),
        ):
            fill_legend(plot, [(a, reuse), (b, refeed)])
        self._fill_table()

    # ---- the conversation ---------------------------------------------------------------
    def clear(self) -> None:
        """A new turn adds to the conversation: nothing is cleared (`reset` starts over)."""

    def reset(self) -> None:
        """Forget the conversation's turns and their drawing (a new chat)."""
        self.turns = []
        self.result = None
        self._draw()
        self.set_charts_empty(True)
        self._fill_table()

    def draw_result(self, result: chat.ChatTurn) -> None:
        self.turns.append(result)
        self._draw()
        self._fill_table()

    def status_of(self, turn: chat.ChatTurn) -> str:
        parts = [self.tr("Turn {0}").format(turn.turn)]
        if turn.reuse is not None:
            parts.append(self.tr("reuse fed {0} tokens").format(turn.reuse.prompt_tokens_fed))
        if turn.refeed is not None:
            parts.append(self.tr("re-feed fed {0} tokens").format(turn.refeed.prompt_tokens_fed))
        if turn.identical is True:
            parts.append(self.tr("identical tokens both ways {0}").format(CHECK))
        if turn.max_abs_logit_diff is not None:  # the logits: the same to float32 rounding
            parts.append(self.tr("max |Δlogit| {0}").format(gap_text(turn.max_abs_logit_diff)))
        elif turn.identical is False:
            parts.append(self.tr("the two ways chose different tokens {0}").format(CROSS))
        if turn.cut_by_limit:
            parts.append(self.tr("the answer was cut at the context limit"))
        return "; ".join(parts)

    # ---- drawing --------------------------------------------------------------------------------
    def _draw(self) -> None:
        turns = self.turns
        x = np.asarray([t.turn for t in turns], dtype=float)

        def series(way: str, value: str) -> tuple[np.ndarray, np.ndarray]:
            pairs = [(t.turn, getattr(t.way(way), value)) for t in turns if t.way(way)]  # type: ignore[arg-type]
            if not pairs:
                return np.array([]), np.array([])
            xs, ys = zip(*pairs, strict=True)
            return np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)

        for way, bars, total, shift in (
            ("reuse", self._fed_reuse, self._sum_reuse, -BAR_WIDTH / 2),
            ("refeed", self._fed_refeed, self._sum_refeed, BAR_WIDTH / 2),
        ):
            xs, fed = series(way, "prompt_tokens_fed")
            bars.setOpts(x=xs + shift, height=fed)
            total.setData(xs, np.cumsum(fed))
        for way, line in (("reuse", self._ttft_reuse), ("refeed", self._ttft_refeed)):
            xs, seconds = series(way, "ttft_median_s")
            line.setData(xs, seconds * 1000.0)
        self.ttft_plot.setTitle(self._ttft_title(), color="#222")
        for way, line in (("reuse", self._bytes_reuse), ("refeed", self._bytes_refeed)):
            xs, nbytes = series(way, "cache_bytes")
            line.setData(xs, nbytes / 1024.0)
        ticks = [[(float(t), str(int(t))) for t in x]]
        for plot in (self.fed_plot, self.ttft_plot, self.bytes_plot):
            plot.getAxis("bottom").setTicks(ticks if len(x) else None)

    def _ttft_title(self) -> str:
        """What the TTFT chart's points are: medians of k rounds, or single measurements."""
        rounds = {r.ttft_rounds for t in self.turns for r in (t.reuse, t.refeed) if r}
        if rounds and max(rounds) > 1:
            return self.tr("Time to first token (median of {0} interleaved rounds)").format(
                max(rounds))
        if rounds:
            return self.tr("Time to first token (single measurements)")
        return self.tr("Time to first token")

    def ttft_text(self, result: Any) -> str:
        """"12.4 ms (median of 5, 11.9–13.0)" or "12.4 ms (single measurement)"."""
        low, high = result.ttft_range_s
        if result.ttft_rounds > 1:
            return self.tr("{0:,.1f} ms (median of {1}, {2:,.1f}–{3:,.1f})").format(
                1000 * result.ttft_median_s, result.ttft_rounds, 1000 * low, 1000 * high)
        return self.tr("{0:,.1f} ms (single measurement)").format(1000 * result.ttft_s)

    def transcript_html(self) -> str:
        """The conversation so far, each turn's answer marked ✓ when both ways agreed."""
        lines = []
        user, assistant = self.tr("User"), self.tr("Assistant")
        for turn in self.turns:
            lines.append(
                f"<p><b>{html.escape(user)} {turn.turn}:</b> {html.escape(turn.user_text)}</p>")
            mark = {True: CHECK, False: CROSS, None: ""}[turn.identical]
            answer = (self.tr("(empty: eos at step 0)") if turn.answer_text == EMPTY_ANSWER
                      else turn.answer_text)
            lines.append(f"<p style='margin-left:16px'><b>{html.escape(assistant)}:</b> "
                         f"{html.escape(answer)} <span style='color:#009E73'>{mark}</span></p>")
        return "".join(lines)

    def _fill_table(self) -> None:
        def fed(result: Any) -> Any:
            return result.prompt_tokens_fed if result is not None else "—"

        def ms(result: Any, value: str) -> Any:
            if result is None:
                return "—"
            if value == "ttft":  # shown with its rounds, written to CSV as the median in ms
                return Shown(1000 * result.ttft_median_s, self.ttft_text(result))
            return result.decode_ms_per_token

        rows = [
            (t.turn, t.history_tokens, fed(t.reuse), fed(t.refeed), ms(t.reuse, "ttft"),
             ms(t.refeed, "ttft"), ms(t.reuse, "decode"), ms(t.refeed, "decode"),
             (t.reuse or t.refeed).cache_bytes / 1024.0,  # type: ignore[union-attr]
             len(t.answer_ids), "—" if t.identical is None else t.identical,
             "—" if t.max_abs_logit_diff is None else t.max_abs_logit_diff)
            for t in self.turns
        ]
        self.table.set_rows(
            [self.tr("turn"), self.tr("history"), self.tr("fed (reuse)"), self.tr("fed (re-feed)"),
             self.tr("TTFT (reuse, ms)"), self.tr("TTFT (re-feed, ms)"),
             self.tr("ms/token (reuse)"), self.tr("ms/token (re-feed)"), self.tr("cache KiB"),
             self.tr("answer tokens"), self.tr("identical"), self.tr("max |Δlogit|")],
            rows,
        )
        self.table.scrollToBottom()

    def headline(self) -> str:
        """The last turn's prompt tokens and TTFT both ways, and the identical-token count."""
        if not self.turns:
            return ""
        last = self.turns[-1]
        parts = [self.tr("Turn {0}, history {1} tokens").format(last.turn, last.history_tokens)]
        if last.reuse is not None:
            parts.append(self.tr("reuse fed {0} tokens, TTFT {1}").format(
                last.reuse.prompt_tokens_fed, self.ttft_text(last.reuse)))
        if last.refeed is not None:
            parts.append(self.tr("re-feed fed {0} tokens, TTFT {1}").format(
                last.refeed.prompt_tokens_fed, self.ttft_text(last.refeed)))
        compared = [t for t in self.turns if t.identical is not None]
        same = sum(1 for t in compared if t.identical)
        second = self.tr("identical greedy tokens in {0} of {1} compared turns").format(
            same, len(compared))
        gaps = [t.max_abs_logit_diff for t in compared if t.max_abs_logit_diff is not None]
        if gaps:  # the logits behind them agree to float32 rounding, not bit for bit
            second += self.tr(", max |Δlogit| {0}").format(gap_text(max(gaps)))
        return " · ".join(parts) + "\n" + second

    def data_tables(self) -> list[DataTable]:
        """Per turn, both ways: prompt tokens fed (and running totals), TTFT, cache bytes."""
        if not self.turns:
            return []
        names = {"reuse": self.tr("reuse"), "refeed": self.tr("re-feed")}

        def series(way: str, header: str, value: Any) -> Series:
            done = [(t.turn, t.way(way)) for t in self.turns if t.way(way) is not None]  # type: ignore[arg-type]
            return Series(header.format(names[way]), tuple(turn for turn, _ in done),
                          tuple(value(result) for _, result in done))

        fed, totals, ttft, cache = [], [], [], []
        for way in ("reuse", "refeed"):
            fed.append(series(way, self.tr("{0}: prompt tokens fed"),
                              lambda r: r.prompt_tokens_fed))
            running = series(way, self.tr("{0}: running total"), lambda r: r.prompt_tokens_fed)
            totals.append(Series(running.header, running.x,
                                 tuple(np.cumsum(running.y).tolist())))  # type: ignore[arg-type]
            ttft += [series(way, self.tr("{0}: TTFT, median (ms)"),
                            lambda r: r.ttft_median_s * 1000.0),
                     series(way, self.tr("{0}: TTFT, fastest round (ms)"),
                            lambda r: r.ttft_range_s[0] * 1000.0),
                     series(way, self.tr("{0}: TTFT, slowest round (ms)"),
                            lambda r: r.ttft_range_s[1] * 1000.0),
                     series(way, self.tr("{0}: TTFT rounds"), lambda r: r.ttft_rounds)]
            cache.append(series(way, self.tr("{0}: cache (bytes)"), lambda r: r.cache_bytes))
        turn = self.tr("turn")
        return [
            DataTable(self.tr("Prompt tokens fed per turn"), turn, tuple(fed + totals)),
            DataTable(self.tr("Time to first token"), turn, tuple(ttft)),
            DataTable(self.tr("KV cache after each turn (equal both ways)"), turn, tuple(cache)),
        ]

    def numbers(self) -> dict[str, Any]:
        def way(result: Any) -> dict[str, Any] | None:
            if result is None:
                return None
            return {
                "prompt_tokens_fed": result.prompt_tokens_fed,
                "decode_tokens_fed": result.decode_tokens_fed,
                "ttft_ms": result.ttft_median_s * 1000.0,  # the median of ttft_rounds rounds
                "ttft_ms_min": result.ttft_range_s[0] * 1000.0,
                "ttft_ms_max": result.ttft_range_s[1] * 1000.0,
                "ttft_rounds": result.ttft_rounds,  # 1: a single measurement
                "decode_ms_per_token": result.decode_ms_per_token,
                "cache_bytes": result.cache_bytes,
                "token_ids": list(result.token_ids),
            }

        return {
            "turns": [
                {
                    "turn": t.turn,
                    "user": t.user_text,
                    "answer": t.answer_text,
                    "history_tokens": t.history_tokens,
                    "new_tokens": t.new_tokens,
                    "identical": t.identical,
                    "max_abs_logit_diff": t.max_abs_logit_diff,
                    "reuse": way(t.reuse),
                    "refeed": way(t.refeed),
                }
                for t in self.turns
            ]
        }
