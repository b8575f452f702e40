"""Saved runs in the window: save what the plots show, reopen it, replay it step by step.

Owns the translation between the window's `RunTrace`/`RunInfo` and the
core's `SavedRun` (``kvstudio.files.runfile``), between `AnswerCounts` and
`SavedSamples` (Sample ×N results travel in the same file), and
`ReplayController`, which feeds a saved run's records into the window's
`RunStore` one step at a time (by key or on a timer) with no model loaded.
The plots redraw from the store exactly as they do for a live run, so a
replayed run draws the same charts; saved samples come back through
`samples_loaded` for the answer histogram.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.tokenizer import IM_END
from kvstudio.files.runfile import (
    ModelFacts,
    RunFile,
    RunReplay,
    SavedRun,
    SavedSamples,
    load_run_file,
    save_runs,
)
from kvstudio.ui.run.engine_adapter import AnswerCounts, RunInfo, RunRequest, RunSettings
from kvstudio.ui.run.store import RunStore, RunTrace

log = logging.getLogger(__name__)


def saved_run_from_trace(trace: RunTrace, model_name: str) -> SavedRun:
    info = trace.info
    request = info.request
    settings = request.settings
    return SavedRun(
        model_name=model_name, prompt=request.prompt, prompt_ids=tuple(info.prompt_ids),
        mode=info.mode, sampling=settings.sampling, max_new_tokens=settings.max_new_tokens,
        cache=settings.cache, use_chat_template=request.use_chat_template,
        model=ModelFacts(info.num_layers, info.num_kv_heads, info.head_dim, info.dtype_bytes),
        records=tuple(trace.records), prompt_pieces=tuple(info.prompt_pieces),
    )


def saved_samples_from_counts(counts: AnswerCounts) -> SavedSamples:
    return SavedSamples(
        prompt=counts.prompt, temperatures=tuple(counts.temperatures),
        samples_per_temperature=counts.samples_per_temperature,
        answer_tokens=max(counts.answer_tokens, 1),
        counts=tuple(tuple(row) for row in counts.counts),
        sampling=counts.sampling or SamplingSettings(), use_chat_template=counts.use_chat_template,
    )


def answer_counts_from_saved(samples: SavedSamples) -> AnswerCounts:
    return AnswerCounts(
        temperatures=samples.temperatures, counts=samples.counts,
        samples_per_temperature=samples.samples_per_temperature, prompt=samples.prompt,
        answer_tokens=samples.answer_tokens, sampling=samples.sampling,
        use_chat_template=samples.use_chat_template,
    )


def saved_eos(run: SavedRun) -> tuple[int | None, str]:
    """The end-of-answer token of a saved run (id, text), as far as the file tells.

    Run files do not name the tokenizer's eos. A run whose last step finished
    the row with an empty text before its budget stopped at eos (the stepper
    writes eos as ""), and so did one whose last token is a prompt token that
    reads "<|im_end|>" (the chat template ends each turn with it).
    """
    if not run.records:
        return None, ""
    last = run.records[-1]
    token = last.token_ids[0]
    texts = {i: p for i, p in zip(run.prompt_ids, run.prompt_pieces, strict=False)}
    ended_early = len(run.records) < run.max_new_tokens
    if last.finished[0] and last.token_texts[0] == "" and (ended_early
                                                          or texts.get(token) == IM_END):
        return token, texts.get(token) or IM_END
    eos = next((i for i, p in texts.items() if p == IM_END), None)
    return eos, IM_END if eos is not None else ""


def run_info_from_saved(run: SavedRun, run_id: int) -> RunInfo:
    settings = RunSettings(run.mode, run.sampling, run.max_new_tokens, run.cache)
    pieces = run.prompt_pieces or tuple("" for _ in run.prompt_ids)
    eos_id, eos_text = saved_eos(run)
    return RunInfo(
        run_id=run_id, request=RunRequest(run.prompt, run.use_chat_template, settings),
        prompt_ids=tuple(run.prompt_ids), prompt_pieces=tuple(pieces),
        num_layers=run.model.num_layers, num_kv_heads=run.model.num_kv_heads,
        head_dim=run.model.head_dim, dtype_bytes=run.model.dtype_bytes,
        eos_id=eos_id, eos_text=eos_text, model=run.model_name,
    )


def read_run_file(path: str | Path) -> RunFile:
    """Read and check a run file (ValueError saying what is wrong); safe on any thread.

    The window calls it on a worker thread: a 30,000-step file takes seconds.
    """
    return load_run_file(path)


class ReplayController(QObject):
    """Replays saved runs into a `RunStore`: all runs advance together, one step per call."""

    changed = Signal()  # the store changed: redraw
    playing_changed = Signal(bool)
    finished = Signal()
    loaded = Signal(str)  # a description for the status bar
    samples_loaded = Signal(object)  # AnswerCounts of the file's last Sample ×N result

    def __init__(self, store: RunStore, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.runs: list[SavedRun] = []
        self.samples: list[SavedSamples] = []
        self.model_name = ""
        self._replays: list[tuple[int, RunReplay]] = []
        self._next_id = -1  # live runs count up from 1; replayed ones count down from -1
        self._timer = QTimer(self)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self._on_timer_timeout)

    # ---- files ------------------------------------------------------------------------------
    def save(
        self, path: str | Path, model_name: str, samples: AnswerCounts | None = None
    ) -> Path:
        """Save every run the store holds (one per mode, with the records it has so far) and
        the Sample ×N result shown; ValueError if it fails."""
        runs = [saved_run_from_trace(t, model_name) for t in self.store.stepped_traces()]
        saved = [saved_samples_from_counts(samples)] if samples is not None else []
        return save_runs(path, runs, samples=saved)

    def take(self, loaded: RunFile) -> list[SavedRun]:
        """A run file read already (`read_run_file`): keep its samples, hand back its runs;
        `start()` shows them. The last Sample ×N result goes out through `samples_loaded`
        (for the answer histogram)."""
        self.samples = list(loaded.samples)
        if self.samples:
            self.samples_loaded.emit(answer_counts_from_saved(self.samples[-1]))
        return list(loaded.runs)

    def start(self, runs: Sequence[SavedRun]) -> None:
        self.stop()
        self.store.clear()
        self.runs = list(runs)
        self.model_name = runs[0].model_name if runs else ""
        self._replays = []
        for run in runs:
            run_id = self._next_id
            self._next_id -= 1
            trace = self.store.begin(run_info_from_saved(run, run_id))
            trace.known_steps = len(run.records)  # the axes span the saved run from its start
            self._replays.append((run_id, RunReplay(run)))
        self.changed.emit()
        self.loaded.emit(
            self.tr("Replaying {0} run(s) of {1}; no model is computing.").format(
                len(runs), self.model_name or "?"
            )
        )

    # ---- stepping ----------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """A replay is loaded, still shown, and has steps left."""
        return any(not replay.finished and self._shown(run_id) for run_id, replay in self._replays)

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def position(self) -> tuple[int, int]:
        """(steps shown, steps in the longest run)."""
        if not self._replays:
            return 0, 0
        return (
            max(r.step_index for _, r in self._replays),
            max(r.total_steps for _, r in self._replays),
        )

    def step(self) -> bool:
        """Show one more step of every run; False when there is nothing left."""
        advanced = False
        for run_id, replay in self._replays:
            if replay.finished or not self._shown(run_id):
                continue
            record = replay.step()
            self.store.add(run_id, record)
            if replay.finished:
                self.store.finish(run_id)
            advanced = True
        if advanced:
            self.changed.emit()
        if not self.active:
            self._stop_timer()
            if advanced:
                self.finished.emit()
        return advanced

    def run_to_end(self) -> None:
        while self.step():
            pass

    def play(self, interval_ms: int | None = None) -> None:
        if interval_ms is not None:
            self._timer.setInterval(max(0, interval_ms))
        if self.active and not self._timer.isActive():
            self._timer.start()
            self.playing_changed.emit(True)

    def pause(self) -> None:
        self._stop_timer()

    def set_interval(self, interval_ms: int) -> None:
        """Milliseconds between replayed steps while playing (the live speed slider's)."""
        self._timer.setInterval(max(0, interval_ms))

    def restart(self) -> None:
        if self.runs:
            self.start(self.runs)

    def stop(self) -> None:
        """Forget the replay (the store keeps what is drawn)."""
        self._stop_timer()
        self._replays = []

    def _shown(self, run_id: int) -> bool:
        """False once a live run replaced the replayed one in the store."""
        return any(t.info.run_id == run_id for t in self.store.traces())

    def _stop_timer(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self.playing_changed.emit(False)

    def _on_timer_timeout(self) -> None:
        self.step()
