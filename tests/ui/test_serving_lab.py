"""The serving lab in the window: it runs on the tiny model, and what its charts, tables,
headline and exports hold is what the records say."""

from __future__ import annotations

import math

import numpy as np
import pytest
from lab_helpers import run_lab, show_lab
from pyqtgraph import TextItem
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainter, QPicture

from kvstudio.charts.canvas import SlideCanvas, canvas_named
from kvstudio.charts.chart_data import plot_items
from kvstudio.charts.render import _prepared
from kvstudio.charts.style import SLIDE_STYLE
from kvstudio.labs.registry import SERVING
from kvstudio.labs.serving import batching
from kvstudio.ui.labs import ServingPanel
from kvstudio.ui.slides.presenter import LINES_PER_SCREEN
from kvstudio.ui.slides.presenter_look import presenter_style
from tests.ui.settle import settle

pytestmark = pytest.mark.usefixtures("qapp")


def _small(panel: ServingPanel) -> None:
    panel.batch_sizes.setText("1, 2, 4")
    panel.repeats.setValue(2)
    panel.answer_tokens.setValue(4)
    panel.max_batch.setValue(3)
    panel.block_size.setValue(5)


def parse_batch_sizes(text: str) -> tuple[int, ...]:
    """The sweep's sizes as the box's text is read (the registry) and the lab's run takes
    them: sorted, each once; empty: no sweep."""
    sizes = SERVING.param("batch_sizes").parse(text)
    return batching.check_batch_sizes(sizes) if sizes else ()


def test_parse_batch_sizes() -> None:
    assert parse_batch_sizes("4, 1 2;2") == (1, 2, 4)
    assert parse_batch_sizes("") == ()
    with pytest.raises(ValueError, match="numbers separated by commas"):
        parse_batch_sizes("1, two")
    with pytest.raises(ValueError, match="between 1 and 1,024 rows"):
        parse_batch_sizes("0, 2")
    with pytest.raises(ValueError, match="between 1 and 1,024 rows"):  # as the CLI and notebook
        parse_batch_sizes("2048")


def test_the_sweep_chart_holds_the_sweep_records(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, ServingPanel, exporter, tiny_handle, size=(1300, 900))
    _small(panel)
    result = run_lab(qtbot, panel)
    assert isinstance(result, batching.ServingLabResult)
    sweep = result.sweep
    assert sweep is not None and [p.batch for p in sweep.points] == [1, 2, 4]
    assert sweep.rounds == 2 and all(p.step_seconds.count == 2 for p in sweep.points)
    x, y = panel.lab_view._step_line.getData()
    assert list(x) == [math.log2(p.batch) for p in sweep.points]
    assert list(y) == pytest.approx([1000 * p.step_seconds.median for p in sweep.points])
    x, y = panel.lab_view._throughput_line.getData()
    assert list(y) == pytest.approx([p.batch / p.step_seconds.median for p in sweep.points])
    _, floor = panel.lab_view._memory_floor.getData()
    assert sweep.peaks is not None
    assert list(floor) == pytest.approx(
        [1000 * p.bytes_read / sweep.peaks.bandwidth.high for p in sweep.points])
    rows = panel.sweep_table.values()
    assert [r[next(iter(r))] for r in rows] == [1, 2, 4]
    tables = {t.title: t for t in panel.data_tables()}
    step_table = tables["Decode step time against batch size"]
    assert step_table.column("batch size (rows)") == [1, 2, 4]
    assert step_table.column("KV bytes read (B)") == [p.kv_bytes for p in sweep.points]
    assert step_table.column("FLOPs") == [p.flops for p in sweep.points]
    assert "Decode step, batch 1 → 4" in panel.headline()
    assert "median of 2" in panel.headline()
    numbers = panel.numbers()["batch_sweep"]
    assert [p["batch"] for p in numbers["points"]] == [1, 2, 4]


def _bars(item) -> dict[str, list[float]]:  # type: ignore[no-untyped-def]
    return {k: [float(v) for v in np.atleast_1d(item.opts[k])]
            for k in ("x", "x0", "y0", "height") if item.opts.get(k) is not None}


