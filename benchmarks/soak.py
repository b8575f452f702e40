"""Soak the window at full speed for minutes and sample its memory (not a CI test).

Usage: xvfb-run -a .venv/bin/python benchmarks/soak.py --minutes 10 [--out soak.json]
(or QT_QPA_PLATFORM=offscreen). The window runs to the end of each run as fast
as the model goes, alternating cached and recompute, with a Reset every few
runs and a small "Sample ×N" now and then. Every few seconds it records RSS,
steps so far and `sys.getrefcount(None)` (PySide6 6.12 on Python < 3.12 leaks
references to None until Python aborts: see STACK-NOTES). At the end it prints
and writes the figures: duration, runs, steps, RSS at start/end/max.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import replace

from PySide6.QtCore import QTimer
from window_harness import open_window, rss_mib

log = logging.getLogger("soak")


class Soak:
    """Drives the window through its own controls and keeps the figures."""

    def __init__(self, window, minutes: float, max_new_tokens: int, sample_every: float) -> None:  # type: ignore[no-untyped-def]
        self.window = window
        self.deadline = time.monotonic() + minutes * 60
        self.start = time.monotonic()
        self.steps = 0
        self.runs = 0
        self.samples: list[dict[str, float]] = []
        settings = window.sampling.run_settings("cached")
        window.sampling.set_run_settings(replace(settings, max_new_tokens=max_new_tokens))
        window.controls.set_speed(99)  # as fast as the model goes
        window.controller.host.worker.step_ready.connect(self._on_step_ready)
        window.controller.run_finished.connect(self._on_run_finished)
        window.controller.sampling_finished.connect(self._on_sampling_finished)
        self._probe = QTimer()
        self._probe.timeout.connect(self._sample)
        self._probe.start(int(sample_every * 1000))

    def begin(self) -> None:
        self._sample()
        self.window.controls.to_end_button.click()

    def _on_step_ready(self, _run_id: int, _record: object) -> None:
        self.steps += 1

    def _on_run_finished(self) -> None:
        self.runs += 1
        if time.monotonic() >= self.deadline:
            self.window.close()
            return
        if self.runs % 10 == 0:
            self.window.answers.samples_box.setValue(8)
            self.window.answers.go_button.click()  # continue when sampling is done
            return
        self._next_run()

    def _on_sampling_finished(self, _counts: object) -> None:
        self._next_run()

    def _next_run(self) -> None:
        w = self.window
        if self.runs % 4 == 0:
            w.controls.reset_button.click()
        w.controls.set_mode("recompute" if w.controls.mode() == "cached" else "cached")
        w.controls.to_end_button.click()

    def _sample(self) -> None:
        self.samples.append({
            "t_s": round(time.monotonic() - self.start, 1),
            "rss_mib": round(rss_mib(), 1),
            "steps": self.steps,
            "runs": self.runs,
            "none_refs": sys.getrefcount(None),
        })
        if time.monotonic() >= self.deadline + 30:  # a run that never finishes
            self.window.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--sample-every", type=float, default=5.0,
                        help="seconds between RSS samples")
    parser.add_argument("--out", default="soak.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    app, window = open_window()
    soak = Soak(window, args.minutes, args.max_new_tokens, args.sample_every)
    soak.begin()
    app.exec()
    soak._sample()
    s = soak.samples
    warm = next((x for x in s if x["t_s"] >= 30), s[0])
    summary = {
        "duration_s": round(time.monotonic() - soak.start, 1),
        "runs": soak.runs,
        "steps": soak.steps,
        "steps_per_s": round(soak.steps / max(time.monotonic() - soak.start, 1e-9), 1),
        "rss_start_mib": s[0]["rss_mib"],
        "rss_after_30s_mib": warm["rss_mib"],
        "rss_end_mib": s[-1]["rss_mib"],
        "rss_max_mib": max(x["rss_mib"] for x in s),
        "none_refs_start": s[0]["none_refs"],
        "none_refs_end": s[-1]["none_refs"],
        "thread_stopped": not window.controller.host.is_running(),
        "model": window.controller.model.name if window.controller.model else None,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"summary": summary, "samples": s}, f, indent=1)
    log.info("soak summary: %s", json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
