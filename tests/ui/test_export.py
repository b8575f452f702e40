"""Chart export: PNG, SVG, PDF and CSV of the live plots, the slide pack, and failures."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QFont, QImage, QRawFont
from PySide6.QtWidgets import QApplication

from kvstudio.charts import canvas as slide_canvas
from kvstudio.charts import export, plotted_data, render
from kvstudio.charts.chart_data import read_csv_tables
from kvstudio.charts.fonts import register_bundled_font
from kvstudio.engine.records import MODES, SamplingSettings
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.plots import CacheBytesPlot, StepTimePlot, TokensFedPlot
from kvstudio.ui.run.engine_adapter import (
    RunRequest,
    RunSettings,
    make_stepper,
    run_info,
)
from kvstudio.ui.run.store import RunStore
from kvstudio.ui.slides.export_menu import ChartExporter, ExportButton, attach_export
from tests.ui.waits import HANG_GUARD_MS

N_NEW = 8


@pytest.fixture(scope="module")
def store(tiny_handle: LoadedModel) -> RunStore:
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


def test_png_is_the_canvas_crisp_and_has_axis_labels(tokens_plot: TokensFedPlot) -> None:
    left_axis = tokens_plot.plot_item.getAxis("left")
    pen_before = QColor(left_axis.pen().color())
    data = render.render_png(tokens_plot)
    image = QImage.fromData(data)
    assert (image.width(), image.height()) == (1920, 1080)
    colours = {image.pixel(x, y) for x in range(0, 1920, 37) for y in range(0, image.height(), 23)}
    assert len(colours) > 10  # not blank
    assert image.pixelColor(3, 3) == QColor("white")  # slide background
    assert _dark_pixels(image, 0.0, 0.06) > 200  # y tick labels and axis title are drawn
    # the screen theme and the on-screen size are back afterwards
    assert left_axis.pen().color() == pen_before
    assert tokens_plot.plot_item.sceneBoundingRect().width() == tokens_plot.width()


def _pdf_page_sizes(pdf: bytes) -> list[tuple[float, float]]:
    boxes = re.findall(rb"/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*\]", pdf)
    return [(float(x1) - float(x0), float(y1) - float(y0)) for x0, y0, x1, y1 in boxes]


@pytest.mark.parametrize("window", [(640, 400), (420, 760), (1300, 260)])
def test_every_export_is_the_chosen_canvas_whatever_the_window(
    qtbot, store: RunStore, korean_font: str, window: tuple[int, int]
) -> None:  # type: ignore[no-untyped-def]
    plot = CacheBytesPlot()
    qtbot.addWidget(plot)
    plot.resize(*window)
    plot.show()
    plot.refresh(store)
    other = StepTimePlot()
    qtbot.addWidget(other)
    other.resize(window[1], window[0])  # another shape again
    other.show()
    other.refresh(store)
    on_screen = plot.plot_item.sceneBoundingRect()
    for canvas in slide_canvas.CANVASES:
        image = QImage.fromData(render.render_png(plot, canvas, headline=plot.headline()))
        assert (image.width(), image.height()) == (canvas.width, canvas.height)
        svg = ET.fromstring(render.render_svg(plot, canvas))
        assert (svg.get("width"), svg.get("height")) == (f"{canvas.width}px", f"{canvas.height}px")
        pdf = render.render_pdf([plot, other], canvas, headlines=[plot.headline(), None])
        sizes = _pdf_page_sizes(pdf)
        assert sizes and all(
            abs(w - canvas.width * 0.75) < 0.5 and abs(h - canvas.height * 0.75) < 0.5
            for w, h in sizes
        ), sizes
    assert plot.plot_item.sceneBoundingRect() == on_screen  # the screen's layout is back


def test_korean_glyphs_render(qtbot, korean_font: str) -> None:  # type: ignore[no-untyped-def]
    assert QRawFont.fromFont(QFont(korean_font)).supportsCharacter(ord("토"))

    def title_strip(title: str) -> np.ndarray:
        widget = pg.PlotWidget(background="w", title=title)
        widget.getPlotItem().plot([0, 1], [0, 1])
        qtbot.addWidget(widget)
        widget.resize(600, 300)
        widget.show()
        image = render.render_image(widget, slide_canvas.canvas_named("16:9 small"))
        rgb = image.convertToFormat(QImage.Format.Format_RGB32)
        arr = pg.functions.ndarray_from_qimage(rgb)
        return arr[: image.height() // 8, :, :3].copy()

    korean = title_strip("토큰 캐시")
    boxes = title_strip("\ue000\ue001 \ue002\ue003")  # private-use: drawn as boxes
    assert (korean.max(axis=2) < 128).sum() > 100  # something dark was drawn
    assert (korean != boxes).any()


def test_svg_text_is_outlined_and_bars_keep_their_outlines(tokens_plot: TokensFedPlot) -> None:
    svg = render.render_svg(tokens_plot, headline="캐시 246 · 재계산 13,728")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert not list(root.iter(f"{ns}text"))  # no text a viewer needs a font for
    labels = " ".join(el.get("aria-label", "") for el in root.iter(f"{ns}path"))
    assert "Tokens fed" in labels  # still findable
    headline = root.find(f"{ns}g[@id='headline']")
    assert headline is not None and len(list(headline)) == 1
    strokes = {el.get("stroke") for el in root.iter() if el.get("stroke")}
    assert "#1f77b4" in strokes  # the cached series colour (dark enough to keep)
    polylines = [el for el in root.iter(f"{ns}polyline")]
    assert len(polylines) >= N_NEW - 1  # the cumulative lines (in the right-axis view)
    parents = {child: group for group in root.iter(f"{ns}g") for child in group}
    bars = [el for el in root.iter(f"{ns}rect") if el in parents and el.get("width") != "100%"
            and parents[el].get("stroke") not in (None, "none")]
    assert len(bars) >= 2 * N_NEW  # both modes' bars, outlined
    for rect in bars:  # in page units: outlines keep their width in any viewer
        matrix = re.search(r"matrix\(([^)]*)\)", parents[rect].get("transform") or "")
        if matrix is not None:  # a translation at most (legend swatches)
            a, _, _, d, _, _ = (float(v) for v in matrix.group(1).split(","))
            assert abs(a) == 1 and abs(d) == 1
        assert float(rect.get("width") or 0) > 1


def _ink(image: QImage) -> np.ndarray:
    rgb = image.convertToFormat(QImage.Format.Format_RGB32)
    return pg.functions.ndarray_from_qimage(rgb)[:, :, :3].max(axis=2) < 128


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="needs rsvg-convert (librsvg)")
def test_hangul_svg_renders_without_a_korean_font(
    qtbot, store: RunStore, korean_font: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """librsvg under a font config with only DejaVu (no Hangul): the SVG's ink matches the PNG's."""
    dejavu = [d for d in ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu")
              if Path(d).is_dir()]
    if not dejavu:
        pytest.skip("no DejaVu fonts to build a Korean-less font config from")
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
        f"<dir>{dejavu[0]}</dir><cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>"
    )
    env = {**os.environ, "FONTCONFIG_FILE": str(conf)}
    if shutil.which("fc-list"):
        korean = subprocess.run(["fc-list", ":lang=ko"], env=env, capture_output=True, text=True)
        assert korean.stdout.strip() == ""  # the renderer really has no Korean font
    plot = TokensFedPlot()
    qtbot.addWidget(plot)
    plot.resize(700, 420)
    plot.show()
    plot.refresh(store)
    plot.plot_item.setTitle("모델에 입력된 토큰 수")
    plot.plot_item.setLabel("left", "토큰 (막대)")
    canvas = slide_canvas.canvas_named("16:9 small")
    head = "캐시: 246 토큰 · 재계산: 13,728 토큰"
    (tmp_path / "chart.svg").write_bytes(render.render_svg(plot, canvas, headline=head))
    subprocess.run(["rsvg-convert", str(tmp_path / "chart.svg"), "-o", str(tmp_path / "svg.png")],
                   env=env, check=True, timeout=60)
    from_svg = _ink(QImage(str(tmp_path / "svg.png")))
    from_png = _ink(render.render_image(plot, canvas, headline=head))
    assert from_svg.shape == from_png.shape
    for top, bottom in ((0, 60), (0, canvas.height)):  # the Hangul headline and title; all
        a, b = from_svg[top:bottom], from_png[top:bottom]
        assert abs(int(a.sum()) - int(b.sum())) < 0.08 * b.sum(), (top, a.sum(), b.sum())
        # the same pixels are inked (tofu boxes would be ink where glyphs have none)
        assert (a & b).sum() > 0.8 * b.sum()


def test_pdf_pages_are_all_the_canvas(qtbot, tokens_plot: TokensFedPlot, store: RunStore) -> None:  # type: ignore[no-untyped-def]
    others = [StepTimePlot(), CacheBytesPlot()]
    for plot, size in zip(others, [(300, 700), (900, 250)], strict=True):
        qtbot.addWidget(plot)
        plot.resize(*size)
        plot.show()
        plot.refresh(store)
    pdf = render.render_pdf([tokens_plot, *others])
    assert pdf.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page(?!s)", pdf)) == 3
    assert set(_pdf_page_sizes(pdf)) == {(1440.0, 810.0)}  # 1920×1080 px at 96 dpi
    single = render.render_pdf([tokens_plot])
    assert len(re.findall(rb"/Type\s*/Page(?!s)", single)) == 1


def _table(data: bytes, index: int = 0) -> list[dict[str, str]]:
    rows = read_csv_tables(data)[index]
    return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]


def test_csv_holds_the_records_by_step(tokens_plot: TokensFedPlot, store: RunStore) -> None:
    rows = _table(plotted_data.render_csv(tokens_plot))
    assert next(iter(rows[0])) == "step (0 = prefill)"
    for mode in MODES:
        trace = store.trace(mode)
        assert trace is not None
        name = "Cached" if mode == "cached" else "Recompute"
        per_step = f"{name}: tokens fed at the step (tokens)"
        measured = [(r["step (0 = prefill)"], r[per_step]) for r in rows if r[per_step]]
        assert measured == [(str(r.step), str(r.tokens_fed)) for r in trace.records]
        so_far = [r[f"{name}: tokens fed so far (tokens)"] for r in rows][: len(trace.records)]
        assert so_far == [str(v) for v in trace.tokens_fed_cumulative]
    assert all("." not in r["step (0 = prefill)"] for r in rows)  # steps, not bar offsets


def test_cache_bytes_csv_has_layers_as_x(qtbot, store: RunStore) -> None:  # type: ignore[no-untyped-def]
    plot = CacheBytesPlot()
    qtbot.addWidget(plot)
    plot.resize(500, 300)
    plot.show()
    plot.refresh(store)
    record = store.current.last if store.current is not None else None
    cached = store.trace("cached")
    assert cached is not None and cached.last is not None
    rows = _table(plotted_data.render_csv(plot))
    assert [r["layer"] for r in rows] == [str(i) for i in range(len(cached.last.cache_layer_bytes))]
    assert [int(r["K bytes used (B)"]) for r in rows] == [k for k, _ in
                                                          cached.last.cache_layer_bytes]
    assert "allocated" not in " ".join(rows[0])  # no static cache here
    assert record is not None
    head = plot.headline()
    assert f"{cached.last.cache_used_bytes:,} B" in head and "per token" in head
    legend = [label.text for _, label in plot.legend.items]
    assert not any("allocated" in text for text in legend)


def test_empty_chart_is_not_exported(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    plot = TokensFedPlot()
    qtbot.addWidget(plot)
    plot.show()
    plot.refresh(RunStore())
    for fmt in ("png", "svg", "pdf", "csv"):
        with pytest.raises(slide_canvas.ExportError, match="no data yet"):
            export.export_chart(plot, tmp_path / f"empty.{fmt}")
    assert list(tmp_path.iterdir()) == []


def test_slide_pack_contains_every_chart(
    qtbot, tokens_plot: TokensFedPlot, store: RunStore, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    time_plot = StepTimePlot()
    qtbot.addWidget(time_plot)
    time_plot.resize(640, 400)
    time_plot.show()
    time_plot.refresh(store)
    empty = TokensFedPlot()
    qtbot.addWidget(empty)
    empty.refresh(RunStore())
    charts = {"tokens fed": tokens_plot, "step time": time_plot, "nothing yet": empty}
    numbers = {"ratio": 3.5, "steps": np.int64(8)}
    tables = {"lab table": [{"mode": "cached", "ms": 1.25, "tokens": 13728},
                            {"mode": "recompute", "ms": 4.5, "tokens": 246}]}
    canvas = slide_canvas.canvas_named("16:9 small")
    pack = export.export_slide_pack(charts, tmp_path / "pack", numbers, tables, canvas)
    names = sorted(p.name for p in pack.written)
    for stem in ("tokens-fed", "step-time"):
        for ext in ("png", "svg", "pdf", "csv"):
            assert f"{stem}.{ext}" in names
    assert not any(name.startswith("nothing-yet") for name in names)
    assert pack.skipped == ("nothing yet",)
    assert "all-charts.pdf" in names and "numbers.json" in names and "lab-table.csv" in names
    assert sorted(p.name for p in (tmp_path / "pack").iterdir()) == names  # nothing else
    document = json.loads((tmp_path / "pack" / "numbers.json").read_text())
    assert document["steps"] == 8 and document["skipped_empty_charts"] == ["nothing yet"]
    all_pdf = (tmp_path / "pack" / "all-charts.pdf").read_bytes()
    assert len(re.findall(rb"/Type\s*/Page(?!s)", all_pdf)) == 2
    assert set(_pdf_page_sizes(all_pdf)) == {(960.0, 540.0)}
    image = QImage(str(tmp_path / "pack" / "step-time.png"))
    assert (image.width(), image.height()) == (1280, 720)
    lab = (tmp_path / "pack" / "lab-table.csv").read_text().splitlines()
    assert lab[1] == "cached,1.25,13728"  # numbers, not display strings


def test_unwritable_folder_gives_a_message_and_no_file(
    tokens_plot: TokensFedPlot, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    with pytest.raises(slide_canvas.ExportError, match="Choose another folder"):
        export.export_chart(tokens_plot, blocker / "chart.png")
    with pytest.raises(slide_canvas.ExportError, match="does not exist"):
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
    with pytest.raises(slide_canvas.ExportError, match="disk is full"):
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
    with qtbot.waitSignal(exporter.exported, timeout=HANG_GUARD_MS) as signal:
        menu.actions()[0].trigger()  # PNG
    png = target.with_suffix(".png")
    assert Path(signal.args[0]) == png and png.exists()
    exporter.save_chooser = lambda *a: str(tmp_path / "nope" / "x.svg")
    with qtbot.waitSignal(exporter.failed, timeout=HANG_GUARD_MS) as failure:
        menu.actions()[1].trigger()  # SVG into a folder that does not exist
    assert "does not exist" in failure.args[0]
    exporter.save_chooser = lambda *a: ""  # cancelled: nothing happens
    assert exporter.export_one(tokens_plot, "x", "csv") is None


def test_menu_chooses_the_slide_size_and_the_headline(  # type: ignore[no-untyped-def]
    qtbot, tokens_plot: TokensFedPlot, tmp_path: Path
) -> None:
    target = tmp_path / "slide"
    exporter = ChartExporter(save_chooser=lambda *a: str(target))
    menu = attach_export(tokens_plot, exporter).menu()
    four_three = next(a for a in menu.size_menu.actions() if a.data() == "4:3")
    four_three.trigger()
    assert exporter.canvas == slide_canvas.canvas_named("4:3")
    assert menu.format_actions["png"].text().startswith("PNG image, 1440×1080")
    with qtbot.waitSignal(exporter.exported, timeout=HANG_GUARD_MS):
        menu.export("png")
    with_headline = QImage(str(target.with_suffix(".png")))
    assert (with_headline.width(), with_headline.height()) == (1440, 1080)
    menu.headline_action.setChecked(False)
    assert exporter.headline is False
    with qtbot.waitSignal(exporter.exported, timeout=HANG_GUARD_MS):
        menu.export("png")
    without = QImage(str(target.with_suffix(".png")))
    canvas = slide_canvas.canvas_named("4:3")
    expected_with = render.render_image(tokens_plot, canvas, headline=tokens_plot.headline())
    expected_without = render.render_image(tokens_plot, canvas, headline=None)
    assert (_ink(with_headline) == _ink(expected_with)).all()
    assert (_ink(without) == _ink(expected_without)).all()
    assert not (_ink(with_headline) == _ink(without)).all()


def test_svg_heat_map_cells_stay_sharp_squares(qapp) -> None:  # type: ignore[no-untyped-def]
    """A heat map's one-pixel-per-cell raster is enlarged nearest-neighbour in the SVG."""
    import base64

    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    from kvstudio.charts.svg_outlines import SHARP_SIDE, XLINK_NS, compose_canvas

    cells = QImage(2, 1, QImage.Format.Format_RGB32)
    cells.setPixelColor(0, 0, QColor("#ff0000"))
    cells.setPixelColor(1, 0, QColor("#0000ff"))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    cells.save(buffer, "PNG")  # type: ignore[call-overload]
    buffer.close()
    href = "data:image/png;base64," + base64.b64encode(bytes(data.data())).decode()
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="{XLINK_NS}">'
        f'<image x="0" y="0" width="2" height="1" xlink:href="{href}"/></svg>'
    )
    root = ET.fromstring(compose_canvas(svg, 100, 50, (0, 0), "#ffffff", []))
    (image,) = [el for el in root.iter() if el.tag.endswith("}image")]
    assert (image.get("width"), image.get("height")) == ("2", "1")  # same place on the page
    encoded = image.get(f"{{{XLINK_NS}}}href") or ""
    big = QImage.fromData(base64.b64decode(encoded.split(",", 1)[1]))
    assert (big.width(), big.height()) == (SHARP_SIDE, SHARP_SIDE // 2)
    half = SHARP_SIDE // 2
    assert big.pixelColor(half - 1, 0) == QColor("#ff0000")  # no blend at the cell edge
    assert big.pixelColor(half, half - 1) == QColor("#0000ff")


def _svg_ink(svg: bytes, tmp_path: Path, name: str) -> np.ndarray:
    (tmp_path / f"{name}.svg").write_bytes(svg)
    subprocess.run(["rsvg-convert", str(tmp_path / f"{name}.svg"), "-o",
                    str(tmp_path / f"{name}.png")], check=True, timeout=60)
    return _ink(QImage(str(tmp_path / f"{name}.png")))


def _lab_charts(qtbot, tiny_handle: LoadedModel) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """A few labs' charts after a run on the tiny model: many dashed lines, bars, a heat map."""
    from kvstudio.ui.labs.inspector_lab import CacheInspectorPanel
    from kvstudio.ui.labs.projector_lab import ProjectorPanel
    from tests.ui.lab_helpers import run_lab, show_lab

    charts: dict[str, object] = {}
    exporter = ChartExporter()
    projector = show_lab(qtbot, ProjectorPanel, exporter, tiny_handle, size=(1100, 700))
    projector.source.setCurrentIndex(projector.source.findData("llama-3.1-8b"))
    run_lab(qtbot, projector)
    charts.update(projector.charts())
    inspector = show_lab(qtbot, CacheInspectorPanel, exporter, tiny_handle, size=(1100, 700))
    with qtbot.waitSignal(inspector.runner.paused, timeout=HANG_GUARD_MS):
        assert inspector.run()
    charts.update(inspector.charts())
    charts["_panels"] = [projector, inspector]
    return charts


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="needs rsvg-convert (librsvg)")
def test_every_charts_svg_has_the_ink_of_its_png(  # type: ignore[no-untyped-def]
    qtbot, store: RunStore, korean_font: str, tiny_handle: LoadedModel, tmp_path: Path
) -> None:
    """The README's claim, for the live charts and labs with dashed lines and heat maps: the
    SVG (rendered by librsvg) inks within 5 % of the PNG, and mostly the same pixels."""
    charts: dict[str, object] = {}
    for name, cls in (("tokens_fed", TokensFedPlot), ("step_time", StepTimePlot),
                      ("cache_bytes", CacheBytesPlot)):
        plot = cls()
        qtbot.addWidget(plot)
        plot.resize(700, 420)
        plot.show()
        plot.refresh(store)
        charts[name] = plot
    labs = _lab_charts(qtbot, tiny_handle)
    panels = labs.pop("_panels")
    charts.update(labs)
    canvas = slide_canvas.canvas_named("16:9 small")
    for name, chart in charts.items():
        head = plotted_data.chart_headline(chart)
        from_svg = _svg_ink(render.render_svg(chart, canvas, headline=head), tmp_path, name)
        from_png = _ink(render.render_image(chart, canvas, headline=head))
        difference = abs(int(from_svg.sum()) - int(from_png.sum())) / from_png.sum()
        assert difference < 0.05, (name, from_svg.sum(), from_png.sum())
        assert (from_svg & from_png).sum() > 0.8 * from_png.sum(), name
    for panel in panels:  # type: ignore[attr-defined]
        assert panel.shutdown()


