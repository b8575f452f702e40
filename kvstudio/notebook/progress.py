"""A lab's progress while it runs: an ipywidgets bar in Jupyter, a text line elsewhere.

Owns `ProgressView` (`update(done, total, stage)` and `close(message)`) and
`progress_view`, which picks the widget in a kernel that has ipywidgets and the
text line (rewritten in place with a carriage return, at most a few times a
second) in a terminal or a kernel without them.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol, TextIO

from kvstudio.notebook.environment import in_jupyter

TEXT_INTERVAL_S = 0.5  # a terminal line is rewritten at most this often
BAR_WIDTH = 30


class ProgressView(Protocol):
    def update(self, done: int, total: int, stage: str) -> None: ...

    def close(self, message: str) -> None: ...


class TextProgress:
    """``compare: cached (round 2/3)  [#####.....]  120/390`` on one line, then the outcome."""

    def __init__(self, title: str, stream: TextIO | None = None) -> None:
        self.title = title
        self.stream = stream or sys.stdout
        self._shown = -TEXT_INTERVAL_S  # the first update always shows
        self._last = ""

    def update(self, done: int, total: int, stage: str) -> None:
        now = time.monotonic()
        if now - self._shown < TEXT_INTERVAL_S and done < total:
            return
        self._shown = now
        filled = int(BAR_WIDTH * done / total) if total > 0 else 0
        line = (f"{self.title}: {stage}  [{'#' * filled}{'.' * (BAR_WIDTH - filled)}]  "
                f"{done:,}/{total:,}")
        pad = " " * max(0, len(self._last) - len(line))
        self.stream.write("\r" + line + pad)
        self.stream.flush()
        self._last = line

    def close(self, message: str) -> None:
        pad = " " * max(0, len(self._last) - len(message) - len(self.title) - 2)
        self.stream.write(f"\r{self.title}: {message}{pad}\n")
        self.stream.flush()


class WidgetProgress:
    """An ipywidgets bar with the stage beside it, displayed in the running cell."""

    def __init__(self, title: str) -> None:
        import ipywidgets
        from IPython.display import display

        self.bar = ipywidgets.IntProgress(value=0, min=0, max=1, description=title,
                                          style={"description_width": "initial"})
        self.label = ipywidgets.Label("")
        self.box = ipywidgets.HBox([self.bar, self.label])
        self.title = title
        display(self.box)

    def update(self, done: int, total: int, stage: str) -> None:
        self.bar.max = max(1, total)
        self.bar.value = min(done, self.bar.max)
        self.label.value = f"{stage} · {done:,}/{total:,}"

    def close(self, message: str) -> None:
        self.bar.value = self.bar.max
        self.bar.bar_style = "success" if message == "done" else "danger"
        self.label.value = message


def progress_view(title: str, stream: Any = None) -> ProgressView:
    """The widget bar in Jupyter (with ipywidgets), else the text line."""
    if stream is None and in_jupyter():
        try:
            return WidgetProgress(title)
        except ImportError:  # a kernel without the notebook extra: the text line still works
            pass
    return TextProgress(title, stream)
