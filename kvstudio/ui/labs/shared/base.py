"""What every lab panel shares: parameters, Run/Cancel, progress, the charts, a results table.

Owns `LabPanel` (the layout, the parameter boxes and the run lifecycle on a
`GeneratorRunner`) and `box_row`. Each lab's panel names its view (`view_type`, a
``kvstudio.charts.labs`` `LabView`), which draws the charts and the table from what
the run yields, and with it the lab's declaration (``kvstudio.labs.registry``): the
panel builds one box per declared parameter, in declared order (`make_box`: by its
kind; `box_rows`: boxes that share a form row), and labels each with the parameter's
`label`, or its `label_ko` when the window is in Korean (`shown_language`): the
labels are written in the registry, not translated here. A lab's panel adds only
what is its own (`add_widgets`: a slider, a button; translated choice texts) and, where the
registry's run does not fit, says which generator to run (`make_job`). The panel
never computes: the generator runs on the lab thread; the view only draws what comes
back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from kvstudio.charts.chart_data import ChartLike, DataTable
from kvstudio.charts.i18n import RetranslateOnLanguageChange, shown_language
from kvstudio.charts.labs.base import LabView
from kvstudio.charts.messages import localize
from kvstudio.charts.plots.plain_text import plain_label
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.course import CourseRole
from kvstudio.labs.params import LabSpec, Param
from kvstudio.ui.app.spin_boxes import param_box, param_value, set_param_value
from kvstudio.ui.labs.shared.lab_models import (
    LAB_MODELS,
    LabModelPlan,
    LabModels,
    model_note,
    plan,
)
from kvstudio.ui.run.lab_worker import GeneratorRunner, JobFactory
from kvstudio.ui.slides.export_menu import ChartExporter, attach_export

log = logging.getLogger(__name__)
TABLE_SHARE = 0.6  # the most of a lab's chart-and-table width the table widens itself to


def box_row(*widgets: QWidget) -> QWidget:
    """Several widgets on one form row, left to right (the form stays short for the charts)."""
    host = QWidget()
    layout = QHBoxLayout(host)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    layout.addStretch(1)
    return host


class LabPanel(RetranslateOnLanguageChange, QWidget):
    """One lab: parameters on top, the chart and the results table side by side."""

    result_ready = Signal(object)  # the experiment's result record
    failed = Signal(str)
    start_count = -1  # items to pull when a run starts (-1 = all; 1 = step by hand)
    # Progress items are drawn in batches, at most this often: every redraw runs Python
    # (pyqtgraph) on the UI thread and holds the GIL, which the model thread then waits for.
    redraw_interval_ms = 250
    # Which course model the lab runs on when the window runs an embedded one (lab_models.py);
    # None: always the window's model. Its view's declaration says (`__init_subclass__`).
    course_role: CourseRole | None = None
    # What the result shows (kvstudio.charts.labs): its charts, table, headline and numbers.
    view_type: ClassVar[type[LabView]]
    # Boxes that share one form row, by parameter name; the row stands where its first
    # parameter is declared. The first box's label names the row and each other's stands
    # beside its box (a tick box's is its own text). A row whose first name is no parameter
    # is titled by the panel, under that key (`set_field_names`), and then every box's label
    # stands beside it.
    box_rows: ClassVar[tuple[tuple[str, ...], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        view = getattr(cls, "view_type", None)  # (none on a shared base: SteppedLabPanel)
        if view is not None:  # the registry says which course model the lab runs on
            cls.course_role = view.spec_of().course_role  # type: ignore[assignment]

    def __init__(self, exporter: ChartExporter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.exporter = exporter
        self.model: LoadedModel | None = None
        self.ran_on: LoadedModel | None = None  # the model the last run started on
        self.lab_models: LabModels = LAB_MODELS
        self._ran_plan: LabModelPlan | None = None
        self.result: object | None = None
        self.runner = GeneratorRunner(f"kvstudio-lab-{type(self).__name__}", parent=self)
        self.runner.progress.connect(self._on_runner_progress)
        self.runner.finished.connect(self._on_runner_finished)
        self.runner.failed.connect(self._on_runner_failed)
        self.runner.cancelled.connect(self._on_runner_cancelled)
        self.runner.running_changed.connect(self._on_runner_running_changed)
        self.runner.paused.connect(self._flush_progress)  # before any subclass's paused slot
        self._pending: list[object] = []  # progress items not drawn yet
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(self.redraw_interval_ms)
        self._redraw_timer.timeout.connect(self._flush_progress)

        self.form = QFormLayout()
        self.run_button = QPushButton()
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton()
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.status = plain_label()
        self.status.setWordWrap(True)
        self._status_text: Callable[[], str] = str  # re-read on a language switch
        self.model_note = plain_label()  # which model the lab runs on, and why
        self.model_note.setObjectName("labModelNote")
        self.model_note.setWordWrap(True)
        self.explanation = plain_label()
        self.explanation.setWordWrap(True)
        self.lab_view = self.view_type(self)
        self.table = self.lab_view.table
        self.chart_host = QWidget()
        self.chart_layout = QVBoxLayout(self.chart_host)
        self.chart_layout.setContentsMargins(0, 0, 0, 0)

        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        self.extra_buttons = buttons
        buttons.addWidget(self.progress, 1)
        top = QVBoxLayout()
        top.addWidget(self.explanation)
        top.addLayout(self.form)
        top.addLayout(buttons)
        top.addWidget(self.status)
        top.addWidget(self.model_note)
        self.side_host = QWidget()  # the table, and below it what a lab adds (settings)
        self.side_layout = QVBoxLayout(self.side_host)
        self.side_layout.setContentsMargins(0, 0, 0, 0)
        self.side_layout.addWidget(self.table, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.chart_host)
        split.addWidget(self.side_host)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([600, 420])  # proportions: the table needs room for three columns
        self.split = split
        self._fit_table_later = QTimer(self)
        self._fit_table_later.setSingleShot(True)
        self._fit_table_later.setInterval(0)
        self._fit_table_later.timeout.connect(self.fit_table)
        self.table.rows_changed.connect(self._fit_table_later.start)
        self.table.setMinimumWidth(200)  # narrower than its columns: it scrolls sideways
        # The page scrolls where the screen is too small for it: each chart keeps its
        # readable plot area (`keep_readable` in add_chart) instead of being squashed.
        self.page = QWidget()
        self.page.setObjectName("labPage")
        page_layout = QVBoxLayout(self.page)
        page_layout.addLayout(top)
        page_layout.addWidget(split, 1)
        self.page_scroll = QScrollArea()
        self.page_scroll.setObjectName("labScroll")
        self.page_scroll.setWidgetResizable(True)
        self.page_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.page_scroll.setWidget(self.page)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.page_scroll)
        self._field_labels: dict[str, QLabel] = {}
        self._beside: dict[str, QLabel | QCheckBox] = {}  # a label beside its box, by param
        self._add_param_boxes()
        for chart in self.lab_view.charts().values():
            self.place_chart(chart)
        self.add_widgets()
        self.retranslate()

    def _add_param_boxes(self) -> None:
        """One box per declared parameter, stored as its `box_name`, on the form in declared
        order (`box_rows` gathered); `retranslate` labels them."""
        names = {param.name for param in self.spec.params}
        for param in self.spec.params:
            setattr(self, param.box_name, self.make_box(param))
        placed: set[str] = set()
        for param in self.spec.params:
            if param.name in placed:
                continue
            row = next((row for row in self.box_rows if param.name in row), (param.name,))
            widgets: list[QWidget] = []
            for index, name in enumerate(row):
                if name not in names:
                    continue  # the row's title (the panel's)
                box = getattr(self, self.spec.param(name).box_name)
                if index > 0 or row[0] not in names:  # labelled beside its box
                    beside = box if isinstance(box, QCheckBox) else plain_label()
                    self._beside[name] = beside
                    if beside is not box:
                        widgets.append(beside)
                widgets.append(box)
                placed.add(name)
            self.add_field(row[0], widgets[0] if len(row) == 1 else box_row(*widgets))

    @property
    def pack_name(self) -> str:
        """The lab's key in a slide pack ("CacheKinds"): its view's."""
        return self.lab_view.pack_name

    @property
    def spec(self) -> LabSpec:
        """The lab's declaration in kvstudio.labs.registry (its view's key)."""
        return self.lab_view.spec

    def place_chart(self, widget: pg.GraphicsView) -> None:
        """Show one of the view's charts in the chart column, with its export menu."""
        self.chart_layout.addWidget(widget, 1)
        attach_export(widget, self.exporter)

    def read_params(self) -> dict[str, Any]:
        """The lab's parameters as its boxes hold them (a parameter with no box: its default).

        A ValueError names a box whose text is not a valid value.
        """
        values: dict[str, Any] = {}
        for param in self.spec.params:
            box = getattr(self, param.box_name, None)
            if isinstance(box, QWidget):
                values[param.name] = param_value(param, box)
        return self.spec.check(values)

    def set_params(self, **values: Any) -> None:
        """Fill the boxes of the named parameters (checked as declared), as a user would:
        what scripts and tests do instead of reaching for each box."""
        for name, value in values.items():
            param = self.spec.param(name)
            set_param_value(param, getattr(self, param.box_name), value)

    def fit_table(self) -> None:
        """Widen the table to show its columns whole where the charts keep their minimum.

        Only ever widens it (a width the user dragged to stays), only as far as the charts
        beside it keep their readable plot areas, and to at most TABLE_SHARE of the width
        (the chart is the lesson: one long cell must not squeeze it); past that it scrolls.
        """
        sizes = self.split.sizes()
        total = sum(sizes)
        if total <= 0 or len(sizes) != 2:
            return
        room = total - self.chart_host.minimumSizeHint().width() - self.split.handleWidth()
        wanted = min(self.table.content_width(), room, int(total * TABLE_SHARE))
        if wanted > sizes[1]:
            self.split.setSizes([total - wanted, wanted])

    # ---- for subclasses -----------------------------------------------------------------
    def add_widgets(self) -> None:
        """Add what is the lab's own (a slider, a button, a note): called once the shared
        layout and the boxes stand, before the first `retranslate`."""

    def add_side_note(self) -> QLabel:
        """A wrapped line under the table, beside the chart (the settings that made a run)."""
        label = plain_label()
        label.setWordWrap(True)
        label.setSizePolicy(QSizePolicy.Policy.Ignored,  # wrap to the column
                            QSizePolicy.Policy.Preferred)
        self.side_layout.addWidget(label)
        return label

    def make_box(self, param: Param) -> QWidget:
        """The box that shows `param`: by its kind (`param_box`). A panel that shows one of
        its parameters otherwise overrides this and calls super() for the rest."""
        return param_box(param)

    def add_field(self, key: str, widget: QWidget, row: int = -1) -> QWidget:
        """A labelled form row at `row` (-1: last); a parameter's row is labelled from its
        declaration, any other by `set_field_names` (on retranslate)."""
        label = plain_label()
        self._field_labels[key] = label
        self.form.insertRow(row, label, widget)
        return widget

    def set_field_names(self, names: Mapping[str, str]) -> None:
        for key, text in names.items():
            self._field_labels[key].setText(text)

    def make_job(self, model: LoadedModel) -> JobFactory:
        """The lab's run on `model` with the boxes' parameters (checked here, on this thread)."""
        job = self.spec.run(model, self.read_params())
        return lambda: job

    def clear_views(self) -> None:
        """Forget the previous result's drawing before a new run."""
        tokenizer = self.ran_on.tokenizer if self.ran_on is not None else None
        self.lab_view.start(self.read_params(), tokenizer)

    def show_progress_bar(self, item: object) -> None:
        """Move the progress bar to an item's `done` of `total`, where it says them."""
        done, total = getattr(item, "done", None), getattr(item, "total", None)
        if isinstance(done, int) and isinstance(total, int) and total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def numbers(self) -> dict[str, Any]:
        """The result's numbers for numbers.json in the slide pack."""
        return self.lab_view.numbers()

    def headline(self) -> str:
        """The lesson of the lab's chart with its measured numbers (above exports)."""
        return self.lab_view.headline()

    def data_tables(self) -> list[DataTable]:
        """The numbers the lab's chart draws, from the result (what its CSV holds)."""
        return self.lab_view.data_tables()

    def title(self) -> str:
        """The lab's title in the window's language, as the registry declares it."""
        return self.tab_title()

    @classmethod
    def tab_title(cls) -> str:
        """`title` before a panel is built (its tab stands first)."""
        lab = cls.view_type.spec_of()
        return lab.title_ko if shown_language() == "ko" and lab.title_ko else lab.title

    def retranslate(self) -> None:
        language = shown_language()
        for param in self.spec.params:
            label = self._beside.get(param.name, self._field_labels.get(param.name))
            if label is not None:
                label.setText(param.window_label(language))
        self.run_button.setText(self.tr("Run"))
        self.cancel_button.setText(self.tr("Cancel"))
        self.status.setText(self._status_text())
        self._show_model_note()
        self.lab_view.retranslate()
        if self.lab_view.result is not None:
            self.set_status(self._done_text)

    def _done_text(self) -> str:
        return self.lab_view.status_line() or self.tr("Done.")

    def set_status(self, text: Callable[[], str]) -> None:
        """Show a status line; `text` is called again when the language changes."""
        self._status_text = text
        self.status.setText(text())

    # ---- API ----------------------------------------------------------------------------
    def set_model(self, model: LoadedModel | None) -> None:
        self.model = model
        self.run_button.setEnabled(model is not None and not self.runner.busy)
        self.lab_models.prefetch(model, self.course_role)  # on a worker thread
        self._show_model_note()

    def _show_model_note(self) -> None:
        """Say which model the lab runs on and why: the last run's, else the next run's."""
        wanted = self._ran_plan if self._ran_plan is not None else (
            plan(self.model, self.course_role) if self.model is not None else None)
        self.model_note.setVisible(wanted is not None)
        if wanted is not None:
            self.model_note.setText(model_note(wanted))

    def run(self) -> bool:
        """Start the lab on the current model; False (with a message) if it cannot."""
        if self.runner.closed:
            return False  # the window is closing
        if self.model is None:
            self._report(lambda: self.tr("No model is loaded yet; wait for it or pick one."))
            return False
        try:
            model = self.lab_models.resolve(self.model, self.course_role)
            job = self.make_job(model)
        except ValueError as exc:
            message = str(exc)
            self._report(lambda: localize(message))
            return False
        self.result = None
        self.ran_on, self._ran_plan = model, plan(self.model, self.course_role)
        self._show_model_note()
        self._pending.clear()
        self._redraw_timer.stop()
        self.clear_views()
        self.progress.setRange(0, 0)  # busy until the first progress item
        self.set_status(lambda: self.tr("Running…"))
        self.runner.start(job, self.start_count)
        return True

    def cancel(self) -> None:
        self.runner.cancel()

    def charts(self) -> Mapping[str, ChartLike]:
        """The charts to export, by a stable name."""
        return self.lab_view.charts()

    def table_rows(self) -> list[dict[str, str]]:
        """The results table as shown."""
        return self.table.rows()

    def table_values(self) -> list[dict[str, Any]]:
        """The results table as numbers (for the slide pack's CSV)."""
        return self.table.values()

    def shutdown(self) -> bool:
        return self.runner.shutdown()

    # ---- slots ----------------------------------------------------------------------------
    def _on_runner_progress(self, item: object) -> None:
        self._pending.append(item)
        if not self._redraw_timer.isActive():
            self._redraw_timer.start()

    def _flush_progress(self) -> None:
        """Draw the progress items that arrived since the last redraw."""
        self._redraw_timer.stop()
        items, self._pending = self._pending, []
        self.draw_progress(items)

    def draw_progress(self, items: Sequence[object]) -> None:
        """Draw a batch of progress items as they arrived (the runner's, or a notebook's)."""
        if not items:
            return
        self.lab_view.draw_progress(items)
        self.show_progress_bar(items[-1])

    def _on_runner_finished(self, result: object) -> None:
        self._flush_progress()
        self.take_result(result)

    def take_result(self, result: object) -> None:
        """Show a finished run's result: the table, the charts, the status (also notebooks')."""
        self.result = result
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.lab_view.take_result(result)
        self.set_status(self._done_text)
        self.result_ready.emit(result)

    def _on_runner_failed(self, message: str) -> None:
        self._flush_progress()
        self._report(lambda: localize(message))

    def _on_runner_cancelled(self) -> None:
        self._flush_progress()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.set_status(lambda: self.tr("Cancelled."))

    def _on_runner_running_changed(self, running: bool) -> None:
        self.run_button.setEnabled(not running and self.model is not None)
        self.cancel_button.setEnabled(running)

    def _report(self, message: Callable[[], str]) -> None:
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.set_status(message)
        self.failed.emit(message())

    def closeEvent(self, event: QCloseEvent) -> None:
        self.shutdown()
        super().closeEvent(event)
