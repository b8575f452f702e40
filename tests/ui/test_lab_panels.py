"""The lab panels run the engine's experiments on the lab thread and show the same numbers.

Every test here fails if a lab thread is left running (conftest's `no_thread_left_running`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_helpers import run_lab, show_lab
from PySide6.QtCore import QThread

from kvstudio.charts.canvas import canvas_named
from kvstudio.charts.chart_data import read_csv_tables
from kvstudio.charts.export import export_slide_pack
from kvstudio.charts.plotted_data import render_csv
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.cache.compare import CompareResult, RepeatedCompare, compare_modes
from kvstudio.labs.cache.kinds import CacheKindsResult, cache_kinds
from kvstudio.labs.cache.sweep import SweepLabResult
from kvstudio.labs.common import Progress, finish, lab_prompt_ids, prompt_ids
from kvstudio.labs.sampling.cutoff import DistributionRun
from kvstudio.labs.sampling.sample import SamplingResult, repeated_sampling
from kvstudio.labs.sampling.temperature import TemperatureLabResult
from kvstudio.ui.labs import (
    CacheKindsPanel,
    CacheVsRecomputePanel,
    LabsPanel,
    LengthSweepPanel,
    TemperaturePanel,
    TopPTopKPanel,
)
from kvstudio.ui.run.lab_worker import GeneratorRunner
from tests.ui.waits import HANG_GUARD_MS, HANG_GUARD_S


# ---- the worker ----------------------------------------------------------------------------
def _counting(n: int) -> Iterator[object]:
    for i in range(n):
        yield Progress("test", "count", i + 1, n)
    yield "result"


def test_runner_progress_finished_and_stepping(qtbot) -> None:  # type: ignore[no-untyped-def]
    runner = GeneratorRunner()
    seen: list[object] = []
    runner.progress.connect(seen.append)
    with qtbot.waitSignal(runner.finished, timeout=HANG_GUARD_MS) as done:
        runner.start(lambda: _counting(3))
    assert done.args == ["result"] and [p.done for p in seen] == [1, 2, 3]  # type: ignore[attr-defined]
    seen.clear()
    with qtbot.waitSignal(runner.paused, timeout=HANG_GUARD_MS):
        runner.start(lambda: _counting(3), count=1)
    assert len(seen) == 1 and runner.has_job
    with qtbot.waitSignal(runner.paused, timeout=HANG_GUARD_MS):
        assert runner.advance(1)
    assert len(seen) == 2
    with qtbot.waitSignal(runner.finished, timeout=HANG_GUARD_MS):
        assert runner.advance(-1)
    assert len(seen) == 3 and not runner.has_job
    assert runner.shutdown() and not runner.is_running()
    with pytest.raises(RuntimeError):
        runner.start(lambda: _counting(1))  # a shut-down runner takes no more jobs
    idle = GeneratorRunner()
    assert not idle.is_running()  # the thread starts with the first job
    assert idle.shutdown()


def test_runner_cancel_and_failure(qtbot) -> None:  # type: ignore[no-untyped-def]
    runner = GeneratorRunner()
    closed: list[bool] = []

    def endless() -> Iterator[object]:
        try:
            while True:
                yield Progress("test", "forever", 0, 0)
                QThread.msleep(2)
        finally:
            closed.append(True)

    with qtbot.waitSignal(runner.cancelled, timeout=HANG_GUARD_MS):
        runner.start(endless)
        qtbot.wait(30)
        runner.cancel()
    assert closed == [True] and not runner.busy

    def broken() -> Iterator[object]:
        yield 1
        raise ValueError("The lab needs a model with a cache.")

    with qtbot.waitSignal(runner.failed, timeout=HANG_GUARD_MS) as failure:
        runner.start(broken)
    assert failure.args == ["The lab needs a model with a cache."]
    assert runner.shutdown()


def test_a_cancel_sent_before_its_job_began_stops_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Cancel pressed right after Start, while the worker thread is still busy before the new
    job begins (a loaded machine): the job stops before its first item. The job's start used
    to clear the cancel, and this job then ran forever (a CI run under load, once)."""
    runner = GeneratorRunner()
    release = threading.Event()
    pulled: list[int] = []

    def busy() -> Iterator[object]:
        release.wait(HANG_GUARD_S)  # the worker thread is held here
        yield Progress("test", "busy", 1, 1)
        yield "busy's result"

    def endless() -> Iterator[object]:
        while True:
            pulled.append(1)
            yield Progress("test", "forever", 0, 0)
            QThread.msleep(2)

    runner.start(busy)
    runner.start(endless)  # queued to the worker thread behind `busy`
    runner.cancel()
    with qtbot.waitSignal(runner.cancelled, timeout=HANG_GUARD_MS):
        release.set()
    assert pulled == [] and not runner.busy and not runner.has_job
    assert runner.shutdown()