def test_a_colour_scale_beside_a_heat_map_is_on_the_slide(qtbot) -> None:  # type: ignore[no-untyped-def]
    """A colour bar in the chart's layout (as the inspector's heat maps have) is exported."""
    view = pg.GraphicsLayoutWidget()
    qtbot.addWidget(view)
    view.resize(600, 300)
    plot = view.addPlot(row=0, col=0)
    image = pg.ImageItem(np.linspace(0, 1, 64).reshape(8, 8), axisOrder="row-major")
    image.setColorMap(pg.colormap.get("viridis"))
    plot.addItem(image)
    bar = pg.ColorBarItem(values=(0, 1), colorMap=pg.colormap.get("viridis"), interactive=False)
    bar.setImageItem(image)
    view.ci.addItem(bar, row=0, col=1)
    view.show()
    canvas = slide_canvas.canvas_named("16:9 small")
    png = pg.functions.ndarray_from_qimage(
        render.render_image(view, canvas).convertToFormat(QImage.Format.Format_RGB32))
    right = png[:, int(canvas.width * 0.91):, :3].astype(int)  # past the heat map itself
    blue, green, red = right[:, :, 0], right[:, :, 1], right[:, :, 2]  # RGB32 is BGRA in memory
    yellow = (red > 180) & (green > 180) & (blue < 120)
    assert yellow.sum() > 50  # viridis' top colour, drawn in the bar at the right


