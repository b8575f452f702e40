"""Turns user intents into worker or replay calls, and their reports into the run store.

Owns `RunController`: the rules of a session (a new run starts when the mode,
the settings or the prompt change; the other mode's last run stays drawn;
Reset forgets both), the `RunStore`, the `RunState` every key and button asks
(live, paused, finished, replaying; the step being looked at), the saved-run
`ReplayController`, the redraw pacing (`pacer`), and settling the heap once a
model is loaded (`heap.settle_heap`). Every intent (step, play, run to end,
restart, reset, look at step k) is answered here by what the state says: in
a replay Step advances the replay, while looking back → moves forward. It
does not build widgets: the window gives it a function that reads the
current request from the panels, and connects its signals to the views.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QObject, Signal

from kvstudio.engine.records import StepRecord
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.run.engine_adapter import (
    AnswerCounts,
    ModelChoice,
    RunCost,
    RunInfo,
    RunRequest,
    StepTimes,
    parse_temperatures,
    run_cost,
)
from kvstudio.ui.run.engine_worker import EngineHost
from kvstudio.ui.run.heap import GuiThreadCollector, settle_heap
from kvstudio.ui.run.pacer import RedrawPacer
from kvstudio.ui.run.replay import ReplayController
from kvstudio.ui.run.state import RunState
from kvstudio.ui.run.step_gate import StepGate, attach_to_gui_thread
from kvstudio.ui.run.store import RunStore

if TYPE_CHECKING:
    from kvstudio.files.runfile import RunFile

log = logging.getLogger(__name__)

RequestSource = Callable[[], RunRequest]


def hold_gc_in_steps(gate: StepGate) -> None:
    """The GUI thread's garbage collector waits while `gate` times a step."""
    app = QCoreApplication.instance()
    collector = app.findChild(GuiThreadCollector) if app is not None else None
    if isinstance(collector, GuiThreadCollector):
        collector.may_collect = gate.gui_may_draw
CostConfirmer = Callable[[RunCost], bool]  # True = go on


