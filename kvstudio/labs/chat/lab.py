"""The chat lab as every front runs it: one turn of a conversation a run.

Owns `SCRIPT` (the lecture's scripted turns), `new_session` (a conversation on a
model, with the lab's answer budget and context limit) and `run` (one user turn on
the conversation the caller keeps between turns: the window's chat tab holds it, a
notebook passes it turn after turn). The conversation itself is `ChatSession` (``session.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kvstudio.files.loaded import LoadedModel
from kvstudio.files.resources import PROMPTS_DIR
from kvstudio.labs.chat.session import ChatSession

SCRIPT = PROMPTS_DIR / "chat_4turns.txt"  # the lecture's four turns, one a line


def new_session(model: LoadedModel, params: Mapping[str, Any]) -> ChatSession:
    """A new conversation on `model`, answering at most `answer_tokens` within
    `context_limit` tokens."""
    return ChatSession(model.backend, model.tokenizer, max_new_tokens=params["answer_tokens"],
                       context_limit=params["context_limit"])


def run(model: LoadedModel, params: Mapping[str, Any]) -> Iterator[object]:
    """The user's turn `params["turn"]` on the conversation `params["session"]` (None: a
    new one), answered the ways ticked (reuse, refeed); it yields progress, then the
    `ChatTurn`. Checked here, before anything runs: a turn past the context limit is
    refused (`ContextFullError`) and the conversation stays as it was.
    """
    if not model.tokenizer.has_chat_tokens:
        raise ValueError(
            "This model's tokenizer has no chat tokens; open a chat model (ko-chat)."
        )
    text = str(params.get("turn") or "").strip()
    if not text:
        raise ValueError("Type a user turn first (or take the next scripted one).")
    reuse, refeed = params["reuse"], params["refeed"]
    if not (reuse or refeed):
        raise ValueError(
            "Tick at least one way: reuse the cache, re-feed the history, or both."
        )
    session = params.get("session") or new_session(model, params)
    if session.backend is not model.backend:
        raise ValueError("This conversation ran on another model: start a new chat.")
    session.set_limits(params["answer_tokens"], params["context_limit"])
    session.check_fits(text)  # refuse before anything runs; the message says what to do
    # k > 1: each way's prefill is timed k more times, interleaved; the TTFT is their median.
    repeats = params["rounds"] if params["rounds"] > 1 else 0
    return session.run_turn(text, reuse=reuse, refeed=refeed, timing_repeats=repeats)
