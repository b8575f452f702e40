"""Export behind every chart: a context-menu entry, a corner button, and the slide pack action.

Owns `ChartExporter` (asks where to save, calls ``export.py``, reports the
outcome as signals, remembers the last folder, the slide size and whether
charts carry their headline), `ExportMenu` (PNG, SVG, PDF, CSV for one chart,
the slide size, the headline switch) and `ExportButton` (a small tool button
in a chart's corner that opens that menu), and `attach_export`, which gives a
chart both.
The file dialogs are injectable so tests never open one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QDialog, QFileDialog, QLineEdit, QMenu, QStyle, QToolButton, QWidget

from kvstudio.charts.canvas import CANVASES, DEFAULT_CANVAS, SlideCanvas
from kvstudio.charts.chart_data import ChartLike, ExportError, chart_item, plot_items
from kvstudio.charts.export import ExportFormat, export_chart, export_slide_pack, safe_file_stem
from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.plots.sizing import chart_plots
from kvstudio.charts.plotted_data import plain_text
from kvstudio.ui.plots.base import CORNER_BUTTON_NAME

log = logging.getLogger(__name__)

# (parent, caption, suggested path, filter) → chosen path or "" when cancelled
SaveChooser = Callable[[QWidget | None, str, str, str], str]
# (parent, caption, start folder) → chosen folder or ""
FolderChooser = Callable[[QWidget | None, str, str], str]
NameSource = Callable[[], str]


def _dialog_save(parent: QWidget | None, caption: str, suggested: str, filters: str) -> str:
    path, _ = QFileDialog.getSaveFileName(parent, caption, suggested, filters)
    return str(path)


class FolderDialog(QFileDialog):
    """A folder dialog that takes an existing folder or the name of a new one.

    Qt's "existing directory" dialog refuses a name it cannot find ("directory not
    found"), and its save dialog enters an existing folder instead of taking it (#33:
    the pack could not go into a folder that already existed). Here *Choose* takes
    what the name box says: nothing typed, the folder on show; a folder's name, that
    folder; a new name, a new folder the pack makes. `chosen` is the answer.
    """

    def __init__(self, parent: QWidget | None, caption: str, start: str) -> None:
        super().__init__(parent, caption, start)
        self.setOption(QFileDialog.Option.DontUseNativeDialog, True)  # the name box below
        self.setFileMode(QFileDialog.FileMode.AnyFile)
        self.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        self.setOption(QFileDialog.Option.ShowDirsOnly, True)
        self.setOption(QFileDialog.Option.DontConfirmOverwrite, True)
        self.setLabelText(QFileDialog.DialogLabel.Accept,
                          QCoreApplication.translate("FolderDialog", "Choose"))
        self.chosen = ""

    def name_box(self) -> QLineEdit | None:
        return self.findChild(QLineEdit, "fileNameEdit")  # Qt's own dialog's name box

    def accept(self) -> None:
        box = self.name_box()
        typed = box.text().strip() if box is not None else ""
        folder = Path(self.directory().absolutePath())
        self.chosen = str(folder / typed) if typed else str(folder)
        QDialog.accept(self)  # the choice is made: never "enter the folder" instead


folder_dialog = FolderDialog  # the pack's folder dialog (the name tests open it by)


def _dialog_folder(parent: QWidget | None, caption: str, start: str) -> str:
    dialog = FolderDialog(parent, caption, start)
    try:
        return dialog.chosen if dialog.exec() else ""
    finally:
        dialog.deleteLater()


class ChartExporter(QObject):
    """Shared by every chart: where to save, the slide size, headlines, and what happened."""

    exported = Signal(str)  # a path written (for the status bar)
    failed = Signal(str)  # a message the user can act on
    options_changed = Signal()  # the slide size or the headline switch changed

    def __init__(self, parent: QObject | None = None, *, save_chooser: SaveChooser | None = None,
                 folder_chooser: FolderChooser | None = None,
                 canvas: SlideCanvas = DEFAULT_CANVAS, folder: Path | None = None,
                 headline: bool = True) -> None:
        super().__init__(parent)
        self.save_chooser: SaveChooser = save_chooser or _dialog_save
        self.folder_chooser: FolderChooser = folder_chooser or _dialog_folder
        self.canvas = canvas
        self.headline = headline  # draw each chart's headline (its measured numbers)
        self.folder = folder or Path.home()

    def set_canvas(self, canvas: SlideCanvas) -> None:
        if canvas != self.canvas:
            self.canvas = canvas
            self.options_changed.emit()

    def set_headline(self, on: bool) -> None:
        if on != self.headline:
            self.headline = on
            self.options_changed.emit()

    def filters(self, fmt: ExportFormat) -> str:
        return {
            "png": self.tr("PNG image (*.png)"),
            "svg": self.tr("SVG vector image (*.svg)"),
            "pdf": self.tr("PDF document (*.pdf)"),
            "csv": self.tr("CSV data (*.csv)"),
        }[fmt]

    def export_one(self, chart: ChartLike, name: str, fmt: ExportFormat,
                   parent: QWidget | None = None) -> Path | None:
        """Ask for a file name, then export; None when cancelled or failed (see `failed`)."""
        suggested = str(self.folder / f"{safe_file_stem(name)}.{fmt}")
        chosen = self.save_chooser(parent, self.tr("Export chart"), suggested, self.filters(fmt))
        if not chosen:
            return None
        path = Path(chosen)
        if path.suffix.lower() != f".{fmt}":
            path = path.with_name(path.name + f".{fmt}")
        try:
            written = export_chart(chart, path, fmt, canvas=self.canvas, headline=self.headline)
        except ExportError as exc:
            self.failed.emit(str(exc))
            return None
        self.folder = written.parent
        self.exported.emit(str(written))
        return written

    def export_pack(self, charts: Mapping[str, ChartLike],
                    numbers: Mapping[str, Any] | None = None,
                    tables: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
                    parent: QWidget | None = None) -> list[Path] | None:
        """Ask for a folder, then write the slide pack into it."""
        chosen = self.folder_chooser(parent, self.tr("Export slide pack to folder"),
                                     str(self.folder))
        if not chosen:
            return None
        try:
            pack = export_slide_pack(charts, Path(chosen), numbers, tables, canvas=self.canvas,
                                     headline=self.headline)
        except ExportError as exc:
            self.failed.emit(str(exc))
            return None
        self.folder = Path(chosen)
        message = self.tr("{0} files written to {1}").format(len(pack.written), chosen)
        if pack.skipped:
            message += " " + self.tr("(left out, no data yet: {0})").format(
                ", ".join(pack.skipped))
        self.exported.emit(message)
        return list(pack.written)


class ExportMenu(RetranslateOnLanguageChange, QMenu):
    """PNG / SVG / PDF / CSV for one chart."""

    def __init__(self, chart: ChartLike, name: NameSource, exporter: ChartExporter,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._chart = chart
        self._name = name
        self._exporter = exporter
        formats: tuple[ExportFormat, ...] = ("png", "svg", "pdf", "csv")
        self._actions: dict[str, QAction] = {fmt: self.addAction("") for fmt in formats}
        for fmt in formats:
            self._actions[fmt].triggered.connect(lambda _=False, fmt=fmt: self.export(fmt))
        self.addSeparator()
        self.size_menu = self.addMenu("")
        self._sizes = QActionGroup(self)
        self._size_actions: dict[str, QAction] = {}
        for canvas in CANVASES:
            action = self.size_menu.addAction(canvas.label)
            action.setCheckable(True)
            action.setData(canvas.key)
            self._sizes.addAction(action)
            self._size_actions[canvas.key] = action
        self._sizes.triggered.connect(self._on_size_triggered)
        self.headline_action = self.addAction("")
        self.headline_action.setCheckable(True)
        self.headline_action.toggled.connect(self._exporter.set_headline)
        exporter.options_changed.connect(self._on_options_changed)
        self._on_options_changed()

    # ---- handles: what a user presses (tests and scripts press them too) ----------------
    @property
    def format_actions(self) -> dict[str, QAction]:
        """One menu entry per export format."""
        return self._actions

    def retranslate(self) -> None:
        self.setTitle(self.tr("Export chart"))
        canvas = self._exporter.canvas
        self._actions["png"].setText(
            self.tr("PNG image, {0}×{1} px…").format(canvas.width, canvas.height))
        self.size_menu.setTitle(self.tr("Slide size"))
        self.headline_action.setText(self.tr("Headline with the measured numbers"))
        self._actions["svg"].setText(self.tr("SVG vector image…"))
        self._actions["pdf"].setText(self.tr("PDF (vector)…"))
        self._actions["csv"].setText(self.tr("Data as CSV…"))

    def export(self, fmt: ExportFormat) -> Path | None:
        return self._exporter.export_one(self._chart, self._name(), fmt, self.parentWidget())

    def _on_size_triggered(self, action: QAction) -> None:
        for canvas in CANVASES:
            if canvas.key == action.data():
                self._exporter.set_canvas(canvas)

    def _on_options_changed(self) -> None:
        self._size_actions[self._exporter.canvas.key].setChecked(True)
        self.headline_action.setChecked(self._exporter.headline)
        self.retranslate()


class ExportButton(RetranslateOnLanguageChange, QToolButton):
    """A small button that opens a chart's `ExportMenu`; it sits in the chart's top-right corner."""

    def __init__(self, menu: ExportMenu, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(CORNER_BUTTON_NAME)  # plots keep their titles clear of it
        self.setMenu(menu)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_DialogSaveButton))
        self.setAutoRaise(True)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.retranslate()

    def retranslate(self) -> None:
        self.setToolTip(self.tr("Export this chart (PNG, SVG, PDF, CSV)"))


class _CornerKeeper(QObject):
    """Keeps a button in the top-right corner of the widget it watches."""

    def __init__(self, host: QWidget, button: QWidget) -> None:
        super().__init__(host)
        self._host = host
        self._button = button
        host.installEventFilter(self)
        self.place()

    def place(self) -> None:
        size = self._button.sizeHint()
        self._button.setGeometry(self._host.width() - size.width() - 2, 2, size.width(),
                                 size.height())
        self._button.raise_()
        QTimer.singleShot(0, self, self._refit_titles)

    def _refit_titles(self) -> None:
        """Wrap the titles again clear of the button where it now is (a title wrapped before
        the button had its place ran under it in a narrow chart)."""
        if not isinstance(self._host, pg.GraphicsView) or not self._host.updatesEnabled():
            return  # (laid out on a slide canvas: refitted when it is back)
        for plot in chart_plots(self._host):
            refit = getattr(plot.legend, "refit", None) or getattr(plot, "refit_title", None)
            if refit is not None:
                refit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._host and event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self.place()
        return False


def chart_title(chart: ChartLike) -> str:
    """A chart's visible title (plain text), for default file names."""
    for plot in _plots_of(chart):
        title = plain_text(plot.titleLabel.text)
        if title:
            return title
    return "chart"


def attach_export(widget: QWidget, exporter: ChartExporter, name: NameSource | None = None,
                  chart: ChartLike | None = None) -> ExportButton:
    """Give a chart widget an export entry in its context menu and a corner button.

    `widget` is the PlotWidget / GraphicsLayoutWidget on screen; `chart` what to
    export (default: the widget itself); `name` the default file name (default:
    the chart's title at the time of export).
    """
    target = chart if chart is not None else widget
    source: NameSource = name or (lambda: chart_title(target))
    menu = ExportMenu(target, source, exporter, widget)
    for plot in _plots_of(target):
        plot.getViewBox().menu.addSeparator()
        plot.getViewBox().menu.addMenu(menu)
    button = ExportButton(menu, widget)
    _CornerKeeper(widget, button)
    button.show()
    return button


def _plots_of(chart: ChartLike) -> list[pg.PlotItem]:
    item = chart_item(chart)
    return [item] if isinstance(item, pg.PlotItem) else plot_items(item)
