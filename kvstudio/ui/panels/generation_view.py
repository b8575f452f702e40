"""The prompt editor and the generated text as token chips.

Owns `GenerationView`: a prompt box with a chat-template toggle, and one chip
per token of the current run: prompt tokens grey, generated tokens white, the
latest one highlighted, special tokens (<|im_start|>, <|im_end|>) dark, the
end-of-answer token red and labelled as such, each with a tooltip (id,
probability, tokens fed, time). It redraws from whatever store it is given,
so an earlier step (the scrubber's) shows the chips of that step. Chip texts
come from the records' `token_texts` (and the prompt's pieces), which the
engine decodes incrementally, so Hangul split across byte-level tokens is
shown whole.

The prompt box (`PromptEdit`) holds at most `MAX_TEXT_CHARS` characters, the
bound of every lab text field: Qt lays a one-line paste out whole, and a 1 MB
line froze the window for minutes. A longer paste, drop or restored prompt is
cut there, and the line under the box says how much was left out and what to
do; the clipboard keeps the whole text.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QMimeData, QObject, QSignalBlocker, QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from kvstudio.charts.i18n import RetranslateOnLanguageChange
from kvstudio.charts.plots.names import mode_name
from kvstudio.charts.plots.plain_text import plain_label
from kvstudio.engine.records import StepRecord
from kvstudio.labs.params import MAX_TEXT_CHARS
from kvstudio.ui.panels.token_chips import TokenChipsView
from kvstudio.ui.run.store import RunStore, RunTrace

SPECIAL_TOKEN = re.compile(r"^<\|[A-Za-z0-9_]+\|>$")  # <|im_start|>, <|im_end|>, <|endoftext|>


def is_special_piece(piece: str) -> bool:
    return bool(SPECIAL_TOKEN.match(piece.strip()))


def chip_text(piece: str) -> str:
    """Make whitespace visible: a chip of spaces or a newline must still show its boundary."""
    if piece == "":
        return "·"
    shown = piece.replace("\n", "↵").replace("\t", "⇥")
    return shown if shown.strip() else shown.replace(" ", "␣")


class PromptEdit(QPlainTextEdit):
    """A plain-text box that never holds more than `limit` characters.

    QPlainTextEdit has no maxLength: a paste or drop (`insertFromMimeData`) is cut
    to the room left before Qt sees it, and anything else that overfills the box
    (typing at the limit, an input method) is cut back on `textChanged`. `overflowed`
    says how many characters were offered and how many were kept.
    """

    overflowed = Signal(int, int)  # characters offered, characters kept

    def __init__(self, limit: int = MAX_TEXT_CHARS, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.limit = limit
        self.textChanged.connect(self._cut_back)

    def length(self) -> int:
        """Characters in the box, without building its text (a block's end counts as one)."""
        return max(0, self.document().characterCount() - 1)

    def insertFromMimeData(self, source: QMimeData) -> None:  # Qt's paste and drop
        if not source.hasText():
            super().insertFromMimeData(source)
            return
        text = source.text()
        selected = len(self.textCursor().selectedText())
        room = max(0, self.limit - (self.length() - selected))
        if len(text) <= room:
            super().insertFromMimeData(source)
            return
        kept = QMimeData()
        kept.setText(text[:room])
        super().insertFromMimeData(kept)
        self.overflowed.emit(len(text), room)

    def set_text(self, text: str) -> None:
        """`setPlainText`, cut to the limit (and said so) before Qt lays the text out."""
        if len(text) > self.limit:
            self.setPlainText(text[: self.limit])
            self.overflowed.emit(len(text), self.limit)
        else:
            self.setPlainText(text)

    def _cut_back(self) -> None:
        length = self.length()
        if length <= self.limit:
            return
        cursor = QTextCursor(self.document())
        cursor.setPosition(self.limit)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        self.overflowed.emit(length, self.limit)


class GenerationView(RetranslateOnLanguageChange, QWidget):
    """Prompt in, chips out. It does not start runs: the window reads `prompt()`."""

    prompt_edited = Signal()
    chat_template_toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None, chips_only: bool = False) -> None:
        super().__init__(parent)
        self.prompt_edit = PromptEdit()  # the prompt the user types
        self.prompt_edit.setMaximumHeight(70)
        self.prompt_edit.setMinimumHeight(44)  # two lines: small screens keep room for the plots
        self._chat = QCheckBox()
        self._chat.setChecked(True)
        self._header = plain_label()
        self.chips = TokenChipsView()
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.chips)
        scroll.setFrameShape(QFrame.Shape.StyledPanel)
        scroll.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        scroll.setMinimumHeight(40)
        self._scroll = scroll
        # A viewport or a chips row that changes size after the last refresh (the window's
        # layout settling, a dock refitting, the chips re-flowing to a new width) shows the
        # newest chip again, whole lines from the top, once the chips are laid out.
        self._follow_last = QTimer(self)
        self._follow_last.setSingleShot(True)
        self._follow_last.setInterval(0)
        self._follow_last.timeout.connect(self._show_last_chip)
        scroll.viewport().installEventFilter(self)
        self.chips.installEventFilter(self)
        self._prompt_label = plain_label()
        self._prompt_note = plain_label()  # a paste that was cut: how much, what to do
        self._prompt_note.setWordWrap(True)
        self._prompt_note.hide()
        self._cut: tuple[int, int] | None = None

        top = QHBoxLayout()
        top.addWidget(self._prompt_label)
        top.addStretch(1)
        top.addWidget(self._chat)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.prompt_edit)
        layout.addWidget(self._prompt_note)
        self._header_row = QHBoxLayout()
        self._header_row.addWidget(self._header)
        layout.addLayout(self._header_row)
        layout.addWidget(scroll, 1)

        if chips_only:  # the presenter view: the run's tokens, no editor
            for widget in (self._prompt_label, self._chat, self.prompt_edit, self._prompt_note):
                widget.hide()
        self._run_id: int | None = None
        self._shown_records = 0
        self._store: RunStore | None = None
        self.prompt_edit.textChanged.connect(self.prompt_edited)
        self.prompt_edit.textChanged.connect(self._forget_cut)
        self.prompt_edit.overflowed.connect(self._on_prompt_cut)
        self._chat.toggled.connect(self.chat_template_toggled)
        self.retranslate()

    # ---- the prompt ------------------------------------------------------------------------
    def prompt(self) -> str:
        return self.prompt_edit.toPlainText()

    def set_prompt(self, text: str) -> None:
        self.prompt_edit.set_text(text)

    def prompt_note(self) -> str:
        """What the line under the prompt says ("" when it is hidden)."""
        return self._prompt_note.text() if self._cut is not None else ""

    def _on_prompt_cut(self, offered: int, kept: int) -> None:
        self._cut = (offered, kept)
        self._show_cut()
        self._prompt_note.show()

    def _forget_cut(self) -> None:
        """An edit that leaves room in the box: the note about the cut paste has done its job."""
        if self._cut is not None and self.prompt_edit.length() < self.prompt_edit.limit:
            self._cut = None
            self._prompt_note.hide()

    def _show_cut(self) -> None:
        if self._cut is None:
            return
        offered, kept = self._cut
        self._prompt_note.setText(self.tr(
            "The prompt box holds at most {0:,} characters: {1:,} were pasted, so the last "
            "{2:,} were left out (the clipboard still has them). Shorten the text, or paste "
            "it in parts and run each.").format(self.prompt_edit.limit, offered, offered - kept))

    def use_chat_template(self) -> bool:
        return self._chat.isChecked() and self._chat.isEnabled()

    def set_chat_available(self, available: bool, suggested: bool) -> None:
        """Enable the template when the tokenizer has ChatML tokens; tick it for chat models."""
        self._chat.setEnabled(available)
        with QSignalBlocker(self._chat):  # a new model: no run to restart yet
            self._chat.setChecked(suggested)

    def add_to_header(self, widget: QWidget) -> None:
        """Put `widget` on the line above the chips, right of the run header."""
        self._header_row.addWidget(widget, 1)

    def focus_run(self) -> None:
        """Give the keyboard focus to the chips, where → and Space step the run."""
        self.chips.setFocus()

    # ---- the chips ---------------------------------------------------------------------------
    def chip_texts(self) -> list[str]:
        return self.chips.texts()

    def generated_chip_count(self) -> int:
        return self._shown_records

    def refresh(self, store: RunStore) -> None:
        self._store = store
        trace = store.current
        if trace is None:
            self._clear_chips()
            self._run_id = None
            self._header.setText(self._header_idle)
            return
        if trace.info.run_id != self._run_id or len(trace.records) < self._shown_records:
            self._rebuild(trace)
        for record in trace.records[self._shown_records:]:
            self._add_generated(trace, record)
        self._shown_records = len(trace.records)
        self._header.setText(self._header_template.format(
            mode_name(trace.mode), len(trace.records), trace.info.max_new_tokens))
        self._show_last_chip()

    def _show_last_chip(self) -> None:
        """Scroll to the newest chip, whole lines from the top."""
        if self.chips.last_rect() is not None:
            offset = self.chips.scroll_showing_last(self._scroll.viewport().height())
            bar = self._scroll.verticalScrollBar()
            bar.setMaximum(max(bar.maximum(), offset))  # (the layout catches up later)
            bar.setValue(offset)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched in (self._scroll.viewport(),
                                                              self.chips):
            self._follow_last.start()
        return super().eventFilter(watched, event)

    def redraw(self, store: RunStore) -> None:
        """Measure and lay out every chip again (after a font change), then refresh."""
        self._run_id = None
        self.refresh(store)

    def _rebuild(self, trace: RunTrace) -> None:
        self._clear_chips()
        self._run_id = trace.info.run_id
        for token_id, piece in zip(trace.info.prompt_ids, trace.info.prompt_pieces, strict=True):
            tip = self._prompt_tip.format(token_id)
            if is_special_piece(piece):
                self.chips.add(piece.strip(), "special", tip + "\n" + self._special_tip)
            else:
                self.chips.add(chip_text(piece), "prompt", tip)

    def _add_generated(self, trace: RunTrace, record: StepRecord) -> None:
        piece = record.token_texts[0]
        greedy = trace.info.request.settings.sampling.temperature == 0
        chance = (self._greedy_tip if greedy
                  else self._drawn_tip.format(record.chosen_probability[0]))
        tip = self._token_tip.format(
            record.token_ids[0], chance, record.tokens_fed, record.elapsed_s * 1000.0,
            record.step)
        if trace.is_eos(record):
            name = trace.info.eos_text or "eos"
            self.chips.add(name, "eos", self._eos_tip.format(name, record.step) + "\n\n" + tip,
                            current=True)
            return
        if not piece:
            tip += "\n" + self._pending_tip
        self.chips.add(chip_text(piece), "generated" if piece else "pending", tip, current=True)

    def _clear_chips(self) -> None:
        self.chips.clear()
        self._shown_records = 0

    # ---- language ----------------------------------------------------------------------------
    def retranslate(self) -> None:
        self._prompt_label.setText(self.tr("Prompt"))
        self.prompt_edit.setPlaceholderText(
            self.tr("Type a question or some text, then press Step."))
        self._show_cut()
        self._chat.setText(self.tr("Chat template"))
        self._chat.setToolTip(self.tr(
            "Wrap the prompt in the chat model's template (<|im_start|>user … assistant)."
            " Only for chat models."))
        self._header_idle = self.tr("Generated tokens appear here, one chip per token.")
        self._header_template = self.tr("{0} run: {1} of {2} new tokens")
        self._prompt_tip = self.tr("Prompt token id {0}")
        self._token_tip = self.tr(
            "Token id {0}\n{1}\ntokens fed this step: {2}\ntime: {3:.2f} ms\nstep {4}")
        # What the chosen token's probability means: after the filters it was drawn from;
        # greedy draws nothing (argmax), so a "probability 1.000" would say nothing true.
        self._drawn_tip = self.tr(
            "probability {0:.3f} after temperature, penalty, top-k and top-p (drawn from these)")
        self._greedy_tip = self.tr("greedy: the most likely token (argmax, nothing drawn)")
        self._pending_tip = self.tr("Part of a character: its text appears with the next token.")
        self._special_tip = self.tr(
            "A special token: it marks the chat template's turns and is not shown as text.")
        self._eos_tip = self.tr(
            "{0}: the end of the answer. The model chose this special token at step {1}, "
            "so the run stopped here.")
        if self._run_id is None:
            self._header.setText(self._header_idle)
        elif self._store is not None:  # chips and header again, in the new language
            self._run_id = None
            self.refresh(self._store)
