"""What the presenter view shows and what its keys do, as plain records.

Owns `LabChart` (a lab's chart the caller lists for the projector),
`PresenterChart` (one chart of the presenter's list: a live plot or a lab's
chart, with its headline) and `PresenterActions` (what stepping, playing and
starting over mean, passed in by the caller: the presenter does not know).
``presenter.py`` is the view that uses them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

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
