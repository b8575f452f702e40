"""The runs the window draws: the latest run of each mode, as the worker reported it.

Owns `RunTrace` (one run's info plus its records, with the series the plots
draw) and `RunStore` (one trace per mode, so the previous run of the other
mode stays drawn for comparison). Plain Python: no Qt, easy to test, and the
natural thing for a later "save and replay a run" to serialise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvstudio.core.records import MODES, Mode, StepRecord
from kvstudio.ui.run.engine_adapter import RunInfo


@dataclass
class RunTrace:
    """One run as it grows: its info and one record per step, in order."""

    info: RunInfo
    records: list[StepRecord] = field(default_factory=list)
    finished: bool = False

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
        total, out = 0, []
        for r in self.records:
            total += r.tokens_fed
            out.append(total)
        return out

    @property
    def step_ms(self) -> list[float]:
        return [r.elapsed_s * 1000.0 for r in self.records]

    @property
    def cumulative_ms(self) -> list[float]:
        total, out = 0.0, []
        for r in self.records:
            total += r.elapsed_s * 1000.0
            out.append(total)
        return out

    @property
    def last(self) -> StepRecord | None:
        return self.records[-1] if self.records else None

    @property
    def ttft_ms(self) -> float | None:
        return self.records[0].elapsed_s * 1000.0 if self.records else None

    @property
    def decode_ms_per_token(self) -> float | None:
        decode = self.records[1:]
        if not decode:
            return None
        return 1000.0 * sum(r.elapsed_s for r in decode) / len(decode)

    @property
    def tokens_per_second(self) -> float | None:
        total = sum(r.elapsed_s for r in self.records)
        return len(self.records) / total if total > 0 else None

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