# ---- the labs ------------------------------------------------------------------------------
def test_cache_lab_matches_compare_modes(qtbot, exporter, tiny_handle: LoadedModel) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, CacheVsRecomputePanel, exporter, tiny_handle)
    panel.prompt_tokens.setValue(20)
    panel.new_tokens.setValue(6)
    assert panel.repeats.value() == 5  # the default: timings are medians of 5 rounds
    panel.repeats.setValue(3)
    result = run_lab(qtbot, panel)
    assert isinstance(result, RepeatedCompare) and len(result.rounds) == 3
    ids = lab_prompt_ids(tiny_handle.tokenizer, 20)
    ref = finish(compare_modes(tiny_handle.backend, tiny_handle.tokenizer, ids, 6), CompareResult)
    assert result.first.cached.token_ids == ref.cached.token_ids
    assert result.run("recompute").tokens_fed == ref.recompute.tokens_fed == 20 * 6 + 6 * 5 // 2
    rows = {r[""]: r for r in panel.table_rows()}
    assert rows["tokens fed, measured"]["Cached"] == f"{20 + 5:,}"
    assert rows["measured = formula"]["Recompute"] == "✓"
    assert rows["identical tokens"]["Cached"] == "✓"
    values = {r["quantity"]: r for r in panel.table_values()}
    assert values["identical tokens"]["Cached"] is True  # the CSV gets a bool, not "✓"
    assert "first divergent step" not in values
    _, ys = panel.lab_view._time_curves["recompute"].getData()
    _, low = panel.lab_view._low["recompute"].getData()
    _, high = panel.lab_view._high["recompute"].getData()
    assert len(ys) == 6 and all(lo <= y <= hi for lo, y, hi in zip(low, ys, high, strict=True))
    ttft = [1000 * r.recompute.ttft_seconds for r in result.rounds]
    assert ys[0] == pytest.approx(sorted(ttft)[1])  # the median of three rounds
    totals = [result.total_ms(m).median for m in ("cached", "recompute")]
    assert result.speed_ratio == pytest.approx(totals[1] / totals[0])
    assert panel.numbers()["recompute_tokens_fed"] == 135
    values = {r["quantity"]: r for r in panel.table_values()}
    assert values["tokens fed, measured"]["Recompute"] == 135  # a number, not "135"
    assert values["cache, measured (bytes)"]["Cached"] == result.run("cached").cache_bytes
    head = panel.headline()
    big = head.splitlines()[0]  # the slide's big line states the result in numbers (#33)
    same = sum(a == b for a, b in zip(result.run("cached").token_ids,
                                      result.run("recompute").token_ids, strict=True))
    assert big.startswith(f"Same tokens {same}/6 · tokens fed 25 vs 135 · ")
    for mode in ("cached", "recompute"):  # each mode's decode ms/token, a median of 3 rounds
        assert f"{mode} {result.decode_ms_per_token(mode).median:.2f} ms/token" in big
    assert big.endswith("(median of 3 rounds)")
    ratio = (result.decode_ms_per_token("recompute").median
             / result.decode_ms_per_token("cached").median)
    assert f"{ratio:.1f}× per decoded token, {result.speed_ratio:.1f}× in total time" in head
    fed = read_csv_tables(render_csv(panel.lab_view.layout_widget))[2]
    assert fed[0] == ["step (0 = prefill)", "Cached: tokens fed (tokens)",
                      "Recompute: tokens fed (tokens)"]
    assert [row[2] for row in fed[1:]] == [str(v) for v in ref.recompute.tokens_fed_per_step]
    panel.shutdown()


