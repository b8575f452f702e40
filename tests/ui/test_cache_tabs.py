"""The Chat and Cache inspector tabs: typed turns, reuse on/off, heat maps that follow the steps.

Every test here fails if a lab thread is left running (conftest's `no_thread_left_running`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from lab_helpers import show_lab
from PySide6.QtCore import QRectF, Qt

from kvstudio.charts import canvas as slide_canvas
from kvstudio.charts import render
from kvstudio.charts.chart_data import read_csv_tables
from kvstudio.charts.plots.results_table import CHECK
from kvstudio.charts.plotted_data import chart_headline, render_csv
from kvstudio.charts.render import render_png
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.chat.session import ChatSession, ChatTurn
from kvstudio.labs.common import prompt_ids
from kvstudio.labs.inspector import CacheInspector
from kvstudio.ui.labs.chat_lab import ChatPanel
from kvstudio.ui.labs.inspector_lab import CacheInspectorPanel
from kvstudio.ui.run import threads
from kvstudio.ui.run.lab_worker import GeneratorWorker
from kvstudio.ui.slides.export_menu import ChartExporter
from tests.ui.waits import HANG_GUARD_MS, HANG_GUARD_S


@pytest.fixture()
def make_panel(qtbot, exporter: ChartExporter, tiny_handle: LoadedModel):  # type: ignore[no-untyped-def]
    """A factory for shown panels on the tiny model; their lab threads stop at teardown."""
    panels: list[ChatPanel | CacheInspectorPanel] = []

    def make(cls):  # type: ignore[no-untyped-def]
        panel = show_lab(qtbot, cls, exporter, tiny_handle, size=(1200, 800))
        panels.append(panel)
        return panel

    yield make
    for panel in panels:
        assert panel.shutdown()


def _send(qtbot, panel: ChatPanel, text: str) -> ChatTurn:  # type: ignore[no-untyped-def]
    panel.turn_box.setFocus()
    if text.isascii():
        qtbot.keyClicks(panel.turn_box, text)  # typed key by key
    else:
        panel.turn_box.setText(text)  # QTest cannot type Hangul
    with qtbot.waitSignal(panel.result_ready, timeout=HANG_GUARD_MS) as done:
        qtbot.keyClick(panel.turn_box, Qt.Key.Key_Return)  # Enter sends
    turn = done.args[0]
    assert isinstance(turn, ChatTurn)
    return turn


def test_chat_tab_typed_turns_reuse_on_and_off(qtbot, make_panel, tiny_handle: LoadedModel) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(ChatPanel)
    panel.answer_tokens.setValue(5)
    first = _send(qtbot, panel, "hello there")
    second = _send(qtbot, panel, "오늘 날씨 어때요?")
    assert panel.turn_box.text() == ""  # sent
    assert first.identical and second.identical
    assert second.reuse is not None and second.refeed is not None
    assert second.reuse.prompt_tokens_fed < second.refeed.prompt_tokens_fed
    # The table shows both ways' tokens fed and the identical check, as measured.
    rows = panel.table.rows()
    assert len(rows) == 2
    assert rows[1]["fed (reuse)"] == str(second.reuse.prompt_tokens_fed)
    assert rows[1]["fed (re-feed)"] == str(second.refeed.prompt_tokens_fed)
    assert rows[1]["identical"] == CHECK
    assert "identical tokens both ways" in panel.status.text()
    assert list(panel.lab_view._fed_refeed.opts["height"]) == [
        first.refeed.prompt_tokens_fed,  # type: ignore[union-attr]
        second.refeed.prompt_tokens_fed,
    ]
    # The same conversation, answered by the core directly.
    ref = ChatSession(tiny_handle.backend, tiny_handle.tokenizer, max_new_tokens=5)
    ref_turns = [
        t
        for text in ("hello there", "오늘 날씨 어때요?", "고마워요")
        for t in ref.run_turn(text)
        if isinstance(t, ChatTurn)
    ]
    # Reuse off: only the re-feed way runs; no identical check to show.
    panel.reuse_box.setChecked(False)
    third = _send(qtbot, panel, "고마워요")
    assert third.reuse is None and third.refeed is not None
    assert panel.table.rows()[2]["fed (reuse)"] == "—"
    assert panel.table.rows()[2]["identical"] == "—"
    assert [t.answer_ids for t in panel.lab_view.turns] == [t.answer_ids for t in ref_turns]
    assert "고마워요" in panel.transcript.toPlainText()
    # Both ways off: a message, nothing runs.
    panel.refeed_box.setChecked(False)
    panel.turn_box.setText("또 만나요")
    assert not panel.run()
    assert "at least one way" in panel.status.text()
    assert len(panel.lab_view.turns) == 3
    png = render_png(panel.lab_view.layout_widget)
    assert png.startswith(b"\x89PNG")
    # The CSV comes from the turns, not from the drawn bars.
    fed_table = read_csv_tables(render_csv(panel.lab_view.layout_widget))[0]
    header = fed_table[0]
    assert header[0] == "turn"
    refeed_fed = [row[header.index("re-feed: prompt tokens fed")] for row in fed_table[1:]]
    assert refeed_fed == [str(t.refeed.prompt_tokens_fed) for t in panel.lab_view.turns]  # type: ignore[union-attr]
    reuse_fed = [row[header.index("reuse: prompt tokens fed")] for row in fed_table[1:]]
    assert reuse_fed == [
        str(first.reuse.prompt_tokens_fed),
        str(second.reuse.prompt_tokens_fed),
        "",
    ]  # type: ignore[union-attr]
    assert "identical greedy tokens in 2 of 2 compared turns" in chart_headline(
        panel.lab_view.layout_widget)
    panel.new_chat()
    assert panel.lab_view.turns == [] and panel.table.rowCount() == 0


def test_chat_tab_ttft_is_a_median_of_interleaved_rounds_or_said_single(  # type: ignore[no-untyped-def]
        qtbot, make_panel) -> None:
    panel = make_panel(ChatPanel)
    panel.answer_tokens.setValue(3)
    panel.ttft_rounds.setValue(3)
    turn = _send(qtbot, panel, "안녕하세요")
    assert turn.reuse is not None and turn.reuse.ttft_rounds == 3
    row = panel.table.rows()[0]
    assert "median of 3" in row["TTFT (reuse, ms)"] and "median of 3" in row["TTFT (re-feed, ms)"]
    # The CSV gets the median itself, a number (#33: it held "6.9 ms (median of 5, …)")
    value = panel.table.values()[0]["TTFT (reuse, ms)"]
    assert value == 1000 * turn.reuse.ttft_median_s
    assert "median of 3" in panel.headline()
    assert "interleaved" in panel.lab_view.ttft_plot.titleLabel.text
    assert panel.numbers()["turns"][0]["reuse"]["ttft_rounds"] == 3
    panel.ttft_rounds.setValue(1)
    single = _send(qtbot, panel, "오늘 날씨 어때요?")
    assert single.reuse is not None and single.reuse.ttft_rounds == 1
    assert "single measurement" in panel.table.rows()[1]["TTFT (reuse, ms)"]
    assert "single measurement" in panel.headline()


def test_chat_tab_context_limit_message_keeps_the_chat(
    qtbot, make_panel, tiny_handle: LoadedModel
) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(ChatPanel)
    panel.answer_tokens.setValue(4)
    _send(qtbot, panel, "안녕하세요")
    panel.context_limit.setValue(panel.lab_view.turns[0].history_tokens + 6)
    panel.turn_box.setText("안녕하세요")  # it would fit a new chat: so that is what to do
    assert not panel.run()
    assert "Start a new chat" in panel.status.text()
    assert len(panel.lab_view.turns) == 1 and panel.turn_box.text() != ""  # nothing lost


def test_chat_scripted_turns(qtbot, make_panel, tiny_handle: LoadedModel) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(ChatPanel)
    first = panel.next_scripted_turn()
    second = panel.next_scripted_turn()
    assert first and second and first != second and panel.turn_box.text() == second


class StepInFlightAtStop:
    """The tiny model's backend whose forward call number `at` is running when the lab
    thread is asked to stop (Cancel, or closing the window): that call lasts until the
    stop is asked for. Counts the forward calls that start after it."""

    def __init__(self, inner: Any, at: int, stop_asked: threading.Event) -> None:
        self._inner = inner
        self.at = at
        self.stop_asked = stop_asked
        self.running = threading.Event()  # call `at` has started
        self.calls = 0
        self.after_stop = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def forward_last(self, *args: Any) -> Any:
        self.calls += 1
        if self.stop_asked.is_set():
            self.after_stop += 1
        elif self.calls == self.at:
            self.running.set()
            self.stop_asked.wait(HANG_GUARD_S)
        return self._inner.forward_last(*args)


def _watch_stops(
    monkeypatch: pytest.MonkeyPatch, also: Callable[[], None] = lambda: None,
    only: str | None = None,
) -> threading.Event:
    """An event set once a lab thread is asked to stop (after its flag is set): any lab's,
    or only the one whose thread is named `only`. `also` runs at every request."""
    asked = threading.Event()
    request_cancel = GeneratorWorker.request_cancel

    def request_and_note(worker: GeneratorWorker, job: int) -> None:
        also()
        request_cancel(worker, job)
        if only is None or worker.thread().objectName() == only:
            asked.set()

    monkeypatch.setattr(GeneratorWorker, "request_cancel", request_and_note)
    return asked


def _start_slow_turn(qtbot, panel: ChatPanel, model: LoadedModel, at: int, asked):  # type: ignore[no-untyped-def]
    backend = StepInFlightAtStop(model.backend, at, asked)
    panel.set_model(replace(model, backend=backend))
    panel.answer_tokens.setValue(12)
    panel.turn_box.setText("hello there")
    assert panel.run()
    qtbot.waitUntil(backend.running.is_set, timeout=HANG_GUARD_MS)
    return backend


def test_chat_cancel_mid_turn_stops_after_the_step_in_flight(
    qtbot, make_panel, tiny_handle: LoadedModel, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Cancel during the reuse way's second step: nothing after that step runs (issue 19)."""
    reference = ChatSession(tiny_handle.backend, tiny_handle.tokenizer, max_new_tokens=12)
    (expected,) = [t for t in reference.run_turn("hello there") if isinstance(t, ChatTurn)]
    assert len(expected.answer_ids) == 12  # no early eos: the way has ten steps left to skip
    panel = make_panel(ChatPanel)
    backend = _start_slow_turn(qtbot, panel, tiny_handle, 2, _watch_stops(monkeypatch))
    with qtbot.waitSignal(panel.runner.cancelled, timeout=HANG_GUARD_MS):
        panel.cancel_button.click()
    assert (backend.calls, backend.after_stop) == (2, 0)
    assert panel.lab_view.turns == [] and panel.status.text() == "Cancelled."
    # The next Send answers as if the cancelled turn had never run, with the same numbers.
    panel.turn_box.clear()
    turn = _send(qtbot, panel, "hello there")
    assert turn.answer_ids == expected.answer_ids and turn.identical
    for got, want in ((turn.reuse, expected.reuse), (turn.refeed, expected.refeed)):
        assert got is not None and want is not None
        assert (got.prompt_tokens_fed, got.decode_tokens_fed, got.cache_bytes) == (
            want.prompt_tokens_fed,
            want.decode_tokens_fed,
            want.cache_bytes,
        )


