"""Speculative decoding: a cheap draft proposes k tokens, the target checks them in ONE forward.

Owns the round loop (`SpeculativeRun`), its frozen per-round record (`SpecRound`),
the acceptance rule (`accept_drafts`) and the two drafters:

- `ModelDrafter`: a small model with its own KV cache (e.g. ``ko-draft``, 1 layer,
  same tokenizer as the target) drafts k tokens, one forward each.
- `PromptLookupDrafter`: no second model; the last n-gram of the text so far is
  looked up earlier in the text and the tokens that followed it are proposed
  (transformers' ``prompt_lookup_num_tokens``).

One round, with n committed tokens (prompt + generated) and the target cache
holding all of them but the newest (n − 1 rows, the newest is fed next):

1. the draft proposes m ≤ k tokens d1 … dm (the draft model feeds its missing
   committed tokens, then d1 … d(m−1), one forward each);
2. the target feeds [newest, d1 … dm] in **one** forward (m + 1 rows appended)
   and gets its distributions p1 … p(m+1) at those positions;
3. d1 … da are accepted (greedy: while di is the target's argmax; sampling:
   with probability min(1, p(di) / q(di))); the target then adds one token of
   its own: the **correction** drawn from the normalised residual max(0, p − q)
   where di was rejected, or the **bonus** drawn from p(m+1) when all m passed;
4. both caches are cropped back to the committed tokens: n + a + 1 tokens are
   committed, the target keeps n + a rows (it drops **m − a**: the rejected
   drafts and, when one was rejected, nothing else) and the draft model keeps
   at most n + a rows (it drops **m − 1 − a**: it never fed dm; after a full
   accept it is one row short and feeds dm next round).

Round 0 is the prefill: the target reads the prompt and chooses the first token,
the draft model reads the prompt. Greedy speculative decoding gives exactly the
tokens of plain greedy decoding; sampling gives exactly the target's
distribution (Leviathan et al. 2023, Chen et al. 2023), with p and q taken
through the project's pipeline (``sampling.py``: temperature → penalty → top-k
→ top-p) and every random number from the run's seeded `torch.Generator`.

The target is fed through the one decode module (``decode.feed`` for the prefill,
``decode.feed_tail`` for a round's verification). It does not know about Qt,
threads or text; ``labs/speculative.py`` runs it.
Letters in shape comments: V vocabulary, m drafted tokens, P prompt tokens.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from kvstudio.engine import decode, limits
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.kinds import make_cache
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.sampling import check_logits, new_generator
from kvstudio.engine.strategies.drafters import (
    Drafter,
    ModelDrafter,
    ban,
    distributions,
    draw,
    greedy_choice,
    on_cpu,
    seen_per_position,
)

MAX_DRAFT_TOKENS = limits.MAX_DRAFT_TOKENS  # k per round (torch-free, for the window's boxes)


# ---- the acceptance rule ----------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    """What the target decided about one round's drafts."""

    accepted: int  # a: d1 … da accepted
    next_token: int  # the correction (a < m) or the bonus token (a = m)


def accept_drafts(
    p: torch.Tensor,
    q: torch.Tensor | None,
    drafts: Sequence[int],
    generator: torch.Generator,
) -> Verdict:
    """The standard rule: accept di with probability min(1, p(di) / q(di)), stop at the first
    rejection and draw the correction from the normalised residual max(0, p − q).

    p (m + 1, V): the target's distributions at the m drafted positions and the one
    after them. q (m, V): the draft's distributions the drafts were drawn from;
    None for a deterministic drafter (prompt lookup), i.e. q is one-hot at di.
    When all m are accepted the bonus token is drawn from p(m + 1). The committed
    tokens are then distributed exactly as the target's own samples.
    """
    m = len(drafts)
    if p.shape[0] != m + 1:
        raise ValueError(f"p must have one row per draft plus one ({m + 1}), got {p.shape[0]}.")
    for i, token in enumerate(drafts):
        q_i = q[i] if q is not None else torch.nn.functional.one_hot(
            torch.tensor(token), p.shape[1]
        ).to(p.dtype)  # (V,)
        ratio = float(p[i, token]) / float(q_i[token])  # q(di) > 0: di was drawn from q
        uniform = float(torch.rand(1, generator=generator).item())
        if uniform < min(1.0, ratio):
            continue
        residual = torch.clamp(p[i] - q_i, min=0.0)  # (V,) where the target wants more
        if float(residual.sum()) <= 0.0:  # p ≤ q everywhere means p = q: nothing to correct
            residual = p[i]
        return Verdict(accepted=i, next_token=draw(residual / residual.sum(), generator))
    return Verdict(accepted=m, next_token=draw(p[m], generator))


def accept_greedy(target_tokens: Sequence[int], drafts: Sequence[int]) -> Verdict:
    """Greedy: accept while di equals the target's argmax; the argmax after them comes free."""
    a = 0
    while a < len(drafts) and drafts[a] == target_tokens[a]:
        a += 1
    return Verdict(accepted=a, next_token=int(target_tokens[a]))


