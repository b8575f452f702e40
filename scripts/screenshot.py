"""Take the README screenshot: the real window, mid-run, in Korean (run under Xvfb).

Usage: xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python scripts/screenshot.py \
           [--out docs/screenshot.png] [--lang ko] [--presenter PREFIX]
It drives the window through its own controls as the README's lesson does: the
course preset on `ko-chat` (the question the window opens with, Greedy ticked,
N = 64 with eos banned), a cached run to the end, then a recompute run stopped
part-way (so both modes are drawn), and a "Sample ×N" at the course's
temperatures (30 samples, seed 42), then grabs the window from the screen. The
window opens at the size it chooses for the screen (nothing is resized here).
`--model embedded-base --prompt 대한민국의 수도는 --new-tokens 40` is the run the
layout measurements in docs/window.md were taken on. With `--presenter PREFIX`
it then opens the presenter view and grabs it once per chart:
PREFIX-1-tokens_fed.png … PREFIX-4-answers.png.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from PySide6.QtWidgets import QApplication
from window_harness import close_window, open_window, settle, wait_for

from kvstudio.labs.course import COURSE
from kvstudio.ui.run.engine_adapter import ModelChoice

log = logging.getLogger("screenshot")


POLL_MS = 50  # how often `wait` looks at its condition: longer than the gate's SETTLE_S


def drive_and_grab(app: QApplication, window, args: argparse.Namespace) -> None:  # type: ignore[no-untyped-def]
    if args.model != "embedded-chat":
        loaded: list[object] = []
        window.controller.model_loaded.connect(loaded.append)
        window.controller.load_model(ModelChoice(args.model))
        wait_for(lambda: bool(loaded))
    if args.prompt is not None:  # else the question the window opens with
        window.generation.set_prompt(args.prompt)
    rs = window.sampling.run_settings("cached")
    if args.greedy:  # the README's step 2: both modes choose the same tokens
        rs = replace(rs, sampling=replace(rs.sampling, temperature=0.0))  # top-p etc. stay
    window.sampling.set_run_settings(replace(rs, max_new_tokens=args.new_tokens))
    window.controls.set_speed(99)
    store = window.controller.store

    window.controls.to_end_button.click()
    wait_for(lambda: store.trace("cached") is not None and store.trace("cached").finished)
    window.controls.set_mode("recompute")
    wait_for(lambda: store.current_mode == "recompute")
    # Stop the recompute run part-way: at most 2/3 of what the cached run generated.
    cached_steps = len(store.trace("cached").records)
    for n in range(1, min(args.recompute_steps, max(1, cached_steps * 2 // 3)) + 1):
        window.controls.step_button.click()

        def stepped(n: int = n) -> bool:
            return store.current is not None and len(store.current.records) >= n

        wait_for(stepped)

    window.answers.samples_box.setValue(args.samples)
    window.answers.length_box.setValue(args.answer_tokens)
    window.answers.temperatures_edit.setText(args.temperatures)
    finished: list[object] = []
    window.controller.sampling_finished.connect(finished.append)
    window.answers.go_button.click()
    wait_for(lambda: bool(finished), timeout=300)
    window.controller.pacer.flush()
    settle(500)
    grab(app, window, args.out)
    for name, plot in window.plots().items():  # the layout rule, as numbers
        area = plot.plot_item.vb.sceneBoundingRect()
        log.info("  %s plot area %.0f×%.0f (widget %d×%d)", name, area.width(), area.height(),
                 plot.width(), plot.height())
    bar = window.plots_scroll.verticalScrollBar()
    if bar.maximum() > 0:  # the lower plots, where the page scrolls
        bar.setValue(bar.maximum())
        settle(500)
        grab(app, window, str(Path(args.out).with_suffix("")) + "-scrolled.png")
        bar.setValue(0)
    if args.presenter:
        presenter = window.classroom.presenter
        presenter.set_enabled(True)
        for index, chart in enumerate(presenter.charts):
            presenter.show_chart(index)
            settle(500)
            grab(app, presenter, f"{args.presenter}-{index + 1}-{chart.key}.png")
        presenter.set_enabled(False)


def grab(app: QApplication, widget, out: str) -> None:  # type: ignore[no-untyped-def]
    shot = app.primaryScreen().grabWindow(widget.winId())
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    shot.save(out)
    log.info("wrote %s (%dx%d)", out, shot.width(), shot.height())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="docs/screenshot.png")
    parser.add_argument("--lang", default="ko")
    parser.add_argument("--presenter", default="",
                        help="also grab the presenter view, one file per chart: PREFIX-N-name.png")
    parser.add_argument("--new-tokens", type=int, default=COURSE.new_tokens)
    parser.add_argument("--recompute-steps", type=int, default=26)
    parser.add_argument("--greedy", action=argparse.BooleanOptionalAction, default=True,
                        help="tick Greedy for the live runs (default: yes, as the README says)")
    parser.add_argument("--samples", type=int, default=COURSE.samples)
    parser.add_argument("--answer-tokens", type=int, default=COURSE.answer_tokens)
    parser.add_argument("--temperatures",
                        default=", ".join(f"{t:g}" for t in COURSE.temperatures))
    parser.add_argument("--prompt", default=None,
                        help="the live prompt (default: the question the window opens with)")
    parser.add_argument("--model", default="embedded-chat",
                        choices=("embedded-base", "embedded-chat", "random"),
                        help="the window's model (default: ko-chat, the course's live model)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    app, window = open_window(language=args.lang)
    try:
        drive_and_grab(app, window, args)
    finally:
        close_window(app, window)  # stops the engine thread and deletes the window
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
