"""Run as a script by test_lab_close: close the window while the speculative lab runs.

The lab runs on the tiny model with a forward hook that counts the target's
forwards and rests 2 ms in each, so a run lasts a while. The window closes
once the first progress of a speculative run reaches the GUI thread (with
Cancel checked inside runs: after its first round; before, only after the
whole run). The script then ends as `startup.main` does (`finish`). It prints
"closing", how many forwards ran after the close was asked for, and "exited";
the test reads how far it got and the time from "closing" to the process end.
"""

from __future__ import annotations

import os
import sys
import threading
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication

import kvstudio.ui  # noqa: F401
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.files.checkpoints import train_fallback_tokenizer
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.app.startup import build_window, finish, prepare_application
from kvstudio.ui.run.engine_adapter import ModelChoice, wrap_model

NEW_TOKENS = 200
closing = threading.Event()
after_close = [0]


def main(settings_path: str) -> int:
    tokenizer = train_fallback_tokenizer()
    config = ModelConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=tokenizer.vocab_size,
                         max_position_embeddings=1024)
    model = MiniMindLM(config).init_weights(0).eval()

    def slow_forward(*_: object) -> None:
        if closing.is_set():
            after_close[0] += 1
        time.sleep(0.002)

    model.register_forward_pre_hook(slow_forward)
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
        panel = window.classroom.labs.speculative
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
        print(f"closing {getattr(item, 'stage', '?')}", flush=True)
        window.close()
        app.quit()

    QTimer.singleShot(0, when_loaded)
    code = app.exec()
    finish(app)  # what startup.main does after the event loop: waits for parked threads
    print(f"forwards after close {after_close[0]}", flush=True)
    print("exited", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
