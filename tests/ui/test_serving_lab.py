"""The serving lab in the window: it runs on the tiny model, and what its charts, tables,
headline and exports hold is what the records say."""

from __future__ import annotations

import math

import numpy as np
import pytest
from lab_helpers import run_lab, show_lab

from kvstudio.labs import serving_batching as batching
from kvstudio.ui.labs import ServingPanel
from kvstudio.ui.labs.serving_lab import parse_batch_sizes
from kvstudio.ui.slides.canvas import plot_items

pytestmark = pytest.mark.usefixtures("qapp")


def _small(panel: ServingPanel) -> None:
    panel.batch_sizes.setText("1, 2, 4")
    panel.repeats.setValue(2)
    panel.answer_tokens.setValue(4)
    panel.max_batch.setValue(3)
    panel.block_size.setValue(5)


def test_parse_batch_sizes() -> None:
    assert parse_batch_sizes("4, 1 2;2") == (1, 2, 4)
    assert parse_batch_sizes("") == ()
    with pytest.raises(ValueError, match="whole numbers"):
        parse_batch_sizes("1, two")
    with pytest.raises(ValueError, match="at least 1"):
        parse_batch_sizes("0, 2")


def test_the_sweep_chart_holds_the_sweep_records(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, ServingPanel, exporter, tiny_handle, size=(1300, 900))
    _small(panel)
    result = run_lab(qtbot, panel)
    assert isinstance(result, batching.ServingLabResult)
    sweep = result.sweep
    assert sweep is not None and [p.batch for p in sweep.points] == [1, 2, 4]
    assert sweep.rounds == 2 and all(p.step_seconds.count == 2 for p in sweep.points)
    x, y = panel._step_line.getData()
    assert list(x) == [math.log2(p.batch) for p in sweep.points]
    assert list(y) == pytest.approx([1000 * p.step_seconds.median for p in sweep.points])
    x, y = panel._throughput_line.getData()
    assert list(y) == pytest.approx([p.batch / p.step_seconds.median for p in sweep.points])
    _, floor = panel._memory_floor.getData()
    assert sweep.peaks is not None
    assert list(floor) == pytest.approx(
        [1000 * p.bytes_read / sweep.peaks.bandwidth.median for p in sweep.points])
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


def test_an_empty_panel_says_how_to_fill_it(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, ServingPanel, exporter, tiny_handle)
    chart = panel.charts()["serving"]
    assert len(plot_items(chart)) == 5
    assert panel.headline() == "" and panel.data_tables() == [] and panel.numbers() == {}
    panel.batch_sizes.setText("1, x")
    assert not panel.run()
    assert "batch sizes" in panel.status.text()
    np.testing.assert_array_equal(panel._step_line.getData()[0] or np.zeros(0), np.zeros(0))