def test_the_run_charts_and_table_hold_the_run_records(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, ServingPanel, exporter, tiny_handle, size=(1300, 900))
    _small(panel)
    panel.batch_sizes.setText("")  # the requests only: the sweep's plots say so
    panel.prefix.setCurrentIndex(panel.prefix.findData("blocks"))
    result = run_lab(qtbot, panel)
    assert result.sweep is None and result.serving is not None
    run = result.serving.runs[0]
    assert run.config.prefix_cache == "blocks" and run.config.block_size == 5
    assert run.config.max_batch == 3 and run.config.policy == "continuous"
    # The timeline: one box per (step, request) in each phase, where the records put it.
    for phase, bars in panel.lab_view._phase_bars.items():
        cells = [(s.step, r.request) for s in run.steps for r in s.requests if r.phase == phase]
        drawn = _bars(bars)
        assert drawn.get("x0", []) == [float(x) for x, _ in cells], phase
        assert drawn.get("y0", []) == pytest.approx([y - 0.4 for _, y in cells]), phase
    assert _bars(panel.lab_view._phase_bars["decode"])["x0"]  # something decoded
    # Tokens fed: prefill at the bottom, decode on top of it, only where there are any.
    drawn = _bars(panel.lab_view._fed_bars["prefill"])
    assert drawn["x"] == [s.step for s in run.steps if s.prefill_tokens]
    assert drawn["height"] == [s.prefill_tokens for s in run.steps if s.prefill_tokens]
    drawn = _bars(panel.lab_view._fed_bars["decode"])
    assert drawn["height"] == [s.decode_tokens for s in run.steps if s.decode_tokens]
    assert drawn["y0"] == [s.prefill_tokens for s in run.steps if s.decode_tokens]
    assert _bars(panel.lab_view._fed_bars["padding"]).get("x", []) == []  # continuous: no padding
    drawn = _bars(panel.lab_view._block_bars["requests"])
    assert drawn["height"] == [s.blocks_used - s.blocks_cached for s in run.steps
                               if s.blocks_used - s.blocks_cached]
    # The table: one row per request, as the records say.
    rows = panel.table.values()
    assert len(rows) == len(run.outcomes) == len(result.serving.requests)
    for row, outcome in zip(rows, run.outcomes, strict=True):
        values = list(row.values())
        assert values[1:3] == [outcome.prompt_tokens, outcome.prefix_hit]
        assert values[3] == pytest.approx(1000 * outcome.ttft_s.median)
        assert values[6:8] == [outcome.answer_tokens, outcome.identical_to_solo]
        assert outcome.identical_to_solo  # the same tokens; the logits to float32 rounding:
        assert values[8] == outcome.max_abs_logit_diff <= 1e-4
    assert sum(o.prefix_hit for o in run.outcomes) > 0  # the shared system prompt was hit
    assert not panel.sweep_table.isVisible() and panel.table.isVisible()
    tables = {t.title: t for t in panel.data_tables()}
    timeline = tables["What each request did, step by step"]
    names = {"future": "not arrived yet", "waiting": "waiting", "prefill": "prefill chunk",
             "decode": "decode", "idle": "idle row (fed, no token)", "preempted": "preempted",
             "finished": "finished"}  # the legend's names, not the records' keys
    for index in range(len(run.outcomes)):
        assert timeline.column(f"request #{index}") == [names[s.requests[index].phase]
                                                         for s in run.steps]
    fed = tables["Tokens fed per step"]
    assert fed.column("prefill tokens") == [s.prefill_tokens for s in run.steps]
    headline = panel.headline()
    assert f"{len(run.outcomes)} requests in {run.totals.steps} steps" in headline
    n = len(run.outcomes)
    assert f"same tokens as solo runs: {n} of {n}, max |Δlogit| " in headline
    numbers = panel.numbers()["serving"]
    assert numbers["peak_blocks"] == run.totals.peak_blocks and "batch_sweep" not in panel.numbers()


