"""What the serving lab's result says on a slide: its headline and its data tables.

Owns `ServingExports`, the serving view's base: the headline (requests, steps,
throughput, wasted slots against the formula, peak blocks, prefix hits, the same
tokens as the solo runs; the batch sweep's step times and speed-up), the CSV
tables (each request's phase per step, tokens fed, blocks, the requests, the
sweep), the rows of the view's two tables and the scheduler's settings in the
current language. The view (``view.py``) draws the charts; numbers.json's block is the
lab's own (``kvstudio.labs.serving.batching.lab_numbers``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvstudio.charts.chart_data import DataTable, table_at
from kvstudio.charts.labs.base import LabView
from kvstudio.charts.plots.names import format_bytes
from kvstudio.charts.plots.results_table import gap_text

if TYPE_CHECKING:
    from kvstudio.labs.common import Spread


def gap_cell(gap: float | None) -> float | str:
    """A max |Δlogit| for the table and CSV ("—": not measured)."""
    return "—" if gap is None else gap


def ms_of(spread: Spread | None) -> float | None:
    """A spread of seconds as its median in ms (None: not measured)."""
    return None if spread is None else 1000.0 * spread.median


class ServingExports(LabView):
    """The serving view's words and tables (the view subclasses it)."""

    def shown_run(self) -> Any:
        """The scheduler run on screen (the last one asked for), or None."""
        result = self.result
        serving = getattr(result, "serving", None)
        return serving.runs[-1] if serving is not None and serving.runs else None

    def shown_sweep(self) -> Any:
        return getattr(self.result, "sweep", None)

    def _phase_names(self) -> dict[str, str]:
        return {
            "waiting": self.tr("waiting"), "prefill": self.tr("prefill chunk"),
            "decode": self.tr("decode"), "idle": self.tr("idle row (fed, no token)"),
            "preempted": self.tr("preempted"), "finished": self.tr("finished"),
        }

    def scheduler_text(self, config: Any) -> str:
        """The scheduler's settings in the current language (`SchedulerConfig.label` is the
        CLI's English)."""
        parts = [self.tr("continuous batching") if config.policy == "continuous"
                 else self.tr("static batching")]
        if config.chunk is not None:
            parts.append(self.tr("chunk {0}").format(config.chunk))
        parts.append(self.tr("block b {0}").format(config.block_size))
        prefix = {"none": self.tr("off"), "blocks": self.tr("blocks (vLLM)"),
                  "radix": self.tr("radix tree (SGLang)")}[config.prefix_cache]
        parts.append(self.tr("prefix cache {0}").format(prefix))
        parts.append(self.tr("max batch {0}").format(config.max_batch))
        if config.block_budget is not None:
            parts.append(self.tr("budget {0} blocks").format(config.block_budget))
        return " · ".join(parts)

    def _times_note(self, count: int) -> str:
        return (self.tr("single measurement") if count == 1
                else self.tr("median of {0}").format(count))

    def _bound_name(self, bound: str | None) -> str:
        return {"memory": self.tr("memory"), "compute": self.tr("compute"),
                "overhead": self.tr("overhead")}.get(bound or "", "—")

    def headline(self) -> str:
        lines = []
        run = self.shown_run()
        serving = getattr(self.result, "serving", None)
        if run is not None and serving is not None:
            totals = run.totals
            same = sum(o.identical_to_solo for o in run.outcomes)
            lines.append(self.tr(
                "{0} requests in {1} steps: {2:,.0f} tokens/s ({3}) · wasted slots {4} "
                "(formula {5}) · peak {6} blocks, {7}").format(
                len(run.outcomes), totals.steps, totals.throughput_tps.median,
                self._times_note(totals.throughput_tps.count), totals.padding_slots,
                totals.padding_formula, totals.peak_blocks,
                format_bytes(totals.peak_cache_bytes)))
            lines.append(self.tr(
                "prefix hits {0} tokens · same tokens as solo runs: {1} of {2}, max |Δlogit| "
                "{3} · {4}").format(
                totals.prefix_hit_tokens, same, len(run.outcomes),
                gap_text(run.max_abs_logit_diff), self.scheduler_text(run.config)))
        sweep = self.shown_sweep()
        if sweep is not None and sweep.points:
            first, last = sweep.points[0], sweep.points[-1]
            # What bounds each step is the sweep table's last column: on the slide's third
            # line it ran past a 1920-pixel page in English and was cut off.
            lines.append(self.tr(
                "Decode step, batch {0} → {1}: {2:.2f} → {3:.2f} ms ({4}); throughput "
                "×{5:.1f}; weights read once: {6}").format(
                first.batch, last.batch, first.ms_per_step, last.ms_per_step,
                self._times_note(sweep.rounds), sweep.speedup,
                format_bytes(sweep.work.weight_bytes)))
        return "\n".join(lines)

    def data_tables(self) -> list[DataTable]:
        tables: list[DataTable] = []
        run = self.shown_run()
        if run is not None:
            steps, step = [s.step for s in run.steps], self.tr("scheduler step")
            # The CSV names a phase as the timeline's legend does (in the current language).
            names = {"future": self.tr("not arrived yet"), **self._phase_names()}
            tables.append(table_at(self.tr("What each request did, step by step"), step, steps, [
                (self.tr("request #{0}").format(outcome.request.index),
                 [names[s.requests[i].phase] for s in run.steps])
                for i, outcome in enumerate(run.outcomes)]))
            tables.append(table_at(self.tr("Tokens fed per step"), step, steps, [
                (self.tr("prefill tokens"), [s.prefill_tokens for s in run.steps]),
                (self.tr("decode tokens"), [s.decode_tokens for s in run.steps]),
                (self.tr("padding slots"), [s.padding_slots for s in run.steps]),
                (self.tr("idle rows"), [s.idle_rows for s in run.steps]),
                (self.tr("rows in the batch"), [s.batch_rows for s in run.steps]),
            ]))
            tables.append(table_at(self.tr("Cache blocks per step"), step, steps, [
                (self.tr("blocks in use"), [s.blocks_used for s in run.steps]),
                (self.tr("prefix cache only"), [s.blocks_cached for s in run.steps]),
                (self.tr("free blocks"), [s.blocks_free for s in run.steps]),
                (self.tr("cache bytes (B)"), [s.cache_bytes for s in run.steps]),
            ]))
            outcomes = run.outcomes
            tables.append(table_at(self.tr("Requests"), self.tr("request"),
                                   [o.request.index for o in outcomes], [
                (self.tr("prompt tokens"), [o.prompt_tokens for o in outcomes]),
                (self.tr("prefix hits"), [o.prefix_hit for o in outcomes]),
                (self.tr("TTFT (ms)"), [ms_of(o.ttft_s) for o in outcomes]),
                (self.tr("ITL p50 (ms)"), [ms_of(o.itl_p50_s) for o in outcomes]),
                (self.tr("ITL p95 (ms)"), [ms_of(o.itl_p95_s) for o in outcomes]),
                (self.tr("answer tokens"), [o.answer_tokens for o in outcomes]),
                (self.tr("same tokens as solo"), [int(o.identical_to_solo) for o in outcomes]),
                (self.tr("max |Δlogit| vs solo"),
                 [gap_cell(o.max_abs_logit_diff) for o in outcomes]),
            ]))
        sweep = self.shown_sweep()
        if sweep is not None:
            points = sweep.points
            columns = [
                (self.tr("ms per step, median"), [p.ms_per_step for p in points]),
                (self.tr("ms per step, fastest round"),
                 [1000.0 * p.step_seconds.low for p in points]),
                (self.tr("ms per step, slowest round"),
                 [1000.0 * p.step_seconds.high for p in points]),
                (self.tr("tokens/s"), [p.tokens_per_second for p in points]),
                (self.tr("weight bytes read (B)"), [p.weight_bytes for p in points]),
                (self.tr("KV bytes read (B)"), [p.kv_bytes for p in points]),
                (self.tr("FLOPs"), [p.flops for p in points]),
                (self.tr("FLOP per byte"), [p.intensity for p in points]),
            ]
            if sweep.peaks is not None:
                columns += [
                    (self.tr("memory floor (ms)"),
                     [1000.0 * (p.memory_seconds or 0.0) for p in points]),
                    (self.tr("compute floor (ms)"),
                     [1000.0 * (p.compute_seconds or 0.0) for p in points]),
                ]
            tables.append(table_at(self.tr("Decode step time against batch size"),
                                   self.tr("batch size (rows)"), [p.batch for p in points],
                                   columns))
        return tables

    def request_rows(self, run: Any, repeats: int) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The requests table: its headers and one row per request."""
        note = self._times_note(repeats)
        headers = [
            self.tr("request"), self.tr("prompt tokens"), self.tr("prefix hits"),
            self.tr("TTFT (ms, {0})").format(note), self.tr("ITL p50 (ms)"),
            self.tr("ITL p95 (ms)"), self.tr("answer tokens"), self.tr("same tokens as solo"),
            self.tr("max |Δlogit| vs solo"),
        ]
        rows: list[tuple[Any, ...]] = []
        for outcome in run.outcomes:
            rows.append((
                f"#{outcome.request.index}", outcome.prompt_tokens, outcome.prefix_hit,
                ms_of(outcome.ttft_s), ms_of(outcome.itl_p50_s), ms_of(outcome.itl_p95_s),
                outcome.answer_tokens, outcome.identical_to_solo,
                gap_cell(outcome.max_abs_logit_diff),
            ))
        return headers, rows

    def sweep_rows(self, sweep: Any) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The batch sweep's table: its headers and one row per batch size."""
        note = self._times_note(sweep.rounds)
        headers = [
            self.tr("batch"), self.tr("ms per step ({0})").format(note), self.tr("tokens/s"),
            self.tr("read (MiB)"), self.tr("GFLOP"), self.tr("FLOP per byte"),
            self.tr("bound by"),
        ]
        rows: list[tuple[Any, ...]] = []
        for p in sweep.points:
            rows.append((p.batch, p.ms_per_step, p.tokens_per_second, p.bytes_read / 1024**2,
                         p.flops / 1e9, p.intensity, self._bound_name(p.bound)))
        return headers, rows
