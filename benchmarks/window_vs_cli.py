"""The window's ms/token under *Run to end* against `kvstudio compare`, in one process.

Usage: QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/window_vs_cli.py [--rounds 5]

Drives the real window (offscreen or under Xvfb) on the embedded base model,
as the course's lab: the lab prompt (P = 183 tokens, no chat template), greedy,
N = 64, *Run to end* in cached mode and
then in recompute mode, while it draws as it always does; then, with the
window idle, the function `kvstudio compare` runs (`labs.cache.compare.compare_modes`)
on the same model object and the same prompt ids. Rounds interleave (window
cached, window recompute, compare both, next round). Every figure is the
median of the rounds with its min–max; ms/token is the course's one
definition, the median decode step (prefill apart).

Printed: per mode the window's and compare's ms/token and their ratio
(target: within 1.25×), whether cached was faster than recompute in every
round of both, how many of the window's steps had to wait for a redraw to
finish (`StepGate`) and how many redraws waited for a step, and the cost
estimate (`run_cost`, what the cost question says) before each recompute run
against the model time that run then measured.
`--without-gate` lets steps and redraws overlap again (how it was before).
Not a CI test: it reads wall-clock times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from dataclasses import replace

from PySide6.QtCore import QEventLoop, QTimer
from window_harness import close_window, open_window, settle

from kvstudio.engine.records import MODES, Mode, SamplingSettings
from kvstudio.labs.cache.compare import CompareResult, compare_modes
from kvstudio.labs.common import finish, lab_text
from kvstudio.ui.panels.controls_panel import SPEED_INTERVALS_MS
from kvstudio.ui.run.engine_adapter import ModelChoice, choice_of, run_cost

PROMPT_TOKENS, NEW_TOKENS = 183, 64


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "k": len(values)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--without-gate", action="store_true",
                        help="let steps and redraws overlap (the old behaviour)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    app, window = open_window(language="en", threads=1)
    controller = window.controller
    controller.load_model(ModelChoice("embedded-base"))  # the course runs this lab on the base
    deadline = time.monotonic() + 60
    while (controller.model is None or choice_of(controller.model).kind != "embedded-base") \
            and time.monotonic() < deadline:
        settle(20)
    model = controller.model
    assert model is not None
    gate = controller.host.gate
    if args.without_gate:
        gate.max_wait_s = 0.0
        controller.pacer.may_draw = lambda: True
        controller.pacer.draw_on_request = False
    estimates: list[tuple[Mode, float | None, int]] = []  # before each recompute run

    controller.confirm_cost = lambda cost: True  # the estimate is read before each run instead
    text = lab_text().strip()
    window.generation.set_prompt(text)
    window.generation.set_chat_available(model.tokenizer.has_chat_tokens, False)
    ids = model.tokenizer.encode(text)
    if len(ids) != PROMPT_TOKENS:
        print(f"note: the lab prompt is {len(ids)} tokens with this tokenizer, not 183")
    base = window.sampling.run_settings("cached")
    window.sampling.set_run_settings(replace(
        base, sampling=SamplingSettings.greedy_settings(), max_new_tokens=NEW_TOKENS))
    window.controls.set_speed(len(SPEED_INTERVALS_MS) - 1)

    window_ms: dict[Mode, list[float]] = {m: [] for m in MODES}
    window_total_s: dict[Mode, list[float]] = {m: [] for m in MODES}  # model time (records)
    window_wall_s: dict[Mode, list[float]] = {m: [] for m in MODES}  # click to finished
    cli_ms: dict[Mode, list[float]] = {m: [] for m in MODES}
    for index in range(args.rounds):
        for mode in MODES:
            controller.reset()
            window.controls.set_mode(mode)
            settle(50)
            if mode == "recompute":  # what the cost question would say before this run
                cost = run_cost(model, window.current_request(), controller.step_times)
                estimates.append((mode, cost.seconds, cost.tokens_fed))
            done = QEventLoop()
            controller.run_finished.connect(done.quit)
            QTimer.singleShot(120_000, done.quit)
            clicked = time.perf_counter()
            window.controls.to_end_button.click()
            done.exec()  # no polling: the GUI thread wakes only for the window's own work
            window_wall_s[mode].append(time.perf_counter() - clicked)
            controller.run_finished.disconnect(done.quit)
            trace = controller.store.current
            assert trace is not None and trace.finished, "the window's run did not finish"
            if len(trace.records) != NEW_TOKENS:
                print(f"note: the {mode} run stopped after {len(trace.records)} steps "
                      f"({trace.stop})")
            window_ms[mode].append(trace.decode_ms_per_token or 0.0)
            window_total_s[mode].append(sum(r.elapsed_s for r in trace.records))
            settle(200)  # the last redraws, then idle
        result = finish(compare_modes(model.backend, model.tokenizer, ids, NEW_TOKENS),
                        CompareResult)
        for mode in MODES:
            run = result.cached if mode == "cached" else result.recompute
            cli_ms[mode].append(1000.0 * run.decode_seconds_per_token)
        print(f"round {index + 1}/{args.rounds}: window "
              + " ".join(f"{m} {window_ms[m][-1]:.2f}" for m in MODES) + " · compare "
              + " ".join(f"{m} {cli_ms[m][-1]:.2f}" for m in MODES) + " ms/token", flush=True)

    out: dict[str, object] = {"rounds": args.rounds, "gate": not args.without_gate,
                              "prompt_tokens": len(ids), "new_tokens": NEW_TOKENS,
                              "load_average_1min_at_end": os.getloadavg()[0],
                              "cpus": os.cpu_count(),
                              "per_round_ms": {"window": window_ms, "compare": cli_ms}}
    print()
    print(f"ms/token (median decode step), median of {args.rounds} interleaved rounds "
          f"(min–max); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs:")
    for mode in MODES:
        w, c = spread(window_ms[mode]), spread(cli_ms[mode])
        ratio = w["median"] / c["median"]
        out[mode] = {"window": w, "compare": c, "ratio": ratio}
        print(f"  {mode:<10} window {w['median']:.2f} ({w['min']:.2f}–{w['max']:.2f}) · "
              f"compare {c['median']:.2f} ({c['min']:.2f}–{c['max']:.2f}) · "
              f"window ÷ compare {ratio:.2f}×")
    ordered = all(window_ms["cached"][i] < window_ms["recompute"][i]
                  and cli_ms["cached"][i] < cli_ms["recompute"][i] for i in range(args.rounds))
    out["cached_faster_every_round"] = ordered
    print(f"  cached faster than recompute in every round, both views: {ordered}")
    print(f"  window steps that waited the full {gate.max_wait_s:.2f} s for the GUI: "
          f"{gate.forced} of {gate.steps}; redraw ticks put off for a step: "
          f"{controller.pacer.deferred}; times the GUI thread woke during a step: "
          f"{gate.gui_woke_in_steps}")
    ratios = [est / took for (_m, est, _f), took in zip(estimates, window_total_s["recompute"],
                                                          strict=True) if est]
    if ratios:
        out["cost_estimate_over_actual"] = spread(ratios)
        first = estimates[0]
        print(f"  cost estimate before each recompute run ({first[2]:,} tokens fed) ÷ the "
              f"run's measured time: median {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}–{max(ratios):.2f}); first round {first[1]:.2f} s estimated, "
              f"{window_total_s['recompute'][0]:.2f} s measured")
        wall = [est / took for (_m, est, _f), took in zip(estimates, window_wall_s["recompute"],
                                                          strict=True) if est]
        out["cost_estimate_over_wall"] = spread(wall)
        print(f"  … ÷ the run's wall time in the window (click to finished, drawing included): "
              f"median {statistics.median(wall):.2f} ({min(wall):.2f}–{max(wall):.2f})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    close_window(app, window)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
