"""Run as a script by test_beam_cancel: close the window during the beam lab's check.

transformers' check is replaced by one that holds for argv[2] seconds, then
prints "check finished". The window closes once the check has started; the
script then ends as `startup.main` does (`finish`) and prints "exited". When
the check ran on the lab's thread, `finish` waited for it ("check finished"
came first); on its daemon thread, the process ends without it.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication

import kvstudio.labs.beam as beam_module
import kvstudio.ui  # noqa: F401
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.files.checkpoints import train_fallback_tokenizer
from kvstudio.labs.beam import TransformersCheck
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.app.startup import build_window, finish, prepare_application
from kvstudio.ui.run.engine_adapter import ModelChoice, wrap_model

entered = threading.Event()


def main(settings_path: str, hold_s: float) -> int:
    def held_check(*_: Any, **__: Any) -> TransformersCheck:
        entered.set()
        threading.Event().wait(hold_s)
        print("check finished", flush=True)
        return TransformersCheck(False, False, (), "not checked: held")

    beam_module.transformers_check = held_check  # type: ignore[assignment]
    tokenizer = train_fallback_tokenizer()
    config = ModelConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=tokenizer.vocab_size,
                         max_position_embeddings=1024)
    model = MiniMindLM(config).init_weights(0).eval()
    handle = wrap_model(model, tokenizer, "tiny", ModelChoice())
    app = QApplication([sys.argv[0]])
    prepare_application(app)
    settings = AppSettings(QSettings(settings_path, QSettings.Format.IniFormat))
    window = build_window(app, settings, lambda choice: handle)
    window.show()
    window.start()

    def when_loaded() -> None:
        if window.controller.model is None:
            QTimer.singleShot(20, when_loaded)
            return
        panel = window.classroom.labs.beam
        panel.set_model(window.controller.model)
        panel.beams.setValue(2)
        panel.new_tokens.setValue(3)
        panel.check_transformers.setChecked(True)
        if not panel.run():
            print("lab did not start", flush=True)
            app.quit()
            return
        close_in_the_check()

    def close_in_the_check() -> None:
        if not entered.is_set():
            QTimer.singleShot(20, close_in_the_check)
            return
        print("closing", flush=True)
        window.close()
        app.quit()

    QTimer.singleShot(0, when_loaded)
    code = app.exec()
    finish(app)  # what startup.main does after the event loop: waits for parked threads
    print("exited", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], float(sys.argv[2])))
