"""Random weights are asked for, never fallen back to, and every slide drawn from them says so."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kvstudio.charts import weights_notice
from kvstudio.charts.plotted_data import chart_headline
from kvstudio.engine.records import MODES, SamplingSettings
from kvstudio.ui.plots import TokensFedPlot
from kvstudio.ui.run.engine_adapter import (
    ModelChoice,
    RunRequest,
    RunSettings,
    load_model,
    make_stepper,
    run_info,
)
from kvstudio.ui.run.store import RunStore


@pytest.fixture(autouse=True)
def notice_reset() -> Iterator[None]:
    yield
    weights_notice.set_random_weights(False)


def test_random_weights_head_every_slide_until_a_trained_model_loads(qtbot) -> None:  # type: ignore[no-untyped-def]
    random = load_model(ModelChoice("random"))
    assert random.is_random and random.name.startswith("random-initialised")
    store = RunStore()
    for run_id, mode in enumerate(MODES, start=1):
        settings = RunSettings(mode, SamplingSettings.greedy_settings(), 4)
        request = RunRequest("KV 캐시", False, settings)
        ids = random.tokenizer.encode(request.prompt)
        store.begin(run_info(run_id, random, request, ids))
        for record in make_stepper(random, ids, settings):
            store.add(run_id, record)
    plot = TokensFedPlot()
    qtbot.addWidget(plot)
    plot.refresh(store)
    first, _, rest = chart_headline(plot).partition("\n")
    assert first.startswith("Random weights") and rest  # the notice, then the chart's own line

    trained = load_model(ModelChoice("embedded-base"))
    assert not trained.is_random
    assert chart_headline(plot) == rest  # the same chart, without the notice
