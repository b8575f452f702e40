"""Chart export: PNG, SVG, PDF and CSV of the live plots, the slide pack, and failures."""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QFont, QImage, QRawFont
from PySide6.QtWidgets import QApplication

from kvstudio.core.records import MODES, SamplingSettings
from kvstudio.ui.app.fonts import register_bundled_font
from kvstudio.ui.plots import CacheBytesPlot, StepTimePlot, TokensFedPlot
from kvstudio.ui.run.engine_adapter import (
    ModelHandle,
    RunRequest,
    RunSettings,
    make_stepper,
    run_info,
)
from kvstudio.ui.run.store import RunStore
from kvstudio.ui.slides import export
from kvstudio.ui.slides.export_menu import ChartExporter, ExportButton, attach_export

N_NEW = 8


@pytest.fixture(scope="module")
def store(tiny_handle: ModelHandle) -> RunStore:
    """Both modes of one greedy run, as the window's store would hold them."""
    s = RunStore()
    for run_id, mode in enumerate(MODES, start=1):
        settings = RunSettings(mode, SamplingSettings.greedy_settings(), N_NEW)
        request = RunRequest("KV 캐시는 무엇인가요?", False, settings)
        ids = tiny_handle.tokenizer.encode(request.prompt)
        s.begin(run_info(run_id, tiny_handle, request, ids))
        for record in make_stepper(tiny_handle, ids, settings):
            s.add(run_id, record)
    return s


@pytest.fixture()
def korean_font(qapp: QApplication) -> str:
    family = register_bundled_font()
    assert family is not None
    qapp.setFont(QFont(family, 10))
    return family


@pytest.fixture()
def tokens_plot(qtbot, store: RunStore, korean_font: str) -> TokensFedPlot:  # type: ignore[no-untyped-def]
    plot = TokensFedPlot()
    qtbot.addWidget(plot)
    plot.resize(640, 400)
    plot.show()
    plot.refresh(store)
    return plot  # exported straight after setData: no event processing in between


def _dark_pixels(image: QImage, x0: float, x1: float) -> int:
    """Pixels darker than mid-grey in a vertical strip (fractions of the width)."""
    rgb = image.convertToFormat(QImage.Format.Format_RGB32)  # keep: the array views its memory
    arr = pg.functions.ndarray_from_qimage(rgb)
    strip = arr[:, int(x0 * image.width()) : int(x1 * image.width()), :3]
    return int((strip.max(axis=2) < 110).sum())


def test_png_is_wide_crisp_and_has_axis_labels(tokens_plot: TokensFedPlot) -> None:
    left_axis = tokens_plot.plot_item.getAxis("left")
    pen_before = QColor(left_axis.pen().color())
    data = export.render_png(tokens_plot, width=1920)
    image = QImage.fromData(data)
    assert not image.isNull() and image.width() == 1920
    assert abs(image.height() / image.width() - 400 / 640) < 0.02
    colours = {image.pixel(x, y) for x in range(0, 1920, 37) for y in range(0, image.height(), 23)}
    assert len(colours) > 10  # not blank
    assert image.pixelColor(3, 3) == QColor("white")  # slide background
    assert _dark_pixels(image, 0.0, 0.06) > 200  # y tick labels and axis title are drawn
    # the screen theme is back afterwards
    assert left_axis.pen().color() == pen_before


def test_png_width_is_a_choice(tokens_plot: TokensFedPlot) -> None:
    image = export.render_image(tokens_plot, width=800)
    assert image.width() == 800
    with pytest.raises(export.ExportError):
        export.render_image(tokens_plot, width=4)


