"""The chat lab as every front runs it: one turn of a conversation a run, or a whole script.

Owns `SCRIPT` (the lecture's scripted turns), `new_session` (a conversation on a
model, with the lab's answer budget and context limit) and `run` (one user turn on
the conversation the caller keeps between turns: the window's chat tab holds it, a
notebook passes it turn after turn; or, with the front option ``script``, every
line of a script on a new conversation, as ``kvstudio chat --turns FILE`` runs it:
``script.run_script``). The conversation itself is `ChatSession` (``session.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from kvstudio.engine import formulas, limits
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.files.loaded import LoadedModel
from kvstudio.files.resources import PROMPTS_DIR
from kvstudio.labs.chat.script import conversation_cost, run_script
from kvstudio.labs.chat.session import ChatSession, model_positions

SCRIPT = PROMPTS_DIR / "chat_4turns.txt"  # the lecture's four turns, one a line

# A front's check of a script's cost before it runs: (tokens fed, what, what to change);
# it raises to refuse (the command line's --yes question, `kvstudio.cli.common.confirm_cost`).
ConfirmCost = Callable[[int, str, str], None]


def new_session(model: LoadedModel, params: Mapping[str, Any]) -> ChatSession:
    """A new conversation on `model`, answering at most `answer_tokens` within
    `context_limit` tokens.

    A front's options, when given: ``cache_kind`` ("dynamic", the default, or "static":
    sized to the context limit, and the two static caches a turn holds, the kept one and
    a re-feed's, must fit the free memory) and ``system`` (a system message before the
    first turn).
    """
    spec = CacheSpec()
    if params.get("cache_kind", "dynamic") == "static":
        spec = CacheSpec("static", max_length=min(params["context_limit"],
                                                  model_positions(model.backend)))
        _check_static_memory(model, spec)
    return ChatSession(model.backend, model.tokenizer, max_new_tokens=params["answer_tokens"],
                       cache=spec, context_limit=params["context_limit"],
                       system=params.get("system"))


def _check_static_memory(model: LoadedModel, spec: CacheSpec) -> None:
    """Two static caches (the kept one and a re-feed's) are allocated whole: they must fit."""
    backend = model.backend
    per_token = formulas.model_bytes_per_token(backend)
    limits.check_fits_memory(
        2 * spec.max_length * per_token,
        f"Two static caches of {spec.max_length:,} tokens (reuse and re-feed)",
        backend.device,
        "Use a smaller context limit or the dynamic cache.",
    )


def run(model: LoadedModel, params: Mapping[str, Any]) -> Iterator[object]:
    """The user's turn `params["turn"]` on the conversation `params["session"]` (None: a
    new one), answered the ways ticked (reuse, refeed); it yields progress, then the
    `ChatTurn`. Checked here, before anything runs: a turn past the context limit is
    refused (`ContextFullError`) and the conversation stays as it was.

    With the front option ``script`` (a list of user turns) it runs them all instead
    (`script.run_script`, ending with a `ChatScript`); ``confirm_cost`` (a `ConfirmCost`)
    is then asked first what the whole script feeds.
    """
    if not model.tokenizer.has_chat_tokens:
        raise ValueError(
            "This model's tokenizer has no chat tokens; open a chat model (ko-chat)."
        )
    script = params.get("script")
    text = str(params.get("turn") or "").strip()
    if script is None and not text:
        raise ValueError("Type a user turn first (or take the next scripted one).")
    reuse, refeed = params["reuse"], params["refeed"]
    if not (reuse or refeed):
        raise ValueError(
            "Tick at least one way: reuse the cache, re-feed the history, or both."
        )
    # k > 1: each way's prefill is timed k more times, interleaved; the TTFT is their median.
    repeats = params["rounds"] if params["rounds"] > 1 else 0
    if script is not None:
        return _run_script(model, params, list(script), repeats)
    session = _session(model, params)
    session.check_fits(text)  # refuse before anything runs; the message says what to do
    return session.run_turn(text, reuse=reuse, refeed=refeed, timing_repeats=repeats)


def _session(model: LoadedModel, params: Mapping[str, Any]) -> ChatSession:
    """The conversation given (on this model, with the limits asked for now), or a new one."""
    session: ChatSession = params.get("session") or new_session(model, params)
    if session.backend is not model.backend:
        raise ValueError("This conversation ran on another model: start a new chat.")
    session.set_limits(params["answer_tokens"], params["context_limit"])
    return session


def _run_script(model: LoadedModel, params: Mapping[str, Any], turns: Sequence[str],
                repeats: int) -> Iterator[object]:
    """Every line of `turns`, checked and priced before anything runs."""
    if not turns:
        raise ValueError("The script has no turns; give one user turn per line.")
    session = _session(model, params)
    session.check_fits(turns[0])  # the first turn must fit; a later one ends the conversation
    reuse, refeed = params["reuse"], params["refeed"]
    confirm: ConfirmCost | None = params.get("confirm_cost")
    if confirm is not None:
        cost = conversation_cost(session, turns)
        warm = conversation_cost(session, turns[:1])
        ways = "both ways" if reuse and refeed else "reuse" if reuse else "re-feed"
        confirm(
            cost.tokens_fed_with(reuse=reuse, refeed=refeed, repeats=repeats)
            + warm.tokens_fed_with(reuse=reuse, refeed=refeed),
            f"This conversation ({cost.turns:,} of {len(turns):,} turns fit, {ways}, "
            f"{max(repeats, 1)} TTFT round(s))",
            "use fewer turns, fewer rounds, a smaller answer budget or context limit",
        )
    return run_script(session, turns, reuse=reuse, refeed=refeed, timing_repeats=repeats,
                      warm_up=new_session(model, params))
