"""Run as a script by test_beam_cancel: close the window during the beam lab's check.

transformers' check is replaced by one that holds for argv[2] seconds, then
prints "check finished". The window closes once the check has started; the
script then ends as `startup.main` does (`finish`) and prints "exited". When
the check ran on the lab's thread, `finish` waited for it ("check finished"
came first); on its daemon thread, the process ends without it.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import kvstudio.labs.beam as beam_module
from kvstudio.labs.beam import TransformersCheck
from kvstudio.ui.app.startup import finish
from kvstudio.ui.run.engine_adapter import ModelChoice, wrap_model
from tests.ui.window_app import open_window, tiny_model, when, when_loaded

entered = threading.Event()


def main(settings_path: str, hold_s: float) -> int:
    def held_check(*_: Any, **__: Any) -> TransformersCheck:
        entered.set()
        threading.Event().wait(hold_s)
        print("check finished", flush=True)
        return TransformersCheck(False, False, (), "not checked: held")

    beam_module.transformers_check = held_check  # type: ignore[assignment]
    model, tokenizer = tiny_model()
    app, window = open_window(settings_path, wrap_model(model, tokenizer, "tiny", ModelChoice()))

    def start_the_lab() -> None:
        panel = window.classroom.labs.panels["beam"]
        panel.set_model(window.controller.model)
        panel.beams.setValue(2)
        panel.new_tokens.setValue(3)
        panel.check_transformers.setChecked(True)
        if not panel.run():
            print("lab did not start", flush=True)
            app.quit()
            return
        when(entered.is_set, close_in_the_check)

    def close_in_the_check() -> None:
        print("closing", flush=True)
        window.close()
        app.quit()

    when_loaded(window, start_the_lab)
    code = app.exec()
    finish(app)  # what startup.main does after the event loop: waits for parked threads
    print("exited", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], float(sys.argv[2])))
