"""Lab: the scale projector — what the KV cache of a real model needs.

Owns `ProjectorPanel`: the source box (the loaded model, a built-in preset with
the numbers of its published config.json, or a local config.json chosen with
its button: its own `make_box`), context, batch and bits (``kvstudio.labs.registry``'s
PROJECTOR, labelled there, built by `LabPanel`) beside `ProjectorView`
(``kvstudio.charts.labs.projector``), which draws cache bytes against context
length with lines for GPU memory and the weights; the run is
``kvstudio.labs.projector.run`` (for the loaded model it also runs the model and
checks the projection against the bytes the real cache held).
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QPushButton, QWidget

from kvstudio.charts.labs.projector import ProjectorView
from kvstudio.charts.messages import localize
from kvstudio.labs import scale
from kvstudio.labs.params import Param
from kvstudio.labs.registry import PROJECTOR
from kvstudio.labs.scale import LOADED
from kvstudio.ui.labs.shared.base import LabPanel

OPENING_PRESET = PROJECTOR.param("source").default  # the course's example (labs/scale.py)


class ProjectorPanel(LabPanel):
    view_type = ProjectorView  # its boxes: the registry's PROJECTOR
    source: QComboBox  # its data: the run's `source` (`make_box`)
    bits: QComboBox  # built by LabPanel: 0 (the config's own dtype, named here) first

    def add_widgets(self) -> None:
        self.open_button = QPushButton()
        self.open_button.clicked.connect(self._choose_config)
        picker = QWidget()  # the button beside the source box, on its form row
        row = QHBoxLayout(picker)
        row.setContentsMargins(0, 0, 0, 0)
        self.form.replaceWidget(self.source, picker)
        row.addWidget(self.source, 1)
        row.addWidget(self.open_button)

    def make_box(self, param: Param) -> QWidget:
        """The source box lists the loaded model, the presets and any config.json chosen."""
        if param.name != "source":
            return super().make_box(param)
        source = QComboBox()
        source.addItem("", LOADED)
        for key, geometry in scale.PRESETS.items():
            source.addItem(geometry.name, key)
        # It opens on a published model, whose lines read against GPU memory (the course's
        # tiny model lies flat under the smallest GPU line); "the loaded model" is first.
        source.setCurrentIndex(source.findData(OPENING_PRESET))
        return source

    def retranslate(self) -> None:
        super().retranslate()
        self.bits.setItemText(0, self.tr("the config's dtype"))
        self.explanation.setText(
            self.tr(
                "Bytes per token = 2 · L · H_kv · d · bytes (K and V, every layer); the cache "
                "for a batch is batch × context × that; a sliding window keeps W − 1 tokens on its "
                "layers, and an 8- or 4-bit cache also stores a float16 scale per token and K/V "
                "head. Bytes default to the config's dtype. Presets use the numbers of each "
                "model's published config.json. For the loaded model the projection is checked "
                "against a real run."
            )
        )
        self.source.setItemText(0, self.tr("the loaded model"))
        self.open_button.setText(self.tr("config.json…"))

    def _choose_config(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Open a config.json"), "", self.tr("config (*.json)")
        )
        if path:
            self.set_config(path)

    def set_config(self, path: str) -> None:
        """Use a local config.json (also for scripts and tests)."""
        try:
            geometry = scale.load_config(path)
        except ValueError as exc:
            message = str(exc)
            self._report(lambda: localize(message))
            return
        index = self.source.findData(path)
        if index < 0:
            self.source.addItem(geometry.name, path)
            index = self.source.count() - 1
        self.source.setCurrentIndex(index)
