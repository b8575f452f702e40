"""Sampling knobs, the token budget and the cache kind, with tooltips that explain each one.

Owns `SamplingPanel`: greedy, temperature, top-k (0 = off), top-p, repetition
penalty, seed, max new tokens, stop at eos, cache kind with its size. It starts from the
course preset (`kvstudio.labs.course.COURSE`), reads and writes a `RunSettings`, and
emits `settings_changed` on every edit. Validation of values stays in the
core records (they raise ValueError with a message).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.plots.names import cache_kind_name
from kvstudio.charts.plots.plain_text import plain_label
from kvstudio.engine.cache.spec import CACHE_KINDS, CacheSpec
from kvstudio.engine.records import Mode, SamplingSettings
from kvstudio.labs.course import COURSE as COURSE_PRESET
from kvstudio.ui.app.spin_boxes import float_box, int_box
from kvstudio.ui.run.engine_adapter import RunSettings

COURSE = COURSE_PRESET.sampling  # T 0.85, top-k off, top-p 0.85, penalty 1.0, seed 42
COURSE_MAX_NEW_TOKENS = COURSE_PRESET.new_tokens  # N = 64
COURSE_STATIC_LENGTH = COURSE_PRESET.static_length
COURSE_WINDOW = COURSE_PRESET.window


class SamplingPanel(RetranslateOnLanguageChange, QWidget):
    settings_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._greedy = QCheckBox()
        self.temperature_box = float_box(0.05, 3.0, COURSE.temperature, 0.05)  # the temperature
        self.top_k_box = int_box(0, 1000, COURSE.top_k)  # top-k (0 = off)
        self._top_p = float_box(0.01, 1.0, COURSE.top_p, 0.05)
        self._penalty = float_box(0.5, 3.0, COURSE.repetition_penalty, 0.05)
        self.seed_box = int_box(0, 2_147_483_647, COURSE.seed)  # the seed
        self._max_new = int_box(1, 4096, COURSE_MAX_NEW_TOKENS)
        self._stop_at_eos = QCheckBox()
        self._stop_at_eos.setChecked(COURSE_PRESET.live_stop_at_eos)
        self._cache_kind = QComboBox()
        for kind in CACHE_KINDS:
            self._cache_kind.addItem("", kind)
        self._static_length = int_box(8, 32768, COURSE_STATIC_LENGTH)
        self._window = int_box(1, 32768, COURSE_WINDOW)

        self._sampling_box = QGroupBox()
        self._cache_box = QGroupBox()
        self._rows: dict[str, QLabel] = {}
        fields: dict[QGroupBox, tuple[tuple[str, QWidget], ...]] = {
            self._sampling_box: (
                ("greedy", self._greedy), ("temperature", self.temperature_box),
                ("top_k", self.top_k_box), ("top_p", self._top_p), ("penalty", self._penalty),
                ("seed", self.seed_box), ("max_new", self._max_new),
                ("stop_at_eos", self._stop_at_eos)),
            self._cache_box: (("kind", self._cache_kind), ("static", self._static_length),
                              ("window", self._window)),
        }
        for group, rows in fields.items():
            form = QFormLayout(group)
            for key, widget in rows:
                self._rows[key] = plain_label()
                form.addRow(self._rows[key], widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._sampling_box)
        layout.addWidget(self._cache_box)

        for box in (self.temperature_box, self._top_p, self._penalty):
            box.valueChanged.connect(self._on_edited)
        for spin in (self.top_k_box, self.seed_box, self._max_new, self._static_length,
                     self._window):
            spin.valueChanged.connect(self._on_edited)
        self._greedy.toggled.connect(self._on_edited)
        self._stop_at_eos.toggled.connect(self._on_edited)
        self._cache_kind.currentIndexChanged.connect(self._on_edited)
        self._update_enabled()
        self.retranslate()

    # ---- settings in and out -----------------------------------------------------------------
    def sampling(self) -> SamplingSettings:
        temperature = 0.0 if self._greedy.isChecked() else self.temperature_box.value()
        return SamplingSettings(temperature, self.top_k_box.value(), self._top_p.value(),
                                self._penalty.value(), self.seed_box.value())

    def cache_spec(self) -> CacheSpec:
        return CacheSpec(self._cache_kind.currentData(), self._static_length.value(),
                         self._window.value())

    def run_settings(self, mode: Mode) -> RunSettings:
        return RunSettings(mode, self.sampling(), self._max_new.value(), self.cache_spec(),
                           self._stop_at_eos.isChecked())

    def set_run_settings(self, settings: RunSettings) -> None:
        """Show `settings` (e.g. restored from QSettings) without emitting per field."""
        self.blockSignals(True)
        s = settings.sampling
        self._greedy.setChecked(s.greedy)
        if not s.greedy:
            self.temperature_box.setValue(s.temperature)
        self.top_k_box.setValue(s.top_k)
        self._top_p.setValue(s.top_p)
        self._penalty.setValue(s.repetition_penalty)
        self.seed_box.setValue(s.seed)
        self._max_new.setValue(settings.max_new_tokens)
        self._stop_at_eos.setChecked(settings.stop_at_eos)
        self._cache_kind.setCurrentIndex(max(0, self._cache_kind.findData(settings.cache.kind)))
        self._static_length.setValue(settings.cache.max_length)
        self._window.setValue(settings.cache.window)
        self.blockSignals(False)
        self._update_enabled()

    # ---- internals ----------------------------------------------------------------------------
    def _on_edited(self) -> None:
        self._update_enabled()
        self.settings_changed.emit()

    def _update_enabled(self) -> None:
        greedy = self._greedy.isChecked()
        for widget in (self.temperature_box, self.top_k_box, self._top_p):
            widget.setEnabled(not greedy)
        kind = self._cache_kind.currentData()
        self._static_length.setEnabled(kind == "static")
        self._window.setEnabled(kind == "sliding")

    def retranslate(self) -> None:
        self._sampling_box.setTitle(self.tr("Sampling"))
        self._cache_box.setTitle(self.tr("KV cache"))
        labels = {
            "greedy": self.tr("Greedy"),
            "temperature": self.tr("Temperature"),
            "top_k": self.tr("Top-k"),
            "top_p": self.tr("Top-p"),
            "penalty": self.tr("Repetition penalty"),
            "seed": self.tr("Seed"),
            "max_new": self.tr("Max new tokens"),
            "stop_at_eos": self.tr("Stop at eos"),
            "kind": self.tr("Cache kind"),
            "static": self.tr("Static length"),
            "window": self.tr("Window W"),
        }
        for key, text in labels.items():
            self._rows[key].setText(text)
        self._greedy.setToolTip(self.tr(
            "Always take the most likely token (temperature 0). Same prompt, same answer."))
        self.temperature_box.setToolTip(self.tr(
            "Divides the logits before softmax: below 1 sharpens the distribution, above 1 "
            "flattens it and answers vary more. Course default 0.85."))
        self.top_k_box.setToolTip(self.tr(
            "Keep only the k most likely tokens before sampling. 0 = off (course default)."))
        self.top_k_box.setSpecialValueText(self.tr("off"))
        self._top_p.setToolTip(self.tr(
            "Keep the smallest set of likely tokens whose probabilities add up to p "
            "(nucleus sampling). 1.0 = off; course default 0.85."))
        self._penalty.setToolTip(self.tr(
            "Makes tokens already in the text less likely; 1.0 = off (course default)."))
        self.seed_box.setToolTip(self.tr(
            "Seeds this run's random generator: the same seed gives the same samples."))
        self._max_new.setToolTip(self.tr("The most tokens a run generates (N)."))
        self._stop_at_eos.setToolTip(self.tr(
            "Ticked: a run ends when the model writes its end-of-answer token (eos). Unticked "
            "(course default): eos is banned and every run generates N tokens, so cached and "
            "recompute are compared over the same N steps."))
        self._cache_kind.setToolTip(self.tr(
            "Dynamic grows by one token per step; static is allocated once for its length; "
            "a sliding window keeps only the last W tokens."))
        self._static_length.setToolTip(self.tr(
            "Tokens a static cache preallocates; prompt + new tokens must fit."))
        self._window.setToolTip(self.tr(
            "Tokens a sliding-window cache keeps; each query looks back at most W tokens."))
        for index, kind in enumerate(CACHE_KINDS):
            self._cache_kind.setItemText(index, cache_kind_name(kind))
