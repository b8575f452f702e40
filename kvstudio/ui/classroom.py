"""The classroom features, plugged into the main window from one call: `install(window)`.

Owns `ClassroomExtras`: it adds the Labs tab, an export menu and corner button
on every live plot, a "Lecture" menu (presenter view, save and open a run,
replay controls, export slide pack), and stops the lab threads when the
window closes. It uses only the window's public extension points
(`add_tab`, `plots()`, `controller`, `status`, `menuBar()`), so the window
stays composition and wiring. "Measure TTFT ×k" repeats the live prompt's
prefill in both modes on a lab thread and hands the medians to the time
plot; the work lives in ``labs``, ``export``, ``presenter`` and ``replay``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, SignalInstance
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from kvstudio.charts.chart_data import ChartLike
from kvstudio.charts.labs.base import slide_pack_of
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.messages import localize
from kvstudio.charts.plots.plain_text import message_box
from kvstudio.charts.plotted_data import chart_headline
from kvstudio.engine.records import DEFAULT_REPEATS
from kvstudio.ui.labs.chat_lab import ChatPanel
from kvstudio.ui.labs.inspector_lab import CacheInspectorPanel
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.main_window import MainWindow
from kvstudio.ui.run.engine_adapter import encode_prompt
from kvstudio.ui.run.lab_worker import GeneratorRunner
from kvstudio.ui.run.saved_runs import SavedRuns
from kvstudio.ui.slides import numbers as numbers_json
from kvstudio.ui.slides.export_menu import ChartExporter, attach_export, chart_title
from kvstudio.ui.slides.numbers import sample_numbers
from kvstudio.ui.slides.presenter import PresenterView
from kvstudio.ui.slides.presenter_charts import LabChart, PresenterActions

if TYPE_CHECKING:
    from kvstudio.labs.cache import compare as compare_lab
    from kvstudio.ui.labs import LabsPanel
else:  # torch loads when TTFT is first measured
    compare_lab = LazyModule("kvstudio.labs.cache.compare")

log = logging.getLogger(__name__)
LABS_SETTLE_MS = 300  # steps stay held this long after the labs are built (see _build_labs)


def _lab_chart(lab: LabPanel, key: str, chart: ChartLike) -> LabChart:
    """One of a lab's charts as the presenter lists it (title and headline read when shown)."""
    return LabChart(f"lab {key}", lambda: f"{lab.title()} — {chart_title(chart)}", chart,
                    lambda: chart_headline(chart), lambda: lab.result)


