"""The labs follow the course preset when the window runs an embedded model.

With ko-chat in the window the cache labs run on ko-base; with ko-base the sampling
labs run on ko-chat; with the user's own model every lab runs on it. Each lab says
which model it ran on and why.
"""

from __future__ import annotations

from dataclasses import replace

from lab_helpers import run_lab, show_lab

from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files import checkpoints
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.labs import CacheVsRecomputePanel, TemperaturePanel
from kvstudio.ui.labs.shared.lab_models import LabModels, embedded_name
from kvstudio.ui.run.engine_adapter import ModelChoice, load_model, with_choice, wrap_model

CHOICES = {"embedded-base": "ko-base", "embedded-chat": "ko-chat"}


def embedded(model: MiniMindLM, tokenizer: TextTokenizer, name: str) -> LoadedModel:
    """The tiny model dressed as one of the shipped models (its own backend, named so)."""
    kind = "embedded-base" if name == "ko-base" else "embedded-chat"
    return wrap_model(model, tokenizer, name, ModelChoice(kind))


class CountingLoader:
    """Loads the tiny model as whichever embedded model is asked for, and counts the loads."""

    def __init__(self, model: MiniMindLM, tokenizer: TextTokenizer) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.loaded: list[str] = []

    def __call__(self, choice: ModelChoice) -> LoadedModel:
        name = CHOICES[choice.kind]
        self.loaded.append(name)
        return embedded(self.model, self.tokenizer, name)


def small_cache_lab(panel: CacheVsRecomputePanel) -> None:
    panel.prompt_tokens.setValue(8)
    panel.new_tokens.setValue(3)
    panel.warmup.setValue(0)
    panel.repeats.setValue(1)


def test_cache_lab_runs_on_ko_base_beside_ko_chat(qtbot, exporter, tiny_model, tokenizer) -> None:  # type: ignore[no-untyped-def]
    loader = CountingLoader(tiny_model, tokenizer)
    window = embedded(tiny_model, tokenizer, "ko-chat")
    panel = CacheVsRecomputePanel(exporter)
    panel.lab_models = LabModels(loader)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_model(window)
    assert "ko-base" in panel.model_note.text()  # said before the run, too
    small_cache_lab(panel)
    result = run_lab(qtbot, panel)
    assert panel.ran_on is not None and panel.ran_on.name == "ko-base"
    assert result.rounds[0].model_label == "ko-base"  # type: ignore[attr-defined]
    assert panel.model_note.isVisible()
    assert panel.model_note.text() == (
        "Runs on ko-base, the course's model for the cache labs.")
    run_lab(qtbot, panel)
    assert loader.loaded == ["ko-base"]  # loaded once, then kept
    panel.shutdown()


def test_temperature_lab_runs_on_ko_chat(qtbot, exporter, tiny_model, tokenizer) -> None:  # type: ignore[no-untyped-def]
    loader = CountingLoader(tiny_model, tokenizer)
    panel = TemperaturePanel(exporter)
    panel.lab_models = LabModels(loader)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_model(embedded(tiny_model, tokenizer, "ko-base"))
    panel.samples.setValue(2)
    panel.new_tokens.setValue(2)
    panel.temperatures.setText("0.5")
    run_lab(qtbot, panel)
    assert panel.ran_on is not None and panel.ran_on.name == "ko-chat"
    assert loader.loaded == ["ko-chat"]
    assert "ko-chat, the course's model for the sampling labs" in panel.model_note.text()
    panel.shutdown()


def test_labs_keep_the_users_model(qtbot, exporter, tiny_model, tokenizer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "my-model"
    checkpoints.save_model_folder(tiny_model, tokenizer, folder)
    mine = load_model(ModelChoice("folder", str(folder)))
    assert embedded_name(mine) is None
    loader = CountingLoader(tiny_model, tokenizer)
    panel = show_lab(qtbot, CacheVsRecomputePanel, exporter, mine)
    panel.lab_models = LabModels(loader)
    small_cache_lab(panel)
    result = run_lab(qtbot, panel)
    assert panel.ran_on is mine
    assert result.rounds[0].model_label == "my-model"  # type: ignore[attr-defined]
    assert loader.loaded == []
    assert panel.model_note.text().startswith("Runs on my-model, the model you loaded")
    assert "ko-base" in panel.model_note.text()  # what the course would run it on
    panel.shutdown()


def test_a_random_stand_in_is_not_the_course_model(tiny_handle: LoadedModel) -> None:
    assert embedded_name(replace(tiny_handle, name="ko-chat")) == "ko-chat"
    assert embedded_name(replace(tiny_handle, name="ko-chat", is_random=True)) is None
    assert embedded_name(with_choice(tiny_handle, ModelChoice("folder", "x"))) is None


def test_a_course_model_still_loading_holds_the_live_steps(tiny_model, tokenizer) -> None:  # type: ignore[no-untyped-def]
    """The labs' prefetch is start-up work: `loading()` lists it until it is done, and the
    window's gate (`StepGate.hold`, released when the load ends) keeps live steps apart."""
    import threading

    from kvstudio.ui.run.step_gate import StepGate

    release = threading.Event()
    counting = CountingLoader(tiny_model, tokenizer)

    def slow_loader(choice: ModelChoice) -> LoadedModel:
        release.wait(60)
        return counting(choice)

    models = LabModels(slow_loader)
    models.prefetch(embedded(tiny_model, tokenizer, "ko-chat"), "cache")
    loading = models.loading()
    assert len(loading) == 1
    gate = StepGate(max_wait_s=0.0)
    gate.hold()
    loading[0].add_done_callback(lambda _future: gate.release())
    assert gate.held
    release.set()
    loading[0].result(60)
    assert models.loading() == [] and not gate.held
    assert counting.loaded == ["ko-base"]