# ---- the run ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class SpecRound:
    """One round of speculative decoding (round 0: the prefill), as plain values."""

    index: int  # 0 = the prefill (no drafts), then 1, 2, …
    drafted: tuple[int, ...]  # d1 … dm
    accepted: int  # a
    next_token: int | None  # the target's own token (correction or bonus); None: cut at eos
    bonus: bool  # every draft accepted, next_token drawn from the position after them
    committed: tuple[int, ...]  # the tokens this round added to the output
    verified: int  # drafts the target judged: a, plus the rejected one
    target_appended: int  # rows the verify forward wrote (1 + m; the prompt at the prefill)
    target_cropped: int  # rows cut off again (m − a)
    target_length: int  # target cache rows after the round (committed − 1)
    draft_appended: int  # rows the draft model wrote (0 for prompt lookup)
    draft_cropped: int  # rows cut off again (m − 1 − a, or 0 after a full accept)
    draft_length: int | None  # draft cache rows after the round; None: no draft cache
    draft_forwards: int  # draft forward calls this round
    target_calls: int  # target forward calls so far, this one included
    generated: int  # tokens generated so far
    elapsed_s: float  # this round's wall time (single measurement)


class SpeculativeRun:
    """Speculative decoding of one prompt; iterate for one `SpecRound` per round.

    `k` is the number of drafts per round (fewer near the token budget, and prompt
    lookup may find fewer). Generation stops after eos or `max_new_tokens`; with
    ``stop_at_eos=False`` eos is banned and exactly `max_new_tokens` tokens come
    (as `Stepper`'s option; give the `ModelDrafter` the same ``banned_token``).
    """

    def __init__(
        self,
        target: MiniMindLM,
        drafter: Drafter,
        prompt_ids: Sequence[int],
        *,
        k: int = 4,
        max_new_tokens: int = 64,
        sampling: SamplingSettings | None = None,
        eos_id: int | None = None,
        cache_spec: CacheSpec | None = None,
        generator: torch.Generator | None = None,
        stop_at_eos: bool = True,
    ) -> None:
        if not 1 <= k <= MAX_DRAFT_TOKENS:
            raise ValueError(f"k (drafts per round) must be 1 to {MAX_DRAFT_TOKENS}, got {k}.")
        if max_new_tokens < 1:
            raise ValueError(f"Generate at least one new token, got {max_new_tokens}.")
        if not prompt_ids:
            raise ValueError("The prompt is empty; speculative decoding needs at least one token.")
        vocab = target.config.vocab_size
        if any(not 0 <= t < vocab for t in prompt_ids):
            raise ValueError(f"The prompt has token ids outside the model's vocabulary ({vocab}).")
        if isinstance(drafter, ModelDrafter) and drafter.model.config.vocab_size != vocab:
            raise ValueError(
                f"The draft model's vocabulary ({drafter.model.config.vocab_size}) differs from "
                f"the target's ({vocab}); a draft must share the target's tokenizer."
            )
        self.target = target.eval()
        self.backend = MiniMindBackend(target, name="target")  # the protocol decode feeds
        self.device = next(target.parameters()).device
        self.drafter = drafter
        self.prompt = [int(t) for t in prompt_ids]
        self.k = k
        self.max_new_tokens = max_new_tokens
        self.sampling = sampling or SamplingSettings(temperature=0.0)
        self.eos_id = eos_id
        self.stop_at_eos = stop_at_eos
        self.banned_token = None if stop_at_eos else eos_id
        spec = cache_spec or CacheSpec()
        if spec.kind == "sliding":  # refused up front, not at the first crop
            raise ValueError(
                "Speculative decoding crops the cache every round; a sliding-window cache "
                "cannot be cropped (it has dropped the keys a crop would need). Use the "
                "dynamic (default), static, paged or a quantized cache."
            )
        self.cache = make_cache(target.config.num_hidden_layers, spec)
        self.generator = generator or new_generator(self.sampling.seed)
        self.committed: list[int] = list(self.prompt)
        self.target_calls = 0
        self.finished = False

    @property
    def generated(self) -> list[int]:
        return self.committed[len(self.prompt) :]

    def __iter__(self) -> Iterator[SpecRound]:
        with torch.inference_mode():
            yield self._prefill()
            index = 1
            while not self.finished:
                yield self._round(index)
                index += 1

    # ---- round 0 -----------------------------------------------------------------------------
    def _prefill(self) -> SpecRound:
        started = time.perf_counter()
        ids = torch.tensor([self.prompt], dtype=torch.long, device=self.device)  # (1, P)
        logits = ban(on_cpu(decode.feed(self.backend, ids, self.cache)),
                     self.banned_token)  # (1, V): the prompt's last position
        check_logits(logits, 0)
        self.target_calls += 1
        token = self._choose(logits, ())[0]
        draft_appended = self.drafter.prefill(self.prompt)
        new = self._commit([token])
        return SpecRound(
            index=0, drafted=(), accepted=0, next_token=token, bonus=False,
            committed=tuple(new), verified=0,
            target_appended=len(self.prompt), target_cropped=0,
            target_length=self.cache.seq_length,
            draft_appended=draft_appended, draft_cropped=0,
            draft_length=self.drafter.cache_length, draft_forwards=int(draft_appended > 0),
            target_calls=self.target_calls, generated=len(self.generated),
            elapsed_s=time.perf_counter() - started,
        )

    def _choose(self, logits: torch.Tensor, drafts: Sequence[int]) -> list[int]:
        """The target's own token per row of logits (T, V): the greedy argmax, or a draw from
        the pipeline's p when sampling (the prefill's first token)."""
        if not self.sampling.greedy:
            p = distributions(logits, self.sampling, self._seen(drafts, logits.shape[0]))
            return [draw(row, self.generator) for row in p]
        return greedy_choice(logits, self.sampling, self._seen(drafts, logits.shape[0]))

    def _seen(self, drafts: Sequence[int], rows: int) -> torch.Tensor | None:
        if self.sampling.repetition_penalty == 1.0:
            return None
        return seen_per_position(self.committed, drafts, rows, self.target.config.vocab_size)

    # ---- rounds 1, 2, … ----------------------------------------------------------------------
    def _round(self, index: int) -> SpecRound:
        started = time.perf_counter()
        n = len(self.committed)
        remaining = self.max_new_tokens - len(self.generated)
        k_round = min(self.k, remaining - 1)  # a round commits up to k + 1 tokens
        draft_before = self.drafter.cache_length
        proposal = self.drafter.propose(self.committed, k_round)
        drafts = list(proposal.tokens)
        m = len(drafts)

        # One target forward over the newest committed token and every draft.
        pending = self.committed[self.cache.seq_length :]  # the newest committed token
        ids = torch.tensor([pending + drafts], dtype=torch.long, device=self.device)  # (1, 1 + m)
        logits = on_cpu(decode.feed_tail(self.backend, ids, self.cache, m + 1)[0])  # (m + 1, V)
        logits = ban(logits, self.banned_token)
        check_logits(logits, len(self.generated))
        self.target_calls += 1
        target_appended = ids.shape[1]
        target_rows = self.cache.seq_length  # n + m: every committed token plus the drafts

        if self.sampling.greedy:
            verdict = accept_greedy(self._choose(logits, drafts), drafts)
        else:
            p = distributions(logits, self.sampling, self._seen(drafts, m + 1))  # (m + 1, V)
            verdict = accept_drafts(p, proposal.probs, drafts, self.generator)
        a = verdict.accepted
        new = self._commit([*drafts[:a], verdict.next_token])
        cut_at_eos = len(new) < a + 1

        target_cropped = self.cache.crop(len(self.committed) - 1)
        draft_cropped = self.drafter.commit(len(self.committed))
        if not cut_at_eos:  # the classic off-by-one, checked every round
            assert target_rows == n + m, "the verify forward must append 1 + m rows"
            assert target_cropped == m - a, f"target must drop m − a = {m - a} rows"
            if draft_before is not None and m > 0:
                assert draft_cropped == max(0, m - 1 - a), (
                    f"draft must drop m − 1 − a = {max(0, m - 1 - a)} rows"
                )
        assert self.cache.seq_length == len(self.committed) - 1
        return SpecRound(
            index=index, drafted=tuple(drafts), accepted=a,
            next_token=None if cut_at_eos else verdict.next_token,
            bonus=a == m and not cut_at_eos and m > 0, committed=tuple(new),
            verified=min(m, a + 1),
            target_appended=target_appended, target_cropped=target_cropped,
            target_length=self.cache.seq_length,
            draft_appended=proposal.appended, draft_cropped=draft_cropped,
            draft_length=self.drafter.cache_length, draft_forwards=proposal.forwards,
            target_calls=self.target_calls, generated=len(self.generated),
            elapsed_s=time.perf_counter() - started,
        )

    def _commit(self, tokens: Sequence[int]) -> list[int]:
        """Append tokens to the output, stopping after eos or at the budget; return those kept."""
        kept: list[int] = []
        for token in tokens:
            if len(self.generated) >= self.max_new_tokens:
                break
            self.committed.append(int(token))
            kept.append(int(token))
            if self.stop_at_eos and self.eos_id is not None and token == self.eos_id:
                self.finished = True
                break
        if len(self.generated) >= self.max_new_tokens:
            self.finished = True
        return kept


def expected_tokens_per_call(alpha: float, k: int) -> float:
    """Leviathan et al.'s expected tokens per target call: (1 − α^(k+1)) / (1 − α)."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"An acceptance rate is between 0 and 1, got {alpha}.")
    if alpha == 1.0:
        return float(k + 1)
    return (1.0 - alpha ** (k + 1)) / (1.0 - alpha)