class ClassroomExtras(QObject):
    """Labs, export, the presenter view and saved runs for a `MainWindow`."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.last_warning = ""
        controller = window.controller
        self.exporter = ChartExporter(self)
        self.exporter.failed.connect(self._on_export_failed)
        self.exporter.exported.connect(self._on_exported)
        # The labs (17 charts) and the presenter view are built when first needed, so the
        # window is on screen sooner: the labs when their tab opens or the model has loaded.
        self._labs: LabsPanel | None = None
        self._labs_page = QWidget()  # until the labs are built
        window.add_tab(self._labs_page, lambda: self.tr("Labs"))
        window.tabs.currentChanged.connect(self._on_tab_changed)
        controller.model_loaded.connect(self._on_model_loaded)
        self._presenter: PresenterView | None = None
        # Chat and Cache inspector: lab panels with a tab each (issue 15), each built when its
        # tab first opens or the panel is asked for (`chat`, `inspector`), as the labs are.
        self._tab_pages: dict[type[LabPanel], QWidget] = {}
        self._tab_labs: dict[type[LabPanel], LabPanel] = {}
        for panel_type in (ChatPanel, CacheInspectorPanel):
            self._tab_pages[panel_type] = QWidget()
            window.add_tab(self._tab_pages[panel_type], panel_type.tab_title)
        for plot in window.plots().values():  # the menu and button are the plot's children
            attach_export(plot, self.exporter)
        self.replay = controller.replay  # the controller owns it: the run state covers replays
        self.replay.samples_loaded.connect(window.answers.show_counts)
        self.ttft_repeats = DEFAULT_REPEATS
        self._prefill: compare_lab.PrefillTimes | None = None  # the last "Measure TTFT ×k"
        self.ttft_runner = GeneratorRunner("kvstudio-ttft", parent=self)
        self.ttft_runner.finished.connect(self._on_ttft_finished)
        self.ttft_runner.failed.connect(self._on_lab_failed)
        self.saved_runs = SavedRuns(
            window, controller, counts=lambda: window.answers.plot.counts,
            folder=lambda: self.exporter.folder, shown=lambda: window.tabs.setCurrentIndex(0),
            note=self._on_note, warn=self._warn)
        self.saved_runs.file_runner.running_changed.connect(window.status.set_opening)
        self._build_menu()
        # A presenter's clicker works on the working window too (the presenter view has its own
        # keys); text fields keep these keys (see TypingGuard).
        self._clicker_keys: list[QShortcut] = []
        # Page Up means what it means in the presenter view: one step back, like ←.
        for key, action in ((Qt.Key.Key_PageDown, self.step), (Qt.Key.Key_Home, self.reset),
                            (Qt.Key.Key_PageUp, window.controller.view_previous)):
            shortcut = QShortcut(QKeySequence(key), window)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(action)
            self._clicker_keys.append(shortcut)
        window.installEventFilter(self)
        self.retranslate()

    # ---- built on first use ------------------------------------------------------------------
    @property
    def labs(self) -> LabsPanel:
        """The Labs tab's panel (built now if it was not yet)."""
        if self._labs is None:
            from kvstudio.ui.labs import LabsPanel  # 17 charts' modules: imported when needed

            gate = self.window.controller.host.gate
            self._labs = LabsPanel(self.exporter, build_guard=gate.holding)  # steps wait
            self._labs.failed.connect(self._on_lab_failed)
            self._labs.timing_changed.connect(self._on_lab_timing_changed)  # timed labs run alone
            self._labs.set_model(self.window.controller.model)
            self.window.replace_tab(self._labs_page, self._labs)
            self._labs_page.deleteLater()
            if self.window.typing_guard is not None:  # the labs' number boxes keep their keys
                self._labs.panel_built.connect(self.window.typing_guard.guard)
        return self._labs

    @property
    def chat(self) -> ChatPanel:
        """The Chat tab's panel (built now if it was not yet)."""
        return cast(ChatPanel, self._tab_lab(ChatPanel))

    @property
    def inspector(self) -> CacheInspectorPanel:
        """The Cache inspector tab's panel (built now if it was not yet)."""
        return cast(CacheInspectorPanel, self._tab_lab(CacheInspectorPanel))

    @property
    def tab_labs(self) -> list[LabPanel]:
        """The lab panels with a tab of their own built so far."""
        return list(self._tab_labs.values())

    def _tab_lab(self, panel_type: type[LabPanel]) -> LabPanel:
        lab = self._tab_labs.get(panel_type)
        if lab is not None:
            return lab
        controller = self.window.controller
        with controller.host.gate.holding():  # built on the GUI thread: the live steps wait
            lab = self._tab_labs[panel_type] = panel_type(self.exporter)
            lab.failed.connect(self._on_lab_failed)
            controller.model_loaded.connect(lab.set_model)
            lab.set_model(controller.model)
            if isinstance(lab, ChatPanel):  # a chat turn's TTFT is timed too
                lab.runner.running_changed.connect(self._on_lab_timing_changed)
            self.window.replace_tab(self._tab_pages.pop(panel_type), lab)
            if self.window.typing_guard is not None:  # its text fields keep their keys
                self.window.typing_guard.guard(lab)
        return lab

    @property
    def presenter(self) -> PresenterView:
        """The projector window (another view over the same runs; built now if it was not yet)."""
        if self._presenter is None:
            controller, window = self.window.controller, self.window
            self._presenter = PresenterView(
                controller.shown,  # the step looked at, as in the window (← steps back)
                PresenterActions(self.step, self.toggle_play, self.reset,
                                 back=controller.view_previous),
                counts=lambda: window.answers.plot.counts,
                parent=window,
                lab_charts=self.lab_charts,
            )
            controller.pacer.add_view(self._presenter.refresh)
            controller.sampling_finished.connect(self._on_sampling_finished)
            self._presenter.toggled.connect(self.presenter_action.setChecked)
        return self._presenter

    def lab_charts(self) -> list[LabChart]:
        """Every lab chart with a result, for the presenter (labs not built yet have none)."""
        labs = [*(self._labs.built_labs() if self._labs is not None else []), *self.tab_labs]
        return [_lab_chart(lab, key, chart) for lab in labs if lab.result is not None
                for key, chart in lab.charts().items()]

    # ---- what the menu does ----------------------------------------------------------------
    def step(self) -> None:
        """One step of what is on screen: the replay in a replay, else the live model."""
        self.window.controller.step()

    def toggle_play(self) -> None:
        self.window.controller.toggle_play()

    def reset(self) -> None:
        """Home: start again what is on screen (never another run)."""
        self.window.controller.restart()

    def save_run(self, path: str | None = None) -> bool:
        """Save the run on screen (`SavedRuns.save`)."""
        return self.saved_runs.save(path)

    def open_run(self, path: str | None = None) -> bool:
        """Open a saved run; True once it is shown (`SavedRuns.open`)."""
        return self.saved_runs.open(path)

    @property
    def run_opened(self) -> SignalInstance:
        """Emitted when a saved run has been read: shown (True) or refused (False)."""
        return self.saved_runs.opened

    def measure_ttft(self) -> bool:
        """Repeat the current prompt's prefill in both modes; the time plot shows medians."""
        model = self.window.controller.model
        if model is None:
            self._on_note(self.tr("No model is loaded yet; wait for it or pick one."))
            return False
        request = self.window.current_request()
        try:
            ids = encode_prompt(model, request)
        except ValueError as exc:
            self._warn(str(exc))
            return False
        backend, tokenizer = model.backend, model.tokenizer
        repeats, cache = self.ttft_repeats, request.settings.cache
        self._on_note(self.tr("Measuring TTFT {0} times in each mode…").format(repeats))
        if self.ttft_runner.closed:
            return False  # the window is closing
        self.ttft_runner.start(
            lambda: compare_lab.repeated_prefill(backend, tokenizer, ids, repeats=repeats,
                                                     cache=cache))
        return True

    def export_slide_pack(self) -> bool:
        charts: dict[str, ChartLike] = dict(self.window.plots())
        lab_charts, lab_numbers, lab_tables = self.labs.slide_pack()
        tab_charts, tab_numbers, tab_tables = slide_pack_of(self.tab_labs)
        lab_charts.update(tab_charts)
        lab_numbers.update(tab_numbers)
        lab_tables.update(tab_tables)
        charts.update(lab_charts)
        counts = self.window.answers.plot.counts
        numbers = self.numbers_document(lab_numbers)
        traces = self.window.controller.shown().traces()
        tables: dict[str, Any] = {**numbers_json.live_tables(traces), **lab_tables}
        if counts is not None:  # answers.csv is the chart's
            tables["sample answers"] = numbers_json.answer_rows(counts)
        return self.exporter.export_pack(charts, numbers, tables, self.window) is not None

    def numbers_document(self, lab_numbers: dict[str, Any]) -> dict[str, Any]:
        """numbers.json as the script writes it too (``slides/numbers.py``)."""
        model = self.window.controller.model
        prefill = self._prefill
        return numbers_json.numbers_document(
            language=self.window.languages.current,
            model=model.name if model is not None else None,
            traces=self.window.controller.shown().traces(),
            counts=self.window.answers.plot.counts,
            labs=lab_numbers,
            ttft_repeated_ms=dict(prefill.ms) if prefill is not None else None,
        )

    def shutdown(self) -> None:
        if self._presenter is not None:
            self._presenter.leave()
        self.replay.stop()
        # Every lab thread is told to stop first, so they finish their steps side by side;
        # then each is waited for (a chat turn or a lab stops after the step it is in).
        labs = [*(self._labs.built_labs() if self._labs is not None else []), *self.tab_labs]
        self.ttft_runner.cancel()
        self.saved_runs.cancel()
        for lab in labs:
            lab.cancel()
        self.ttft_runner.shutdown()
        self.saved_runs.shutdown()
        if self._labs is not None:
            self._labs.shutdown()
        for lab in self.tab_labs:
            lab.shutdown()

    # ---- building ------------------------------------------------------------------------------
    def _build_menu(self) -> None:
        self.menu = QMenu(self.window)
        self.window.menuBar().addMenu(self.menu)
        self.presenter_action = QAction(self.window)
        self.presenter_action.setCheckable(True)
        self.presenter_action.setShortcuts([QKeySequence("Ctrl+L"), QKeySequence("F5")])
        self.presenter_action.toggled.connect(self._on_presenter_toggled)
        self.save_action = QAction(self.window)
        self.save_action.setShortcut(QKeySequence.StandardKey.Save)
        self.save_action.triggered.connect(self._on_save_triggered)
        self.open_action = QAction(self.window)
        self.open_action.setShortcut(QKeySequence.StandardKey.Open)
        self.open_action.triggered.connect(self._on_open_triggered)
        controller = self.window.controller
        self.replay_step_action = QAction(self.window)
        self.replay_step_action.triggered.connect(controller.step)
        self.replay_play_action = QAction(self.window)
        self.replay_play_action.triggered.connect(controller.toggle_play)
        self.replay_restart_action = QAction(self.window)
        self.ttft_action = QAction(self.window)
        self.ttft_action.triggered.connect(self._on_ttft_triggered)
        self.replay_restart_action.triggered.connect(controller.restart)
        self.back_to_live_action = QAction(self.window)
        self.back_to_live_action.triggered.connect(controller.back_to_live)
        for action in (self.replay_step_action, self.replay_play_action,
                       self.replay_restart_action, self.back_to_live_action):
            action.setEnabled(False)
        controller.state.changed.connect(self._on_run_state_changed)
        self.pack_action = QAction(self.window)
        self.pack_action.setShortcut(QKeySequence("Ctrl+Shift+E"))
        self.pack_action.triggered.connect(self._on_pack_triggered)
        self.menu.addAction(self.presenter_action)
        self.menu.addSeparator()
        self.menu.addAction(self.save_action)
        self.menu.addAction(self.open_action)
        self.replay_menu = self.menu.addMenu("")
        for action in (
            self.replay_step_action,
            self.replay_play_action,
            self.replay_restart_action,
            self.back_to_live_action,
        ):
            self.replay_menu.addAction(action)
        self.menu.addSeparator()
        self.menu.addAction(self.ttft_action)
        self.menu.addAction(self.pack_action)

    def retranslate(self) -> None:
        self.menu.setTitle(self.tr("Lec&ture"))
        self.presenter_action.setText(self.tr("Presenter view (projector: one chart, big numbers)"))
        self.presenter_action.setToolTip(self.tr(
            "Full screen, high contrast, any chart (labs included): Page Down or → steps, "
            "Page Up or ← steps back (as in this window), ↓ / ↑ change the chart, "
            "P plays and pauses, Home starts over, Esc returns."))
        self.save_action.setText(self.tr("Save run…"))
        self.open_action.setText(self.tr("Open saved run (replay without the model)…"))
        self.replay_menu.setTitle(self.tr("Replay"))
        self.replay_step_action.setText(self.tr("Next step"))
        self.replay_play_action.setText(self.tr("Play / pause"))
        self.replay_restart_action.setText(self.tr("From the start"))
        self.back_to_live_action.setText(self.tr("Back to live"))
        self.pack_action.setText(self.tr("Export slide pack (all charts and numbers)…"))
        self.ttft_action.setText(
            self.tr("Measure TTFT ×{0} (median, min–max)").format(self.ttft_repeats))
        self.ttft_action.setToolTip(self.tr(
            "Runs the prompt's prefill {0} times in each mode, interleaved, and shows the "
            "median with the fastest and slowest round at step 0 of the time plot."
        ).format(self.ttft_repeats))
        if self._labs is not None:
            self._labs.retranslate()

    # ---- slots ---------------------------------------------------------------------------------
    def _on_presenter_toggled(self, enabled: bool) -> None:
        self.presenter.set_enabled(enabled)
        key = self.chart_on_screen() if enabled else None
        if key is not None:  # F5 over a lab opens on that lab's chart, not on chart 1
            self.presenter.show_chart_named(key)

    def chart_on_screen(self) -> str | None:
        """The presenter key of the lab chart the window shows now (the lab on the Labs tab,
        or the chat / inspector tab), if it has a result; None on the Live tab."""
        page = self.window.tabs.currentWidget()
        lab = (self._labs.tabs.currentWidget()
               if self._labs is not None and page is self._labs else page)
        if not isinstance(lab, LabPanel) or lab.result is None or not lab.charts():
            return None
        return f"lab {next(iter(lab.charts()))}"

    def _on_sampling_finished(self, _counts: object) -> None:
        if self._presenter is not None:
            self._presenter.refresh()

    def _on_tab_changed(self, index: int) -> None:
        page = self.window.tabs.widget(index)
        if page is self._labs_page:
            _ = self.labs
        for panel_type, placeholder in list(self._tab_pages.items()):
            if page is placeholder:
                self._tab_lab(panel_type)

    def _on_model_loaded(self, model: object) -> None:
        if self._labs is not None:
            self._labs.set_model(self.window.controller.model)
            self._hold_steps_while_lab_models_load()
        else:  # build them now the window is up, after this event (not once it is gone)
            # The Labs tab (its panels come when their tabs open) and the course models'
            # loads: the model's steps wait for them (`StepGate.hold`), or a run started at
            # once timed its prefill with them.
            self.window.controller.host.gate.hold()
            QTimer.singleShot(0, self.window, self._build_labs)

    def _build_labs(self) -> None:
        try:
            _ = self.labs
            self._hold_steps_while_lab_models_load()
        finally:
            # The new widgets' own follow-up turns (layout, polish, fits on short timers) run
            # after this one, and Qt says nothing of turns that never wait: the hold lasts a
            # little longer. The first cached TTFT with Run to end pressed at once read a
            # median 5.7 ms (3.0-18.8, 7 fresh windows, Xvfb) released here, 2.9 ms
            # (2.8-3.4, 6) released after LABS_SETTLE_MS; recompute's 3.0 and 2.8.
            QTimer.singleShot(LABS_SETTLE_MS, self.window, self.window.controller.host.gate.release)

    def _hold_steps_while_lab_models_load(self) -> None:
        """The labs load their course model on a thread of their own once they have the
        window's (`LabModels.prefetch`): the live steps wait for that too, or the first
        prefill shared the interpreter with a model being read."""
        assert self._labs is not None
        gate = self.window.controller.host.gate
        for future in self._labs.models_loading():
            gate.hold()
            future.add_done_callback(lambda _future: gate.release())  # on the loading thread

    def _on_run_state_changed(self) -> None:
        replaying = self.window.controller.state.replaying
        for action in (self.replay_step_action, self.replay_play_action,
                       self.replay_restart_action, self.back_to_live_action):
            action.setEnabled(replaying)

    def _on_save_triggered(self) -> None:
        self.save_run()

    def _on_open_triggered(self) -> None:
        """File > Open saved run: the dialog, then the file read on its own thread."""
        path = self.saved_runs.choose_file()
        if path:
            self.saved_runs.begin_open(path)

    def _on_pack_triggered(self) -> None:
        self.export_slide_pack()

    def _on_ttft_triggered(self) -> None:
        self.measure_ttft()

    def _on_ttft_finished(self, result: object) -> None:
        if isinstance(result, compare_lab.PrefillTimes):
            self._prefill = result
            self.window.time_plot.show_ttft_repeats(result)
            cached, recompute = result.ttft_ms("cached"), result.ttft_ms("recompute")
            self._on_note(self.tr("TTFT median of {0}: cached {1:.2f} ms, recompute {2:.2f} ms"
                                  ).format(cached.count, cached.median, recompute.median))

    def _on_export_failed(self, message: str) -> None:
        self._warn(message)

    def _on_lab_timing_changed(self, _running: bool) -> None:
        """Live steps wait while a lab that measures times runs (its numbers stay clean)."""
        labs_timing = self._labs is not None and self._labs.timing
        chat = self._tab_labs.get(ChatPanel)
        self.window.controller.hold_live(labs_timing or (chat is not None and chat.runner.busy))

    def _on_lab_failed(self, message: str) -> None:
        self.window.status.showMessage(message, 15_000)

    def _on_exported(self, message: str) -> None:
        self._on_note(self.tr("Exported: {0}").format(message))

    def _on_note(self, message: str) -> None:
        self.window.status.showMessage(message, 8_000)

    def _warn(self, message: str) -> None:
        message = localize(message)  # export and file errors, in the window's language
        self.window.status.showMessage(message, 15_000)
        box = message_box(
            QMessageBox.Icon.Warning,
            self.tr("KV Studio"),
            message,
            QMessageBox.StandardButton.Ok,
            self.window,
        )
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.open()
        self.last_warning = message

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Close:
            # This filter sees the close before the window's own closeEvent (which hides it):
            # hide it here, so it is gone at once while the labs finish their steps.
            self.window.hide()
            self.shutdown()
        elif watched is self.window and event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        return False


def install(window: MainWindow) -> ClassroomExtras:
    """Add labs, export, the presenter view and saved runs to `window`; keep the returned object."""
    return ClassroomExtras(window)


__all__ = ["ClassroomExtras", "install", "sample_numbers"]
