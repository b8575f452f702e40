"""What the presenter view shows and what its keys do, as plain records.

Owns `LabChart` (a lab's chart the caller lists for the projector),
`key_bindings` (the clicker's and keyboard's keys and what each does),
`PresenterChart` (one chart of the presenter's list: a live plot or a lab's
chart, with its headline) and `PresenterActions` (what stepping, playing and
starting over mean, passed in by the caller: the presenter does not know).
``presenter.py`` is the view that uses them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import Qt

from kvstudio.charts.chart_data import ChartLike
from kvstudio.ui.plots import LivePlot
from kvstudio.ui.slides.headlines import Headline

Action = Callable[[], None]


@dataclass(frozen=True)
class PresenterActions:
    """What the clicker's keys do to the run."""

    step: Action
    toggle_play: Action
    reset: Action
    back: Action = field(default=lambda: None)  # one step back in history (← in the window)


@dataclass(frozen=True)
class LabChart:
    """A lab's chart the presenter can show: the lab's own widget, never moved out of it."""

    key: str  # its slide-pack name, e.g. "lab top-k-top-p"
    title: Callable[[], str]
    chart: ChartLike
    headline: Callable[[], str]  # the lab's headline: first line big, the rest below
    version: Callable[[], object]  # changes when the lab has a new result (redraw then)


@dataclass
class PresenterChart:
    key: str  # the live plot's name in MainWindow.plots(), or a lab chart's pack name
    title: Callable[[], str]
    plot: LivePlot | None  # None for a lab's chart (drawn as an image of it)
    headline: Callable[[], Headline]
    with_chips: bool  # the run's tokens above the chart (not for repeated sampling)
    lab: LabChart | None = None


def key_bindings(actions: PresenterActions, next_chart: Action, previous_chart: Action,
                 leave: Action, chart_number: Callable[[int], None]
                 ) -> list[tuple[Qt.Key | str, Action]]:
    """The presenter's keys: a clicker's Page Down / Page Up step the run, ↓ / ↑ change
    the chart, 1–9 pick one, P or B play, Home starts over, Esc / F5 / Ctrl+L leave."""
    bindings: list[tuple[Qt.Key | str, Action]] = [
        (Qt.Key.Key_PageDown, actions.step),
        (Qt.Key.Key_Right, actions.step),
        (Qt.Key.Key_Space, actions.step),
        (Qt.Key.Key_N, actions.step),
        (Qt.Key.Key_PageUp, actions.back),
        (Qt.Key.Key_Left, actions.back),
        (Qt.Key.Key_Down, next_chart),
        (Qt.Key.Key_Up, previous_chart),
        (Qt.Key.Key_P, actions.toggle_play),
        (Qt.Key.Key_B, actions.toggle_play),
        (Qt.Key.Key_Home, actions.reset),
        (Qt.Key.Key_Escape, leave),
        (Qt.Key.Key_F5, leave),
        ("Ctrl+L", leave),
    ]
    bindings += [(str(n), lambda n=n: chart_number(n)) for n in range(1, 10)]  # type: ignore[misc]
    return bindings
