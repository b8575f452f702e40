"""The status bar: mode, step n/N, tokens fed, cache, TTFT, ms/token, tokens/s, threads, device.

Owns `RunStatusBar`, which formats the current trace's numbers into labels,
shows transient messages (errors, hints) on the left, and a busy bar while a
model loads (`set_loading`).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QProgressBar, QStatusBar, QWidget

from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.plots.names import format_bytes, mode_name
from kvstudio.charts.plots.plain_text import plain_label, plain_tooltip
from kvstudio.engine.records import Mode
from kvstudio.ui.run.store import RunStore, RunTrace

FIELDS = ("mode", "step", "fed", "cache", "ttft", "ms_token", "tok_s", "threads")


def step_count(trace: RunTrace) -> int:
    """Steps done, counted 1 … N (the prefill is step 1 of N): the counter every view shows."""
    return len(trace.records)


class RunStatusBar(RetranslateOnLanguageChange, QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Before the first step there is no run: the mode shown is the one the next run uses
        # (the dock's, remembered from the last session), set by the window.
        self.next_mode: Callable[[], Mode] | None = None
        self._loading = QProgressBar()
        self._loading.setObjectName("model_loading")
        self._loading.setRange(0, 0)  # busy: no percentage to show
        self._loading.setMaximumWidth(220)
        self._loading.setTextVisible(True)
        self._loading.hide()
        self.addPermanentWidget(self._loading)
        self._opening = QProgressBar()  # a saved run read on its own thread
        self._opening.setObjectName("run_file_opening")
        self._opening.setRange(0, 0)
        self._opening.setMaximumWidth(220)
        self._opening.setTextVisible(True)
        self._opening.hide()
        self.addPermanentWidget(self._opening)
        self._labels = {name: plain_label() for name in FIELDS}
        for label in self._labels.values():
            self.addPermanentWidget(label)
        self._threads, self._device = 1, "cpu"
        self._store: RunStore | None = None
        self.retranslate()

    def set_runtime(self, threads: int, device: str) -> None:
        self._threads, self._device = threads, device
        self._labels["threads"].setText(self._t["threads"].format(threads, device))

    def set_loading(self, loading: bool) -> None:
        """Show or hide the busy bar that says a model is loading."""
        self._loading.setVisible(loading)

    def is_loading(self) -> bool:
        return not self._loading.isHidden()

    def set_opening(self, opening: bool) -> None:
        """Show or hide the busy bar that says a saved run is being read."""
        self._opening.setVisible(opening)

    def is_opening(self) -> bool:
        return not self._opening.isHidden()

    def field_text(self, name: str) -> str:
        return self._labels[name].text()

    def refresh(self, store: RunStore) -> None:
        self._store = store
        t = self._t
        trace = store.current
        mode = (self.next_mode() if trace is None and self.next_mode is not None
                else store.current_mode)
        self._labels["mode"].setText(t["mode"].format(mode_name(mode)))
        if trace is None:
            for name in ("step", "fed", "cache", "ttft", "ms_token", "tok_s"):
                self._labels[name].setText("")
            return
        last = trace.last
        self._labels["step"].setText(t["step"].format(f"{step_count(trace):,}",
                                                      f"{trace.info.max_new_tokens:,}"))
        self._labels["fed"].setText(t["fed"].format(f"{trace.tokens_fed_total:,}"))
        self._labels["cache"].setText(t["cache"].format(
            format_bytes(last.cache_allocated_bytes if last else 0)))
        ttft, ms_token, tok_s = trace.ttft_ms, trace.decode_ms_per_token, trace.tokens_per_second
        self._labels["ttft"].setText(t["ttft"].format("—" if ttft is None else f"{ttft:,.1f}"))
        spread = trace.decode_ms_range
        if ms_token is None or spread is None:
            self._labels["ms_token"].setText(t["ms_token_none"])
            self._labels["ms_token"].setToolTip("")
        else:
            self._labels["ms_token"].setText(t["ms_token"].format(f"{ms_token:,.2f}",
                                                                  f"{spread[2]:,}"))
            self._labels["ms_token"].setToolTip(plain_tooltip(t["ms_token_tip"].format(
                f"{spread[0]:,.2f}", f"{spread[1]:,.2f}", f"{spread[2]:,}")))
        self._labels["tok_s"].setText(t["tok_s"].format("—" if tok_s is None else f"{tok_s:,.0f}"))

    def retranslate(self) -> None:
        self._loading.setFormat(self.tr("Loading the model…"))
        self._opening.setFormat(self.tr("Opening the saved run…"))
        self._t = {
            "mode": self.tr("Mode: {0}"),
            "step": self.tr("Step {0}/{1}"),
            "fed": self.tr("Tokens fed: {0}"),
            "cache": self.tr("Cache: {0}"),
            "ttft": self.tr("TTFT: {0} ms (single measurement)"),
            "ms_token": self.tr("{0} ms/token (median of {1} steps)"),
            "ms_token_none": self.tr("— ms/token"),
            "ms_token_tip": self.tr(
                "ms/token: the median time of one decode step, timed by the model's thread "
                "around the forward pass and the sampling only (never the drawing); the "
                "prefill is apart, as TTFT. Fastest step {0} ms, slowest {1} ms, {2} steps."),
            "tok_s": self.tr("{0} tokens/s"),
            "threads": self.tr("torch threads: {0} · {1}"),
        }
        self._labels["tok_s"].setToolTip(self.tr("tokens/s = 1000 ÷ ms/token (decode steps only)"))
        self.set_runtime(self._threads, self._device)
        if self._store is not None:
            self.refresh(self._store)
        self.clearMessage()  # a passing message in the old language would linger for seconds