def test_cache_lab_in_bf16(qtbot, exporter, tiny_handle: LoadedModel) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, CacheVsRecomputePanel, exporter, tiny_handle)
    panel.prompt_tokens.setValue(10)
    panel.new_tokens.setValue(3)
    panel.dtype.setCurrentIndex(panel.dtype.findData("bfloat16"))
    panel.repeats.setValue(2)
    result = run_lab(qtbot, panel)
    assert isinstance(result, RepeatedCompare)
    cached = result.run("cached")
    assert cached.cache_bytes == cached.cache_bytes_formula  # 2 bytes per number
    assert all("bfloat16" in r.model_label for r in result.rounds)
    panel.shutdown()


def test_temperature_lab_matches_repeated_sampling(
    qtbot, exporter, tiny_handle: LoadedModel
) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, TemperaturePanel, exporter, tiny_handle)
    panel.temperatures.setText("0.5, 1.5")
    panel.samples.setValue(5)
    panel.new_tokens.setValue(3)
    result = run_lab(qtbot, panel)
    assert isinstance(result, TemperatureLabResult)
    ids = prompt_ids(tiny_handle, panel.prompt.text())
    ref = finish(
        repeated_sampling(
            tiny_handle.backend,
            tiny_handle.tokenizer,
            ids,
            (0.5, 1.5),
            5,
            3,
            settings=panel.sampling(),  # the lab runs the course knobs, as the dock
        ),
        SamplingResult,
    )
    assert [t.counts for t in result.cached.temperatures] == [t.counts for t in ref.temperatures]
    assert result.same_in_both_modes is True
    rows = panel.table_rows()
    assert rows[-1]["distinct"] == "✓"  # same seed, both modes
    assert [int(r["distinct"]) for r in rows[:-1]] == [t.distinct for t in ref.temperatures]
    assert len(panel.lab_view._bars) == 2 and "T = 0.5:" in panel.lab_view.answers.toPlainText()
    panel.shutdown()


def test_temperature_lab_bad_input_and_cancel(qtbot, exporter, tiny_handle: LoadedModel) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, TemperaturePanel, exporter, tiny_handle)
    panel.temperatures.setText("warm, hot")
    with qtbot.waitSignal(panel.failed, timeout=HANG_GUARD_MS) as failure:
        assert not panel.run()
    assert "temperatures" in failure.args[0]
    panel.temperatures.setText("0.7, 1.0, 1.3, 1.6")
    panel.samples.setValue(64)
    panel.new_tokens.setValue(64)
    with qtbot.waitSignal(panel.runner.cancelled, timeout=HANG_GUARD_MS):
        assert panel.run()
        qtbot.waitUntil(lambda: panel.progress.maximum() > 0, timeout=HANG_GUARD_MS)
        panel.cancel()
    assert panel.status.text() == "Cancelled." and panel.result is None
    assert panel.run_button.isEnabled() and not panel.cancel_button.isEnabled()
    panel.shutdown()


