"""Run as a script by test_hardening: close the window while a step outlasts the stop timeout.

A fake backend blocks in `forward_last` once the model is loaded until the
script releases it after the event loop has ended (at most `STEP_SECONDS`), so
the step outlasts the `STOP_MS` that closing waits however loaded the machine
is. The application is prepared and finished exactly as `startup.main` does
(`prepare_application`, then `finish`: wait for the parked step, delete every
Qt object). Prints "step started", "closed" and how many Qt objects were left
for PySide's exit hook so the test can see how far it got; the exit status is
the test's verdict (134 = SIGABRT, what closing did before the parking fix;
139 = SIGSEGV, what PySide's exit hook did in one exit in four before `finish`).
"""

from __future__ import annotations

import sys
import threading
from dataclasses import replace

from kvstudio.ui.app.shutdown import python_owned_qt_objects
from kvstudio.ui.app.startup import finish
from kvstudio.ui.run import threads
from kvstudio.ui.run.engine_adapter import ModelChoice, wrap_model
from tests.ui.window_app import open_window, tiny_model, when, when_loaded

STEP_SECONDS = 60.0  # an upper bound: the step is released once the window has closed
STOP_MS = 200
started = threading.Event()
release = threading.Event()


class SlowBackend:
    """The tiny model's backend with a slow forward once `slow` is set."""

    def __init__(self, inner: object) -> None:
        self._inner = inner
        self.slow = False

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def forward_last(self, *args: object) -> object:
        if self.slow:
            started.set()
            release.wait(STEP_SECONDS)
        return self._inner.forward_last(*args)  # type: ignore[attr-defined]


def main(settings_path: str) -> int:
    threads.STOP_TIMEOUT_MS = STOP_MS
    model, tokenizer = tiny_model(max_positions=256)
    handle = wrap_model(model, tokenizer, "slow", ModelChoice())
    backend = SlowBackend(handle.backend)
    slow_handle = replace(handle, backend=backend)  # type: ignore[arg-type]
    app, window = open_window(settings_path, slow_handle)

    def step_slowly() -> None:
        backend.slow = True
        window.controller.step()
        when(started.is_set, close)

    def close() -> None:
        window.close()
        print("closed", flush=True)
        app.quit()

    when_loaded(window, step_slowly)
    code = app.exec()
    print("step started" if started.is_set() else "no step", flush=True)
    print(f"parked {len(threads.parked_threads())}", flush=True)
    release.set()  # the long step ends now, after the window closed and the loop ended
    finish(app)  # what startup.main does after the event loop
    print(f"after waiting {len(threads.parked_threads())}", flush=True)
    print(f"left for the exit hook {len(python_owned_qt_objects())}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
