"""The beam search lab on the tiny model: the tree, the byte chart's CSV, the tables, exports."""

from __future__ import annotations

import json

from lab_helpers import run_lab, show_lab

from kvstudio.charts.canvas import canvas_named
from kvstudio.charts.chart_data import read_csv_tables
from kvstudio.charts.export import export_slide_pack
from kvstudio.charts.plotted_data import render_csv
from kvstudio.labs.beam import BeamLabResult
from kvstudio.ui.labs import BeamSearchPanel


def test_beam_lab_draws_the_record(qtbot, exporter, tiny_handle, tmp_path) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, BeamSearchPanel, exporter, tiny_handle, size=(1100, 700))
    panel.beams.setValue(3)
    panel.new_tokens.setValue(5)
    panel.block_size.setValue(4)
    panel.check_transformers.setChecked(False)  # tests/hf compares with transformers
    result = run_lab(qtbot, panel)
    assert isinstance(result, BeamLabResult)
    steps = result.steps
    # The beam table lists the slider's step: one row per beam, its parent row and score.
    assert panel.step_slider.maximum() == len(steps) - 1
    panel.step_slider.setValue(0)
    rows = panel.lab_view.beam_table.rows()
    assert [row["from row"] for row in rows] == ["0", "0", "0"]  # all continue the prompt
    # The title counts tokens as the tree's x axis does: the marked column is its number.
    for index in (0, len(steps) - 1):
        panel.step_slider.setValue(index)
        marked = panel.lab_view._chosen.xData[0]
        assert marked == steps[index].step + 1
        assert f"token {marked:g}:" in panel.lab_view.tree_plot.titleLabel.text
    panel.step_slider.setValue(0)
    # The byte chart's CSV: cumulative bytes per step, as the records say.
    copies, tree = read_csv_tables(render_csv(panel.lab_view.layout_widget))
    assert copies[0][:4] == ["step", "reorder, so far (B)", "index_select, so far (B)",
                             "paged copy on write, so far (B)"]
    assert [int(row[1]) for row in copies[1:]] == list(result.cumulative_reorder_bytes)
    assert [int(row[3]) for row in copies[1:]] == list(result.cumulative_cow_bytes)
    assert [int(row[4]) for row in copies[1:]] == [s.rows_moved for s in steps]
    assert int(copies[1][1]) == 2 * steps[0].row_bytes  # the prompt row copied to rows 1, 2
    assert tree[0][1:3] == ["beam 0: from row", "beam 0: Σ log p"]
    # The summary: the returned answers, the totals as numbers, transformers not run.
    values = {row["quantity"]: row for row in panel.table_values()}
    assert values["reorder (B)"]["value"] == result.search.reorder_bytes
    assert values["same as transformers"]["value"] == "not checked"
    assert "not compared with transformers" in panel.headline()
    assert f"{len(steps)} steps" in panel.headline()
    json.dumps(panel.numbers())
    # The slide pack: the chart in every format, its numbers and the table.
    pack = export_slide_pack({f"lab {k}": c for k, c in panel.charts().items()},
                             tmp_path / "pack", {"BeamSearch": panel.numbers()},
                             {"BeamSearch": panel.table_rows()}, canvas_named("16:9 small"))
    names = {p.name for p in pack.written}
    assert {f"lab-beam-search.{ext}" for ext in ("png", "svg", "pdf", "csv")} <= names
    panel.shutdown()


def test_early_stopping_choices_are_said_in_the_windows_language(qtbot, exporter) -> None:  # type: ignore[no-untyped-def]
    """The combo showed transformers' bare "False" in the Korean window ("조기 종료 False",
    #33); each choice is now said in the window's language, transformers' value beside it."""
    from PySide6.QtWidgets import QApplication

    from kvstudio.charts.i18n import LanguageSwitcher

    panel = BeamSearchPanel(exporter)
    qtbot.addWidget(panel)
    box = panel.early_stopping
    assert [box.itemText(i) for i in range(3)] == ["no (False)", "yes (True)", "never ('never')"]
    languages = LanguageSwitcher(QApplication.instance())  # type: ignore[arg-type]
    try:
        languages.apply("ko")
        korean = ["아니요 (False)", "예 (True)", "끝까지 안 함 ('never')"]
        qtbot.waitUntil(lambda: [box.itemText(i) for i in range(3)] == korean, timeout=5000)
    finally:
        languages.apply("en")
    panel.shutdown()
