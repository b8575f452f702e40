"""Where a notebook runs: Qt offscreen when there is no display, one QApplication, threads.

Owns `prepare_qt_environment` (sets ``QT_QPA_PLATFORM=offscreen`` before Qt is
imported when there is no display or the code runs in a Jupyter kernel, and
makes pyqtgraph pick PySide6), `in_jupyter` (an IPython kernel with a front end
that shows widgets), `application` (the one QApplication, with the bundled
Korean font and the chosen language) and `language` / `threads` (the
window's language switch and the CLI's torch thread count, for a notebook).

Nothing here starts an event loop: a notebook draws by rendering the chart's
scene on request, as the window's exports do.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from typing import Any

_state: dict[str, Any] = {}


def in_jupyter() -> bool:
    """Whether this code runs in an IPython kernel (Jupyter, Colab, VS Code), not a terminal."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def prepare_qt_environment() -> str:
    """Choose Qt's platform before Qt loads; returns the one chosen.

    A kernel never shows a Qt window (the chart is sent to the browser as
    frames), and a terminal without ``DISPLAY`` / ``WAYLAND_DISPLAY`` cannot
    open one: both get ``offscreen``. A platform the user set is kept.
    """
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")  # pyqtgraph picks PyQt6 first
    no_display = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if "QT_QPA_PLATFORM" not in os.environ and (no_display or in_jupyter()):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    return os.environ.get("QT_QPA_PLATFORM", "")


def application() -> Any:
    """The QApplication (made once, with NanumGothic registered and the default language)."""
    if "app" in _state:
        return _state["app"]
    prepare_qt_environment()
    from PySide6.QtWidgets import QApplication

    from kvstudio.charts.fonts import app_font, register_bundled_font
    from kvstudio.charts.i18n import LanguageSwitcher

    app = QApplication.instance() or QApplication(["kvstudio-notebook"])
    family = register_bundled_font()
    app.setFont(app_font(family))  # type: ignore[attr-defined]  # a QApplication here
    _state["app"] = app
    _state["languages"] = LanguageSwitcher(app)  # type: ignore[arg-type]
    _state["languages"].apply(_state.get("language", "en"))
    # Free pyqtgraph's cycles while Python still runs: freed by PySide's own exit hook
    # they call back into a Python that is shutting down (kvstudio.ui.run.heap).
    atexit.register(gc.collect)
    threads(_state.get("threads", 1))
    return app


def language(code: str = "ko") -> str:
    """Chart titles, labels and headlines in ``"ko"`` or ``"en"`` from now on (new labs)."""
    if code not in ("ko", "en"):
        raise ValueError(f"language must be 'ko' or 'en', got {code!r:.60}.")
    _state["language"] = code
    if "languages" in _state:
        return str(_state["languages"].apply(code))
    return code


def threads(count: int = 1) -> int:
    """Torch threads for the labs (default 1, as the ``kvstudio`` command: see docs/cli.md).

    The command line's bound (`limits.check_threads`: 1 … the CPU cores); anything else
    is a ValueError, never a kernel killed by an absurd thread pool.
    """
    from kvstudio.engine import limits

    if isinstance(count, bool) or not isinstance(count, int):
        raise ValueError(f"threads must be a whole number, got {count!r:.60}.")
    try:
        limits.check_threads(count)
    except ValueError as exc:
        raise ValueError(str(exc).replace("--threads", "threads", 1)) from None

    _state["threads"] = count
    return limits.set_torch_threads(count)
