"""The README's first lesson, as the Live tab's defaults make it, shows the cache's point.

On the shipped ko-chat, greedy, the course question is answered in a few tokens
and eos would end the run there: six steps, too few for the cache to win
visibly. The live page's default (the course preset's `live_stop_at_eos`, the
sampling panel's *Stop at eos* box) bans eos until N, so *Run to end* runs N
steps in both modes. The load's warm-up makes the same calls as the lesson's
first step (so TTFT is not a first-use cost), and a new run's prefill waits
until the window has set the run up (so TTFT is not the window's work). No
wall-clock asserts: which calls were made, in which order.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt

from kvstudio.engine import decode, formulas
from kvstudio.engine.records import MODES
from kvstudio.files.checkpoints import MODELS_DIR
from kvstudio.files.loaded import LoadedModel, load_model
from kvstudio.labs.course import COURSE
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.panels.sampling_panel import SamplingPanel
from kvstudio.ui.run.engine_adapter import (
    DEFAULT_PROMPT,
    ModelChoice,
    RunRequest,
    RunSettings,
    encode_prompt,
    make_stepper,
    warm_up,
)
from kvstudio.ui.run.engine_worker import GenerationWorker
from kvstudio.ui.run.step_gate import StepGate
from tests.ui.waits import HANG_GUARD_S

pytestmark = pytest.mark.usefixtures("qapp")
LONG_ENOUGH = 32  # decode steps the lesson needs for the cache to win on time per token


@pytest.fixture(scope="module")
def ko_chat() -> LoadedModel:
    if not (MODELS_DIR / "ko-chat" / "model.safetensors").exists():
        pytest.skip("the shipped ko-chat model is not in kvstudio/resources/models")
    return load_model("ko-chat")


def lesson_request(mode: str, tmp_path: Path) -> RunRequest:
    """Step 2 of the README on a first start: the remembered (never saved) settings shown in
    the sampling panel, Greedy ticked, the course question in the chat template."""
    settings = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    panel = SamplingPanel()
    panel.set_run_settings(settings.run_settings())
    panel._greedy.setChecked(True)  # the box a lecturer ticks
    return RunRequest(settings.prompt(), True, panel.run_settings(mode))  # type: ignore[arg-type]


def test_the_default_lesson_runs_to_n_in_both_modes(ko_chat: LoadedModel, tmp_path: Path) -> None:
    requests = {mode: lesson_request(mode, tmp_path) for mode in MODES}
    assert requests["cached"].prompt == COURSE.question == DEFAULT_PROMPT
    assert requests["cached"].settings.sampling.greedy
    assert not requests["cached"].settings.stop_at_eos  # the preset's default, on screen
    runs = {}
    for mode, request in requests.items():
        ids = encode_prompt(ko_chat, request)
        stepper = make_stepper(ko_chat, ids, request.settings)
        runs[mode] = (len(ids), list(stepper))
    (p, cached), (_, recompute) = runs["cached"], runs["recompute"]
    n = COURSE.new_tokens
    assert len(cached) == len(recompute) == n >= LONG_ENOUGH
    assert [r.token_ids for r in cached] == [r.token_ids for r in recompute]  # greedy: same
    fed = {mode: sum(r.tokens_fed for r in records) for mode, (_, records) in runs.items()}
    assert fed["cached"] == formulas.tokens_fed_cached(p, n)
    assert fed["recompute"] == formulas.tokens_fed_recompute(p, n)


def test_with_eos_the_question_is_answered_too_soon_to_show_the_cache(
        ko_chat: LoadedModel, tmp_path: Path) -> None:
    """Why the preset bans eos: the shipped model's greedy answer alone is a handful of steps."""
    request = lesson_request("cached", tmp_path)
    settings = replace(request.settings, stop_at_eos=True)
    stepper = make_stepper(ko_chat, encode_prompt(ko_chat, request), settings)
    assert len(list(stepper)) < LONG_ENOUGH


def recorded_feeds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[int, ...]]]:
    """Every forward the decode loop makes from now on: (cache class or "none", fed shape)."""
    calls: list[tuple[str, tuple[int, ...]]] = []
    original = decode.feed

    def feed(model: Any, tokens: Any, cache: Any, window: int | None = None) -> Any:
        calls.append((type(cache).__name__ if cache is not None else "none",
                      tuple(tokens.shape)))
        return original(model, tokens, cache, window)

    monkeypatch.setattr(decode, "feed", feed)
    return calls


def test_the_warm_up_makes_the_lessons_first_step_in_each_mode(
        ko_chat: LoadedModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = recorded_feeds(monkeypatch)
    warm_up(ko_chat)
    warmed = set(calls)
    for mode in MODES:
        request = lesson_request(mode, tmp_path)
        calls.clear()
        make_stepper(ko_chat, encode_prompt(ko_chat, request), request.settings).step()
        (first,) = calls  # the prefill: one forward
        assert first in warmed, f"{mode}'s first step {first} was not warmed: {warmed}"
    prompt = len(encode_prompt(ko_chat, lesson_request("cached", tmp_path)))
    assert ("none", (1, prompt)) in warmed  # recompute's prefill, the same P


def test_a_new_runs_prefill_waits_until_the_window_has_set_the_run_up(
        tiny_handle: LoadedModel) -> None:
    gate = StepGate(max_wait_s=HANG_GUARD_S, settle_s=0.0)
    worker = GenerationWorker(lambda choice: tiny_handle, gate)
    worker.load(ModelChoice())  # the warm-up's timed forwards: no GUI thread attached yet
    gate.attached = True  # from here a GUI thread reports when it rests
    events: list[str] = []
    stepped = threading.Event()
    direct = Qt.ConnectionType.DirectConnection  # heard on the thread that steps
    worker.run_started.connect(lambda info: events.append("run started"), direct)

    def on_step(run_id: int, record: Any) -> None:
        events.append(f"step {record.step}")
        stepped.set()

    worker.step_ready.connect(on_step, direct)
    request = RunRequest("hello", False, RunSettings(max_new_tokens=4))
    thread = threading.Thread(target=worker.step, args=(request,))
    thread.start()
    try:
        # The run is announced, its prefill waits: the window has not handled it yet.
        assert not stepped.wait(0.2)
        assert events == ["run started"]
        gate.gui_idle()  # the window set the run up and rests
        assert stepped.wait(HANG_GUARD_S)
    finally:
        gate.gui_idle()
        thread.join(HANG_GUARD_S)
    assert events == ["run started", "step 0"]
    assert gate.forced == 0