def test_static_batching_draws_its_padding_and_idle_rows(qtbot, exporter, tiny_handle,  # type: ignore[no-untyped-def]
                                                         tmp_path) -> None:
    panel = show_lab(qtbot, ServingPanel, exporter, tiny_handle, size=(1300, 900))
    _small(panel)
    requests = tmp_path / "requests.txt"  # one batch: a short answer idles beside a long one
    requests.write_text("+2 짧은 질문\n+6 조금 더 긴 질문을 하나 합니다\n@1 늦게 온 질문\n",
                        encoding="utf-8")
    panel.choose_requests(requests)
    assert panel.requests_box.currentText() == "requests.txt"
    panel.batch_sizes.setText("")
    panel.policy.setCurrentIndex(panel.policy.findData("static"))
    panel.chunk.setValue(8)  # ignored: chunked prefill is continuous only (the box is off)
    assert not panel.chunk.isEnabled()
    result = run_lab(qtbot, panel)
    run = result.serving.runs[0]
    assert [r.text for r in result.serving.requests] == [
        "짧은 질문", "조금 더 긴 질문을 하나 합니다", "늦게 온 질문"]
    assert run.config.policy == "static" and run.config.chunk is None
    padded = [s for s in run.steps if s.padding_slots]
    assert padded, "static batching pads its prompts"
    drawn = _bars(panel.lab_view._fed_bars["padding"])
    assert drawn["x"] == [s.step for s in padded]
    assert drawn["height"] == [s.padding_slots for s in padded]
    assert drawn["y0"] == [s.prefill_tokens + s.decode_tokens for s in padded]
    idle = [(s.step, r.request) for s in run.steps for r in s.requests if r.phase == "idle"]
    assert idle, "a row that finished early is fed until its batch ends"
    assert _bars(panel.lab_view._phase_bars["idle"]).get("x0", []) == [float(x) for x, _ in idle]
    assert run.totals.padding_slots == run.totals.padding_formula
    assert f"wasted slots {run.totals.padding_slots} (formula {run.totals.padding_formula})" \
        in panel.headline()


def test_an_empty_panel_says_how_to_fill_it(qtbot, exporter, tiny_handle, tmp_path) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, ServingPanel, exporter, tiny_handle)
    chart = panel.charts()["serving"]
    assert len(plot_items(chart)) == 5
    hints = [item.toPlainText() for plot in plot_items(chart) for item in plot.items
             if isinstance(item, TextItem) and item.isVisible() and item.toPlainText()]
    assert hints == ["Press Run to serve the requests and sweep the batch sizes."]
    assert panel.headline() == "" and panel.data_tables() == [] and panel.numbers() == {}
    panel.batch_sizes.setText("1, x")
    assert not panel.run()
    assert "batch sizes" in panel.status.text()
    panel.batch_sizes.setText("1, 2")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    panel.choose_requests(empty)
    assert not panel.run() and not panel.runner.busy  # one message, nothing runs
    assert "empty.txt" in panel.status.text()
    assert panel.result is None


def test_a_blank_system_box_says_what_the_run_will_use(qtbot, exporter, tiny_handle,  # type: ignore[no-untyped-def]
                                                       tmp_path) -> None:
    from kvstudio.labs.serving.lab import EXAMPLE_SYSTEM, shared_system

    panel = show_lab(qtbot, ServingPanel, exporter, tiny_handle)
    assert panel.system.text() == ""
    assert panel.system.placeholderText() == "the example's system prompt"
    assert shared_system("", panel.read_params()["requests"]) == EXAMPLE_SYSTEM
    own = tmp_path / "mine.txt"
    own.write_text("hello\n", encoding="utf-8")
    panel.choose_requests(own)
    assert panel.system.placeholderText() == "no system prompt"
    assert shared_system("", panel.read_params()["requests"]) == ""
    panel.choose_requests(None)
    assert panel.system.placeholderText() == "the example's system prompt"


def _tick_texts(axis) -> list[tuple[QRectF, str]]:  # type: ignore[no-untyped-def]
    """The tick labels `axis` draws now, each with its rect in scene coordinates."""
    picture = QPicture()
    painter = QPainter(picture)
    try:
        font = axis.style["tickFont"]
        if font is not None:
            painter.setFont(font)
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(axis.mapRectToScene(rect), text) for rect, _, text in specs[2]]


def _assert_rows_and_titles_read(panel: ServingPanel, requests: int, where: str) -> None:
    timeline = panel.lab_view.timeline_plot.getAxis("left")
    assert sorted(text for _, text in _tick_texts(timeline)) == \
        [f"#{r}" for r in range(requests)], f"{where}: a request row without its label"
    for plot in panel.lab_view.plots():
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            title = axis.label.mapRectToScene(axis.label.boundingRect())
            for rect, text in _tick_texts(axis):
                assert not title.intersects(rect), \
                    f"{where}: {axis.labelText!r} runs into tick label {text!r}"


