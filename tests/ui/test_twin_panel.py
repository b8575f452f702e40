"""The engine twin lab's window panel: its tab shows with or without the llama extra; without
it, Run says what to install; with it, the tiny model runs in both engines side by side."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from lab_helpers import run_lab, show_lab

from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.labs import EngineTwinPanel, LabsPanel
from kvstudio.ui.slides.export_menu import ChartExporter


def test_without_the_llama_extra_run_says_what_to_install(
    qtbot: Any, exporter: ChartExporter, tiny_handle: LoadedModel,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if it were not installed
    labs = LabsPanel(exporter)
    qtbot.addWidget(labs)
    assert "twin" in labs.panels  # the tab shows all the same
    assert labs.panels["twin"].title() in [labs.tabs.tabText(i) for i in range(labs.tabs.count())]
    panel = show_lab(qtbot, EngineTwinPanel, exporter, tiny_handle)
    panel.prompt_tokens.setValue(48)
    messages: list[str] = []
    panel.failed.connect(messages.append)
    assert not panel.run()
    assert messages and "pip install 'kvstudio[llama]'" in messages[0]
    assert "llama-cpp-python" in panel.status.text()
    assert not panel.runner.busy and panel.result is None
    assert labs.shutdown()


@pytest.mark.engines
@pytest.mark.slow
def test_the_tiny_model_runs_in_both_engines(
    qtbot: Any, exporter: ChartExporter, tiny_handle: LoadedModel
) -> None:
    pytest.importorskip("gguf", reason="pip install -e '.[llama]'")
    pytest.importorskip("llama_cpp", reason="pip install -e '.[llama]'")
    from kvstudio.labs.twin import TwinResult

    panel = show_lab(qtbot, EngineTwinPanel, exporter, tiny_handle)
    panel.prompt_tokens.setValue(48)
    panel.new_tokens.setValue(6)
    panel.repeats.setValue(2)
    result = run_lab(qtbot, panel)
    assert isinstance(result, TwinResult)
    assert result.identical and len(result.ours.tokens) == 6
    # llama.cpp's line gives MiB to 2 decimals: equal within that rounding
    cells = int(result.llama_kv_line.split("(")[1].split("cells")[0])
    assert abs(result.ours.kv_bytes_per_token - result.theirs.kv_bytes_per_token) <= \
        0.005 * 2**20 / cells
    rows = panel.table_rows()
    assert rows[0]["KV Studio"] == rows[0]["llama.cpp"] == "✓ 6/6"
    assert "6/6" in panel.headline() and "B/token" in panel.headline()
    numbers = panel.numbers()
    assert numbers["identical"] and len(numbers["kv_studio"]["round_ms"]) == 2
    (table,) = panel.data_tables()
    assert [s.header for s in table.series] == ["KV Studio: ms/token", "llama.cpp: ms/token"]
    assert "twin" in panel.charts()


def test_a_sampled_run_that_parts_shows_the_step_and_the_probability_gap(
    qtbot: Any, exporter: ChartExporter, tiny_handle: LoadedModel
) -> None:
    """Sampled with one seed, the engines may part where a draw lands near an edge: the view
    names the seed, the step and the probability gap there (no top-2 margin: not greedy)."""
    from kvstudio.engine.records import SamplingSettings
    from kvstudio.labs.twin import EngineSide, TwinResult

    def side(name: str, tokens: tuple[int, ...]) -> EngineSide:
        return EngineSide(name, tokens, 2048.0, "", 46, 183, True, (0.9, 1.0, 1.1))

    result = TwinResult(183, 4, SamplingSettings(temperature=0.85, seed=2), 137,
                        side("KV Studio", (5, 6, 7, 8)), side("llama.cpp", (5, 6, 9, 8)),
                        first_diff_step=2, max_logit_gap=0.0097, top2_margin=None,
                        probability_gap=0.00057, llama_state_bytes_per_token=2060.0,
                        llama_kv_line="")
    panel = show_lab(qtbot, EngineTwinPanel, exporter, tiny_handle)
    view = panel.lab_view
    view.start({"temperature": 0.85, "seed": 2})
    view.result = result
    view.show_result(result)
    rows = view.table_rows()
    questions = [next(iter(row.values())) for row in rows]  # the first column: what is asked
    assert questions[0] == "tokens the same (sampled, T 0.85, seed 2)"
    assert rows[0]["KV Studio"] == rows[0]["llama.cpp"] == "✗ from step 2"
    assert "max |Δprobability| there" in questions
    assert not any("top-2 margin" in q for q in questions)
    assert "Tokens part at step 2 of 4 (sampled, T 0.85, seed 2)" in view.headline()
    assert view.numbers()["seed"] == 2 and view.numbers()["probability_gap"] == 0.00057
