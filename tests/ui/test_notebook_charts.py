"""A lab's chart in a notebook is the window's chart: same series, same values, same exports.

The notebook API (`kvstudio.notebook`) runs a lab on the tiny model; the window's
lab panel, shown as in the window, then receives the same result through its
runner's `finished` signal (the slot the window's lab thread ends in). Their
drawn curves and bars must be equal, and the window's export (its
`ChartExporter`) and the notebook's `kv.export` must write the same CSV and
a PNG on the same 16:9 slide.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
import pytest
from lab_helpers import show_lab
from PySide6.QtGui import QImage

from kvstudio import notebook as kv
from kvstudio.charts.chart_data import plot_items
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.labs.beam_lab import BeamSearchPanel
from kvstudio.ui.labs.cache_kinds_lab import CacheKindsPanel
from kvstudio.ui.labs.compare_lab import CacheVsRecomputePanel
from kvstudio.ui.labs.serving import ServingPanel
from kvstudio.ui.labs.speculative_lab import SpeculativePanel
from kvstudio.ui.labs.temperature_lab import TemperaturePanel
from kvstudio.ui.slides.export_menu import ChartExporter

LABS = {
    "compare": (CacheVsRecomputePanel, {"prompt_tokens": 12, "new_tokens": 6, "repeats": 2}),
    "sample": (TemperaturePanel, {"temperatures": [0.5, 1.5], "samples": 6, "new_tokens": 6,
                                  "both_modes": False}),
    "cache_kinds": (CacheKindsPanel, {"prompt_tokens": 12, "new_tokens": 8, "window": 6}),
    "serving": (ServingPanel, {"policy": "static", "answer_tokens": 4, "batch_sizes": [1, 2],
                               "repeats": 1}),
    "beam": (BeamSearchPanel, {"beams": 3, "new_tokens": 5, "transformers": False}),
    # ko-draft does not fit the tiny model's vocabulary: prompt lookup only, as the window.
    "speculative": (SpeculativePanel, {"ks": [1, 2], "new_tokens": 8, "repeats": 1}),
}


def drawn(chart: Any) -> list[tuple[str, str, list[float], list[float]]]:
    """Every curve and bar series a chart draws: (plot title, name, x, y), in layout order."""
    found = []
    for plot in plot_items(chart):
        title = plot.titleLabel.text
        for item in plot.items:
            if isinstance(item, pg.PlotDataItem):
                x, y = item.getData()
                if x is None or len(x) == 0:
                    continue
                found.append((title, str(item.name()), _floats(x), _floats(y)))
            elif isinstance(item, pg.BarGraphItem):
                opts = item.opts
                x = opts.get("x") if opts.get("x") is not None else opts.get("x0")
                found.append((title, "bars", _floats(x), _floats(opts.get("height"))))
    return found


def _floats(values: Any) -> list[float]:
    array = np.asarray(values if values is not None else [], dtype=float)
    return [round(float(v), 9) if np.isfinite(v) else float("nan") for v in array]


def _same(a: list[Any], b: list[Any]) -> bool:
    """Equal, NaN (a gap on a log axis) equal to NaN."""
    return repr(a) == repr(b)


@pytest.mark.parametrize("lab", list(LABS))
def test_the_notebook_chart_is_the_windows_chart(
    qtbot, exporter: ChartExporter, tiny_handle: LoadedModel, tmp_path: Path, lab: str,
) -> None:  # type: ignore[no-untyped-def]
    kv.language("en")
    panel_type, settings = LABS[lab]
    run = getattr(kv, lab)(tiny_handle, show=False, **settings)
    assert run.result is not None and run.records

    window = show_lab(qtbot, panel_type, exporter, tiny_handle)
    window.runner.finished.emit(run.result)  # the window's slot, with the same records
    assert window.result is run.result

    assert list(run.charts) == list(window.charts())
    for name, chart in run.charts.items():  # every chart of the lab, not only the first
        notebook_series = drawn(chart)
        assert notebook_series, f"the notebook's {name} chart draws nothing"
        assert _same(notebook_series, drawn(window.charts()[name])), name
    assert run.headline == window.headline().strip() or run.headline.startswith(
        window.headline().splitlines()[0])

    def window_export(suffix: str) -> Path:
        path = tmp_path / f"window.{suffix}"
        exporter.save_chooser = lambda *a: str(path)
        assert exporter.export_one(next(iter(window.charts().values())), "w", suffix) == path
        return path

    for suffix in ("csv", "png"):
        ours = kv.export(run, tmp_path / f"notebook.{suffix}")
        theirs = window_export(suffix)
        if suffix == "csv":
            assert ours.read_bytes() == theirs.read_bytes()
            assert ours.read_bytes().strip()
        else:
            a, b = QImage(str(ours)), QImage(str(theirs))
            # The same slide; not compared pixel by pixel: an axis's auto-range padding
            # depends on the on-screen size the shown window's chart had before the export.
            assert (a.width(), a.height()) == (b.width(), b.height()) == (1920, 1080)
    window.shutdown()


def test_records_and_series_are_the_labs_numbers(qtbot, tiny_handle: LoadedModel) -> None:  # type: ignore[no-untyped-def]
    kv.language("en")
    run = kv.compare(tiny_handle, prompt_tokens=10, new_tokens=5, repeats=1, show=False)
    rows = {row["quantity"]: row for row in run.records}
    first = run.result.first  # type: ignore[attr-defined]
    assert rows["tokens fed, measured"]["Cached"] == first.cached.tokens_fed == 10 + 4
    assert rows["tokens fed, measured"]["Recompute"] == first.recompute.tokens_fed == 50 + 10
    fed = [s for s in run.series if s["series"] == "Recompute: tokens fed (tokens)"]
    assert [s["y"] for s in fed] == list(first.recompute.tokens_fed_per_step)
    assert {s["x_means"] for s in fed} == {"step (0 = prefill)"}
    steps = [item for item in run.steps if getattr(item, "record", None) is not None]
    assert len(steps) == 2 * 5 and all(s.record.mode in ("cached", "recompute") for s in steps)


def test_bad_settings_say_what_to_change(tiny_handle: LoadedModel) -> None:
    with pytest.raises(ValueError,
                       match="new_tokens must be between 1 and 2,048 tokens, got 5,000"):
        kv.compare(tiny_handle, new_tokens=5000, show=False)
    with pytest.raises(ValueError,
                       match="preset must be one of 'course', 'notebook', got 'lecture'"):
        kv.compare(tiny_handle, preset="lecture", show=False)
    with pytest.raises(ValueError, match="whole number"):
        kv.cache_kinds(tiny_handle, window=2.5, show=False)
    with pytest.raises(ValueError, match="No model at"):
        kv.load("/nonexistent/model")
    with pytest.raises(ValueError, match="suffix"):
        kv.export(object(), "chart.gif")
    with pytest.raises(ValueError,
                       match="early_stopping must be one of False, True, 'never', got"):
        kv.beam(tiny_handle, early_stopping="sometimes", show=False)
    with pytest.raises(ValueError, match="each of ks must be between 1 and 64 drafts"):
        kv.speculative(tiny_handle, ks=[0, 2], show=False)
    with pytest.raises(ValueError, match="new_tokens must be between 1 and 512"):
        kv.speculative(tiny_handle, new_tokens=600, show=False)
    with pytest.raises(ValueError, match="No requests file at"):
        kv.serving(tiny_handle, requests="/nonexistent/requests.txt", show=False)
    with pytest.raises(ValueError, match="prefix must be one of 'none', 'blocks', 'radix'"):
        kv.serving(tiny_handle, prefix="lru", show=False)
    # Refused before any view was made: nothing was handed to Qt to delete.
