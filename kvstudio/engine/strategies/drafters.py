"""The drafters of speculative decoding, and the distributions they and the target share.

Owns `Drafter` (what a drafter does: prefill, propose up to k tokens, commit what the
target accepted), its `Proposal`, the two drafters (`ModelDrafter`: a small model with
its own KV cache, one forward per drafted token; `PromptLookupDrafter`: the last
n-gram of the text looked up earlier in it, transformers' ``prompt_lookup_num_tokens``)
and the distributions taken through the project's sampling pipeline (`distributions`,
`greedy_choice`, `draw`, `ban`). The round loop that calls them is
``kvstudio.engine.strategies.speculative``; the draft model is fed by the one decode loop
(``decode.run``), its drawing rule passed in as the loop's ``choose``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import torch

from kvstudio.engine import decode
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.base import CacheLayer, KVCache
from kvstudio.engine.cache.kinds import make_cache
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.sampling import check_logits, filter_logits, sample_next

DraftKind = Literal["model", "prompt-lookup"]
DRAFT_KINDS: tuple[DraftKind, ...] = ("model", "prompt-lookup")
PROMPT_LOOKUP_MAX_NGRAM = 3  # transformers' default max_matching_ngram_size for prompt lookup


# ---- the pipeline's distributions ------------------------------------------------------------
def seen_per_position(
    committed: Sequence[int], drafts: Sequence[int], rows: int, vocab: int
) -> torch.Tensor:
    """(rows, V) bool: tokens already in the text before each verified position.

    Row i is the text committed so far plus d1 … di (the penalty at position i
    sees the drafts before it, exactly as plain decoding would have seen them).
    """
    seen = torch.zeros(rows, vocab, dtype=torch.bool)  # (rows, V)
    seen[:, torch.tensor(list(committed), dtype=torch.long)] = True
    for i, token in enumerate(drafts[: rows - 1]):
        seen[i + 1 :, token] = True
    return seen


def distributions(
    logits: torch.Tensor, settings: SamplingSettings, seen: torch.Tensor | None
) -> torch.Tensor:
    """logits (T, V) → probabilities (T, V) after temperature, penalty, top-k and top-p.

    The same filters `sample_next` applies, renormalised over the survivors: the
    distribution a sampled token is really drawn from (p for the target, q for
    the draft).
    """
    filtered, _, _ = filter_logits(logits, settings, seen)  # (T, V), -inf where removed
    return torch.softmax(filtered, dim=-1)


def greedy_choice(
    logits: torch.Tensor, settings: SamplingSettings, seen: torch.Tensor | None
) -> list[int]:
    """logits (T, V) → each row's greedy token under the run's penalty (`sample_next`'s rule)."""
    return sample_next(logits.float(), settings, None, seen=seen, top_n=1).token_ids.tolist()


def ban(logits: torch.Tensor, token: int | None) -> torch.Tensor:
    """logits (T, V) with `token` removed (-inf), as `sample_next`'s ``banned_token``; None: as is.

    Plain decoding with ``stop_at_eos=False`` bans eos until the budget is spent
    (transformers' ``min_new_tokens``); target and draft ban it alike.
    """
    if token is None or not 0 <= token < logits.shape[-1]:
        return logits
    return logits.index_fill(-1, torch.tensor([token], device=logits.device), float("-inf"))


def on_cpu(logits: torch.Tensor) -> torch.Tensor:
    """A round's few rows of logits as float32 on the CPU, where the acceptance rule and its
    seeded CPU generator run (the model may sit on a GPU; V numbers a row are cheap to move)."""
    return logits.float().cpu()


def draw(probs: torch.Tensor, generator: torch.Generator) -> int:
    """One token from probs (V,) with the run's generator."""
    return int(torch.multinomial(probs, 1, generator=generator).item())


# ---- drafters ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Proposal:
    """The drafter's m ≤ k tokens and what they cost its cache."""

    tokens: tuple[int, ...]
    probs: torch.Tensor | None  # (m, V) q, the distributions they were drawn from; None: one-hot
    appended: int  # rows the drafter's cache grew by (0 without a cache)
    forwards: int  # draft forward calls


class Drafter(Protocol):
    """What a round asks of a draft: read the prompt, propose, forget what was rejected."""

    kind: DraftKind

    def prefill(self, prompt: Sequence[int]) -> int:
        """Read the prompt; return the rows appended to the drafter's cache."""
        ...

    def propose(self, committed: Sequence[int], k: int) -> Proposal:
        """Up to k tokens to follow `committed` (prompt + generated)."""
        ...

    def commit(self, committed_length: int) -> int:
        """Cut the drafter's cache back to the committed tokens; return the rows dropped."""
        ...

    @property
    def cache_length(self) -> int | None:
        """Rows in the drafter's cache, None when it has none."""
        ...


class ModelDrafter:
    """A small language model with its own KV cache drafts k tokens, one forward each.

    Its cache holds the committed tokens minus the newest one (or two, after the
    target accepted every draft); `propose` first feeds the missing ones.
    """

    kind: DraftKind = "model"

    def __init__(
        self,
        model: MiniMindLM,
        sampling: SamplingSettings,
        generator: torch.Generator,
        cache_spec: CacheSpec | None = None,
        banned_token: int | None = None,
    ) -> None:
        self.model = model.eval()
        self.backend = MiniMindBackend(model, name="draft")  # the protocol the loop feeds
        self.sampling = sampling
        self.generator = generator
        self.banned_token = banned_token  # eos while the run must not stop (`ban`)
        self.prompt_length = 0  # set by `prefill`: NaN messages count steps after it
        self.device = next(model.parameters()).device
        self.cache: KVCache[CacheLayer] = make_cache(
            model.config.num_hidden_layers, cache_spec or CacheSpec()
        )

    @property
    def cache_length(self) -> int | None:
        return self.cache.seq_length

    def prefill(self, prompt: Sequence[int]) -> int:
        self.prompt_length = len(prompt)
        self.cache.reset()
        ids = torch.tensor([list(prompt)], dtype=torch.long, device=self.device)  # (1, P)
        decode.feed(self.backend, ids, self.cache)
        return len(prompt)

    def propose(self, committed: Sequence[int], k: int) -> Proposal:
        if k <= 0:
            return Proposal((), None, 0, 0)
        before = self.cache.seq_length
        feed = list(committed[before:])  # the newest committed token(s) the draft has not read
        tokens: list[int] = []
        rows: list[torch.Tensor] = []
        seen_text = list(committed)
        penalty = self.sampling.repetition_penalty != 1.0
        vocab = self.model.config.vocab_size

        def choose(last: torch.Tensor) -> torch.Tensor:
            """The draft's rule: logits (1, V) → its token (1,), greedy or drawn (q kept)."""
            logits = ban(on_cpu(last), self.banned_token)  # (1, V)
            check_logits(logits, len(committed) - self.prompt_length + len(tokens),
                         "The draft model")
            seen = seen_per_position(seen_text, (), 1, vocab) if penalty else None  # (1, V)
            if self.sampling.greedy:
                token = greedy_choice(logits, self.sampling, seen)[0]
            else:
                q = distributions(logits, self.sampling, seen)[0]  # (V,)
                token = draw(q, self.generator)
                rows.append(q)
            tokens.append(token)
            seen_text.append(token)
            return torch.tensor([token], dtype=torch.long, device=self.device)  # (1,)

        ids = torch.tensor([feed], dtype=torch.long, device=self.device)  # (1, T)
        for _step in decode.run(self.backend, ids, self.cache, choose, steps=k):
            pass  # the loop stops after k: the last draft is not fed (next round, if kept)
        probs = torch.stack(rows) if rows else None  # (m, V)
        return Proposal(tuple(tokens), probs, self.cache.seq_length - before, k)

    def commit(self, committed_length: int) -> int:
        keep = min(committed_length - 1, self.cache.seq_length)
        return self.cache.crop(keep)


class PromptLookupDrafter:
    """No model: the last n-gram (n = 3, 2, 1) is looked up earlier in the text and the
    tokens that followed its first occurrence are proposed (transformers' rule)."""

    kind: DraftKind = "prompt-lookup"

    def __init__(self, max_ngram: int = PROMPT_LOOKUP_MAX_NGRAM) -> None:
        if max_ngram < 1:
            raise ValueError(f"Prompt lookup needs n-grams of at least 1 token, got {max_ngram}.")
        self.max_ngram = max_ngram

    @property
    def cache_length(self) -> int | None:
        return None

    def prefill(self, prompt: Sequence[int]) -> int:
        return 0

    def propose(self, committed: Sequence[int], k: int) -> Proposal:
        return Proposal(lookup_ngram(committed, k, self.max_ngram), None, 0, 0)

    def commit(self, committed_length: int) -> int:
        return 0


def lookup_ngram(text: Sequence[int], k: int, max_ngram: int = PROMPT_LOOKUP_MAX_NGRAM) -> tuple[
    int, ...
]:
    """Up to k tokens that followed the first earlier occurrence of the text's last n-gram.

    n runs from `max_ngram` down to 1; the first n with a match wins. No match: ().
    """
    if k <= 0:
        return ()
    length = len(text)
    for n in range(min(max_ngram, length - 1), 0, -1):
        tail = list(text[length - n :])
        for start in range(0, length - n):  # occurrences that end before the tail itself
            if list(text[start : start + n]) == tail:
                follow = text[start + n : min(start + n + k, length)]
                if follow:
                    return tuple(int(t) for t in follow)
    return ()


