"""The runs the window draws: the latest run of each mode, as the worker reported it.

Owns `RunTrace` (one run's info plus its records, with the series the plots
draw and the totals their headlines state) and `RunStore` (one trace per mode,
so the previous run of the other mode stays drawn for comparison, and which of
them each chart is about), how a run stopped (`StopReason`), and the store as
it was at an earlier step (`RunStore.at_step`, for scrubbing back through a
run). The live charts' export headlines and the presenter view's headline
panel both read their numbers here. Plain Python: no Qt, easy to test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate

from kvstudio.engine.records import (
    MODES,
    Mode,
    StepRecord,
    decode_seconds_per_token,
    decode_step_seconds,
)
from kvstudio.ui.run.engine_adapter import RunInfo


@dataclass(frozen=True)
class StopReason:
    """Why a run ended: at the end-of-answer token (`token` is its text) or at the budget."""

    step: int  # the step that produced the last token (0 = prefill)
    token: str  # e.g. "<|im_end|>"; "" when the budget ran out
    at_eos: bool


@dataclass
class RunTrace:
    """One run as it grows: its info and one record per step, in order.

    A trace seen at an earlier step (`RunStore.at_step`) holds the records up
    to that step; `total_steps` still says how many the run has, so axes stay put.
    """

    info: RunInfo
    records: list[StepRecord] = field(default_factory=list)
    finished: bool = False
    total: int | None = None  # steps of the whole run when this is a view of an earlier step
    known_steps: int | None = None  # steps a saved run has in all (a replay knows its length)

    @property
    def total_steps(self) -> int:
        return len(self.records) if self.total is None else self.total

    def is_eos(self, record: StepRecord) -> bool:
        """True if `record` chose the end-of-answer token that stopped the run."""
        eos = self.info.eos_id
        return eos is not None and record.token_ids[0] == eos and record.finished[0]

    @property
    def stop(self) -> StopReason | None:
        """How the run ended, once it has (None while it runs, or looking at an earlier step)."""
        if not self.finished or not self.records or len(self.records) < self.total_steps:
            return None
        last = self.records[-1]
        if self.is_eos(last):
            return StopReason(last.step, self.info.eos_text or "eos", True)
        return StopReason(last.step, "", False)

    @property
    def mode(self) -> Mode:
        return self.info.mode

    @property
    def steps(self) -> list[int]:
        return [r.step for r in self.records]

    @property
    def tokens_fed(self) -> list[int]:
        return [r.tokens_fed for r in self.records]

    @property
    def tokens_fed_cumulative(self) -> list[int]:
        return list(accumulate(self.tokens_fed))  # running total: [a, a+b, a+b+c, …]

    @property
    def tokens_fed_total(self) -> int:
        """Tokens fed to the model over the steps so far, as measured."""
        return sum(self.tokens_fed)

    @property
    def formula_cumulative(self) -> list[int]:
        """The course formula's running total of tokens fed, as far as the run goes."""
        return self.info.formula_cumulative(len(self.records))

    @property
    def formula_total(self) -> int:
        """The course formula's tokens fed for the steps so far: P+(N−1) or P·N+N(N−1)/2."""
        formula = self.formula_cumulative
        return formula[-1] if formula else 0

    @property
    def step_ms(self) -> list[float]:
        return [r.elapsed_s * 1000.0 for r in self.records]

    @property
    def cumulative_ms(self) -> list[float]:
        return list(accumulate(self.step_ms))

    @property
    def last(self) -> StepRecord | None:
        return self.records[-1] if self.records else None

    @property
    def ttft_ms(self) -> float | None:
        return self.records[0].elapsed_s * 1000.0 if self.records else None

    @property
    def decode_ms_per_token(self) -> float | None:
        """The course's ms/token: the median decode step (the prefill apart, as TTFT).

        From the records' `elapsed_s` alone (the worker's clock around forward and
        sampling), never from the time between two redraws.
        """
        seconds = decode_seconds_per_token(self.records)
        return None if seconds is None else 1000.0 * seconds

    @property
    def decode_ms_range(self) -> tuple[float, float, int] | None:
        """(fastest, slowest, how many) of the decode steps the median is taken over."""
        steps = decode_step_seconds(self.records)
        if not steps:
            return None
        return 1000.0 * min(steps), 1000.0 * max(steps), len(steps)

    @property
    def tokens_per_second(self) -> float | None:
        """1000 ÷ ms/token: the decode speed that follows from the one ms/token."""
        ms = self.decode_ms_per_token
        return 1000.0 / ms if ms else None

    @property
    def generated_text(self) -> str:
        return "".join(r.token_texts[0] for r in self.records)


class RunStore:
    """The latest trace of each mode plus which mode is current."""

    def __init__(self) -> None:
        self._traces: dict[Mode, RunTrace] = {}
        self.current_mode: Mode = "cached"
        self.revision = 0  # bumps on every change, so views can skip work

    def begin(self, info: RunInfo) -> RunTrace:
        trace = RunTrace(info)
        self._traces[info.mode] = trace
        self.current_mode = info.mode
        self.revision += 1
        return trace

    def add(self, run_id: int, record: StepRecord) -> bool:
        """Append a record if it belongs to the live run of its mode (stale ones are dropped)."""
        trace = self._traces.get(record.mode)
        if trace is None or trace.info.run_id != run_id:
            return False
        trace.records.append(record)
        self.revision += 1
        return True

    def finish(self, run_id: int) -> None:
        for trace in self._traces.values():
            if trace.info.run_id == run_id:
                trace.finished = True
                self.revision += 1

    def clear(self) -> None:
        self._traces.clear()
        self.revision += 1

    def trace(self, mode: Mode) -> RunTrace | None:
        return self._traces.get(mode)

    @property
    def current(self) -> RunTrace | None:
        return self._traces.get(self.current_mode)

    def traces(self) -> list[RunTrace]:
        return [self._traces[m] for m in MODES if m in self._traces]

    def stepped_traces(self) -> list[RunTrace]:
        """The runs with at least one step, in mode order (what the charts' numbers cover)."""
        return [t for t in self.traces() if t.records]

    @property
    def cache_trace(self) -> RunTrace | None:
        """The run whose KV cache is shown: the cached run if there is one (recompute keeps
        no cache), else the current run."""
        return self.trace("cached") or self.current

    def longest_steps(self) -> int:
        """Steps of the longest run on screen (what a step scrubber spans)."""
        return max((len(t.records) for t in self._traces.values()), default=0)

    def at_step(self, step: int) -> RunStore:
        """A copy showing every run as it was after step `step` (0 = the prefill).

        Records are shared, not copied; each run keeps its total steps and its
        finished flag, so axes fit the whole run while the data stops at `step`.
        """
        view = RunStore()
        view.current_mode = self.current_mode
        view.revision = self.revision
        for mode, trace in self._traces.items():
            shown = [r for r in trace.records if r.step <= step]
            view._traces[mode] = RunTrace(trace.info, shown, trace.finished, trace.total_steps,
                                          trace.known_steps)
        return view
