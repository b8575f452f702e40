"""Screenshots of the Chat and Cache inspector tabs, in Korean (run under Xvfb).

Usage: xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python scripts/screenshot_cache_tabs.py \
           [--out-dir docs] [--lang ko]
On the embedded chat model it plays the shipped 4-turn conversation
(kvstudio/resources/prompts/chat_4turns.txt) in the Chat tab with both ways, then
starts the inspector on a question and steps it a few tokens, grabbing the
window from the screen after each (docs/chat.png, docs/cache-inspector.png).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from PySide6.QtWidgets import QApplication
from window_harness import close_window, open_window, settle, wait_for

from kvstudio.charts.labs.chat import ChatView
from kvstudio.ui.labs.chat_lab import ChatPanel

log = logging.getLogger("screenshot")


def grab(app: QApplication, window, out: Path) -> None:  # type: ignore[no-untyped-def]
    settle(600)
    shot = app.primaryScreen().grabWindow(window.winId())
    out.parent.mkdir(parents=True, exist_ok=True)
    shot.save(str(out))
    log.info("wrote %s (%dx%d)", out, shot.width(), shot.height())


def play_turn(app: QApplication, chat: ChatPanel) -> None:
    """The next turn of the scripted conversation, answered."""
    view = chat.lab_view
    assert isinstance(view, ChatView)
    chat.next_scripted_turn()
    before = len(view.turns)
    chat.run_button.click()
    wait_for(lambda: len(view.turns) > before)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out-dir", default="docs")
    parser.add_argument("--lang", default="ko")
    parser.add_argument("--steps", type=int, default=6, help="inspector steps after the prefill")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    app, window = open_window(language=args.lang)
    out = Path(args.out_dir)
    try:
        window.resize(1580, 960)
        window.move(0, 0)
        extras = window.classroom
        wait_for(lambda: extras.chat.model is not None)
        chat = extras.chat
        window.tabs.setCurrentWidget(chat)
        for _ in range(4):
            play_turn(app, chat)
        grab(app, window, out / "chat.png")

        inspector = extras.inspector
        drawn = inspector.inspector_view  # its frames, as drawn
        window.tabs.setCurrentWidget(inspector)
        inspector.layer.setValue(1)
        inspector.run_button.click()
        wait_for(lambda: drawn.frame is not None and not inspector.runner.busy)
        for n in range(args.steps):
            if not inspector.runner.has_job:
                break  # the answer ended (eos)
            inspector.step_button.click()

            def stepped(frames: int = n + 2) -> bool:  # the prefill's frame, then one a step
                return drawn.frames_seen >= frames and not inspector.runner.busy

            wait_for(stepped)
        grab(app, window, out / "cache-inspector.png")
    finally:
        close_window(app, window)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