class RunController(QObject):
    playing_changed = Signal(bool)
    model_loaded = Signal(object)  # LoadedModel
    problem = Signal(str)  # a message for the user (already actionable)
    loading = Signal(bool)  # a model load started (True) or ended, loaded or failed (False)
    sampling_started = Signal()
    note = Signal(str)  # a short status message
    run_finished = Signal()
    sampling_progress = Signal(int, int)
    sampling_finished = Signal(object)  # AnswerCounts | None
    request_restored = Signal(object)  # RunRequest of the run on screen, after a Cancel

    def __init__(self, host: EngineHost, request_source: RequestSource,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.store = RunStore()
        self.state = RunState(self)
        self.replay = ReplayController(self.store, self)
        self.model: LoadedModel | None = None
        self.playing = False  # the live worker's play timer (the state knows the replay's)
        self.sampling = False
        self.loading_model = False
        self._request_source = request_source
        self._interval_ms = 120
        # Asked before a run whose cost is large; the window shows a dialog, tests answer.
        self.confirm_cost: CostConfirmer = lambda cost: True
        self._checked: RunRequest | None = None  # the request whose cost was last accepted
        self.step_times = StepTimes()  # every step's tokens fed and time: the cost estimate
        # While a lab times the model, live steps wait (see `hold_live`).
        self._held = False
        self.queued_steps = 0
        self._resume_interval: int | None = None  # play again at this interval when released
        # The window registers its views with the pacer; it draws between the model's steps.
        self.pacer = RedrawPacer(parent=self, may_draw=host.gate.gui_may_draw)
        attach_to_gui_thread(host.gate, self)
        self.pacer.draw_on_request = host.gate.attached
        hold_gc_in_steps(host.gate)
        worker = host.worker
        worker.model_loaded.connect(self._on_model_loaded)
        worker.calibrated.connect(self._on_calibrated)
        worker.load_failed.connect(self._on_load_failed)
        worker.run_started.connect(self._on_run_started)
        worker.step_ready.connect(self._on_step_ready)
        worker.run_finished.connect(self._on_run_finished)
        worker.playing_changed.connect(self._on_playing_changed)
        worker.failed.connect(self._on_failed)
        worker.sampling_progress.connect(self.sampling_progress)
        worker.sampling_finished.connect(self._on_sampling_finished)
        self.replay.changed.connect(self._on_replay_changed)
        self.replay.finished.connect(self._on_replay_finished)
        self.replay.playing_changed.connect(self._on_replay_playing_changed)
        self.replay.loaded.connect(self.note)

    # ---- what is on screen -----------------------------------------------------------------------
    def shown(self) -> RunStore:
        """The runs as the views should draw them: the latest, or as they were at the step
        being looked at (so every plot, the chips and exports follow the scrubber)."""
        viewing = self.state.viewing
        return self.store if viewing is None else self.store.at_step(viewing)

    # ---- intents ---------------------------------------------------------------------------------
    def load_model(self, choice: ModelChoice) -> None:
        self.note.emit(self.tr("Loading the model…"))
        self.loading_model = True
        self.loading.emit(True)
        self.host.load(choice)

    def _on_load_failed(self, choice: ModelChoice) -> None:
        """With no model at all (start-up), fall back to the embedded one instead of waiting."""
        if self.model is None and choice != ModelChoice():
            self.note.emit(self.tr("Loading the embedded model instead."))
            self.host.load(ModelChoice())

    def step(self) -> None:
        """Step: forward through history when looking back, the replay in a replay, else
        one token of the live model (held while a lab measures times)."""
        viewing = self.state.viewing
        if viewing is not None:
            self.view_step(viewing + 1)
        elif self.state.replaying:
            self.replay.step()
        elif self._held:
            self.queued_steps += 1
            self._note_held()
        else:
            request = self._request_source()
            if self._cost_accepted(request):
                self.host.step(request)

    def set_playing(self, playing: bool) -> None:
        if playing:
            self._follow_latest()
        if self.state.replaying:
            if playing:
                self.replay.play(self._interval_ms)
            else:
                self.replay.pause()
        elif self._held:
            self._resume_interval = self._interval_ms if playing else None
            self._note_held()
            self.playing_changed.emit(False)
        elif playing:
            request = self._request_source()
            if self._cost_accepted(request):
                self.host.play(request, self._interval_ms)
            else:
                self.playing_changed.emit(False)  # the Play button goes back up
        else:
            self.host.pause()

    def toggle_play(self) -> None:
        self.set_playing(not self.state.playing)

    def run_to_end(self) -> None:
        self._follow_latest()
        if self.state.replaying:
            self.replay.run_to_end()
            return
        if self._held:
            self._resume_interval = 0
            self._note_held()
            return
        request = self._request_source()
        if self._cost_accepted(request):
            self.host.play(request, 0)

    def hold_live(self, held: bool) -> None:
        """While a lab times the model, hold live steps; release runs what was asked meanwhile.

        The lab and the live run share the CPU and the model: a live step during
        a timed lab would shift the lab's times without a word. Holding them keeps
        the lab's numbers clean; queued steps and a requested Play run after it.
        """
        if held == self._held:
            return
        self._held = held
        if held:
            if self.playing:
                self._resume_interval = self._interval_ms
                self.host.pause()
            self._note_held()
            return
        queued, resume = self.queued_steps, self._resume_interval
        self.queued_steps, self._resume_interval = 0, None
        for _ in range(queued):
            self.step()
        if resume is not None:
            if resume == 0:
                self.run_to_end()
            else:
                self.set_playing(True)
        self.note.emit(self.tr("The lab finished; the live run goes on."))

    @property
    def held(self) -> bool:
        return self._held

    def _note_held(self) -> None:
        if self.queued_steps:
            self.note.emit(self.tr("A lab is measuring times: {0} live step(s) wait until it "
                                   "ends.").format(self.queued_steps))
        else:
            self.note.emit(self.tr("A lab is measuring times: the live run waits until it ends."))

    @property
    def measured_steps(self) -> int:
        """How many steps the cost estimate's time model is fitted to (0 before any)."""
        fit = self.step_times.fit("cached")
        return 0 if fit is None else fit.steps

    def _cost_accepted(self, request: RunRequest) -> bool:
        """Before a new run of `request` that costs a lot, ask `confirm_cost` once."""
        if self.model is None or request == self._checked:
            return True
        try:
            cost = run_cost(self.model, request, self.step_times)
        except ValueError:
            return True  # the worker reports what is wrong with the request
        if cost.large and not self.confirm_cost(cost):
            self.note.emit(self.tr("Run cancelled before it started."))
            trace = self.store.current
            if trace is not None:  # the buttons go back to the run that is on screen
                self.request_restored.emit(trace.info.request)
            return False
        self._checked = request
        return True

    def set_interval(self, interval_ms: int) -> None:
        self._interval_ms = interval_ms
        self.host.set_interval(interval_ms)
        self.replay.set_interval(interval_ms)

    def reset(self) -> None:
        """Forget the drawn runs (a replay too: back to the live model)."""
        self.host.reset()
        self._checked = None  # the next run is new: a large one asks again
        self._show_no_run()

    def _show_no_run(self) -> None:
        """Stop any replay and draw no run: the live model answers the next step."""
        self.replay.stop()
        self.store.clear()
        self.state.update(source="live", playing=False, viewing=None)
        self._sync_state()
        self.pacer.flush()

    def restart(self) -> None:
        """Home: start again what is on screen (the replay from its first step, or the live
        run's prompt and settings); never loads another run."""
        if self.state.replaying:
            self.replay.restart()
            self.state.update(viewing=None)
            return
        trace = self.store.current
        if trace is None:
            return
        self.host.pause()
        self.state.update(viewing=None)
        self.host.start(trace.info.request)

    def back_to_live(self) -> None:
        """Leave a replay: the saved run goes off screen and the live model answers again."""
        if not self.state.replaying:
            return
        self._show_no_run()
        self.note.emit(self.tr("Back to the live model."))

    def show_replay(self, loaded: RunFile) -> None:
        """Show a run file read already (on a worker thread: `replay.read_run_file`)."""
        self.host.pause()
        runs = self.replay.take(loaded)
        self.state.update(source="replay", playing=False, viewing=None)
        self.replay.start(runs)

    # ---- looking back through a run -------------------------------------------------------
    def view_step(self, step: int | None) -> None:
        """Show the runs as they were after step `step` (None or the last step: follow)."""
        last = self.store.longest_steps() - 1
        if step is not None and last < 0:
            return
        if step is not None:
            step = max(0, min(step, last))
            if self.state.playing:
                self.set_playing(False)  # looking back stops the clock
        self.state.update(viewing=step)
        self.pacer.flush()

    def view_previous(self) -> None:
        """One step back in history (← ); from the latest step, the one before it."""
        viewing = self.state.viewing
        last = self.store.longest_steps() - 1
        self.view_step(max(0, (last if viewing is None else viewing) - 1))

    def view_latest(self) -> None:
        self.view_step(None)

    def _follow_latest(self) -> None:
        if self.state.viewing is not None:
            self.state.update(viewing=None)
            self.pacer.flush()

    def restart_if_running(self) -> None:
        """Mode or settings changed: rerun the same prompt if a run is on screen.

        Not in a replay: the saved run stays on screen until "back to live".
        """
        self._restart(finished_too=True)

    def restart_if_unfinished(self) -> None:
        """A sampling setting changed: rerun a run that is still going, never a finished one.

        A finished run stays on screen as it ran (unticking Greedy for Sample ×N
        must not wipe it); the next Step starts a run with the new settings.
        """
        self._restart(finished_too=False)

    def _restart(self, finished_too: bool) -> None:
        if self.state.replaying:
            return
        current = self.store.current
        if current is None and not self.playing:
            return
        if current is not None and current.finished and not finished_too and not self.playing:
            return
        self._follow_latest()
        if self._held:
            return  # the request is read again when the held steps run
        request = self._request_source()
        if not self._cost_accepted(request):
            self.host.pause()
            return
        if self.playing:
            self.host.play(request, self._interval_ms)
        else:
            self.host.start(request)

    def sample(self, samples: int, temperatures_text: str, answer_tokens: int) -> None:
        """Start repeated sampling of answers of at most `answer_tokens` tokens.

        `temperatures_text` empty = the current temperature. The other knobs
        (top-k, top-p, penalty, seed) are the run's.
        """
        try:
            temperatures = parse_temperatures(temperatures_text)
        except ValueError as exc:
            self.problem.emit(str(exc))
            return
        request = self._request_source()
        settings = replace(request.settings, max_new_tokens=answer_tokens)
        self.sampling = True
        self.sampling_started.emit()
        self.host.sample(replace(request, settings=settings), samples, temperatures)

    def cancel_sampling(self) -> None:
        self.host.cancel_sampling()

    # ---- reports from the worker ---------------------------------------------------------
    def _on_model_loaded(self, model: LoadedModel) -> None:
        self.loading_model = False
        self.loading.emit(False)
        self.model = model
        self._checked = None
        self.step_times.clear()
        self._show_no_run()
        frozen = settle_heap()  # full GC passes while playing would otherwise stall the UI
        log.debug("heap settled after loading %s: %d objects frozen", model.name, frozen)
        self.model_loaded.emit(model)
        self.note.emit(self.tr("Model ready: {0}").format(model.name))

    def _on_calibrated(self, tokens: int, seconds: float) -> None:
        """The load's timed forward of `tokens` without a cache: one recompute-sized call."""
        self.step_times.add("recompute", tokens, seconds)

    def _on_run_started(self, info: RunInfo) -> None:
        if self.state.replaying:
            return  # a late report from before the replay opened: the replay stays on screen
        self.store.begin(info)
        self.state.update(viewing=None)
        self._sync_state()
        self.pacer.request()
        self.note.emit("")  # an old "run finished" no longer applies

    def _on_step_ready(self, run_id: int, record: StepRecord) -> None:
        self.step_times.add(record.mode, record.tokens_fed * max(record.forward_rows, 1),
                            record.elapsed_s)
        if self.store.add(run_id, record):
            self._sync_state()
            if self.state.viewing is None:
                self.pacer.request()

    def _on_run_finished(self, run_id: int) -> None:
        self.store.finish(run_id)
        self._sync_state()
        self.pacer.request()  # not flush(): redrawing every view at once stalls the loop
        self.run_finished.emit()
        trace = self.store.current
        if trace is not None and trace.info.run_id == run_id:
            self.note.emit(self.tr("Run finished: {0}.").format(self.state.stop_text()))

    def _on_playing_changed(self, playing: bool) -> None:
        self.playing = playing
        if not self.state.replaying:
            self.state.update(playing=playing)
            self.playing_changed.emit(playing)

    def _on_replay_changed(self) -> None:
        self._sync_state()
        if self.state.viewing is None:
            self.pacer.request()

    def _on_replay_finished(self) -> None:
        self._sync_state()
        self.pacer.flush()

    def _on_replay_playing_changed(self, playing: bool) -> None:
        if self.state.replaying:
            self.state.update(playing=playing)
            self.playing_changed.emit(playing)

    def _sync_state(self) -> None:
        """Copy what the store and the replay say into the run state."""
        trace = self.store.current
        if self.state.replaying:  # the replay's length and position, not the trace's
            done, total = self.replay.position()
            has_run, budget, finished = bool(self.store.traces()), total, 0 < total <= done
        else:
            has_run, finished = trace is not None, trace is not None and trace.finished
            budget = trace.info.max_new_tokens if trace is not None else 0
        self.state.update(has_run=has_run, steps=self.store.longest_steps(), budget=budget,
                          current_steps=len(trace.records) if trace is not None else 0,
                          finished=finished, stop=trace.stop if trace is not None else None)

    def _on_failed(self, message: str) -> None:
        if self.loading_model:  # the worker works in order: this is the load failing
            self.loading_model = False
            self.loading.emit(False)
        self.problem.emit(message)

    def _on_sampling_finished(self, counts: AnswerCounts | None) -> None:
        self.sampling = False
        self.sampling_finished.emit(counts)
