"""The main window: composes the panels, plots and status bar, and wires their signals.

Owns `MainWindow` and nothing else: no computing, no run rules (see
`RunController`), no drawing (see the plots). Extension points for labs and
export: `add_tab()` adds a page next to the live view (`replace_tab()` puts the
page built when first needed in its place), `add_dock()` a side panel, and
`plots()` gives every live plot (each has `.plot_item`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QGridLayout,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from kvstudio.charts.i18n import LanguageSwitcher, RetranslateOnLanguageChange
from kvstudio.charts.messages import localize
from kvstudio.charts.plots.plain_text import message_box
from kvstudio.charts.plots.scrolling import live_scroll_area
from kvstudio.charts.plots.sizing import keep_readable
from kvstudio.engine.limits import set_torch_threads
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.app.tabs import swap_page
from kvstudio.ui.panels.answer_panel import AnswerPanel
from kvstudio.ui.panels.controls_panel import ControlsPanel
from kvstudio.ui.panels.cost_dialog import confirm_run_cost
from kvstudio.ui.panels.generation_view import GenerationView
from kvstudio.ui.panels.model_panel import ModelPanel
from kvstudio.ui.panels.run_state_bar import RunStateBar
from kvstudio.ui.panels.sampling_panel import SamplingPanel
from kvstudio.ui.panels.status_bar import RunStatusBar
from kvstudio.ui.plots import CacheBytesPlot, LivePlot, StepTimePlot, TokensFedPlot
from kvstudio.ui.run.controller import RunController
from kvstudio.ui.run.engine_adapter import (
    ModelChoice,
    RunRequest,
    choice_of,
)
from kvstudio.ui.run.engine_worker import EngineHost

log = logging.getLogger(__name__)

TitleSource = Callable[[], str]
PREFERRED_SIZE = QSize(1500, 920)  # on screens that have the room
ROOMY_SHARE = 0.92  # of a larger screen's available area the window opens at
FRAME_ROOM = QSize(16, 48)  # window-manager frame and title bar around the client area


def initial_geometry(available: QRect, minimum: QSize) -> QRect:
    """The client rectangle to open in: the preferred size, shrunk to `available`, centred.

    `minimum` (the window's minimum size) wins when the screen is smaller still.
    """
    # On a screen with more room than the preferred size, most of it (a maximized look
    # that still shows the desktop's edges); on a smaller one, all of it.
    wanted_width = max(PREFERRED_SIZE.width(), round(available.width() * ROOMY_SHARE))
    wanted_height = max(PREFERRED_SIZE.height(), round(available.height() * ROOMY_SHARE))
    width = max(min(wanted_width, available.width() - FRAME_ROOM.width()), minimum.width())
    height = max(min(wanted_height, available.height() - FRAME_ROOM.height()),
                 minimum.height())
    rect = QRect(0, 0, width, height)
    rect.moveCenter(available.center())
    rect.moveTop(max(available.top() + FRAME_ROOM.height() - FRAME_ROOM.width() // 2,
                     rect.top()))
    rect.moveLeft(max(available.left() + FRAME_ROOM.width() // 2, rect.left()))
    return rect


class MainWindow(RetranslateOnLanguageChange, QMainWindow):
    def __init__(self, settings: AppSettings, host: EngineHost, languages: LanguageSwitcher,
                 torch_threads: int) -> None:
        super().__init__()
        self.setObjectName("KVStudioMainWindow")
        self.settings = settings
        self.languages = languages
        self.last_problem = ""
        self._tab_titles: list[tuple[QWidget, TitleSource]] = []
        self._dock_titles: list[tuple[QDockWidget, TitleSource]] = []

        self.generation = GenerationView()
        self.run_bar = RunStateBar()
        self.generation.add_to_header(self.run_bar)
        self.controls = ControlsPanel()
        self.sampling = SamplingPanel()
        self.model_panel = ModelPanel()
        self.tokens_plot = TokensFedPlot()
        self.time_plot = StepTimePlot()
        self.cache_plot = CacheBytesPlot()
        self.answers = AnswerPanel()
        self.status = RunStatusBar()
        self.setStatusBar(self.status)
        self._torch_threads = torch_threads  # set in torch when the first model has loaded
        self.status.set_runtime(torch_threads, "cpu")
        self.controller = RunController(host, self.current_request, parent=self)
        self.controller.confirm_cost = lambda cost: confirm_run_cost(self, cost)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("tabs")
        self.setCentralWidget(self.tabs)
        self.add_tab(self._build_live_page(), lambda: self.tr("Live"))
        self.add_dock(self._build_side_panel(), lambda: self.tr("Controls"),
                      Qt.DockWidgetArea.LeftDockWidgetArea)
        self._build_menus()
        self._restore()
        self._wire()
        self.retranslate()
        self.classroom: Any = None  # set by app.startup.build_window (labs, export, presenter…)
        self.typing_guard: Any = None  # set by app.startup.build_window (run keys vs text fields)
        self.fit_to_screen(restored=self.settings.geometry() is not None)

    # ---- extension points ---------------------------------------------------------------------
    def add_tab(self, widget: QWidget, title: TitleSource) -> int:
        """Add a page (a lab, an export view); `title` is re-read on language change."""
        self._tab_titles.append((widget, title))
        return self.tabs.addTab(widget, title())

    def replace_tab(self, old: QWidget, new: QWidget) -> None:
        """Put `new` where the page `old` is (same title; a page built when first needed)."""
        if swap_page(self.tabs, old, new):
            self._tab_titles = [(new if widget is old else widget, title)
                                for widget, title in self._tab_titles]

    def add_dock(self, widget: QWidget, title: TitleSource,
                 area: Qt.DockWidgetArea = Qt.DockWidgetArea.RightDockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title(), self)
        dock.setObjectName(f"dock{len(self._dock_titles)}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self._dock_titles.append((dock, title))
        return dock

    def plots(self) -> dict[str, LivePlot]:
        """Every live plot by a stable name (export uses `.plot_item` of each)."""
        return {"tokens_fed": self.tokens_plot, "step_time": self.time_plot,
                "cache_bytes": self.cache_plot, "answers": self.answers.plot}

    def fit_to_screen(self, restored: bool = False) -> None:
        """Open at a size that fits the screen's available area (a restored layout only if it fits).

        A window saved on a large monitor and reopened on a laptop or projector is
        fitted again, so nothing falls off the screen's right or bottom edge.
        """
        screen = self.screen() or QApplication.primaryScreen()
        if screen is None:
            return
        available = screen.availableGeometry()
        # A saved layout is kept only on the screen it was saved on: one saved at 1280×720
        # and reopened on a 1920×1080 screen opened small in a corner.
        same_screen = self.settings.layout_screen() == available
        if restored and same_screen and available.contains(self.frameGeometry()):
            return
        self.setGeometry(initial_geometry(available, self.minimumSizeHint()))

    def current_request(self) -> RunRequest:
        return RunRequest(self.generation.prompt(), self.generation.use_chat_template(),
                          self.sampling.run_settings(self.controls.mode()))

    def start(self, choice: ModelChoice | None = None) -> None:
        """Load `choice` or the remembered model (in the worker); call once shown.

        A choice is remembered only once it has loaded, so a bad ``--model`` never
        replaces a good one; if it fails, the embedded model loads instead.
        """
        self.controller.load_model(choice or self.settings.model_choice())

    def refresh_views(self) -> None:
        store = self.controller.shown()
        self.generation.refresh(store)
        for plot in (self.tokens_plot, self.time_plot, self.cache_plot):
            plot.refresh(store)
        self.status.refresh(store)

    # ---- building -----------------------------------------------------------------------------
    def _build_live_page(self) -> QWidget:
        grid_host = QWidget()
        grid = QGridLayout(grid_host)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.tokens_plot, 0, 0)
        grid.addWidget(self.time_plot, 0, 1)
        grid.addWidget(self.cache_plot, 1, 0)
        grid.addWidget(self.answers, 1, 1)
        for index in (0, 1):  # two equal columns and rows, whatever each cell asks for:
            grid.setColumnStretch(index, 1)  # by size hints, the rows moved 30 px when the
            grid.setRowStretch(index, 1)  # answer panel's hint changed (or the page was shown)
        # Every plot keeps a readable plot area (160 × 120 px of data); where the screen is
        # too low for both rows (1280×720: about 400 px for 530), the plots scroll under
        # the prompt, run bar and chips, which stay in view.
        for plot in self.plots().values():
            keep_readable(plot, width_from_axes=True)
        self.plots_scroll = live_scroll_area(grid_host)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.generation)
        split.addWidget(self.plots_scroll)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 4)
        return split

    def _build_side_panel(self) -> QWidget:
        inner = QWidget()
        column = QVBoxLayout(inner)
        for panel in (self.model_panel, self.controls, self.sampling):
            column.addWidget(panel)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setObjectName("controls_scroll")
        scroll.setWidgetResizable(True)
        scroll.setWidget(inner)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._side_scroll = scroll
        self._fit_side_panel()
        # A row that grows later (a new language's words, arriving over several layout
        # passes; "❚❚ Pause" while running) asks its layout again: the dock follows then.
        # (Fitted once on the language change, it measured the old words: switching Korean
        # → English while running left it 64 px narrower than its rows, which were cut.)
        inner.installEventFilter(self)
        return scroll

    def _fit_side_panel(self) -> None:
        """As wide as the panels' widest row in this language, plus the vertical scrollbar.

        So the dock never scrolls sideways (its horizontal bar is off, and nothing is cut).
        """
        scroll = self._side_scroll
        inner = scroll.widget()
        if inner is None:
            return
        bar = scroll.verticalScrollBar().sizeHint().width()
        frame = 2 * scroll.frameWidth()
        scroll.setMinimumWidth(inner.minimumSizeHint().width() + bar + frame)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        side = getattr(self, "_side_scroll", None)
        if event.type() == QEvent.Type.LayoutRequest and side is not None \
                and watched is side.widget():
            self._fit_side_panel()
        return super().eventFilter(watched, event)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        self._file_menu = bar.addMenu("")
        self._open_folder = self._file_menu.addAction("")
        self._open_folder.triggered.connect(self.model_panel.choose_folder)
        self._open_pth = self._file_menu.addAction("")
        self._open_pth.triggered.connect(self.model_panel.choose_pth)
        self._file_menu.addSeparator()
        self._quit = self._file_menu.addAction("")
        self._quit.setShortcut(QKeySequence.StandardKey.Quit)
        self._quit.triggered.connect(self.close)
        self._language_menu = bar.addMenu("")
        self._language_group = QActionGroup(self)
        self.language_actions: dict[str, QAction] = {}  # View > Language, by code
        for code in ("system", "en", "ko"):
            action = self._language_menu.addAction("")
            action.setCheckable(True)
            action.setData(code)
            self._language_group.addAction(action)
            self.language_actions[code] = action
        self._language_group.triggered.connect(self._on_language_triggered)
        self._view_menu = bar.addMenu("")
        for dock, _ in self._dock_titles:
            self._view_menu.addAction(dock.toggleViewAction())

    def _restore(self) -> None:
        self.generation.set_prompt(self.settings.prompt())
        run_settings = self.settings.run_settings()
        self.sampling.set_run_settings(run_settings)
        self.controls.set_mode(run_settings.mode)
        language = self.settings.language()
        self.language_actions.get(language, self.language_actions["system"]).setChecked(True)
        geometry, state = self.settings.geometry(), self.settings.window_state()
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)

    def _wire(self) -> None:
        c, controls = self.controller, self.controls
        controls.step_requested.connect(c.step)
        controls.play_toggled.connect(c.set_playing)
        controls.interval_changed.connect(c.set_interval)
        controls.reset_requested.connect(c.reset)
        controls.run_to_end_requested.connect(c.run_to_end)
        controls.mode_changed.connect(c.restart_if_running)
        self.status.next_mode = controls.mode  # before a run, the mode the next one uses
        controls.mode_changed.connect(lambda _mode: self.status.refresh(c.shown()))
        self.sampling.settings_changed.connect(c.restart_if_unfinished)
        self.generation.chat_template_toggled.connect(c.restart_if_running)
        self.model_panel.model_chosen.connect(self._on_model_chosen)
        self.answers.sample_requested.connect(c.sample)
        self.answers.cancel_requested.connect(c.cancel_sampling)
        c.set_interval(controls.interval_ms())
        # The views draw what the controller shows: the latest step, or the one looked at.
        c.pacer.add_view(lambda: self.generation.refresh(c.shown()))
        for plot in (self.tokens_plot, self.time_plot, self.cache_plot):
            c.pacer.add_view(lambda plot=plot: plot.refresh(c.shown()))  # type: ignore[misc]
        c.pacer.add_view(lambda: self.status.refresh(c.shown()))
        bar = self.run_bar
        bar.view_requested.connect(c.view_step)
        bar.back_requested.connect(c.view_previous)
        bar.latest_requested.connect(c.view_latest)
        bar.back_to_live_requested.connect(c.back_to_live)
        c.state.changed.connect(self._on_run_state_changed)
        self._on_run_state_changed()
        c.model_loaded.connect(self._on_model_loaded)
        c.loading.connect(self.status.set_loading)
        c.problem.connect(self._on_problem)
        c.note.connect(self._on_note)
        c.sampling_started.connect(self._on_sampling_started)
        c.sampling_progress.connect(self.answers.set_progress)
        c.sampling_finished.connect(self.answers.show_counts)
        c.request_restored.connect(self._on_request_restored)

    # ---- slots --------------------------------------------------------------------------------
    def _on_model_chosen(self, choice: ModelChoice) -> None:
        self.controller.load_model(choice)

    def _on_model_loaded(self, model: LoadedModel) -> None:
        self.settings.set_model_choice(choice_of(model))
        self.model_panel.show_loaded(model)
        self.generation.set_chat_available(model.tokenizer.has_chat_tokens, model.is_chat)
        # The worker set them for its thread; the UI thread's own count follows (labs, export).
        self.status.set_runtime(set_torch_threads(self._torch_threads), model.device)
        self.refresh_views()

    def _on_request_restored(self, request: RunRequest) -> None:
        """After Cancel: the mode buttons and settings show the run on screen again."""
        self.controls.show_mode(request.settings.mode)
        self.sampling.set_run_settings(request.settings)

    def _on_problem(self, message: str) -> None:
        message = localize(message)  # the engine's English, in the window's language
        self.last_problem = message
        self.status.showMessage(message, 15_000)
        box = message_box(QMessageBox.Icon.Warning, self.tr("KV Studio"), message,
                          QMessageBox.StandardButton.Ok, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.open()

    def show_hint(self, message: str) -> None:
        """A non-blocking note the user should not miss (e.g. how to switch language)."""
        box = message_box(QMessageBox.Icon.Information, "KV Studio", message,
                          QMessageBox.StandardButton.Ok, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def _on_note(self, message: str) -> None:
        self.status.showMessage(message, 8_000)

    def _on_sampling_started(self) -> None:
        # Before the button is disabled: Qt would hand the focus to the count box,
        # where → and Space no longer step the run.
        self.generation.focus_run()
        self.answers.set_busy(True)

    def _on_run_state_changed(self) -> None:
        state = self.controller.state
        self.run_bar.show_state(state)
        self.controls.set_playing(state.playing)
        self.controls.set_replaying(state.replaying)

    def _on_language_triggered(self, action: QAction) -> None:
        self.settings.set_language(str(action.data()))
        self.languages.apply(str(action.data()))

    # ---- language and closing -----------------------------------------------------------------
    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("KV Studio — KV cache and sampling, token by token"))
        self._file_menu.setTitle(self.tr("&File"))
        self._open_folder.setText(self.tr("Open model folder…"))
        self._open_pth.setText(self.tr("Open MiniMind .pth…"))
        self._quit.setText(self.tr("Quit"))
        self._language_menu.setTitle(self.tr("&Language"))
        self.language_actions["system"].setText(self.tr("System default"))
        self.language_actions["en"].setText("English")
        self.language_actions["ko"].setText("한국어")
        self._view_menu.setTitle(self.tr("&View"))
        for widget, title in self._tab_titles:
            self.tabs.setTabText(self.tabs.indexOf(widget), title())
        for dock, title in self._dock_titles:
            dock.setWindowTitle(title())
        # The panels retranslate on the same event, in an order Qt does not promise.
        QTimer.singleShot(0, self, self._fit_side_panel)  # (not after the window is gone)
        self.refresh_views()

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.LanguageChange:
            # Qt tells the window before its children: redraw once every widget has its new
            # words, so run header, TTFT label and plot titles switch in this same turn.
            self.refresh_views()
        return handled

    def closeEvent(self, event: QCloseEvent) -> None:
        self.settings.set_prompt(self.generation.prompt())
        self.settings.set_run_settings(self.current_request().settings)
        screen = self.screen()
        self.settings.set_layout(self.saveGeometry(), self.saveState(),
                                 screen.availableGeometry() if screen is not None else None)
        self.settings.sync()
        self.hide()  # gone at once, even while a long step finishes (the thread is then parked)
        self.controller.host.shutdown()
        event.accept()