@pytest.mark.skipif(shutil.which("gs") is None, reason="needs Ghostscript to read the PDF")
def test_pdf_pages_look_like_the_png_bold_title_included(  # type: ignore[no-untyped-def]
    tokens_plot: TokensFedPlot, tmp_path: Path
) -> None:
    canvas = slide_canvas.canvas_named("16:9 small")
    head = plotted_data.chart_headline(tokens_plot)
    (tmp_path / "chart.pdf").write_bytes(render.render_pdf([tokens_plot], canvas, headlines=[head]))
    subprocess.run(["gs", "-q", "-dNOPAUSE", "-dBATCH", "-sDEVICE=png16m", "-r96",
                    "-dTextAlphaBits=4", "-dGraphicsAlphaBits=4",
                    f"-sOutputFile={tmp_path / 'pdf.png'}", str(tmp_path / "chart.pdf")],
                   check=True, timeout=120)
    from_pdf = _ink(QImage(str(tmp_path / "pdf.png")))
    from_png = _ink(render.render_image(tokens_plot, canvas, headline=head))
    assert from_pdf.shape == from_png.shape
    page_pdf, page_png = int(from_pdf.sum()), int(from_png.sum())
    assert abs(page_pdf - page_png) < 0.06 * page_png, (page_pdf, page_png)
    # The title's band: Qt's PDF engine drew the regular glyphs (12 % less ink than the bold
    # PNG title); drawn as bold outlines it has at least the PNG's ink.
    band_pdf, band_png = int(from_pdf[40:110].sum()), int(from_png[40:110].sum())
    assert band_pdf >= 0.97 * band_png, (band_pdf, band_png)


