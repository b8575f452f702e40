"""What the window scripts share: a tiny model, the window opened as `startup.main` opens
it, and a wait until its model has loaded.

The scripts (`beam_close_app`, `lab_close_app`, `slow_close_app`) run in a child process
so a test can watch the window close and the process end; each keeps only what it
tests (a held check, a slow forward, a blocked step).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication

import kvstudio.ui  # noqa: F401
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import train_fallback_tokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.app.startup import build_window, prepare_application
from kvstudio.ui.main_window import MainWindow

POLL_MS = 20


def tiny_model(max_positions: int = 1024) -> tuple[MiniMindLM, TextTokenizer]:
    """Two layers of 64 on the fallback tokenizer, seed 0: fast enough for any run."""
    tokenizer = train_fallback_tokenizer()
    config = ModelConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=tokenizer.vocab_size,
                         max_position_embeddings=max_positions)
    return MiniMindLM(config).init_weights(0).eval(), tokenizer


def open_window(settings_path: str, handle: LoadedModel) -> tuple[QApplication, MainWindow]:
    """The application prepared and the window built, shown and started as `startup.main`
    does, with `handle` as whatever model it loads."""
    app = QApplication([sys.argv[0]])
    prepare_application(app)
    settings = AppSettings(QSettings(settings_path, QSettings.Format.IniFormat))
    window = build_window(app, settings, lambda choice: handle)
    window.show()
    window.start()
    return app, window


def when(ready: Callable[[], bool], then: Callable[[], None]) -> None:
    """Call `then` on the GUI thread once `ready()` holds (checked every POLL_MS)."""

    def check() -> None:
        if ready():
            then()
        else:
            QTimer.singleShot(POLL_MS, check)

    QTimer.singleShot(0, check)


def when_loaded(window: MainWindow, then: Callable[[], None]) -> None:
    """Call `then` once the window's model has loaded."""
    when(lambda: window.controller.model is not None, then)
