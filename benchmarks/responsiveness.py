"""Measure how responsive the window stays while playing at full speed (not a CI test).

Usage: xvfb-run -a .venv/bin/python benchmarks/responsiveness.py [--seconds 30] [--speed max]
A probe QTimer on the UI thread ticks every 5 ms; the gap between two ticks
beyond 5 ms is time the event loop could not react (a stall). The probe runs
first with the window idle (the machine's own noise), then while the window
plays as fast as the model goes (alternating modes when a run ends); the
script prints, for both, the longest stall, the 99th percentile, the median
and how many stalls passed 30 ms. Target: the longest stall under 30 ms.

For the five longest stalls it also prints when they happened (seconds since
the phase began and since the latest run started) and, from the kernel's
per-thread counters (Linux), what the threads did meanwhile: UI-thread CPU
time about the whole stall means the UI was busy (drawing); time waiting for
a CPU means the machine had no core for it; neither, while the model thread
ran, means it waited for the GIL; nothing at all points at the host (a VM
paused or starved of CPU).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import threading
import time
from bisect import bisect_right
from dataclasses import replace

from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from window_harness import open_window

log = logging.getLogger("responsiveness")
PROBE_MS = 5


def sched_ns(thread_id: int) -> tuple[int, int]:
    """(ns on a CPU, ns runnable but waiting for a CPU) of a thread so far (Linux schedstat)."""
    try:
        with open(f"/proc/self/task/{thread_id}/schedstat", encoding="ascii") as f:
            on_cpu, queued, _ = f.read().split()
        return int(on_cpu), int(queued)
    except (OSError, ValueError):  # not Linux, or the thread is gone
        return 0, 0


class StallProbe:
    """Ticks every PROBE_MS on the UI thread; per gap: its length and what the threads did."""

    def __init__(self, worker_thread: list[int]) -> None:
        self.gaps_ms: list[float] = []
        self.ends_s: list[float] = []  # when each gap ended (time.monotonic)
        # Per gap, from the kernel's per-thread counters: the UI thread's time on a CPU and
        # time runnable but without one, and the model thread's time on a CPU.
        self.ui_cpu_ms: list[float] = []
        self.ui_queued_ms: list[float] = []
        self.worker_cpu_ms: list[float] = []
        self.started_s = 0.0
        self._ui_thread = threading.get_native_id()
        self._worker_thread = worker_thread  # filled in once the model thread reports
        self._last = (0, 0, 0)
        self._clock = QElapsedTimer()
        self._timer = QTimer()
        self._timer.setInterval(PROBE_MS)
        self._timer.timeout.connect(self._on_tick)

    def _counters(self) -> tuple[int, int, int]:
        ui_cpu, ui_queued = sched_ns(self._ui_thread)
        worker_cpu = sched_ns(self._worker_thread[0])[0] if self._worker_thread else 0
        return ui_cpu, ui_queued, worker_cpu

    def start(self) -> None:
        self.started_s = time.monotonic()
        self._last = self._counters()
        self._clock.start()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _on_tick(self) -> None:
        elapsed_ns = self._clock.nsecsElapsed()
        self._clock.restart()
        now = self._counters()
        ui_cpu, ui_queued, worker_cpu = (b - a for a, b in zip(self._last, now, strict=True))
        self._last = now
        self.gaps_ms.append(max(0.0, elapsed_ns / 1e6 - PROBE_MS))
        self.ends_s.append(time.monotonic())
        self.ui_cpu_ms.append(ui_cpu / 1e6)
        self.ui_queued_ms.append(ui_queued / 1e6)
        self.worker_cpu_ms.append(max(worker_cpu, 0) / 1e6)


def describe(probe: StallProbe,
             run_starts_s: list[float] | None = None) -> dict[str, object]:
    gaps = sorted(probe.gaps_ms)
    if not gaps:
        return {"probe_ticks": 0}
    worst = sorted(range(len(probe.gaps_ms)), key=probe.gaps_ms.__getitem__)[-5:][::-1]
    longest = []
    for i in worst:
        start_s = probe.ends_s[i] - (probe.gaps_ms[i] + PROBE_MS) / 1000
        entry: dict[str, float] = {"stall_ms": round(probe.gaps_ms[i], 1),
                                   "ui_cpu_ms": round(probe.ui_cpu_ms[i], 1),
                                   "ui_waiting_for_cpu_ms": round(probe.ui_queued_ms[i], 1),
                                   "worker_cpu_ms": round(probe.worker_cpu_ms[i], 1),
                                   "at_s": round(start_s - probe.started_s, 2)}
        if run_starts_s:
            k = bisect_right(run_starts_s, start_s) - 1
            if k >= 0:
                entry["after_run_start_s"] = round(start_s - run_starts_s[k], 3)
                entry["run"] = k
        longest.append(entry)
    return {
        "probe_ticks": len(gaps),
        "longest_stall_ms": round(gaps[-1], 1),
        "p99_stall_ms": round(gaps[int(0.99 * (len(gaps) - 1))], 1),
        "median_stall_ms": round(statistics.median(gaps), 2),
        "stalls_over_30ms": sum(g > 30 for g in gaps),
        "longest": longest,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=30.0, help="per phase")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--speed", type=int, default=99,
                        help="speed index (99 = as fast as possible)")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    app, window = open_window()
    rs = window.sampling.run_settings("cached")
    window.sampling.set_run_settings(replace(rs, max_new_tokens=args.max_new_tokens))
    window.controls.set_speed(args.speed)
    steps = [0]
    worker = window.controller.host.worker
    worker.step_ready.connect(lambda *_: steps.__setitem__(0, steps[0] + 1))
    run_starts_s: list[float] = []  # when each run started (time.monotonic)
    worker.run_started.connect(lambda *_: run_starts_s.append(time.monotonic()))
    worker_thread: list[int] = []  # the model thread's id, recorded on that thread

    def note_worker_thread(*_: object) -> None:
        if not worker_thread:
            worker_thread.append(threading.get_native_id())

    worker.run_started.connect(note_worker_thread, Qt.ConnectionType.DirectConnection)

    def next_run() -> None:
        c = window.controls
        c.set_mode("recompute" if c.mode() == "cached" else "cached")
        c.play_button.click()

    window.controller.run_finished.connect(next_run)
    # First the same probe with the window idle: the machine's own noise, for comparison.
    idle, playing = StallProbe(worker_thread), StallProbe(worker_thread)
    seconds_ms = int(args.seconds * 1000)
    QTimer.singleShot(1000, idle.start)  # let the first layout settle
    QTimer.singleShot(1000 + seconds_ms, idle.stop)
    QTimer.singleShot(1000 + seconds_ms, playing.start)
    QTimer.singleShot(1000 + seconds_ms, window.controls.play_button.click)
    QTimer.singleShot(1000 + 2 * seconds_ms, window.close)
    started = time.monotonic()
    app.exec()
    playing.stop()
    summary = {"seconds": round(time.monotonic() - started, 1), "steps_while_playing": steps[0],
               "runs_while_playing": len(run_starts_s),
               "idle": describe(idle), "playing": describe(playing, run_starts_s)}
    log.info("responsiveness: %s", json.dumps(summary))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