def test_cutoff_lab_steps_by_hand(qtbot, exporter, tiny_handle: LoadedModel) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, TopPTopKPanel, exporter, tiny_handle)
    panel.new_tokens.setValue(4)
    panel.top_k.setValue(8)
    panel.top_p.setValue(0.5)
    with qtbot.waitSignal(panel.runner.paused, timeout=HANG_GUARD_MS):
        assert panel.run()
    view = panel.lab_view
    assert len(view.steps) == 1 and panel.step_button.isEnabled()
    heights = view._bars.opts["height"]
    first = view.steps[0]
    assert len(heights) == 20
    # top-p sees the top-k survivors renormalised: the kept bars and the mass line say so
    assert sum(heights[:8]) == pytest.approx(1.0)
    assert list(heights[:8]) == pytest.approx([p / first.top_k_mass
                                               for p in first.probabilities[:8]])
    assert list(heights[8:]) == list(first.probabilities[8:])  # cut by top-k: as before
    _, mass = view._mass.getData()
    assert mass[first.top_p_cut - 1] == pytest.approx(first.kept_mass())
    assert first.kept_mass() >= 0.5
    if first.top_p_cut > 1:
        assert mass[first.top_p_cut - 2] < 0.5  # one token fewer would not reach p
    assert view._k_line.isVisible() and view._k_line.value() == pytest.approx(7.5)
    with qtbot.waitSignal(panel.runner.paused, timeout=HANG_GUARD_MS):
        assert panel.step()
    assert len(view.steps) == 2 and panel.table.rowCount() == 2
    with qtbot.waitSignal(panel.result_ready, timeout=HANG_GUARD_MS) as done:
        assert panel.run_to_end()
    assert isinstance(done.args[0], DistributionRun)
    settings = SamplingSettings(temperature=0.9, top_k=8, top_p=0.5, seed=42)
    ids = prompt_ids(tiny_handle, panel.prompt.text())
    ref = list(
        Stepper(
            tiny_handle.backend, tiny_handle.tokenizer, ids, sampling=settings, max_new_tokens=4
        )
    )
    assert [s.record.token_ids for s in view.steps] == [r.token_ids for r in ref]
    surv = view._surv_p.yData  # getData() gives log10 values on a log axis
    assert list(surv) == [float(r.survivors_top_p[0]) for r in ref]
    assert not panel.step_button.isEnabled()
    # every step stays reachable after Run to end, and exports follow the step shown
    panel.show_step(0)
    assert "step 0" in view.dist_plot.getAxis("bottom").labelText
    assert panel.headline().startswith(("Step 0:", "Step 0, the widest cut:"))
    # the CSV holds counts (8 after top-k), not their log10 (0.903…) from the log axis
    survivors = read_csv_tables(render_csv(view.layout_widget))[1]
    assert survivors[0][:3] == ["step", "after top-k (tokens)", "after top-p (tokens)"]
    assert [row[1] for row in survivors[1:]] == [str(r.survivors_top_k[0]) for r in ref]
    assert {row[1] for row in survivors[1:]} == {"8"}
    assert [row[2] for row in survivors[1:]] == [str(r.survivors_top_p[0]) for r in ref]
    panel.shutdown()


def test_cache_kinds_lab(qtbot, exporter, tiny_handle: LoadedModel) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, CacheKindsPanel, exporter, tiny_handle)
    panel.prompt_tokens.setValue(16)
    panel.new_tokens.setValue(6)
    panel.window_size.setValue(8)
    result = run_lab(qtbot, panel)
    assert isinstance(result, CacheKindsResult)
    ids = lab_prompt_ids(tiny_handle.tokenizer, 16)
    ref = finish(
        cache_kinds(tiny_handle.backend, tiny_handle.tokenizer, ids, new_tokens=6, window=8),
        CacheKindsResult,
    )
    assert result.runs == ref.runs
    _, mask = panel.lab_view._masks["sliding"].getData()
    # W = 8 keys (itself included) from the prefill on: there the mask is 16 wide, but the
    # last prompt token sees only its 8 nearest keys (#33: the chart said 16)
    assert list(mask) == [8.0] * 6
    rows = panel.table_rows()
    assert rows[0]["same as dynamic"] == "✓"
    assert rows[-1]["cache"] == "W = 8 vs P + N − 1 = 21" and rows[-1]["same as dynamic"] == "✗"
    assert "is shorter than" in panel.status.text()
    for plot in (panel.lab_view.bytes_plot, panel.lab_view.mask_plot):
        assert plot.getViewBox().viewRange()[1][0] == 0  # amounts start at 0
    assert panel.lab_view._bytes["dynamic"].zValue() < panel.lab_view._bytes["static-used"].zValue()
    memory = read_csv_tables(render_csv(panel.lab_view.layout_widget))[0]
    assert memory[0][0] == "step" and "Dynamic: allocated (B)" in memory[0]
    column = memory[0].index("Dynamic: allocated (B)")
    assert [int(r[column]) for r in memory[1:]] == list(result.runs[0].allocated_bytes)
    # The slide's big line: the bytes a cached token costs, measured (#33). The tiny model
    # holds 16 + 5 tokens, so its 100-token figure is the measured bytes per token × 100.
    dynamic = result.run("dynamic")
    per_token = dynamic.used_bytes[-1] // 21
    assert per_token * 21 == dynamic.used_bytes[-1]  # a dynamic cache holds only its tokens
    assert panel.headline().splitlines()[0] == (
        f"Dynamic cache: 21 tokens hold {dynamic.used_bytes[-1]:,} B, measured = "
        f"{per_token:,} B a token; 100 tokens: {100 * per_token:,} B")
    panel.prompt_tokens.setValue(95)  # the run passes 100 tokens: that step's bytes, measured
    result = run_lab(qtbot, panel)
    held = result.run("dynamic").used_bytes[5]  # 95 + 5 tokens after step 5
    assert panel.headline().splitlines()[0] == (
        f"Dynamic cache: 100 tokens hold {held:,} B, measured = {held // 100:,} B a token")
    panel.shutdown()


