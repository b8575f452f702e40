"""Measure how responsive the window stays while playing at full speed (not a CI test).

Usage: xvfb-run -a .venv/bin/python benchmarks/responsiveness.py [--seconds 30] [--speed max]
A probe QTimer on the UI thread ticks every 5 ms; the gap between two ticks
beyond 5 ms is time the event loop could not react (a stall). The probe runs
first with the window idle (the machine's own noise), then while the window
plays as fast as the model goes (alternating modes when a run ends); the
script prints, for both, the longest stall, the 99th percentile, the median
and how many stalls passed 30 ms. Target: the longest stall under 30 ms.

For the five longest stalls it also prints when they happened (seconds since
the phase began and since the latest run started) and how much CPU time the
UI thread used during them: about the whole stall means the UI thread was
busy (drawing), much less means it waited (for the GIL or for a core).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from bisect import bisect_right
from dataclasses import replace

from PySide6.QtCore import QElapsedTimer, QTimer
from window_harness import open_window

log = logging.getLogger("responsiveness")
PROBE_MS = 5


class StallProbe:
    def __init__(self) -> None:
        self.gaps_ms: list[float] = []
        self.ends_s: list[float] = []  # when each gap ended (time.monotonic)
        self.ui_cpu_ms: list[float] = []  # UI-thread CPU time used during each gap
        self.started_s = 0.0
        self._cpu_s = 0.0
        self._clock = QElapsedTimer()
        self._timer = QTimer()
        self._timer.setInterval(PROBE_MS)
        self._timer.timeout.connect(self._on_tick)

    def start(self) -> None:
        self.started_s = time.monotonic()
        self._cpu_s = time.thread_time()
        self._clock.start()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _on_tick(self) -> None:
        elapsed_ns = self._clock.nsecsElapsed()
        self._clock.restart()
        cpu_s = time.thread_time()
        self.gaps_ms.append(max(0.0, elapsed_ns / 1e6 - PROBE_MS))
        self.ends_s.append(time.monotonic())
        self.ui_cpu_ms.append((cpu_s - self._cpu_s) * 1000)
        self._cpu_s = cpu_s


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

    def next_run() -> None:
        c = window.controls
        c.set_mode("recompute" if c.mode() == "cached" else "cached")
        c._play.click()

    window.controller.run_finished.connect(next_run)
    # First the same probe with the window idle: the machine's own noise, for comparison.
    idle, playing = StallProbe(), StallProbe()
    seconds_ms = int(args.seconds * 1000)
    QTimer.singleShot(1000, idle.start)  # let the first layout settle
    QTimer.singleShot(1000 + seconds_ms, idle.stop)
    QTimer.singleShot(1000 + seconds_ms, playing.start)
    QTimer.singleShot(1000 + seconds_ms, window.controls._play.click)
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
