"""The one decode loop: every generating module feeds the model here, and nowhere else.

Owns the only calls of a `LanguageModel`'s forward outside the packed serving
runner (``engine/serving``), and the token loop in its two modes:

- cached: step 0 (the prefill) feeds the prompt and fills the cache; every later
  step feeds only the token chosen at the step before.
- recompute: no cache; every step feeds the whole sequence so far.

What differs between the callers is passed in, not written as another loop:
``choose`` (greedy, sampling, a beam's bookkeeping, a draft's draw) turns a
step's logits into the next token of each row; ``rows`` says which rows are
fed (the Stepper feeds one row per group of rows that share their history);
``window`` is the attention window; ``clock`` times each step (the Stepper's
clock waits for the GPU). A caller that stops early (eos, a beam search that
is done) simply stops iterating: the loop is lazy and never feeds ahead.

Single forwards that are not a token loop (a speculative round's verification
of k drafts at once, the inspector's probed forward, a warm-up) call `feed`
or `feed_tail`. Letters in shape comments: B rows, G rows fed, T tokens fed,
V vocabulary, K positions kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from kvstudio.engine.backends.minimind import AttentionProbe, LanguageModel
from kvstudio.engine.cache.base import Cache

__all__ = ["FeedRows", "Step", "feed", "feed_tail", "run"]


class FeedRows(Protocol):
    """Which rows are fed: rows that share a history can share one forward row."""

    def pick(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) → the rows to feed (G, T)."""
        ...

    def spread(self, logits: torch.Tensor) -> torch.Tensor:
        """logits of the fed rows (G, V) → one row of logits per row (B, V)."""
        ...


@dataclass(frozen=True)
class Step:
    """One forward of the loop and what was chosen from it."""

    index: int  # 0 = the prefill
    fed: torch.Tensor  # (G, T): the tensor actually passed to the model
    attended: int  # keys each fed query could see (the attention mask's width)
    logits: torch.Tensor  # (B, V): the last position's logits, one row per row
    chosen: torch.Tensor  # (B,): what `choose` returned, the next step's feed
    seconds: float  # `clock` around the forward and `choose`


def feed(
    model: LanguageModel[Any], tokens: torch.Tensor, cache: Cache | None,
    window: int | None = None,
) -> torch.Tensor:
    """tokens (B, T) → logits (B, V) of the last position; the cache, if any, grows by T."""
    return model.forward_last(tokens, cache, window)  # (B, V)


def feed_tail(
    model: LanguageModel[Any], tokens: torch.Tensor, cache: Cache | None, keep: int,
    probe: AttentionProbe | None = None,
) -> torch.Tensor:
    """tokens (B, T) → logits (B, K, V) of the last K = `keep` positions; `probe` sees layers."""
    return model.forward_tail(tokens, cache, keep, probe)  # (B, K, V)


def run(
    model: LanguageModel[Any],
    prompt: torch.Tensor,
    cache: Cache | None,
    choose: Callable[[torch.Tensor], torch.Tensor],
    *,
    steps: int,
    window: int | None = None,
    rows: FeedRows | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Iterator[Step]:
    """prompt (B, P) → one `Step` per forward, at most `steps` of them.

    With a cache the prompt is fed once and then one token per row and step;
    without one (``cache=None``) the whole sequence is fed at every step.
    ``choose(logits (B, V))`` returns the next token of each row (B,).
    """
    sequence = prompt  # (B, T): everything so far (recompute feeds it all)
    newest = prompt  # (B, 1) after the prefill: the only tokens a cached step feeds
    for index in range(steps):
        tokens = newest if cache is not None else sequence  # (B, T)
        fed = rows.pick(tokens) if rows is not None else tokens  # (G, T)
        width = int(tokens.shape[1])
        attended = cache.visible_length(width) if cache is not None else width
        started = clock()
        logits = feed(model, fed, cache, window)  # (G, V)
        if rows is not None:
            logits = rows.spread(logits)  # (B, V)
        chosen = choose(logits)  # (B,)
        seconds = clock() - started
        yield Step(index, fed, attended, logits, chosen, seconds)
        newest = chosen.reshape(-1, 1)  # (B, 1)
        if cache is None:
            sequence = torch.cat([sequence, newest], dim=1)  # (B, T + 1)