def test_length_sweep_lab(qtbot, exporter, tiny_handle: LoadedModel) -> None:  # type: ignore[no-untyped-def]
    panel = show_lab(qtbot, LengthSweepPanel, exporter, tiny_handle)
    panel.values.setText("4, 8, 16")
    panel.fixed.setValue(3)
    panel.repeats.setValue(3)
    result = run_lab(qtbot, panel)
    assert isinstance(result, SweepLabResult) and result.repeats == 3
    assert all(p.tokens_fed == p.tokens_fed_formula for p in result.sweep.points)
    x, _ = panel.lab_view._points["recompute"].getData()
    assert list(x) == [7.0, 11.0, 19.0]
    rows = panel.table_rows()
    for fits in result.fits:
        assert all(lo <= m <= hi for lo, m, hi in zip(fits.ms_low, fits.ms_per_token,
                                                       fits.ms_high, strict=True))
        for fit, curve in ((fits.quadratic, panel.lab_view._quadratic[fits.mode]),
                           (fits.linear, panel.lab_view._linear[fits.mode])):
            gx, _ = curve.getData()
            drawn = gx is not None and len(gx) == 64
            assert drawn == fits.usable(fit)  # a meaningless fit is not drawn…
        said = [r["ms per token"] for r in rows if r["mode"] == fits.mode.capitalize()][:2]
        for fit, text in zip((fits.linear, fits.quadratic), said, strict=True):
            assert text.startswith("no fit") != fits.usable(fit)  # …and the table says so
    # A run's row: shown with its unit, written to CSV as numbers (#33: "10.8 ms/토큰")
    runs = [v for v in panel.table_values() if v["fit / run"].startswith("P=")]
    assert len(runs) == len(result.sweep.points)
    for value, point in zip(runs, result.sweep.points, strict=True):
        assert value["ms per token"] == point.ms_per_token
        assert value["R² / fed"] == point.tokens_fed
    panel.values.setText("0, 8")
    assert not panel.run()
    panel.shutdown()


def test_labs_panel_slide_pack(qtbot, exporter, tiny_handle: LoadedModel, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    panel = LabsPanel(exporter)
    qtbot.addWidget(panel)
    panel.resize(1100, 750)
    panel.show()
    panel.set_model(tiny_handle)
    kinds = panel.panels["cache_kinds"]
    kinds.prompt_tokens.setValue(8)
    kinds.new_tokens.setValue(3)
    panel.tabs.setCurrentWidget(kinds)
    run_lab(qtbot, kinds)
    charts, numbers, tables = panel.slide_pack()
    assert list(charts) == ["lab cache-kinds"] and "CacheKinds" in numbers
    pack = export_slide_pack(charts, tmp_path / "pack", numbers, tables,
                             canvas_named("16:9 small"))
    names = {p.name for p in pack.written}
    assert {"lab-cache-kinds.png", "lab-cache-kinds.pdf", "numbers.json"} <= names
    assert "lab-CacheKinds-table.csv" in names
    assert panel.shutdown()
