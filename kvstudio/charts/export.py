"""Chart export for slides: files written atomically, one chart or a whole slide pack.

Owns `export_chart` (one chart as PNG, SVG, vector PDF or CSV, the format
from the file name), `export_slide_pack` (every chart in every format plus the
numbers as CSV/JSON), `atomic_write` (a file is either complete or absent,
with an error message a lecturer can act on). The work is done
by ``canvas.py`` (the slide canvas and finding the chart), ``render.py``
(PNG, SVG, PDF bytes) and ``plotted_data.py`` (the numbers as tables and
CSV); the menu and button that put this behind a chart live in
``export_menu.py``. Failures raise `ExportError` (``canvas.py``).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from kvstudio.charts.canvas import DEFAULT_CANVAS, SlideCanvas
from kvstudio.charts.chart_data import ChartLike, ExportError
from kvstudio.charts.plotted_data import (
    EMPTY_CHART_MESSAGE,
    chart_headline,
    chart_is_empty,
    render_csv,
    rows_to_csv,
)
from kvstudio.charts.render import render_pdf, render_png, render_svg
from kvstudio.charts.style import SLIDE_STYLE, PlotStyle
from kvstudio.files.folder_write import atomic_write_bytes, write_files

logger = logging.getLogger(__name__)

ExportFormat = Literal["png", "svg", "pdf", "csv"]


EXPORT_FORMATS: tuple[ExportFormat, ...] = ("png", "svg", "pdf", "csv")


# ---- writing -------------------------------------------------------------------------------
def atomic_write(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to `path` via a temp file in the same folder and `os.replace`.

    The file is complete or absent: on any failure the temp file is removed and
    an `ExportError` explains what to do.
    """
    target = Path(path)
    folder = target.parent
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise ExportError(f"Cannot save {target.name}: {folder} {what}. Choose another folder.")
    try:
        atomic_write_bytes(target, data)
    except OSError as exc:
        raise ExportError(_os_error_message(target, exc)) from exc
    logger.info("Wrote %s (%d bytes)", target, len(data))
    return target


def _os_error_message(target: Path, exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"Cannot save {target.name}: the disk is full. Free some space or choose a folder "
            "on another drive; nothing was written."
        )
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return (
            f"Cannot save {target.name}: {target.parent} is not writable. Choose a folder you "
            "can write to (for example your Documents folder); nothing was written."
        )
    return (
        f"Cannot save {target.name} in {target.parent}: {exc.strerror or exc}. Choose another "
        "folder; nothing was written."
    )


def export_chart(
    chart: ChartLike,
    path: str | os.PathLike[str],
    fmt: ExportFormat | None = None,
    canvas: SlideCanvas = DEFAULT_CANVAS,
    style: PlotStyle | None = SLIDE_STYLE,
    headline: bool = True,
) -> Path:
    """Export one chart on `canvas`; the format comes from `fmt` or the file's suffix.

    An empty chart is refused with a message (it would be a blank slide).
    """
    target = Path(path)
    kind = fmt or target.suffix.lower().lstrip(".")
    if kind not in EXPORT_FORMATS:
        raise ExportError(
            f"Unknown export format {kind!r}; use one of {', '.join(EXPORT_FORMATS)}."
        )
    if chart_is_empty(chart):
        raise ExportError(EMPTY_CHART_MESSAGE)
    head = chart_headline(chart) if headline else None
    if kind == "png":
        data = render_png(chart, canvas, style, head)
    elif kind == "svg":
        data = render_svg(chart, canvas, style, head)
    elif kind == "pdf":
        data = render_pdf([chart], canvas, style, [head])
    else:
        data = render_csv(chart)
    return atomic_write(target, data)


def safe_file_stem(name: str) -> str:
    """A file name from a chart title: letters (any script), digits, - and _ only."""
    stem = re.sub(r"[^\w\-]+", "-", name.strip(), flags=re.UNICODE).strip("-")
    return stem or "chart"


@dataclass(frozen=True)
class SlidePack:
    """What `export_slide_pack` wrote, and the charts it left out because they were empty."""

    written: tuple[Path, ...]
    skipped: tuple[str, ...]


def export_slide_pack(
    charts: Mapping[str, ChartLike],
    folder: str | os.PathLike[str],
    numbers: Mapping[str, Any] | None = None,
    tables: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    canvas: SlideCanvas = DEFAULT_CANVAS,
    style: PlotStyle | None = SLIDE_STYLE,
    headline: bool = True,
) -> SlidePack:
    """Write every chart (PNG, SVG, PDF, CSV), one PDF with all of them, and the numbers.

    Every image is `canvas`-sized and every PDF page the same size. Charts with
    no data are left out and named in `SlidePack.skipped` (and in
    numbers.json). `numbers` goes to numbers.json; each of `tables` to
    <name>.csv. All files are rendered in memory first, then written beside
    the folder and swapped in (``kvstudio.files.folder_write``): if any write
    fails (a full disk), the folder keeps exactly what it held before, an
    earlier pack included; a kill at any moment leaves the earlier pack or
    the new one whole, and the next export removes what it left beside.
    """
    out = Path(folder)
    drawn = {name: chart for name, chart in charts.items() if not chart_is_empty(chart)}
    skipped = tuple(name for name in charts if name not in drawn)
    if not drawn and not numbers and not tables:
        raise ExportError("Nothing to export yet: run the model or a lab first.")
    files: dict[str, bytes] = {}
    heads: list[str | None] = []
    for name, chart in drawn.items():
        stem = safe_file_stem(name)
        head = chart_headline(chart) if headline else None
        heads.append(head)
        files[f"{stem}.png"] = render_png(chart, canvas, style, head)
        files[f"{stem}.svg"] = render_svg(chart, canvas, style, head)
        files[f"{stem}.pdf"] = render_pdf([chart], canvas, style, [head])
        files[f"{stem}.csv"] = render_csv(chart)
    if len(drawn) > 1:
        files["all-charts.pdf"] = render_pdf(list(drawn.values()), canvas, style, heads)
    if numbers or skipped:
        document = dict(numbers or {})
        document["slide_canvas"] = {"size": canvas.key, "width_px": canvas.width,
                                    "height_px": canvas.height}
        document["headlines"] = {name: head for name, head in zip(drawn, heads, strict=True)
                                 if head}
        document["skipped_empty_charts"] = list(skipped)
        files["numbers.json"] = (
            json.dumps(document, ensure_ascii=False, indent=2, default=_json_default) + "\n"
        ).encode("utf-8")
    for name, rows in (tables or {}).items():
        files[f"{safe_file_stem(name)}.csv"] = rows_to_csv(rows)
    try:
        written = write_files(out, files)
    except OSError as exc:
        raise ExportError(_os_error_message(out / "slides", exc)) from exc
    logger.info("Wrote a slide pack of %d files to %s", len(written), out)
    return SlidePack(tuple(written), skipped)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, set | frozenset):
        return sorted(value)
    return str(value)
