"""The Chat tab: a multi-turn conversation that keeps the KV cache, next to one that does not.

Owns `ChatPanel`: the turn box above the boxes of ``kvstudio.labs.registry``'s CHAT
(labelled there, built by `LabPanel`). Each Send runs one turn
(``kvstudio.labs.chat.lab.run``: the core `ChatSession` on the lab thread, reusing
the cache, re-feeding the whole history, or both); `ChatView`
(``kvstudio.charts.labs.chat``) draws what comes back: a row per turn in the table
and three charts per turn (prompt tokens fed, bars, with the running totals, lines;
TTFT; the bytes the cache holds), and the transcript the panel shows above them. The
panel keeps the session across turns and passes it to each run; *New chat* starts
over. A turn that would not fit the context limit is refused by the core with a
message and the conversation stays. The core yields after every forward call, so
Cancel (or closing the window) stops a turn after the step it is in, and the turn
leaves nothing behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QCheckBox, QLineEdit, QPushButton, QSpinBox, QTextBrowser

from kvstudio.charts.labs.chat import ChatView
from kvstudio.charts.lazy import LazyModule
from kvstudio.charts.messages import localize
from kvstudio.files.loaded import LoadedModel
from kvstudio.ui.labs.shared.base import LabPanel
from kvstudio.ui.run.lab_worker import JobFactory

if TYPE_CHECKING:
    from kvstudio.labs.chat import lab as chat_lab
    from kvstudio.labs.chat import session as chat
else:  # torch loads when the chat first runs
    chat = LazyModule("kvstudio.labs.chat.session")
    chat_lab = LazyModule("kvstudio.labs.chat.lab")

MAX_TURN_CHARACTERS = 32_767  # the turn box's length (Qt's default, here on purpose and said)


class ChatPanel(LabPanel):
    view_type = ChatView  # its boxes: the registry's CHAT
    reuse_box: QCheckBox  # some of the boxes LabPanel builds from the declaration
    refeed_box: QCheckBox
    context_limit: QSpinBox

    def add_widgets(self) -> None:
        self.turn_box = QLineEdit()
        self.turn_box.setMaxLength(MAX_TURN_CHARACTERS)  # a longer paste is cut: said on screen
        self.turn_box.returnPressed.connect(self.run)
        self.turn_box.textChanged.connect(self._on_turn_text_changed)
        self.add_field("turn", self.turn_box, row=0)
        self.script_button = QPushButton()
        self.script_button.clicked.connect(self.send_scripted_turn)
        self.runner.running_changed.connect(self._on_script_running_changed)
        self.new_chat_button = QPushButton()
        self.new_chat_button.clicked.connect(self.new_chat)
        self.extra_buttons.insertWidget(2, self.script_button)
        self.extra_buttons.insertWidget(3, self.new_chat_button)
        self.transcript = QTextBrowser()
        self.transcript.setMinimumHeight(120)
        self.chart_layout.insertWidget(0, self.transcript, 1)  # above the charts
        self.session: chat.ChatSession | None = None
        self._script: list[str] = []
        self._script_next = 0
        self._pending_text = ""

    def retranslate(self) -> None:
        super().retranslate()
        self.run_button.setText(self.tr("Send"))
        self.script_button.setText(self.tr("Send next scripted turn"))
        self.new_chat_button.setText(self.tr("New chat"))
        self.turn_box.setPlaceholderText(self.tr("Type what the user says, then Enter"))
        self.reuse_box.setText(self.tr("keep the cache across turns (feed only the new tokens)"))
        self.refeed_box.setText(self.tr("also answer without reuse (re-feed the whole history)"))
        self.explanation.setText(
            self.tr(
                "A conversation in the chat template (ChatML). With reuse the KV cache lives for "
                "the whole chat, so a turn feeds only its own new tokens; without it every turn "
                "feeds the whole history again. Both answer greedily, so their tokens must be "
                "identical (the logits they choose from agree to float32 rounding: max |Δlogit|); "
                "the time to the first token grows with the history only without reuse."
            )
        )
        self.set_field_names({"turn": self.tr("User turn")})
        self._fill_transcript()

    # ---- running a turn ------------------------------------------------------------------------
    def set_model(self, model: LoadedModel | None) -> None:
        if model is not self.model:
            self.new_chat()
        super().set_model(model)

    def read_params(self) -> dict[str, Any]:
        """The boxes' parameters and the user's turn as typed."""
        return {**super().read_params(), "turn": self.turn_box.text()}

    def make_job(self, model: LoadedModel) -> JobFactory:
        """The turn on the conversation so far (a new one on a new model)."""
        params = self.read_params()
        if self.session is not None and self.session.backend is not model.backend:
            self.new_chat()  # the model changed while a turn was running
        if self.session is None and model.tokenizer.has_chat_tokens:
            self.session = chat_lab.new_session(model, params)
        job = self.spec.run(model, {**params, "session": self.session})
        self._pending_text = params["turn"].strip()
        return lambda: job

    def new_chat(self) -> None:
        """Forget the conversation (the next Send starts a new one)."""
        if self.runner.busy:
            return
        self.session = None
        self._script_next = 0
        self.result = None
        assert isinstance(self.lab_view, ChatView)
        self.lab_view.reset()
        self._fill_transcript()
        self.set_status(lambda: "")

    def next_scripted_turn(self) -> str:
        """Put the next line of the lecture's conversation into the turn box."""
        if not self._script:
            try:
                self._script = chat.read_turns(chat_lab.SCRIPT)
            except ValueError as exc:
                message = str(exc)
                self._report(lambda: localize(message))
                return ""
        text = self._script[self._script_next % len(self._script)]
        self._script_next += 1
        self.turn_box.setText(text)
        return text

    def take_result(self, result: object) -> None:
        super().take_result(result)
        if self.turn_box.text().strip() == self._pending_text:
            self.turn_box.clear()
        self._fill_transcript()

    def _fill_transcript(self) -> None:
        assert isinstance(self.lab_view, ChatView)
        self.transcript.setHtml(self.lab_view.transcript_html())
        scroll = self.transcript.verticalScrollBar()
        scroll.setValue(scroll.maximum())

    # ---- slots ----------------------------------------------------------------------------------
    def _on_turn_text_changed(self, text: str) -> None:
        """A full box means a paste was (or may have been) cut at the limit: say so."""
        if len(text) >= self.turn_box.maxLength():
            self.set_status(
                lambda: self.tr(
                    "The turn box holds at most {0:,} characters, so a longer paste was cut "
                    "there. Shorten the turn: a conversation holds at most {1:,} tokens."
                ).format(self.turn_box.maxLength(), self.context_limit.maximum())
            )

    def send_scripted_turn(self) -> bool:
        """What the button does: the lecture's next line, sent as the user's turn."""
        if self.runner.busy:
            return False
        return bool(self.next_scripted_turn()) and self.run()

    def _on_script_running_changed(self, running: bool) -> None:
        self.script_button.setEnabled(not running)
