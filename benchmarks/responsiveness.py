"""Measure how responsive the window stays while playing at full speed (not a CI test).

Usage: xvfb-run -a .venv/bin/python benchmarks/responsiveness.py [--seconds 30] [--speed max]
A probe QTimer on the UI thread ticks every 5 ms; the gap between two ticks
beyond 5 ms is time the event loop could not react (a stall). The probe runs
first with the window idle (the machine's own noise), then while the window
plays as fast as the model goes (alternating modes when a run ends); the
script prints, for both, the longest stall, the 99th percentile, the median
and how many stalls passed 30 ms. Target: the longest stall under 30 ms.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from dataclasses import replace

from PySide6.QtCore import QElapsedTimer, QTimer
from window_harness import open_window

log = logging.getLogger("responsiveness")
PROBE_MS = 5


class StallProbe:
    def __init__(self) -> None:
        self.gaps_ms: list[float] = []
        self._clock = QElapsedTimer()
        self._timer = QTimer()
        self._timer.setInterval(PROBE_MS)
        self._timer.timeout.connect(self._on_tick)

    def start(self) -> None:
        self._clock.start()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def _on_tick(self) -> None:
        elapsed_ns = self._clock.nsecsElapsed()
        self._clock.restart()
        self.gaps_ms.append(max(0.0, elapsed_ns / 1e6 - PROBE_MS))


def describe(gaps_ms: list[float]) -> dict[str, float | int | None]:
    gaps = sorted(gaps_ms)
    if not gaps:
        return {"probe_ticks": 0}
    return {
        "probe_ticks": len(gaps),
        "longest_stall_ms": round(gaps[-1], 1),
        "p99_stall_ms": round(gaps[int(0.99 * (len(gaps) - 1))], 1),
        "median_stall_ms": round(statistics.median(gaps), 2),
        "stalls_over_30ms": sum(g > 30 for g in gaps),
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
    window.controller.host.worker.step_ready.connect(lambda *_: steps.__setitem__(0, steps[0] + 1))

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
               "idle": describe(idle.gaps_ms), "playing": describe(playing.gaps_ms)}
    log.info("responsiveness: %s", json.dumps(summary))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
