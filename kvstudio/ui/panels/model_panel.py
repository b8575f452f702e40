"""The model picker: embedded chat or base model, a model folder, or a MiniMind .pth + tokenizer.

Owns `ModelPanel`: it asks for paths (file dialogs) and emits a `ModelChoice`;
loading happens in the worker. It shows what is loaded once the worker says so.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QGroupBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.plots.plain_text import plain_label
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.run.engine_adapter import ModelChoice, choice_of

EMBEDDED = ("embedded-chat", "embedded-base")
OPENED = "opened"  # the combo's third entry while a folder or .pth model is loaded


class ModelPanel(RetranslateOnLanguageChange, QWidget):
    model_chosen = Signal(object)  # ModelChoice

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._box = QGroupBox()
        self.model_box = QComboBox()  # the model to run: the embedded ones, and an opened one
        for kind in EMBEDDED:
            self.model_box.addItem("", kind)
        self._open_folder = QPushButton()
        self._open_pth = QPushButton()
        self.loaded_label = plain_label()  # the line that names the loaded model
        self.loaded_label.setWordWrap(True)
        inner = QVBoxLayout(self._box)
        for widget in (self.model_box, self._open_folder, self._open_pth, self.loaded_label):
            inner.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._box)
        self._model: LoadedModel | None = None
        self.model_box.activated.connect(self._on_embedded_activated)
        self._open_folder.clicked.connect(self.choose_folder)
        self._open_pth.clicked.connect(self.choose_pth)
        self.retranslate()

    def show_loaded(self, model: LoadedModel) -> None:
        """Select what is loaded: an embedded model, or an entry naming the opened one."""
        self._model = model
        opened = self.model_box.findData(OPENED)
        if choice_of(model).kind in EMBEDDED:
            if opened >= 0:
                self.model_box.removeItem(opened)
            self.model_box.setCurrentIndex(self.model_box.findData(choice_of(model).kind))
        else:
            if opened < 0:
                self.model_box.addItem("", OPENED)
                opened = self.model_box.count() - 1
            self.model_box.setCurrentIndex(opened)
        self._name_opened_entry()
        self._update_loaded_text()

    def shown_choice(self) -> str:
        """The combo's current entry: an embedded kind, or "opened" (what tests read)."""
        return str(self.model_box.currentData())

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, self.tr("Open a model folder"))
        if folder:
            self.model_chosen.emit(ModelChoice("folder", folder))

    def choose_pth(self) -> None:
        pth, _ = QFileDialog.getOpenFileName(self, self.tr("Open a MiniMind .pth checkpoint"),
                                             "", self.tr("PyTorch state dict (*.pth *.pt)"))
        if not pth:
            return
        tokenizer = QFileDialog.getExistingDirectory(
            self, self.tr("Choose the folder with its tokenizer.json"))
        if tokenizer:
            self.model_chosen.emit(ModelChoice("pth", pth, tokenizer))

    def _on_embedded_activated(self, index: int) -> None:
        kind = self.model_box.itemData(index)
        if kind == OPENED:  # the opened model is the one loaded: nothing to do
            return
        if self._model is not None and choice_of(self._model) == ModelChoice(kind):
            return  # the model already loaded: reloading it would only clear the runs
        self.model_chosen.emit(ModelChoice(kind))

    def _name_opened_entry(self) -> None:
        opened = self.model_box.findData(OPENED)
        if opened >= 0 and self._model is not None:
            self.model_box.setItemText(opened, self.tr("Opened: {0}").format(self._model.name))

    def _update_loaded_text(self) -> None:
        if self._model is None:
            self.loaded_label.setText(self.tr("Loading…"))
            return
        kind = self.tr("chat") if self._model.is_chat else self.tr("base")
        text = self.tr("Loaded: {0} ({1})").format(self._model.name, kind)
        if self._model.is_random:
            text += "\n" + self.tr("Random weights: the text is meaningless, the measurements "
                                   "are real.")
        self.loaded_label.setText(text)

    def retranslate(self) -> None:
        self._box.setTitle(self.tr("Model"))
        self.model_box.setItemText(0, self.tr("Embedded chat model"))
        self.model_box.setItemText(1, self.tr("Embedded base model"))
        self._name_opened_entry()
        self.model_box.setToolTip(self.tr(
            "The models shipped with KV Studio (a seeded course model when none is installed)."))
        self._open_folder.setText(self.tr("Open model folder…"))
        self._open_folder.setToolTip(self.tr(
            "A folder with config.json, model weights and tokenizer.json."))
        self._open_pth.setText(self.tr("Open MiniMind .pth…"))
        self._open_pth.setToolTip(self.tr(
            "A MiniMind checkpoint (.pth state dict), then the folder holding its tokenizer."))
        self._update_loaded_text()
