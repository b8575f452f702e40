"""The engine twin lab's view: KV Studio and llama.cpp side by side on one model.

Owns `TwinView`: a chart of decode ms/token on one thread, each interleaved
round for each engine (the medians are what the table and headline quote), and
a table with one row per question and a column per engine: the tokens, greedy
or sampled with one seed by our sampler in both (identical, or the step where
they part), KV bytes per token as each engine
reports it, the second prompt's tokens evaluated keeping the shared prefix and
from an empty cache (llama.cpp's ``n_p_eval``), the copy/crop check and the
ms/token median with the ratio. The numbers come from ``kvstudio.labs.twin``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt

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
from kvstudio.charts.plots.results_table import ByteCount, Shown

if TYPE_CHECKING:
    from kvstudio.labs import twin as lab
else:
    lab = LazyModule("kvstudio.labs.twin")  # torch (and llama.cpp) load when the lab first runs

OURS, THEIRS = "KV Studio", "llama.cpp"  # the engines' names, the same in every language


class TwinView(LabView):
    key = "twin"
    draw_while_running = False  # it times each step: no redraw inside a measured step

    def result_type(self) -> type:
        return lab.TwinResult

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.layout_widget, (self.speed_plot,) = plots_in_a_row(1)
        grid_and_legend(self.speed_plot)
        self._lines = {name: marked_line(self.speed_plot, series_colour(i), symbol, 9)
                       for i, (name, symbol) in enumerate(((OURS, "o"), (THEIRS, "s")))}
        self._medians = {
            name: pg.InfiniteLine(angle=0, movable=False,
                                  pen=pg.mkPen(series_colour(i), width=1,
                                              style=Qt.PenStyle.DashLine))
            for i, name in enumerate((OURS, THEIRS))
        }
        for line in self._medians.values():
            line.setVisible(False)
            self.speed_plot.addItem(line, ignoreBounds=True)
        self.speed_plot.getViewBox().setLimits(yMin=0)
        self.add_chart("twin", self.layout_widget)
        self.retranslate()

    def retranslate(self) -> None:
        super().retranslate()
        name_plot(self.speed_plot, self.tr("Decode ms/token, one thread (dashed: median)"),
                  self.tr("round (the engines take turns)"), self.tr("ms/token"))
        fill_legend(self.speed_plot, [(item, name) for name, item in self._lines.items()])
        if isinstance(self.result, lab.TwinResult):
            self._fill_table(self.result)

    def clear(self) -> None:
        for item in self._lines.values():
            item.setData([], [])
        for line in self._medians.values():
            line.setVisible(False)
        self.table.set_rows([], [])

    def draw_result(self, result: lab.TwinResult) -> None:
        top = 0.0
        for side in (result.ours, result.theirs):
            rounds = np.arange(1, len(side.round_ms) + 1, dtype=float)
            self._lines[side.name].setData(rounds, np.asarray(side.round_ms, dtype=float))
            self._medians[side.name].setValue(side.ms_per_token)
            self._medians[side.name].setVisible(True)
            top = max(top, max(side.round_ms, default=0.0))
        n = len(result.ours.round_ms)
        self.speed_plot.setXRange(0.5, n + 0.5, padding=0)
        self.speed_plot.getAxis("bottom").setTicks([[(r, str(r)) for r in range(1, n + 1)]])
        self.speed_plot.setYRange(0, max(top, 1e-3) * 1.15, padding=0)
        self._fill_table(result)

    # ---- texts ---------------------------------------------------------------------------
    def _tokens_text(self, result: lab.TwinResult) -> str:
        n = result.new_tokens
        if result.first_diff_step is None:
            same = self.tr("Same tokens {0}/{0}").format(n)
        else:
            same = self.tr("Tokens part at step {0} of {1}").format(result.first_diff_step, n)
        return f"{same} ({self._choice_text(result)})"

    def _choice_text(self, result: lab.TwinResult) -> str:
        """How both engines chose: "greedy" or "sampled, T 0.85, seed 42"."""
        sampling = result.sampling
        if sampling.greedy:
            return self.tr("greedy")
        return self.tr("sampled, T {0:g}, seed {1}").format(sampling.temperature, sampling.seed)

    def _rounds_text(self, result: lab.TwinResult) -> str:
        k = len(result.ours.round_ms)
        if k == 1:
            return self.tr("a single measurement")
        return self.tr("median of {0} interleaved rounds").format(k)

    def _ratio_text(self, result: lab.TwinResult) -> str:
        ratio = result.speed_ratio
        if ratio >= 1:
            return self.tr("llama.cpp is {0:.2f}× faster").format(ratio)
        return self.tr("KV Studio is {0:.2f}× faster").format(1 / ratio)

    def _ms(self, side: Any, result: lab.TwinResult) -> Shown:
        low, high = min(side.round_ms), max(side.round_ms)
        if len(side.round_ms) == 1:
            return Shown(side.ms_per_token, self.tr("{0:.2f} (one round)").format(
                side.ms_per_token))
        return Shown(side.ms_per_token, self.tr("{0:.2f} (median of {1}, {2:.2f}–{3:.2f})").format(
            side.ms_per_token, len(side.round_ms), low, high))

    def _fill_table(self, result: lab.TwinResult) -> None:
        ours, theirs = result.ours, result.theirs
        p, n = result.prompt_tokens, result.new_tokens
        same = (self.tr("✓ {0}/{0}").format(n) if result.first_diff_step is None
                else self.tr("✗ from step {0}").format(result.first_diff_step))
        rows: list[tuple[Any, ...]] = [
            (self.tr("tokens the same ({0})").format(self._choice_text(result)), same, same),
            (self.tr("max |Δlogit| up to there"), "", result.max_logit_gap),
            (self.tr("KV bytes per token"), ByteCount(round(ours.kv_bytes_per_token)),
             ByteCount(round(theirs.kv_bytes_per_token))),
            (self.tr("read from"), self.tr("cache used bytes / tokens"),
             self.tr("its 'llama_kv_cache: size' line / cells")),
            (self.tr("sequence state bytes per token"), "",
             ByteCount(round(result.llama_state_bytes_per_token))),
            (self.tr("2nd prompt: evaluated, keeping {0} shared").format(result.shared_prefix),
             ours.reuse_evaluated, theirs.reuse_evaluated),
            (self.tr("2nd prompt: evaluated, from empty"), ours.fresh_evaluated,
             theirs.fresh_evaluated),
            (self.tr("copy and crop = straight on"), ours.copy_crop_same, theirs.copy_crop_same),
            (self.tr("decode ms/token, greedy, 1 thread"), self._ms(ours, result),
             self._ms(theirs, result)),
            (self.tr("ratio (ours ÷ llama.cpp)"), "", Shown(result.speed_ratio,
                                                           f"{result.speed_ratio:.2f}×")),
        ]
        if result.top2_margin is not None:
            rows.insert(2, (self.tr("our top-2 margin there"), result.top2_margin, ""))
        if result.probability_gap is not None:
            rows.insert(2, (self.tr("max |Δprobability| there"), "", result.probability_gap))
        self.table.set_rows([self.tr("P = {0}, N = {1}").format(p, n), OURS, THEIRS], rows)

    def status_of(self, result: lab.TwinResult) -> str:
        return self.tr("{0}; {1} ({2}).").format(
            self._tokens_text(result), self._ratio_text(result), self._rounds_text(result))

    def headline_of(self, result: lab.TwinResult) -> str:
        """Same tokens, both engines' bytes a token, both speeds and their ratio."""
        ours, theirs = result.ours, result.theirs
        if round(ours.kv_bytes_per_token) == round(theirs.kv_bytes_per_token):
            kv = self.tr("{0:,} B/token both").format(round(ours.kv_bytes_per_token))
        else:
            kv = self.tr("{0:,} B/token ours, {1:,} llama.cpp's").format(
                round(ours.kv_bytes_per_token), round(theirs.kv_bytes_per_token))
        speed = self.tr("llama.cpp {0:.2f} ms/token vs ours {1:.2f} ({2}; {3})").format(
            theirs.ms_per_token, ours.ms_per_token, self._rounds_text(result),
            self._ratio_text(result))
        reuse = self.tr("2nd prompt sharing {0} of {1} tokens: evaluated {2} (ours) and {3} "
                        "(llama.cpp's n_p_eval), {4} and {5} from empty").format(
            result.shared_prefix, result.prompt_tokens, ours.reuse_evaluated,
            theirs.reuse_evaluated, ours.fresh_evaluated, theirs.fresh_evaluated)
        return "\n".join((" · ".join((self._tokens_text(result), kv, speed)), reuse))

    def tables_of(self, result: lab.TwinResult) -> list[DataTable]:
        series = tuple(
            Series(self.tr("{0}: ms/token").format(side.name),
                   tuple(range(1, len(side.round_ms) + 1)), side.round_ms)
            for side in (result.ours, result.theirs))
        return [DataTable(self.tr("Decode ms/token on one thread, each round"),
                          self.tr("round"), series)]

    def numbers_of(self, result: lab.TwinResult) -> dict[str, Any]:

        def side(s: Any) -> dict[str, Any]:
            return {
                "tokens": list(s.tokens),
                "kv_bytes_per_token": s.kv_bytes_per_token,
                "kv_source": s.kv_source,
                "reuse_evaluated": s.reuse_evaluated,
                "fresh_evaluated": s.fresh_evaluated,
                "copy_crop_same": s.copy_crop_same,
                "round_ms": list(s.round_ms),
                "ms_per_token": s.ms_per_token,
            }

        return {
            "prompt_tokens": result.prompt_tokens,
            "new_tokens": result.new_tokens,
            "temperature": result.sampling.temperature,
            "seed": None if result.sampling.greedy else result.sampling.seed,
            "shared_prefix": result.shared_prefix,
            "identical": result.identical,
            "first_diff_step": result.first_diff_step,
            "max_logit_gap": result.max_logit_gap,
            "top2_margin": result.top2_margin,
            "probability_gap": result.probability_gap,
            "llama_state_bytes_per_token": result.llama_state_bytes_per_token,
            "llama_kv_line": result.llama_kv_line,
            "speed_ratio": result.speed_ratio,
            "kv_studio": side(result.ours),
            "llama_cpp": side(result.theirs),
        }