def test_a_heat_map_without_a_colour_bar_gets_its_scale_on_the_slide(qtbot) -> None:  # type: ignore[no-untyped-def]
    from kvstudio.charts.colour_scale import colour_scales

    view = pg.GraphicsLayoutWidget()
    qtbot.addWidget(view)
    view.resize(600, 300)
    plot = view.addPlot(row=0, col=0, title="attention")
    image = pg.ImageItem(np.linspace(0, 1, 64).reshape(8, 8), axisOrder="row-major")
    image.setColorMap(pg.colormap.get("viridis"))
    image.setLevels((0.0, 0.5))
    plot.addItem(image)
    view.show()
    (scale,) = colour_scales(view)
    assert (scale.label, scale.low, scale.high) == ("attention", 0.0, 0.5)
    canvas = slide_canvas.canvas_named("16:9 small")
    png = pg.functions.ndarray_from_qimage(
        render.render_image(view, canvas).convertToFormat(QImage.Format.Format_RGB32))
    band = png[:60, :, :3].astype(int)  # above the chart: the scale's row
    blue, green, red = band[:, :, 0], band[:, :, 1], band[:, :, 2]
    assert ((red > 180) & (green > 180) & (blue < 120)).sum() > 20  # viridis' top colour
    bar = pg.ColorBarItem(values=(0, 0.5), colorMap=pg.colormap.get("viridis"))
    bar.setImageItem(image)
    view.ci.addItem(bar, row=0, col=1)
    assert colour_scales(view) == []  # its own bar explains it: no second scale
