"""The three scale labs (paged, quantized, projector) on the tiny model: tables and numbers."""

from __future__ import annotations

import json

from lab_helpers import run_lab, show_lab
from PySide6.QtWidgets import QComboBox

from kvstudio.charts.canvas import canvas_named
from kvstudio.charts.chart_data import read_csv_tables
from kvstudio.charts.plotted_data import render_csv
from kvstudio.charts.render import _prepared
from kvstudio.charts.style import SLIDE_STYLE
from kvstudio.engine.cache.quantized import formula_bytes_per_token
from kvstudio.labs import scale
from kvstudio.labs.cache.paged import PagedLabResult
from kvstudio.labs.cache.quantized import QuantLabResult
from kvstudio.labs.projector import ProjectorResult
from kvstudio.ui.labs import PagedCachePanel, ProjectorPanel, QuantizedCachePanel
from tests.ui.drawn_ticks import drawn_tick_labels
from tests.ui.settle import settle


def _ran(qtbot, cls, exporter, model, **inputs):  # type: ignore[no-untyped-def]
    """A shown `cls` panel with `inputs` set (spin boxes: value; combo boxes: item data),
    run once: (panel, result)."""
    panel = show_lab(qtbot, cls, exporter, model, size=(1100, 700))
    for name, value in inputs.items():
        widget = getattr(panel, name)
        if isinstance(widget, QComboBox):
            widget.setCurrentIndex(widget.findData(value))
        else:
            widget.setValue(value)
    return panel, run_lab(qtbot, panel)