def test_closing_the_window_mid_chat_turn_hides_it_and_stops_after_the_step(
    qtbot, make_window, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """Closed during a chat prefill: the window is hidden before anything waits, the chat
    thread stops after the step in flight and is not left parked (issue 19)."""
    window = make_window()
    chat = window.classroom.chat
    visible_when_asked: list[bool] = []
    # Closing asks every lab to stop; the chat's step may go on only once the chat was asked.
    asked = _watch_stops(monkeypatch, lambda: visible_when_asked.append(window.isVisible()),
                         only=f"kvstudio-lab-{type(chat).__name__}")
    backend = _start_slow_turn(qtbot, chat, window.controller.model, 1, asked)
    window.close()  # returns once the lab threads have stopped (or were parked)
    assert visible_when_asked and not any(visible_when_asked)
    assert (backend.calls, backend.after_stop) == (1, 0)
    assert not chat.runner.is_running() and threads.parked_threads() == []


def _wait_paused(qtbot, panel: CacheInspectorPanel, action) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(panel.runner.paused, timeout=HANG_GUARD_MS):
        assert action()


def test_inspector_steps_and_switches_layer_and_head(
    qtbot, make_panel, tiny_handle: LoadedModel
) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(CacheInspectorPanel)
    view = panel.inspector_view  # what draws the heat maps and the table
    panel.new_tokens.setValue(6)
    assert panel.layer.maximum() == 1 and panel.kv_head.maximum() == 1  # the tiny model
    _wait_paused(qtbot, panel, panel.run)
    frame = view.frame
    assert frame is not None and frame.step == 0
    rows_before = view.k_image.image.shape[0]
    assert rows_before == frame.held_rows()
    _wait_paused(qtbot, panel, panel.step)
    frame = view.frame
    assert frame is not None and frame.step == 1
    # A step adds one row to the heat map, and the table says the old rows did not change.
    assert view.k_image.image.shape == (rows_before + 1, frame.keys.shape[-1])
    assert panel.table.rows()[1]["old rows max |Δ|"] == "0"
    assert panel.table.rows()[1]["appended per layer"] == "1, 1"
    np.testing.assert_array_equal(view.k_image.image, frame.keys[0, :, 0, :])
    np.testing.assert_array_equal(view.attn_image.image, frame.attention[0, [0, 1], :].T)
    # Layer and head switch redraw from the same frame.
    panel.layer.setValue(1)
    panel.kv_head.setValue(1)
    np.testing.assert_array_equal(view.k_image.image, frame.keys[1, :, 1, :])
    np.testing.assert_array_equal(view.v_image.image, frame.values[1, :, 1, :])
    np.testing.assert_array_equal(view.attn_image.image, frame.attention[1, [2, 3], :].T)
    assert "layer 1, K/V head 1" in view.k_plot.titleLabel.text
    labels = view.k_plot.getAxis("left")._tickLevels[0]
    assert labels[-1][1].startswith(f"{frame.query_position}: ")
    # The same tokens as the core inspector.
    with qtbot.waitSignal(panel.result_ready, timeout=HANG_GUARD_MS):
        assert panel.run_to_end()
    ids = prompt_ids(tiny_handle, panel.prompt.text())
    ref = [
        f.token_id
        for f in CacheInspector(tiny_handle.backend, tiny_handle.tokenizer, ids, max_new_tokens=6)
    ]
    assert [int(r["step"]) for r in panel.table.rows()] == list(range(len(ref)))
    assert view.frame is not None and view.frame.token_id == ref[-1]
    assert render_png(view.layout_widget).startswith(b"\x89PNG")
    assert panel.numbers()["steps"][1]["old_rows_max_delta"] == 0.0
    # CSV: the heat maps' numbers for the layer and head on screen, and the checks per step.
    k_table, v_table, attention_table, checks = read_csv_tables(render_csv(view.layout_widget))
    last = view.frame
    assert last is not None
    assert k_table[0][:4] == ["cache row", "position", "token", "K d0"]
    assert len(k_table) - 1 == last.held_rows()
    assert float(k_table[1][3]) == float(last.keys[1, 0, 1, 0])
    assert float(v_table[-1][-1]) == float(last.values[1, -1, 1, -1])
    assert attention_table[0][3:] == ["q2", "q3"]
    assert [row[0] for row in checks[1:]] == [str(s) for s in range(len(ref))]
    assert "old rows max |Δ| over" in chart_headline(view.layout_widget)


def test_inspector_static_and_recompute(qtbot, make_panel, tiny_handle: LoadedModel) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(CacheInspectorPanel)
    view = panel.inspector_view  # what draws the heat maps and the table
    panel.new_tokens.setValue(3)
    panel.kind.setCurrentIndex(panel.kind.findData("static"))
    panel.cache_size.setValue(48)
    panel.mode.setCurrentIndex(panel.mode.findData("recompute"))
    _wait_paused(qtbot, panel, panel.run)
    with qtbot.waitSignal(panel.result_ready, timeout=HANG_GUARD_MS):
        assert panel.run_to_end()
    frame = view.frame
    assert frame is not None
    image = view.k_image.image
    assert image.shape[0] == 48  # every slot of the static cache is drawn
    assert np.isnan(image[frame.held_rows() :]).all()  # empty slots stay empty
    row = panel.table.rows()[-1]
    assert float(row["recompute max |Δ| K"]) < 1e-5
    assert "same dtype" in panel.status.text()


def test_inspector_refuses_a_bad_static_length(qtbot, make_panel, tiny_handle: LoadedModel) -> None:  # type: ignore[no-untyped-def]
    panel = make_panel(CacheInspectorPanel)
    panel.kind.setCurrentIndex(panel.kind.findData("static"))
    panel.cache_size.setValue(4)
    assert not panel.run()
    assert "static cache holds 4" in panel.status.text()


def test_window_has_chat_and_inspector_tabs(make_window) -> None:  # type: ignore[no-untyped-def]
    window = make_window("ko")
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    extras = window.classroom
    assert window.tabs.indexOf(extras.chat) >= 0 and window.tabs.indexOf(extras.inspector) >= 0
    assert "채팅" in titles and "캐시 들여다보기" in titles
    assert extras.chat.model is window.controller.model


def _panel_parts(plot) -> list[QRectF]:  # type: ignore[no-untyped-def]
    """Scene rects of what a heat-map panel draws: its view, its shown axes, its title text."""
    parts = [plot.getViewBox().sceneBoundingRect()]
    parts += [
        plot.getAxis(side).sceneBoundingRect()
        for side in ("left", "bottom")
        if plot.getAxis(side).isVisible()
    ]
    title = plot.titleLabel.item
    parts.append(title.mapRectToScene(title.boundingRect()))
    return parts


def test_inspector_export_keeps_every_panel_whole_on_each_canvas(
    qtbot, make_panel, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """K, V and attention each sit whole on the slide canvas, side by side, titles inside."""
    panel = make_panel(CacheInspectorPanel)
    view = panel.inspector_view  # what draws the heat maps and the table
    panel.new_tokens.setValue(8)
    _wait_paused(qtbot, panel, panel.run)
    for _ in range(3):
        _wait_paused(qtbot, panel, panel.step)
    seen: dict[str, list[tuple[QRectF, list[QRectF]]]] = {}
    paint_page = render._paint_page

    def spy(painter, item, head, canvas, background):  # type: ignore[no-untyped-def]
        seen[canvas.key] = [(item.sceneBoundingRect(), [])] + [
            (QRectF(), _panel_parts(plot))
            for plot in (view.k_plot, view.v_plot, view.attn_plot)
        ]
        paint_page(painter, item, head, canvas, background)

    monkeypatch.setattr(render, "_paint_page", spy)
    headline = chart_headline(view.layout_widget)
    for canvas in slide_canvas.CANVASES:
        assert render_png(view.layout_widget, canvas, headline=headline).startswith(b"\x89PNG")
        (chart, _), *panels = seen[canvas.key]
        # The chart was laid out at the canvas's width (less the page margins), not the screen's.
        assert canvas.width * 0.9 < chart.width() <= canvas.width
        assert chart.height() <= canvas.height
        page = chart.adjusted(-0.5, -0.5, 0.5, 0.5)
        whole = []
        for _, parts in panels:
            for part in parts:
                assert page.contains(part), (canvas.key, part, chart)
            united = parts[0]
            for part in parts[1:]:
                united = united.united(part)
            whole.append(united)
        for i, a in enumerate(whole):
            for b in whole[i + 1 :]:
                overlap = a.intersected(b)
                assert overlap.width() < 0.5 or overlap.height() < 0.5, (canvas.key, a, b)
        # The three views are level: their rows (one per cache position) line up.
        tops = {round(parts[0].top(), 1) for _, parts in panels}
        assert len(tops) == 1, (canvas.key, tops)


def test_a_paste_cut_by_the_turn_box_says_so(qtbot, make_panel) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QApplication

    panel = make_panel(ChatPanel)
    QApplication.clipboard().setText("가" * 1_000_000)  # a 1 MB paste
    panel.turn_box.paste()
    limit = panel.turn_box.maxLength()
    assert len(panel.turn_box.text()) == limit == 32_767  # explicit, and said on screen:
    assert f"at most {limit:,} characters" in panel.status.text()
    assert "cut" in panel.status.text() and "Shorten the turn" in panel.status.text()
    panel.turn_box.setText("안녕하세요")  # a short turn says nothing of the kind
    panel.set_status(lambda: "")
    panel.turn_box.setText("안녕하세요!")
    assert panel.status.text() == ""