def test_every_request_row_is_labelled_and_axis_titles_clear_the_ticks(  # type: ignore[no-untyped-def]
        qtbot, exporter, tiny_handle) -> None:
    """On the lecture slide (1920×1080, its large fonts) the timeline dropped the odd rows'
    labels and the y titles ran into the tick labels ("요청" into "#2")."""
    panel = show_lab(qtbot, ServingPanel, exporter, tiny_handle, size=(1366, 768))
    _small(panel)
    result = run_lab(qtbot, panel)
    requests = len(result.serving.requests)
    assert requests >= 6
    settle(qtbot)  # the result laid out, however many passes it takes
    _assert_rows_and_titles_read(panel, requests, "window")
    # Laid out as the export lays it out: below its headline on the 1920×1080 slide, themed.
    with _prepared(panel.charts()["serving"], canvas_named("16:9"), SLIDE_STYLE,
                   panel.headline()):
        _assert_rows_and_titles_read(panel, requests, "slide")
    settle(qtbot)  # the window's own fonts back: its axes re-measure their ticks first
    _assert_rows_and_titles_read(panel, requests, "window after the slide")


def _arrangement(panel: ServingPanel) -> tuple[bool, list[tuple[float, float]], list[str]]:
    """Whether the grid is wide, each plot's top-left, and legends that cover data."""
    view = panel.lab_view
    corners = [(round(p.sceneBoundingRect().left()), round(p.sceneBoundingRect().top()))
               for p in view.plots()]
    covering = [plot.titleLabel.text for plot in view.plots()
                if plot.legend.sceneBoundingRect().adjusted(1, 1, -1, -1).intersects(
                    plot.vb.sceneBoundingRect())]
    return view.grid.wide, corners, covering


def test_a_wide_page_puts_the_plots_in_columns_legends_beside(  # type: ignore[no-untyped-def]
        qtbot, exporter, tiny_handle) -> None:
    """The five plots in rows needed ~1,070 px at projector type (the presenter has ~745
    px below its headline): on a wide page they go in columns, the legends beside the
    data, every plot and legend kept; a tall page and the window keep the rows."""
    # (the presenter's page at 1080p; a 16:9 slide goes wide as well, a 4:3 one not)
    panel = show_lab(qtbot, ServingPanel, exporter, tiny_handle, size=(1366, 768))
    _small(panel)
    panel.batch_sizes.setText("1, 2, 4, 8, 16, 32")
    run_lab(qtbot, panel)
    settle(qtbot)
    wide, window_corners, covering = _arrangement(panel)
    assert not wide and covering == []
    timeline, tokens, blocks, time, throughput = window_corners
    assert tokens[1] == blocks[1] > timeline[1] and time[1] == throughput[1] > tokens[1]
    chart = panel.charts()["serving"]
    legends = [len(plot.legend.items) for plot in panel.lab_view.plots()]
    # As the presenter draws it at 1080p: the page below its headline, projector type.
    presenter = SlideCanvas("presenter", 1870, 727)
    style = presenter_style(1080 / LINES_PER_SCREEN).scaled(1920 / 1870, 1920 / 1870)
    with _prepared(chart, presenter, style, None):
        wide, (timeline, tokens, blocks, time, throughput), covering = _arrangement(panel)
        assert wide and covering == []
        assert timeline[0] < tokens[0] == blocks[0] < time[0] == throughput[0]
        assert tokens[1] == time[1] < blocks[1] == throughput[1]
        for plot in panel.lab_view.plots()[1:]:
            assert plot.legend.sceneBoundingRect().left() >= \
                plot.vb.sceneBoundingRect().right() - 1, plot.titleLabel.text
        assert [len(plot.legend.items) for plot in panel.lab_view.plots()] == legends
        for plot in (panel.lab_view.time_plot, panel.lab_view.throughput_plot):
            # Every batch size labelled: the last one's label ("32") sat past the axis's
            # end, next to the legend, and pyqtgraph dropped it.
            shown = [text for _, text in _tick_texts(plot.getAxis("bottom"))]
            assert sorted(shown, key=int) == ["1", "2", "4", "8", "16", "32"], \
                (plot.titleLabel.text, shown)
    with _prepared(chart, canvas_named("16:9"), SLIDE_STYLE, panel.headline()):
        assert panel.lab_view.grid.wide
    with _prepared(chart, canvas_named("4:3"), SLIDE_STYLE, panel.headline()):
        assert not panel.lab_view.grid.wide
    settle(qtbot)
    wide, corners, covering = _arrangement(panel)  # back in rows (its axes may re-measure)
    assert not wide and covering == []
    assert all(abs(x - x0) <= 8 and abs(y - y0) <= 8
               for (x, y), (x0, y0) in zip(corners, window_corners, strict=True)), corners
