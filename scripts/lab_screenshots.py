"""Screenshots of every lab after it ran, the chat and the inspector, with their plot areas.

Usage (one screen size per run, under Xvfb):
    Xvfb :84 -screen 0 1366x768x24 & DISPLAY=:84 .venv/bin/python scripts/lab_screenshots.py \
        --out /tmp/layout_shots --lang ko
The window opens as it would on that screen, each lab runs on the embedded chat
model with small settings, and each page is grabbed (PREFIX-WxH-lab.png); with
`--presenter`, the presenter view is then grabbed showing each lab's chart. It
prints each chart's view-box sizes and every table cell drawn narrower than its
text, so a layout regression shows as numbers too.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from PySide6.QtWidgets import QTableView
from window_harness import close_window, open_window, settle, wait_for

from kvstudio.charts.labs.chat import ChatView
from kvstudio.charts.plots.sizing import elided_cells, plot_areas
from kvstudio.ui.labs import LabPanel
from kvstudio.ui.labs.chat_lab import ChatPanel
from kvstudio.ui.labs.shared.step_navigation import SteppedLabPanel
from kvstudio.ui.main_window import initial_geometry

log = logging.getLogger("lab_screenshots")


# Settings that fill every chart in seconds on the embedded model (declared names, by lab).
SMALL_SETTINGS: dict[str, dict[str, object]] = {
    "compare": {"prompt_tokens": 48, "new_tokens": 12, "repeats": 2},
    "sample": {"samples": 12, "new_tokens": 6},
    "cutoff": {"new_tokens": 4},
    "cache_kinds": {"prompt_tokens": 32, "new_tokens": 12, "window": 16},
    "sweep": {"values": (16, 32, 64), "fixed": 8, "repeats": 2},
    "paged": {"samples": 4, "new_tokens": 16},
    "beam": {"new_tokens": 16},
    "quantized": {"prompt_tokens": 48, "new_tokens": 12},
    "serving": {"answer_tokens": 16, "repeats": 3, "prefix": "radix"},
    "speculative": {"new_tokens": 32, "repeats": 1},
}


def small_settings(labs) -> None:  # type: ignore[no-untyped-def]
    for key, values in SMALL_SETTINGS.items():
        labs.panels[key].set_params(**values)


def report(name: str, page) -> None:  # type: ignore[no-untyped-def]
    for key, chart in page.charts().items():
        sizes = ", ".join(f"{s.width():.0f}×{s.height():.0f}" for s in plot_areas(chart))
        print(f"  {name} chart {key}: {sizes} (widget {chart.width()}×{chart.height()}, "
              f"minimum {chart.minimumWidth()}×{chart.minimumHeight()})")
    for table in page.findChildren(QTableView):
        if table.isVisible():
            for row, column, text in elided_cells(table)[:5]:
                print(f"  {name} table cell ({row}, {column}) elided: {text!r}")


def run_to_result(lab: LabPanel) -> None:
    """Run `lab` as its Run button does (then to the end, where it steps) until its result,
    or until it fails (the Engine twin without the llama extra): then say why and go on."""
    done: list[object] = []
    lab.result_ready.connect(done.append)
    lab.failed.connect(done.append)
    lab.failed.connect(lambda message: print(f"  {type(lab).__name__} failed: {message}"))
    lab.run()
    if isinstance(lab, SteppedLabPanel):
        wait_for(lambda: not lab.runner.busy or bool(done))
        if not done:
            lab.run_to_end()
    wait_for(lambda: bool(done))


def play_turn(chat: ChatPanel) -> None:
    """The next turn of the scripted conversation, answered."""
    view = chat.lab_view
    assert isinstance(view, ChatView)
    chat.next_scripted_turn()
    before = len(view.turns)
    chat.run_button.click()
    wait_for(lambda: len(view.turns) > before)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("/tmp/layout_shots"))
    parser.add_argument("--lang", default="ko")
    parser.add_argument("--only", default="", help="comma-separated page names")
    parser.add_argument("--presenter", action="store_true",
                        help="also grab the presenter view showing each lab's chart")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    app, window = open_window(language=args.lang)
    screen = window.screen().availableGeometry()
    window.setGeometry(initial_geometry(screen, window.minimumSizeHint()))
    size = f"{screen.width()}x{screen.height()}"
    args.out.mkdir(parents=True, exist_ok=True)
    only = set(filter(None, args.only.split(",")))

    def grab(name: str, page=None) -> None:  # type: ignore[no-untyped-def]
        settle(400)
        shot = window.grab()
        path = args.out / f"{args.lang}-{size}-{name}.png"
        shot.save(str(path))
        print(f"wrote {path} ({shot.width()}x{shot.height()})")
        bar = page.page_scroll.verticalScrollBar() if page is not None else None
        if bar is not None and bar.maximum() > 0:  # the rest of a page that scrolls
            bar.setValue(bar.maximum())
            grab(f"{name}-scrolled")
            bar.setValue(0)

    try:
        extras = window.classroom
        labs = extras.labs
        small_settings(labs)
        window.tabs.setCurrentWidget(labs)
        for lab in labs.labs():
            name = type(lab).__name__.removesuffix("Panel")
            if only and name not in only:
                continue
            labs.tabs.setCurrentWidget(lab)
            settle(400)
            grab(f"{name}-empty")
            run_to_result(lab)
            grab(name, lab)
            report(name, lab)
        chat = extras.chat
        if not only or "Chat" in only:
            window.tabs.setCurrentWidget(chat)
            chat.answer_tokens.setValue(16)
            for _ in range(4):
                play_turn(chat)
            grab("Chat", chat)
            report("Chat", chat)
        inspector = extras.inspector
        drawn = inspector.inspector_view  # its frames, as drawn
        if not only or "Inspector" in only:
            window.tabs.setCurrentWidget(inspector)
            inspector.run_button.click()
            wait_for(lambda: drawn.frame is not None and not inspector.runner.busy)
            for n in range(4):
                if not inspector.runner.has_job:
                    break
                inspector.step_button.click()

                def stepped(frames: int = n + 2) -> bool:  # the prefill's frame, then one a step
                    return drawn.frames_seen >= frames and not inspector.runner.busy

                wait_for(stepped)
            grab("Inspector", inspector)
            report("Inspector", inspector)
        if args.presenter:
            presenter = extras.presenter
            presenter.set_enabled(True)
            for key in presenter.chart_keys():
                if key.startswith("lab ") and presenter.show_chart_named(key):
                    settle(400)
                    shot = presenter.grab()
                    path = args.out / f"{args.lang}-{size}-presenter-{key[4:]}.png"
                    shot.save(str(path))
                    print(f"wrote {path} ({shot.width()}x{shot.height()})")
            presenter.set_enabled(False)
    finally:
        close_window(app, window)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