def test_korean_glyphs_render(qtbot, korean_font: str) -> None:  # type: ignore[no-untyped-def]
    assert QRawFont.fromFont(QFont(korean_font)).supportsCharacter(ord("토"))

    def title_strip(title: str) -> np.ndarray:
        widget = pg.PlotWidget(background="w", title=title)
        qtbot.addWidget(widget)
        widget.resize(600, 300)
        widget.show()
        image = export.render_image(widget, width=1200)
        rgb = image.convertToFormat(QImage.Format.Format_RGB32)
        arr = pg.functions.ndarray_from_qimage(rgb)
        return arr[: image.height() // 8, :, :3].copy()

    korean = title_strip("토큰 캐시")
    boxes = title_strip("\ue000\ue001 \ue002\ue003")  # private-use: drawn as boxes
    assert (korean.max(axis=2) < 128).sum() > 100  # something dark was drawn
    assert (korean != boxes).any()


def test_svg_parses_and_holds_the_curves(tokens_plot: TokensFedPlot) -> None:
    svg = export.render_svg(tokens_plot)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    strokes = {el.get("stroke") for el in root.iter() if el.get("stroke")}
    assert "#1f77b4" in strokes  # the cached series colour (dark enough to keep)
    polylines = [el for el in root.iter(f"{ns}polyline")]
    assert len(polylines) >= N_NEW - 1  # the cumulative lines (in the right-axis view)
    texts = "".join(el.text or "" for el in root.iter(f"{ns}text"))
    assert "Tokens fed" in texts
    assert "Malgun Gothic" in svg.decode()  # Korean fallbacks for viewers without Nanum


def test_pdf_has_one_page_per_chart(qtbot, tokens_plot: TokensFedPlot, store: RunStore) -> None:  # type: ignore[no-untyped-def]
    others = [StepTimePlot(), CacheBytesPlot()]
    for plot in others:
        qtbot.addWidget(plot)
        plot.resize(640, 400)
        plot.show()
        plot.refresh(store)
    pdf = export.render_pdf([tokens_plot, *others])
    assert pdf.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page(?!s)", pdf)) == 3
    single = export.render_pdf([tokens_plot])
    assert len(re.findall(rb"/Type\s*/Page(?!s)", single)) == 1


def test_csv_numbers_equal_the_records(tokens_plot: TokensFedPlot, store: RunStore) -> None:
    rows = list(csv.DictReader(io.StringIO(export.render_csv(tokens_plot, "tokens").decode())))
    for mode in MODES:
        trace = store.trace(mode)
        assert trace is not None
        name = "Cached" if mode == "cached" else "Recompute"
        bars = [r for r in rows if r["series"] == f"{name}: per step"]
        assert [float(r["y"]) for r in bars] == [float(r.tokens_fed) for r in trace.records]
        line = [r for r in rows if r["series"] == f"{name}: cumulative"]
        assert [float(r["y"]) for r in line] == [float(v) for v in trace.tokens_fed_cumulative]
    assert {r["chart"] for r in rows} == {"tokens"}


def test_slide_pack_contains_every_chart(
    qtbot, tokens_plot: TokensFedPlot, store: RunStore, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    time_plot = StepTimePlot()
    qtbot.addWidget(time_plot)
    time_plot.resize(640, 400)
    time_plot.show()
    time_plot.refresh(store)
    charts = {"tokens fed": tokens_plot, "step time": time_plot}
    numbers = {"ratio": 3.5, "steps": np.int64(8)}
    tables = {"lab table": [{"mode": "cached", "ms": 1.25}, {"mode": "recompute", "ms": 4.5}]}
    written = export.export_slide_pack(charts, tmp_path / "pack", numbers, tables, width=960)
    names = sorted(p.name for p in written)
    for stem in ("tokens-fed", "step-time"):
        for ext in ("png", "svg", "pdf", "csv"):
            assert f"{stem}.{ext}" in names
    assert "all-charts.pdf" in names and "numbers.json" in names and "lab-table.csv" in names
    assert sorted(p.name for p in (tmp_path / "pack").iterdir()) == names  # nothing else
    assert json.loads((tmp_path / "pack" / "numbers.json").read_text())["steps"] == 8
    all_pdf = (tmp_path / "pack" / "all-charts.pdf").read_bytes()
    assert len(re.findall(rb"/Type\s*/Page(?!s)", all_pdf)) == 2


def test_unwritable_folder_gives_a_message_and_no_file(
    tokens_plot: TokensFedPlot, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    with pytest.raises(export.ExportError, match="Choose another folder"):
        export.export_chart(tokens_plot, blocker / "chart.png")
    with pytest.raises(export.ExportError, match="does not exist"):
        export.export_chart(tokens_plot, tmp_path / "missing" / "chart.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-folder"]


def test_full_disk_leaves_nothing_partial(
    tokens_plot: TokensFedPlot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {"n": 0}
    real_fsync = os.fsync

    def fsync_fills_up(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] >= 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_fills_up)
    with pytest.raises(export.ExportError, match="disk is full"):
        export.export_slide_pack({"tokens": tokens_plot}, tmp_path)
    assert list(tmp_path.iterdir()) == []  # the two files written first were removed too


def test_export_menu_and_button(qtbot, tokens_plot: TokensFedPlot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "from-menu"
    exporter = ChartExporter(save_chooser=lambda parent, caption, suggested, f: str(target))
    button = attach_export(tokens_plot, exporter)
    assert isinstance(button, ExportButton) and button.parent() is tokens_plot
    assert button.x() > tokens_plot.width() // 2  # in the top-right corner
    menu = button.menu()
    assert menu in [a.menu() for a in tokens_plot.plot_item.getViewBox().menu.actions() if a.menu()]
    with qtbot.waitSignal(exporter.exported) as signal:
        menu.actions()[0].trigger()  # PNG
    png = target.with_suffix(".png")
    assert Path(signal.args[0]) == png and png.exists()
    exporter.save_chooser = lambda *a: str(tmp_path / "nope" / "x.svg")
    with qtbot.waitSignal(exporter.failed) as failure:
        menu.actions()[1].trigger()  # SVG into a folder that does not exist
    assert "does not exist" in failure.args[0]
    exporter.save_chooser = lambda *a: ""  # cancelled: nothing happens
    assert exporter.export_one(tokens_plot, "x", "csv") is None
