"""Start-up: the QApplication, the bundled font, torch threads, language, settings, the window.

Owns `main()` (what `python main.py` runs) and `build_window()` (what tests and
scripts use to get a fully wired window with their own model loader and
settings file). Nothing happens at import time.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from kvstudio.charts.fonts import app_font, register_bundled_font
from kvstudio.charts.i18n import LanguageSwitcher, language_hint, locale_names_no_language
from kvstudio.files.resources import RANDOM_MODEL_NAME
from kvstudio.labs.bounds import thread_count
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.app.shutdown import tear_down
from kvstudio.ui.app.typing_guard import TypingGuard
from kvstudio.ui.classroom import install as install_classroom
from kvstudio.ui.main_window import MainWindow
from kvstudio.ui.run.engine_adapter import (
    ModelChoice,
    ModelLoader,
    load_model,
    with_torch_threads,
)
from kvstudio.ui.run.engine_worker import EngineHost
from kvstudio.ui.run.heap import install_gui_thread_collector
from kvstudio.ui.run.threads import wait_for_parked

log = logging.getLogger(__name__)


def prepare_application(app: QApplication) -> str | None:
    """Register NanumGothic and make it the application font; return its family.

    Also moves Python's cyclic garbage collection onto the GUI thread (see `run.heap`).
    """
    install_gui_thread_collector(app)
    family = register_bundled_font()
    app.setFont(app_font(family))
    # The model thread holds the GIL between torch calls; a shorter switch interval lets
    # the UI thread in sooner when it has a frame to paint (default 5 ms).
    sys.setswitchinterval(0.001)
    # Antialiased lines cost several times more to paint; live plots stay crisp without.
    pg.setConfigOptions(antialias=False)
    return family


def build_window(app: QApplication, settings: AppSettings, loader: ModelLoader,
                 threads: int = 1, language: str | None = None) -> MainWindow:
    """A wired window (not shown, model not yet loaded: call `.start()`)."""
    languages = LanguageSwitcher(app)
    if language is not None:
        settings.set_language(language)  # --lang is remembered, like the Language menu's choice
    languages.apply(settings.language())
    # torch is imported by the first load, on the worker thread, after the window is shown.
    host = EngineHost(with_torch_threads(loader, threads))
    window = MainWindow(settings, host, languages, threads)
    # Labs, export, the presenter view and saved runs plug in through the window's extension
    # points; the window itself never imports them (no import circle).
    window.classroom = install_classroom(window)
    # Run keys work wherever the focus is, except in a text field or table (they keep them).
    window.typing_guard = TypingGuard(window)
    window.typing_guard.guard(window)
    return window


def _threads(text: str) -> int:
    """``--threads``: the command line's check (1 … the CPU cores), refused as its error line."""
    try:
        return thread_count(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="kvstudio-window", description=__doc__)
    parser.add_argument("--lang", choices=("system", "en", "ko"), default=None,
                        help="UI language (default: the last one chosen, else the system's)")
    parser.add_argument("--threads", type=_threads, default=1,
                        help="torch threads for the model (default 1: fastest for tiny models "
                        "on a busy machine)")
    parser.add_argument("--settings", default=None,
                        help="an INI file to keep settings in (default: the user's settings)")
    parser.add_argument("--model", default=None,
                        help="open this model folder or MiniMind .pth (remembered, as the "
                        "model menu does); 'ko-chat' / 'ko-base' for the embedded models, "
                        "'random' for random weights")
    parser.add_argument("--tokenizer", default="",
                        help="tokenizer folder for a .pth (default: the .pth's own folder)")
    return parser.parse_args(argv)


def model_choice_from_args(model: str, tokenizer: str = "") -> ModelChoice:
    """`--model` as the model menu's choice; a bad path is reported by the load, in the window."""
    path = Path(model).expanduser()
    if model in ("ko-chat", "ko-base") and not path.exists():
        return ModelChoice("embedded-chat" if model == "ko-chat" else "embedded-base")
    if model == RANDOM_MODEL_NAME and not path.exists():
        return ModelChoice("random")
    if path.suffix.lower() == ".pth":
        folder = Path(tokenizer).expanduser() if tokenizer else path.parent
        return ModelChoice("pth", str(path.resolve()), str(folder.resolve()))
    return ModelChoice("folder", str(path.resolve()))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    app.setOrganizationName("KVStudio")
    app.setApplicationName("KV Studio")
    prepare_application(app)
    store = (QSettings(args.settings, QSettings.Format.IniFormat) if args.settings
             else QSettings())
    settings = AppSettings(store)
    choice = model_choice_from_args(args.model, args.tokenizer) if args.model else None
    window = build_window(app, settings, load_model, args.threads, args.lang)
    window.show()
    if settings.language() == "system" and locale_names_no_language():
        window.show_hint(language_hint())  # a Korean class on a bare machine: how to switch
    window.start(choice)  # remembered once it loads (the model menu does the same)
    code = int(app.exec())
    finish(app)
    return code


def finish(app: QApplication) -> None:
    """After the event loop: wait for a step still running, then delete every Qt object.

    A step still running when the window closed ends first (its thread was
    parked); then `shutdown.tear_down` deletes the windows and their charts while
    Python is whole, so PySide's exit hook finds nothing left to delete.
    """
    wait_for_parked()
    tear_down(app)
