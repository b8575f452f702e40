"""The three scale labs (paged, quantized, projector) on the tiny model: tables and numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvstudio.core import scale_labs
from kvstudio.ui.labs import PagedCachePanel, ProjectorPanel, QuantizedCachePanel
from kvstudio.ui.run.engine_adapter import ModelHandle
from kvstudio.ui.slides.export_menu import ChartExporter

TIMEOUT = 30_000


@pytest.fixture()
def exporter(tmp_path: Path) -> ChartExporter:
    return ChartExporter(
        save_chooser=lambda *a: "", folder_chooser=lambda *a: str(tmp_path / "pack")
    )


def _panel(qtbot, cls, exporter: ChartExporter, model: ModelHandle):  # type: ignore[no-untyped-def]
    panel = cls(exporter)
    qtbot.addWidget(panel)
    panel.resize(1100, 700)
    panel.show()
    panel.set_model(model)
    return panel


def _run(qtbot, panel) -> object:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(panel.result_ready, timeout=TIMEOUT) as blocker:
        assert panel.run()
    return blocker.args[0]


def test_paged_lab_table_and_block_view(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, PagedCachePanel, exporter, tiny_handle)
    panel.samples.setValue(6)
    panel.new_tokens.setValue(12)
    panel.block_size.setValue(4)
    result = _run(qtbot, panel)
    assert isinstance(result, scale_labs.PagedLabResult)
    rows = panel.table_rows()
    assert rows[4]["held"] == "✓"  # the hand count matches the measured bytes
    assert panel.step_slider.maximum() == len(result.paged_steps) - 1
    panel.step_slider.setValue(0)  # the prefill: every row holds the same prompt blocks
    assert "step 0" in panel.table_plot.titleLabel.text
    numbers = panel.numbers()
    assert numbers["paged_held_bytes"][-1] == result.hand_count_blocks * result.block_bytes
    json.dumps(numbers)
    panel.shutdown()


def test_quantized_lab_table(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, QuantizedCachePanel, exporter, tiny_handle)
    panel.prompt_tokens.setValue(20)
    panel.new_tokens.setValue(8)
    result = _run(qtbot, panel)
    assert isinstance(result, scale_labs.QuantLabResult)
    rows = panel.table_rows()
    assert [r["cache"] for r in rows] == ["fp32", "fp16", "int8", "int4"]
    for row, run in zip(rows[1:], result.runs, strict=True):
        assert row["bytes (formula)"] == f"{run.formula_bytes:,}"
    json.dumps(panel.numbers())
    panel.shutdown()


def test_projector_preset_and_loaded_model(qtbot, exporter, tiny_handle, tmp_path) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, ProjectorPanel, exporter, tiny_handle)
    panel.source.setCurrentIndex(panel.source.findData("llama-3.1-8b"))
    result = _run(qtbot, panel)
    assert isinstance(result, scale_labs.ProjectorResult)
    assert panel.numbers()["cache_bytes"] == 32 * 1024**3  # 8 × 32,768 × 128 KiB
    panel.source.setCurrentIndex(0)  # the loaded model: projection checked by a real run
    panel.bits.setCurrentIndex(panel.bits.findData(32))
    result = _run(qtbot, panel)
    assert isinstance(result, scale_labs.ProjectorResult) and result.check is not None
    assert result.check.equal
    assert any(row["bytes per token"] == "✓" for row in panel.table_rows())
    bad = tmp_path / "config.json"
    bad.write_text("{")
    panel.set_config(str(bad))
    assert "config.json" in panel.status.text()
    panel.shutdown()


def test_scale_labs_export_in_the_slide_pack(qtbot, exporter, tiny_handle, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from kvstudio.ui.slides.export import canvas_named, export_slide_pack

    charts, numbers, tables = {}, {}, {}
    panels = []
    for cls in (PagedCachePanel, QuantizedCachePanel, ProjectorPanel):
        panel = _panel(qtbot, cls, exporter, tiny_handle)
        if cls is PagedCachePanel:
            panel.samples.setValue(4)
            panel.new_tokens.setValue(6)
        if cls is QuantizedCachePanel:
            panel.prompt_tokens.setValue(12)
            panel.new_tokens.setValue(4)
        _run(qtbot, panel)
        charts.update({f"lab {k}": c for k, c in panel.charts().items()})
        numbers[cls.__name__] = panel.numbers()
        tables[cls.__name__] = panel.table_rows()
        panels.append(panel)
    pack = export_slide_pack(charts, tmp_path / "pack", numbers, tables,
                             canvas_named("16:9 small"))
    names = {p.name for p in pack.written}
    for chart in ("paged-cache", "quantized-cache", "projector"):
        assert {f"lab-{chart}.{ext}" for ext in ("png", "svg", "pdf", "csv")} <= names
    for panel in panels:
        panel.shutdown()
