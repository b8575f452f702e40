"""The window's cache-vs-recompute lab against `kvstudio compare`: one speed figure, two fronts.

Usage: QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/window_vs_cli_compare.py
       [--rounds 5] [--json FILE]

Both fronts run the course's case (ko-base, the lab prompt P = 183, greedy,
N = 64, 4 warm-up steps, fp32, 1 torch thread) one round at a time, and the
rounds interleave: the window's lab, then the CLI, then the lab again, …

- **window**: the real `CacheVsRecomputePanel` (offscreen), its *Run* button with
  repeats = 1, on its lab thread as in the window; the figures are read from
  the result it shows (`panel.result`, a `RepeatedCompare` of one round).
- **CLI**: `kvstudio compare --repeats 1 --threads 1` in this process through
  `kvstudio.cli.main.main` (argument parsing, model loading, prompt, the
  table); the figures are the `RepeatedCompare` its table is printed from.

Per front and mode: decode ms/token (the median decode step, prefill apart:
the one definition, `RepeatedCompare.decode_ms_per_token`) and TTFT, and the
speed ratio recompute ÷ cached per decoded token (`decode_ratio`), each the
median of the rounds with its min–max. Then whether each front's median ratio
lies within the other's min–max. Not a CI test: it reads wall-clock times, and
on a shared machine other jobs move them (the load average is printed).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from kvstudio.cli import compare as cli_compare  # noqa: E402
from kvstudio.cli.main import main as cli_main  # noqa: E402
from kvstudio.engine.limits import set_torch_threads  # noqa: E402
from kvstudio.engine.records import MODES  # noqa: E402
from kvstudio.labs.cache.compare import RepeatedCompare  # noqa: E402
from kvstudio.labs.course import COURSE  # noqa: E402
from kvstudio.ui.app.startup import prepare_application  # noqa: E402
from kvstudio.ui.labs.compare_lab import CacheVsRecomputePanel  # noqa: E402
from kvstudio.ui.run.engine_adapter import ModelChoice, load_model  # noqa: E402
from kvstudio.ui.slides.export_menu import ChartExporter  # noqa: E402

FRONTS = ("window", "cli")


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "k": len(values)}


def figures(result: RepeatedCompare) -> dict[str, float]:
    """One round's figures: decode ms/token and TTFT per mode, and the decode ratio."""
    out = {"ratio": result.decode_ratio}
    for mode in MODES:
        out[f"{mode}_decode_ms"] = result.decode_ms_per_token(mode).median
        out[f"{mode}_ttft_ms"] = result.ttft_ms(mode).median
    return out


def window_round(panel: CacheVsRecomputePanel) -> RepeatedCompare:
    """One run of the lab panel as its Run button starts it; its shown result."""
    done = QEventLoop()
    panel.result_ready.connect(done.quit)
    panel.failed.connect(done.quit)
    QTimer.singleShot(600_000, done.quit)
    panel.run_button.click()
    done.exec()
    panel.result_ready.disconnect(done.quit)
    panel.failed.disconnect(done.quit)
    result = panel.result
    if not isinstance(result, RepeatedCompare):
        raise SystemExit(f"the lab did not finish: {panel.status.text()}")
    return result


def cli_round() -> RepeatedCompare:
    """One `kvstudio compare --repeats 1`, in this process; the result its table shows."""
    shown: list[RepeatedCompare] = []
    original = cli_compare.print_compare

    def keep(result: Any, backend: Any, repeated: RepeatedCompare) -> None:
        shown.append(repeated)
        original(result, backend, repeated)

    cli_compare.print_compare = keep  # type: ignore[assignment]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli_main(["compare", "--repeats", "1", "--threads", "1"])
    finally:
        cli_compare.print_compare = original  # type: ignore[assignment]
    if code != 0 or not shown:
        raise SystemExit(f"kvstudio compare exited with {code}")
    return shown[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 (a min–max needs two rounds)")

    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    prepare_application(app)
    set_torch_threads(1)  # the CLI's default, and the window's
    folder = Path(tempfile.mkdtemp(prefix="kvstudio-bench-"))
    exporter = ChartExporter(save_chooser=lambda *a: "",
                             folder_chooser=lambda *a: str(folder / "pack"))
    panel = CacheVsRecomputePanel(exporter)
    panel.resize(1366, 768)
    panel.show()
    panel.set_model(load_model(ModelChoice("embedded-base")))
    panel.choose_preset("course")
    panel.set_params(repeats=1, warmup=4)

    per_round: dict[str, list[dict[str, float]]] = {front: [] for front in FRONTS}
    started = time.monotonic()
    for index in range(args.rounds):
        per_round["window"].append(figures(window_round(panel)))
        per_round["cli"].append(figures(cli_round()))
        line = " · ".join(
            f"{front} {r['cached_decode_ms']:.2f} / {r['recompute_decode_ms']:.2f} ms/token "
            f"({r['ratio']:.2f}×)" for front in FRONTS for r in [per_round[front][-1]])
        print(f"round {index + 1}/{args.rounds}: {line}", flush=True)
    panel.shutdown()
    panel.close()

    load = os.getloadavg()
    summary: dict[str, Any] = {
        "rounds": args.rounds, "prompt_tokens": COURSE.prompt_tokens,
        "new_tokens": COURSE.new_tokens, "model": COURSE.cache_model, "threads": 1,
        "cpus": os.cpu_count(), "load_average": load, "seconds": time.monotonic() - started,
        "per_round": per_round,
    }
    print()
    print(f"{COURSE.cache_model}, P = {COURSE.prompt_tokens}, N = {COURSE.new_tokens}, greedy, "
          f"1 thread; median of {args.rounds} interleaved rounds per front (min–max); "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} "
          "CPUs (other jobs move these times)")
    keys = [("cached_decode_ms", "cached decode ms/token"),
            ("recompute_decode_ms", "recompute decode ms/token"),
            ("cached_ttft_ms", "cached TTFT ms"), ("recompute_ttft_ms", "recompute TTFT ms"),
            ("ratio", "recompute ÷ cached per token")]
    for key, label in keys:
        row = {front: spread([r[key] for r in per_round[front]]) for front in FRONTS}
        summary[key] = row
        print(f"  {label:<30}" + "  ".join(
            f"{front} {s['median']:7.2f} ({s['min']:.2f}–{s['max']:.2f})"
            for front, s in row.items()))
    w, c = summary["ratio"]["window"], summary["ratio"]["cli"]
    window_in_cli = c["min"] <= w["median"] <= c["max"]
    cli_in_window = w["min"] <= c["median"] <= w["max"]
    summary["window_ratio_within_cli_min_max"] = window_in_cli
    summary["cli_ratio_within_window_min_max"] = cli_in_window
    print(f"  window's median ratio {w['median']:.2f}× within the CLI's min–max "
          f"({c['min']:.2f}–{c['max']:.2f}): {'yes' if window_in_cli else 'no'}")
    print(f"  CLI's median ratio {c['median']:.2f}× within the window's min–max "
          f"({w['min']:.2f}–{w['max']:.2f}): {'yes' if cli_in_window else 'no'}")
    over = {mode: summary[f"{mode}_decode_ms"]["window"]["median"]
            / summary[f"{mode}_decode_ms"]["cli"]["median"] for mode in MODES}
    summary["window_over_cli_decode_ms"] = over
    print("  window ÷ CLI decode ms/token: "
          + ", ".join(f"{mode} {value:.2f}" for mode, value in over.items()))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2), encoding="utf-8")
    app.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
