"""Run as a script by test_lab_close: close the window while the speculative lab runs.

The lab runs on the tiny model with a forward hook that counts the target's
forwards and rests 2 ms in each, so a run lasts a while. The window closes
once the first progress of a speculative run reaches the GUI thread (with
Cancel checked inside runs: after its first round; before, only after the
whole run). The script then ends as `startup.main` does (`finish`). It prints
"closing", how many forwards ran after the close was asked for, and "exited" with the
seconds since the close; the test reads how far it got.
"""

from __future__ import annotations

import sys
import threading
import time

from kvstudio.ui.app.startup import finish
from kvstudio.ui.run.engine_adapter import ModelChoice, wrap_model
from tests.ui.window_app import open_window, tiny_model, when_loaded

NEW_TOKENS = 200
closing = threading.Event()
after_close = [0]
closed_at = [0.0]


def main(settings_path: str) -> int:
    model, tokenizer = tiny_model()

    def slow_forward(*_: object) -> None:
        if closing.is_set():
            after_close[0] += 1
        time.sleep(0.002)

    model.register_forward_pre_hook(slow_forward)
    app, window = open_window(settings_path, wrap_model(model, tokenizer, "tiny", ModelChoice()))

    def start_the_lab() -> None:
        panel = window.classroom.labs.panels["speculative"]
        panel.set_model(window.controller.model)
        panel.ks.setText("4, 1")
        panel.new_tokens.setValue(NEW_TOKENS)
        panel.repeats.setValue(2)
        panel.runner.progress.connect(close_in_a_run)
        if not panel.run():
            print("lab did not start", flush=True)
            app.quit()

    def close_in_a_run(item: object) -> None:
        if closing.is_set() or getattr(item, "stage", "plain") == "plain":
            return
        closing.set()
        closed_at[0] = time.monotonic()
        print(f"closing {getattr(item, 'stage', '?')}", flush=True)
        window.close()
        app.quit()

    when_loaded(window, start_the_lab)
    code = app.exec()
    finish(app)  # what startup.main does after the event loop: waits for parked threads
    print(f"forwards after close {after_close[0]}", flush=True)
    print(f"exited {time.monotonic() - closed_at[0]:.2f} s after the close", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
