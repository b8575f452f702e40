"""A scripted conversation: what it will feed before it runs, and its run, turn after turn.

Owns `ConversationCost` and `conversation_cost` (the tokens a list of user turns
feeds both ways, counted before anything runs) and `run_script` (the chat lab's run
of a whole script, as ``kvstudio chat --turns FILE`` asks for it: an
untimed warm-up turn, then every turn with its TTFT rounds, ending with a
`ChatScript`). The lab's run (``lab.py``) checks and prices a script first.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from kvstudio.labs.chat.records import ChatScript, ChatTurn
from kvstudio.labs.chat.session import ChatSession
from kvstudio.labs.common import Progress


@dataclass(frozen=True)
class ConversationCost:
    """What a scripted conversation will feed the model, estimated before anything runs."""

    turns: int  # turns that fit the context limit (the conversation stops at the first that not)
    reuse_tokens_fed: int  # keeping the cache: each turn's new tokens, then its answer
    refeed_tokens_fed: int  # re-feeding: the whole history every turn, then its answer
    reuse_prompt_tokens: int = 0  # of reuse's: the prefills alone (what a TTFT round feeds)
    refeed_prompt_tokens: int = 0  # of re-feed's: the prefills alone

    @property
    def tokens_fed(self) -> int:
        return self.reuse_tokens_fed + self.refeed_tokens_fed

    def tokens_fed_with(self, *, reuse: bool = True, refeed: bool = True,
                        repeats: int = 0) -> int:
        """The ways chosen, each turn's prefill fed `repeats` more times (its TTFT rounds)."""
        fed = 0
        if reuse:
            fed += self.reuse_tokens_fed + repeats * self.reuse_prompt_tokens
        if refeed:
            fed += self.refeed_tokens_fed + repeats * self.refeed_prompt_tokens
        return fed


def conversation_cost(session: ChatSession, turns: Sequence[str]) -> ConversationCost:
    """The tokens `turns` would feed on a new conversation of `session`'s settings, both ways.

    Every answer is counted at its full budget (eos may end it sooner), as the
    window's cost estimate counts N; nothing runs and the session is not changed.
    """
    tokenizer = session.tokenizer
    limit, budget_max = session.context_limit, session.max_new_tokens
    closing = len(session.closing_tokens())  # an answer at its full budget: cut, then closed
    history = reuse = refeed = reuse_prompt = refeed_prompt = fitted = 0
    for text in turns:
        system = session.system if not history else None
        added = len(tokenizer.chat_ids(text, system=system))
        added += closing if history else 0
        if history + added >= limit:
            break  # refused as ContextFullError: the conversation stops here
        budget = min(budget_max, limit - history - added)
        reuse_prompt += added + (1 if history else 0)  # + the answer's last token, never fed
        refeed_prompt += history + added
        reuse += added + (1 if history else 0) + budget - 1
        refeed += history + added + budget - 1
        history += added + budget
        fitted += 1
    return ConversationCost(fitted, reuse, refeed, reuse_prompt, refeed_prompt)


def run_script(
    session: ChatSession,
    turns: Sequence[str],
    *,
    reuse: bool = True,
    refeed: bool = True,
    timing_repeats: int = 0,
    warm_up: ChatSession | None = None,
) -> Iterator[Progress | ChatTurn | ChatScript]:
    """`turns` on `session`, each the ways chosen with `timing_repeats` TTFT rounds; yields
    progress and each `ChatTurn`, then the `ChatScript`.

    `warm_up` (a new session of the same settings) answers the first turn first, untimed:
    the first forward builds the fast weights. A turn that no longer fits (the context
    limit, the free memory) ends the conversation; the turns before it still count and
    the record says why it stopped.
    """
    count = len(turns)
    if warm_up is not None:
        yield Progress("chat", "warm-up", 0, count)
        for _ in warm_up.run_turn(turns[0], reuse=reuse, refeed=refeed):
            pass
        warm_up = None  # its cache goes now, not at the end of the script
    done: list[ChatTurn] = []
    stopped = ""
    for number, text in enumerate(turns, start=1):
        stage = f"turn {number} of {count}"
        try:
            for item in session.run_turn(text, reuse=reuse, refeed=refeed,
                                         timing_repeats=timing_repeats):
                if isinstance(item, ChatTurn):
                    done.append(item)
                else:  # a forward call: which turn and way, the turns done so far
                    yield replace(item, stage=f"{stage}, {item.stage}", done=number - 1,
                                  total=count)
        except ValueError as exc:  # refused before it ran: the conversation is as it was
            stopped = str(exc)
            break
        yield done[-1]
        yield Progress("chat", stage, number, count)
    yield ChatScript(tuple(done), count, session.context_limit, max(timing_repeats, 1), stopped)