def test_paged_lab_table_and_block_view(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel, result = _ran(qtbot, PagedCachePanel, exporter, tiny_handle,
                         samples=6, new_tokens=12, block_size=4)
    assert isinstance(result, PagedLabResult)
    rows = panel.table_rows()
    assert rows[4]["held (bytes)"] == "✓"  # the hand count matches the measured bytes
    assert panel.step_slider.maximum() == len(result.paged_steps) - 1
    panel.step_slider.setValue(0)  # the prefill: every row holds the same prompt blocks
    assert "step 0" in panel.lab_view.table_plot.titleLabel.text
    numbers = panel.numbers()
    assert numbers["paged_held_bytes"][-1] == result.hand_count_blocks * result.block_bytes
    json.dumps(numbers)
    panel.shutdown()


def test_paged_block_tables_label_whole_rows(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    """The block tables' row axis labels each sample's row once, at its centre: pyqtgraph's
    own ticks labelled half rows ("−0.5", "0.5", …) for 2 or 4 samples at any height."""
    for samples in (2, 4):
        panel, _ = _ran(qtbot, PagedCachePanel, exporter, tiny_handle,
                        samples=samples, new_tokens=6, block_size=4)
        axis = panel.lab_view.table_plot.getAxis("left")
        for size in ((1100, 700), (1300, 1000)):
            panel.resize(*size)
            settle(qtbot)
            assert drawn_tick_labels(axis) == [str(r) for r in range(samples)], size
        panel.step_slider.setValue(0)  # another step's tables: the same rows
        assert drawn_tick_labels(axis) == [str(r) for r in range(samples)]
        panel.shutdown()


def test_paged_clear_forgets_the_block_table_ticks(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    """A new run clears the view: the block tables' fixed ticks go with the old run's
    boxes (they stayed, the last run's rows and blocks, until the next result), and an
    empty chart (before the first result) keeps its blank ticks through the clear."""
    panel = show_lab(qtbot, PagedCachePanel, exporter, tiny_handle, size=(1100, 700))
    view = panel.lab_view
    axes = [view.table_plot.getAxis(side) for side in ("bottom", "left")]
    view.clear()  # a first run starts: the empty chart shows no tick values
    assert [drawn_tick_labels(axis) for axis in axes] == [[], []]
    panel.samples.setValue(4)
    panel.new_tokens.setValue(6)
    panel.block_size.setValue(4)
    run_lab(qtbot, panel)
    assert drawn_tick_labels(axes[1]) == ["0", "1", "2", "3"]
    assert all(axis._tickLevels is not None for axis in axes)  # rows and blocks, fixed
    view.clear()
    assert [axis._tickLevels for axis in axes] == [None, None]  # pyqtgraph's own again
    panel.shutdown()


def test_paged_memory_axis_labels_its_foot(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    """The memory plot's KiB axis starts at 0 and says so, in the window and on the slide:
    with the plot's grid, pyqtgraph left out the 0 centred on the plot's bottom edge."""
    panel, _ = _ran(qtbot, PagedCachePanel, exporter, tiny_handle,
                    samples=4, new_tokens=16, block_size=16)
    axis = panel.lab_view.bytes_plot.getAxis("left")
    assert panel.lab_view.bytes_plot.vb.viewRange()[1][0] == 0.0
    for size in ((1100, 700), (1700, 1000)):
        panel.resize(*size)
        settle(qtbot)
        assert "0" in drawn_tick_labels(axis), size
    for key in ("16:9", "16:9 small"):  # laid out on the slides, as an export does
        with _prepared(panel.charts()["paged-cache"], canvas_named(key), SLIDE_STYLE, None):
            assert "0" in drawn_tick_labels(axis), key
    panel.shutdown()


def test_quantized_lab_table(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel, result = _ran(qtbot, QuantizedCachePanel, exporter, tiny_handle,
                         prompt_tokens=20, new_tokens=8)
    assert isinstance(result, QuantLabResult)
    rows = panel.table_rows()
    assert [r["cache"] for r in rows] == ["fp32", "fp16", "int8", "int4"]
    for row, run in zip(rows[1:], result.runs, strict=True):
        assert row["bytes (formula)"] == f"{run.formula_bytes:,}"
    json.dumps(panel.numbers())
    panel.shutdown()


def test_projector_preset_and_loaded_model(qtbot, exporter, tiny_handle, tmp_path) -> None:  # type: ignore[no-untyped-def]
    panel, result = _ran(qtbot, ProjectorPanel, exporter, tiny_handle, source="llama-3.1-8b")
    assert isinstance(result, ProjectorResult)
    assert panel.numbers()["cache_bytes"] == 32 * 1024**3  # 8 × 32,768 × 128 KiB
    panel.source.setCurrentIndex(0)  # the loaded model: projection checked by a real run
    panel.bits.setCurrentIndex(panel.bits.findData(32))
    result = run_lab(qtbot, panel)
    assert isinstance(result, ProjectorResult) and result.check is not None
    assert result.check.equal
    assert any(row["bytes per token"] == "✓" for row in panel.table_rows())
    bad = tmp_path / "config.json"
    bad.write_text("{")
    panel.set_config(str(bad))
    assert "config.json" in panel.status.text()
    panel.shutdown()


def test_scale_labs_export_in_the_slide_pack(qtbot, exporter, tiny_handle, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from kvstudio.charts.canvas import canvas_named
    from kvstudio.charts.export import export_slide_pack

    charts, numbers, tables = {}, {}, {}
    panels = []
    for cls, inputs in ((PagedCachePanel, {"samples": 4, "new_tokens": 6}),
                        (QuantizedCachePanel, {"prompt_tokens": 12, "new_tokens": 4}),
                        (ProjectorPanel, {})):
        panel, _ = _ran(qtbot, cls, exporter, tiny_handle, **inputs)
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


def _ints(column: list[list[str]], index: int) -> list[int]:
    return [int(row[index]) for row in column[1:]]


def test_paged_lab_csv_and_headline_from_the_record(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel, result = _ran(qtbot, PagedCachePanel, exporter, tiny_handle,
                         samples=5, new_tokens=10, block_size=4)
    assert isinstance(result, PagedLabResult)
    memory, blocks = read_csv_tables(render_csv(panel.lab_view.layout_widget))
    assert memory[0] == ["step", "preallocated (B)", "dynamic (B)", "paged: blocks held (B)",
                         "paged: slots with tokens (B)"]
    # Real steps as x (no bar offsets such as 0.05 or -0.2), bytes as measured.
    assert [row[0] for row in memory[1:]] == [str(s.step) for s in result.paged_steps]
    assert _ints(memory, 1) == list(result.static_bytes)
    assert _ints(memory, 2) == list(result.dynamic_bytes)
    assert _ints(memory, 3) == list(result.paged_bytes)
    assert _ints(memory, 3)[-1] == result.hand_count_blocks * result.block_bytes
    # The block tables at the slider's step: one row per sample, blocks and tokens as counts.
    assert blocks[0] == ["sample (row)", "blocks held", "shared blocks", "tokens stored"]
    assert [row[0] for row in blocks[1:]] == [str(r) for r in range(result.samples)]
    assert _ints(blocks, 3) == list(result.row_lengths)
    panel.step_slider.setValue(0)  # the prefill: every row holds P tokens
    at_prefill = read_csv_tables(render_csv(panel.lab_view.layout_widget))[1]
    assert set(_ints(at_prefill, 3)) == {result.prompt_tokens}
    head = panel.headline()
    assert f"{result.samples} answers held" in head
    assert f"copies on write: {result.copies_on_write}" in head
    blocks_held = result.paged_bytes[-1] // result.block_bytes
    assert f"paged: {blocks_held} blocks of 4 tokens" in head
    ratio = result.static_bytes[-1] / result.paged_bytes[-1]
    assert f"paged holds {ratio:.1f}× less than preallocated" in head
    table = {row["cache"]: row for row in panel.table_values()}
    assert table["preallocated"]["held (bytes)"] == result.static_bytes[-1]  # a number
    panel.shutdown()


def test_quant_lab_csv_bytes_match_the_layout_formula(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel, result = _ran(qtbot, QuantizedCachePanel, exporter, tiny_handle,
                         prompt_tokens=20, new_tokens=8)
    assert isinstance(result, QuantLabResult)
    drift, sizes = read_csv_tables(render_csv(panel.lab_view.layout_widget))
    assert drift[0] == ["step", "fp16: max |Δlogit|", "int8: max |Δlogit|",
                        "int4: max |Δlogit|"]
    assert [row[0] for row in drift[1:]] == [str(i) for i in range(len(drift) - 1)]
    int4 = result.run("int4")
    # The drift as measured, not its log10 (the axis is log).
    assert [float(row[3]) for row in drift[1:len(int4.max_abs_logit_diff) + 1]] == list(
        int4.max_abs_logit_diff)
    assert [row[0] for row in sizes[1:]] == ["fp32", "fp16", "int8", "int4"]
    backend = tiny_handle.backend
    L, G, d = backend.num_layers, backend.num_kv_heads, backend.head_dim
    for row in sizes[2:]:
        run = result.run(row[0])
        assert int(row[1]) == run.cache_bytes  # measured from the stored tensors
        assert int(row[2]) == formula_bytes_per_token(row[0], L, G, d) * run.cache_tokens
        assert int(row[1]) == int(row[2])
    head = panel.headline()
    ratio = result.reference.cache_bytes / int4.cache_bytes
    assert "smaller than fp32: fp16 2.0× · int8" in head and f"int4 {ratio:.1f}×" in head
    assert "max |Δlogit|: fp16" in head and "first divergent step: " in head
    values = panel.table_values()
    assert values[3]["bytes (measured)"] == int4.cache_bytes  # a number in the pack's CSV
    panel.shutdown()


def test_projector_csv_x_is_context_tokens_and_y_bytes(qtbot, exporter, tiny_handle) -> None:  # type: ignore[no-untyped-def]
    panel, result = _ran(qtbot, ProjectorPanel, exporter, tiny_handle, source="llama-3.1-8b")
    assert isinstance(result, ProjectorResult)
    curve, variants = read_csv_tables(render_csv(panel.lab_view.plot_widget))
    assert curve[0] == ["context length (tokens)", "KV cache, 16-bit (B)", "KV cache, 8-bit (B)",
                        "model weights (B)"]
    # The axis is log in x: the CSV holds token counts (256 … 32768), not 2.4 … 4.5.
    assert _ints(curve, 0) == list(result.contexts) == scale.context_points(32768)
    geometry = scale.PRESETS["llama-3.1-8b"]
    assert _ints(curve, 1) == [geometry.cache_bytes(c, 8, 16) for c in result.contexts]
    assert _ints(curve, 1)[-1] == 32 * 1024**3
    assert variants[0][0] == "what changes" and variants[1][0] == "as configured"
    assert int(variants[1][1]) == 131072  # bytes per token: 2 · 32 · 8 · 128 · 2
    head = panel.headline()
    assert head.startswith("Llama")
    assert "131,072 B per token (16-bit) → 32.00 GiB for batch 8 × 32,768 tokens" in head
    assert "fits in GPU memory (GiB): 16 ✗ 24 ✗ 40 ✗ 80 ✓" in head
    assert panel.table_values()[0]["cache (8 × 32,768), GiB"] == 32.0
    panel.shutdown()


BAD_CONFIGS = {  # field: (JSON text of its value, what the message says)
    "head_dim": ("Infinity", "head_dim must be a whole number, got inf"),
    "num_key_value_heads": ("[8]", "num_key_value_heads must be a whole number, got a list of 1"),
    "vocab_size": ('{"n": 1}', "vocab_size must be a whole number, got an object"),
    "intermediate_size": ("-32", "intermediate_size must be between 1 and 2,147,483,647, got -32"),
    "max_position_embeddings": ("true", "max_position_embeddings must be a whole number, got True"),
}


def test_projector_shows_what_is_wrong_with_a_config(  # type: ignore[no-untyped-def]
    qtbot, exporter, tiny_handle, tmp_path
) -> None:
    """The same check as `kvstudio project`: on screen, naming the file and the field."""
    panel = show_lab(qtbot, ProjectorPanel, exporter, tiny_handle)
    good = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
            "vocab_size": 32000}
    for field, (value, message) in BAD_CONFIGS.items():
        path = tmp_path / field / "config.json"
        path.parent.mkdir()
        path.write_text(json.dumps({**good, field: "@"}).replace('"@"', value))
        panel.set_config(str(path))  # raised TypeError/OverflowError, or took it, before
        assert panel.status.text() == f"{path}: {message}."
        assert panel.source.findData(str(path)) == -1  # not offered as a model
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    panel.set_config(str(deep))
    assert "nested thousands of levels deep" in panel.status.text()
    panel.shutdown()


def test_projector_refuses_a_config_that_went_bad_after_it_was_chosen(  # type: ignore[no-untyped-def]
    qtbot, exporter, tiny_handle, tmp_path
) -> None:
    panel = show_lab(qtbot, ProjectorPanel, exporter, tiny_handle)
    path = tmp_path / "config.json"
    good = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
            "head_dim": 128, "vocab_size": 32000}
    path.write_text(json.dumps(good))
    panel.set_config(str(path))
    path.write_text(json.dumps({**good, "head_dim": -32}))  # edited on disk since
    assert not panel.run()
    assert panel.status.text() == f"{path}: head_dim must be between 1 and 2,147,483,647, got -32."
    assert panel.result is None and panel.table_rows() == []  # no "Done." with −32 GiB
    panel.shutdown()
