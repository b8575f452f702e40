"""Exporting a notebook's charts exactly as the window does: the same slide canvas and files.

Owns `export` (one chart as PNG, SVG, PDF or CSV, through the window's own writer,
`kvstudio.charts.export.export_chart`) and `export_pack` (several labs' charts,
numbers and tables as the window's slide pack, `export_slide_pack` over
`slide_pack_of`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from kvstudio.charts.canvas import canvas_named
from kvstudio.charts.export import EXPORT_FORMATS, ExportFormat, SlidePack
from kvstudio.notebook.environment import application


@runtime_checkable
class ShownRun(Protocol):
    """What exporting needs of a lab run (`kvstudio.notebook.runner.LabRun`): its main chart
    and the view that drew it. A protocol, so this module and the runner, which calls it,
    do not import each other."""

    @property
    def chart(self) -> Any: ...

    @property
    def view(self) -> Any: ...


def _canvas(size: str) -> Any:
    from kvstudio.charts.chart_data import ExportError

    try:
        return canvas_named(size)
    except ExportError as exc:
        raise ValueError(str(exc)) from None


def export(chart: Any, path: str | Path, *, size: str = "16:9", headline: bool = True) -> Path:
    """Write `chart` (a `LabRun`, or one of its `charts`) to `path` as the window exports it.

    The format is the file's suffix: .png, .svg, .pdf or .csv. `size`: the slide
    canvas, ``"16:9"`` (1920×1080, the default), ``"16:9 small"`` or ``"4:3"``;
    `headline`: the chart's measured numbers above it, as on the window's slides.
    """
    from kvstudio.charts.chart_data import ExportError
    from kvstudio.charts.export import export_chart

    application()
    target = Path(path).expanduser()
    fmt = target.suffix.lower().lstrip(".")
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"Give the file a suffix that says the format: "
                         f"{', '.join('.' + f for f in EXPORT_FORMATS)} (got {target.name!r}).")
    widget = chart.chart if isinstance(chart, ShownRun) else chart
    kind: ExportFormat = fmt  # type: ignore[assignment]  # checked against EXPORT_FORMATS
    try:
        return export_chart(widget, target, kind, canvas=_canvas(size), headline=headline)
    except ExportError as exc:
        raise ValueError(str(exc)) from None


def export_pack(runs: Sequence[ShownRun], folder: str | Path, *, size: str = "16:9",
                headline: bool = True) -> SlidePack:
    """Every chart of `runs` in every format, one PDF of all, numbers.json and the tables,
    into `folder` (made if missing), as the window's *Export slide pack* writes them."""
    from kvstudio.charts.chart_data import ExportError
    from kvstudio.charts.export import export_slide_pack
    from kvstudio.charts.labs.base import slide_pack_of

    application()
    charts, numbers, tables = slide_pack_of([run.view for run in runs])
    try:
        return export_slide_pack(charts, Path(folder).expanduser(), numbers, tables,
                                 canvas=_canvas(size), headline=headline)
    except ExportError as exc:
        raise ValueError(str(exc)) from None
