"""The speculative-decoding lab in the window: rounds, charts, table, exports, and its draft.

On the tiny test model the shipped ko-draft (another tokenizer) cannot draft, so only
prompt lookup runs and the status says why; a greedy run is identical to plain greedy.
"""

from __future__ import annotations

import pytest
from lab_helpers import run_lab, show_lab

from kvstudio.charts.chart_data import read_csv_tables
from kvstudio.charts.plotted_data import render_csv
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.registry import SPECULATIVE
from kvstudio.labs.speculative import SpeculativeLabResult, draft_lengths
from kvstudio.ui.labs import SpeculativePanel
from kvstudio.ui.slides.export_menu import ChartExporter

pytestmark = pytest.mark.usefixtures("qapp")


def test_the_lab_shows_rounds_ks_and_totals(
    qtbot, exporter: ChartExporter, tiny_handle: LoadedModel  # type: ignore[no-untyped-def]
) -> None:
    panel = show_lab(qtbot, SpeculativePanel, exporter, tiny_handle)
    panel.question.setText("오늘 날씨 어때? 오늘 날씨 어때? 오늘 날씨")
    panel.ks.setText("2, 1")
    panel.new_tokens.setValue(8)
    panel.repeats.setValue(1)
    result = run_lab(qtbot, panel)
    assert isinstance(result, SpeculativeLabResult)
    assert [(r.draft_kind, r.k) for r in result.runs] == [("prompt-lookup", 1),
                                                          ("prompt-lookup", 2)]
    assert "Only prompt lookup ran" in panel.status.text()  # ko-draft's tokenizer differs
    assert result.all_identical  # greedy: the same tokens as plain decoding
    # The rounds view marks every round; the table has one row per run.
    assert panel.shown_run.count() == 2
    assert panel.lab_view.rounds_view.toPlainText().count("target ") >= len(result.runs[0].rounds)
    assert len(panel.table_rows()) == 2
    assert all(row["identical to greedy"] == "✓" for row in panel.table_rows())
    # The charts draw what the result holds: rows per round, and α / tokens per call vs k.
    shown = panel.lab_view.shown()
    assert shown is not None
    rounds_csv, ks_csv = read_csv_tables(render_csv(panel.lab_view.rounds_chart))
    assert len(rounds_csv) == 1 + len(shown.rounds)  # a header, then one row per round
    assert [row[0] for row in ks_csv[1:]] == ["1", "2"]  # one row per k
    # Switching the run shown redraws the rounds.
    panel.shown_run.setCurrentIndex(0)
    assert panel.lab_view.shown() is result.runs[0]
    assert "k = 1" in panel.data_tables()[0].title
    assert "identical to greedy: 2 of 2" in panel.headline()
    numbers = panel.numbers()
    assert numbers["runs"][0]["rounds"][0]["target_rows"] == result.prompt_tokens
    assert numbers["plain_ms"]["repeats"] == 1


@pytest.mark.parametrize("text", ["", "0", "1, x", "65"])
def test_k_values_are_checked(text: str) -> None:
    with pytest.raises(ValueError, match="k"):
        SPECULATIVE.param("ks").parse(text)


def test_k_values_are_sorted_once() -> None:
    assert draft_lengths(SPECULATIVE.param("ks").parse("8, 1; 4, 1")) == [1, 4, 8]
