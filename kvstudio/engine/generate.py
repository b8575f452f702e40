"""A generation run you advance one token at a time, in cached or recompute mode.

Owns the run's settings and the measurements of each step of the one decode
loop (``decode.run``, which feeds the model): what was fed to the
model (counted from the tensor actually passed), how long the step took
(``time.perf_counter``, with the device synchronised on a GPU), the cache
measured from its tensors, and what sampling decided. Each call of
`Stepper.step()` returns one frozen `StepRecord`; iterating a `Stepper`
yields records until the run is finished.

- cached: step 0 (the prefill) feeds the prompt and fills the cache; every
  later step feeds only the previous token.
- recompute: no cache; every step feeds the whole sequence so far.

Batches follow MiniMind's semantics: all rows share the prompt length, a row
that produced eos keeps receiving eos, and the run stops when every row has
finished or the token budget is spent. Rows with the same prompt share its
prefill (one row is fed; its logits and K/V are copied to every row), which is
what makes n samples of one question cheap; `tokens_fed` stays per row. With
``share_identical_rows=True`` rows go on sharing work for as long as they have
chosen the same tokens: one row per distinct history is fed to the model (the
cache then holds one row per history, measured as such), and a group splits,
its cache row copied, when its rows choose different tokens. At a low
temperature most of 30 samples agree for many steps, so this saves most of
the forward passes; each row still draws its own token.
With ``stop_at_eos=False`` eos is banned until the budget is spent
(transformers' ``min_new_tokens``), so exactly `max_new_tokens` tokens are
generated and the formulas apply.

A run's settings are one `RunSettings`; row sharing is `RowGroups`; the cache is
measured through its own verbs (``cache/base.py``) and the tokenizer shows single
tokens (`TokenTexts`). It does not know about Qt, threads or plots; it never
decodes the whole text per step (each row has an `IncrementalDecoder`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from kvstudio.engine import decode, limits
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.base import Cache
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.records import Candidate, Mode, SamplingSettings, StepRecord
from kvstudio.engine.sampling import (
    SampleOutput,
    check_logits,
    new_generator,
    presence_mask,
    sample_next,
)
from kvstudio.engine.tokenizer import IncrementalDecoder, TextTokenizer, TokenTexts

log = logging.getLogger(__name__)

__all__ = ["RunSettings", "Stepper", "synchronize"]


@dataclass(frozen=True)
class RunSettings:
    """How one run generates (everything but the model, the tokenizer and the prompt)."""

    mode: Mode = "cached"  # cached: feed the new token on the cache; recompute: the whole sequence
    sampling: SamplingSettings = field(default_factory=SamplingSettings)
    max_new_tokens: int = 64  # N, the token budget
    cache: CacheSpec = field(default_factory=CacheSpec)  # which cache (cached mode)
    batch_size: int = 1  # rows: one prompt shared by all, or one prompt per row
    stop_at_eos: bool = True  # False: eos banned until N tokens (transformers' min_new_tokens)
    top_n: int = 10  # candidates kept per row and step
    keep_logits: bool = False  # keep row 0's raw logits in every record
    share_prefill: bool = True  # rows with one prompt: one prefill, copied to every row
    share_identical_rows: bool = False  # rows with one history so far: one forward row

    def __post_init__(self) -> None:
        if self.sampling is None:  # callers may pass None for "the default"
            object.__setattr__(self, "sampling", SamplingSettings())
        if self.cache is None:
            object.__setattr__(self, "cache", CacheSpec())
        if self.mode not in ("cached", "recompute"):
            raise ValueError(f"Unknown mode {self.mode!r}; choose 'cached' or 'recompute'.")
        if self.max_new_tokens < 1:
            raise ValueError(
                f"Generate at least one new token, got max_new_tokens={self.max_new_tokens}."
            )
        if self.batch_size < 1:
            raise ValueError(f"Batch size must be at least 1, got {self.batch_size}.")


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (a GPU runs ahead of the Python that timed it)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


class RowGroups:
    """Rows that share work, fed to the model as one "forward row" each.

    At first the rows with one prompt share its prefill; with
    ``share_identical_rows`` every group of rows with one history so far
    shares a forward row, and a group splits (its cache row copied) when its
    rows choose different tokens. The cache then holds one row per group.
    """

    def __init__(self, rows: list[list[int]], share_prefill: bool, share_all: bool,
                 device: torch.device) -> None:
        batch = len(rows)
        self.batch_size = batch
        self.share_all = share_all and batch > 1  # go on sharing after the prefill
        first_of: dict[tuple[int, ...], int] = {}
        if (share_prefill or self.share_all) and batch > 1:
            groups = [first_of.setdefault(tuple(row), len(first_of)) for row in rows]
        else:
            groups = list(range(batch))
        self.groups: torch.Tensor | None = None  # (B,) forward row of each row; None = its own
        self.representatives: torch.Tensor | None = None  # (G,) one row of each group
        if len(set(groups)) < batch:
            self.groups = torch.tensor(groups, dtype=torch.long, device=device)
            self.representatives = torch.tensor(
                [groups.index(g) for g in range(len(set(groups)))], dtype=torch.long, device=device
            )

    def pick(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) → the rows fed to the model (G, T): one row per group."""
        if self.representatives is None:
            return tokens
        return tokens.index_select(0, self.representatives)  # (G, T)

    def spread(self, logits: torch.Tensor) -> torch.Tensor:
        """logits (G, V) of the fed rows → (B, V), each row its group's."""
        if self.groups is None:
            return logits
        return logits.index_select(0, self.groups)  # (B, V)

    def cache_rows(self, per_row: torch.Tensor) -> torch.Tensor:
        """A per-row tensor (B,) → one entry per cache row (G,)."""
        return per_row if self.representatives is None else per_row[self.representatives]

    def regroup(self, next_ids: torch.Tensor, vocab_size: int, cache: Cache | None) -> None:
        """After a shared step: split the groups whose rows chose different tokens (B,)."""
        groups, reps = self.groups, self.representatives
        if groups is None or reps is None:
            return
        if self.share_all:
            key = groups * vocab_size + next_ids  # (B,) history → its own key
            unique, new_groups = torch.unique(key, sorted=True, return_inverse=True)
            count = int(unique.shape[0])
            if count < self.batch_size:
                if cache is not None and count != int(reps.shape[0]):
                    cache.select_rows(unique // vocab_size)  # (G',) forward row each continues
                self.groups, self.representatives = new_groups, _first_rows(new_groups, count)
                return
        # From now on every row has its own history: forward row r continues row r's.
        if cache is not None:
            cache.select_rows(groups)
        self.groups = self.representatives = None


class Stepper:
    """One generation run; call `step()` for the next token or iterate for all of them.

    `prompt_ids` is one prompt (shared by every row) or one prompt per row (all
    the same length; there is no padding). Step 0 is the prefill. Settings come
    as a `RunSettings`; keywords (``mode="recompute"``, ``max_new_tokens=8`` …)
    change single fields of it.
    """

    def __init__(
        self,
        backend: LanguageModel,
        tokenizer: TextTokenizer,
        prompt_ids: Sequence[int] | Sequence[Sequence[int]],
        settings: RunSettings | None = None,
        **changes: Any,
    ) -> None:
        self.settings = settings = replace(settings or RunSettings(), **changes)
        rows = _prompt_rows(prompt_ids, settings.batch_size)
        _check_prompt(rows, backend.vocab_size)
        self.backend, self.tokenizer = backend, tokenizer
        self.mode: Mode = settings.mode
        self.sampling, self.cache_spec = settings.sampling, settings.cache
        self.max_new_tokens, self.stop_at_eos = settings.max_new_tokens, settings.stop_at_eos
        self.batch_size, self.prompt_len = len(rows), len(rows[0])
        self.eos_id: int | None = (
            tokenizer.eos_id if tokenizer.eos_id is not None else backend.eos_token_id
        )
        self._check_fits()  # cache length, positions and memory, before anything is allocated
        self.device = device = backend.device
        self._sync = device.type in ("cuda", "mps")  # CPU work is synchronous already
        self._generator = new_generator(self.sampling.seed, device)
        with torch.inference_mode():
            prompt = torch.tensor(rows, dtype=torch.long, device=device)  # (B, P)
            self._seen: torch.Tensor | None = None  # (B, V) tokens seen, for the penalty
            if self.sampling.repetition_penalty != 1.0:
                self._seen = presence_mask(prompt, backend.vocab_size)
            self._finished_t = torch.zeros(self.batch_size, dtype=torch.bool, device=device)
        self._cache: Cache | None = (
            backend.new_cache(self.cache_spec, self.batch_size) if self.mode == "cached" else None
        )
        self._rows = RowGroups(rows, settings.share_prefill, settings.share_identical_rows, device)
        self._out: SampleOutput | None = None  # what sampling decided at the latest step
        # The one decode loop (lazy: it feeds the model only when `step()` asks).
        self._loop = decode.run(
            backend, prompt, self._cache, self._choose, steps=self.max_new_tokens,
            window=self.cache_spec.attention_window, rows=self._rows, clock=self._clock,
        )
        # Primed with the prompt's last tokens: a syllable the prompt cut in half is
        # completed by the first new token and shown whole (a UTF-8 character ≤ 4 bytes).
        self._decoders = [IncrementalDecoder(tokenizer, context=row[-4:]) for row in rows]
        self._token_text = TokenTexts(tokenizer)
        self._generated: list[list[int]] = [[] for _ in rows]
        self._finished = [False] * self.batch_size
        self._step = 0
        self._done = False
        self.last_logits: torch.Tensor | None = None  # (B, V) raw logits of the latest step
        self.records: list[StepRecord] = []

    def _check_fits(self) -> None:
        spec, cached = self.cache_spec, self.mode == "cached"
        if cached:
            spec.check_room(self.prompt_len + self.max_new_tokens)
        limits.check_run(
            self.backend, batch=self.batch_size, prompt_len=self.prompt_len,
            new_tokens=self.max_new_tokens, cached=cached, cache_kind=spec.kind,
            cache_length=spec.max_length if spec.kind == "static" else spec.window,
            block_size=spec.block_size,
        )

    # ---- state ---------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        """True once every row produced eos or the budget is spent."""
        return self._done

    @property
    def step_index(self) -> int:
        """The index the next `step()` will have (0 before the prefill)."""
        return self._step

    @property
    def generated_ids(self) -> list[list[int]]:
        """New token ids per row, up to and including the eos that finished the row."""
        return [list(row) for row in self._generated]

    @property
    def cache(self) -> Cache | None:
        """The backend's cache object (None in recompute mode)."""
        return self._cache

    def text(self, row: int = 0) -> str:
        """The row's generated text, decoded as a whole (split syllables joined, no specials)."""
        ids = self._generated[row]
        if ids and self.eos_id is not None and ids[-1] == self.eos_id and self._finished[row]:
            ids = ids[:-1]
        return self.tokenizer.decode(ids, skip_special_tokens=True)

    def texts(self) -> list[str]:
        return [self.text(r) for r in range(self.batch_size)]

    # ---- the loop ------------------------------------------------------------------------
    def __iter__(self) -> Iterator[StepRecord]:
        while not self._done:
            yield self.step()

    def step(self) -> StepRecord:
        """Feed the model once, choose one token per row and return what was measured."""
        if self._done:
            raise ValueError("This run is finished; start a new one to generate more tokens.")
        with torch.inference_mode():
            return self._step_inner()

    def _step_inner(self) -> StepRecord:
        step = self._step
        # The lesson: with a cache only the newest token is fed (the prompt at step 0);
        # without one the whole sequence is fed again, every step (``decode.run``).
        fed_step = next(self._loop)  # feeds the model, then `_choose` (both timed)
        out, next_ids, logits = self._out, fed_step.chosen, fed_step.logits  # (B,), (B, V)
        assert out is not None
        fed = int(fed_step.fed.shape[1])  # counted from the tensor actually passed
        forward_rows = int(fed_step.fed.shape[0])
        elapsed = fed_step.seconds

        last_step = step + 1 >= self.max_new_tokens
        self.last_logits = logits
        token_ids: list[int] = next_ids.tolist()  # one transfer, no per-element .item()
        texts, candidates = self._read_tokens(out, token_ids, last_step)
        self._tell_cache_finished(next_ids)
        record = StepRecord(
            step=step,
            phase="prefill" if step == 0 else "decode",
            mode=self.mode,
            token_ids=tuple(token_ids),
            token_texts=texts,
            tokens_fed=fed,
            elapsed_s=elapsed,
            **self._measure_cache(),
            attention_mask_shape=(self.batch_size, fed_step.attended),
            survivors_top_k=tuple(out.survivors_top_k.tolist()),
            survivors_top_p=tuple(out.survivors_top_p.tolist()),
            chosen_probability=tuple(out.chosen_probability.tolist()),
            top_candidates=candidates,
            finished=(True,) * self.batch_size if last_step else tuple(self._finished),
            last_logits=tuple(logits[0].float().tolist()) if self.settings.keep_logits else None,
            forward_rows=forward_rows,
        )
        self._step += 1
        self._done = last_step or all(self._finished)
        self.records.append(record)
        return record

    # ---- the parts of a step -------------------------------------------------------------
    def _clock(self) -> float:
        """perf_counter once the device has finished its queued work (a GPU runs ahead)."""
        if self._sync:
            synchronize(self.device)
        return time.perf_counter()

    def _choose(self, logits: torch.Tensor) -> torch.Tensor:
        """The loop's policy: logits (B, V) → checked, sampled, next ids (B,) appended."""
        _check_logits(logits, self._step)
        self._out = out = self._sample(logits)
        return self._append(out.token_ids)  # (B,)

    def _sample(self, logits: torch.Tensor) -> SampleOutput:
        """MiniMind's sampling of logits (B, V); eos banned while ``stop_at_eos`` is off."""
        banned = self.eos_id if not self.stop_at_eos else None
        return sample_next(
            logits, self.sampling, self._generator, seen=self._seen,
            top_n=self.settings.top_n, banned_token=banned,
        )

    def _append(self, chosen: torch.Tensor) -> torch.Tensor:
        """The chosen ids (B,) as the sequence's next tokens (the loop feeds them next)."""
        next_ids = chosen
        if self.stop_at_eos and self.eos_id is not None:
            # Rows that already finished keep receiving eos (MiniMind's batch semantics).
            next_ids = next_ids.masked_fill(self._finished_t, self.eos_id)
        self._rows.regroup(next_ids, self.backend.vocab_size, self._cache)
        if self._seen is not None:
            self._seen.scatter_(1, next_ids[:, None], True)
        return next_ids

    def _read_tokens(
        self, out: SampleOutput, token_ids: list[int], last_step: bool
    ) -> tuple[tuple[str, ...], tuple[tuple[Candidate, ...], ...]]:
        """Each row's new text piece (finishing rows at eos) and its candidate chips."""
        # One small transfer per field (no per-element .item(), no stacking kernels).
        prob_rows: list[list[float]] = out.top_probs.tolist()  # B × n candidate probabilities
        id_rows: list[list[int]] = out.top_ids.tolist()  # B × n candidate ids
        texts: list[str] = []
        for r, tid in enumerate(token_ids):
            if self._finished[r]:
                texts.append("")  # padding eos after the row ended
                continue
            self._generated[r].append(tid)
            is_eos = self.stop_at_eos and tid == self.eos_id
            self._finished[r] = is_eos
            text = "" if is_eos else self._decoders[r].push(tid)
            texts.append(text + self._decoders[r].flush() if last_step and not is_eos else text)
        candidates = tuple(
            tuple(
                Candidate(i, self._token_text(i), p)
                for i, p in zip(ids, probs, strict=True)
                if p > 0.0
            )
            for ids, probs in zip(id_rows, prob_rows, strict=True)
        )
        return tuple(texts), candidates

    def _tell_cache_finished(self, next_ids: torch.Tensor) -> None:
        """Rows that produced eos (B,): a paged cache stops growing them."""
        if not self.stop_at_eos or self.eos_id is None:
            return
        self._finished_t |= next_ids == self.eos_id
        if self._cache is not None:
            self._cache.finish_rows(self._rows.cache_rows(self._finished_t))

    def _measure_cache(self) -> dict[str, Any]:
        """The cache's bytes and length, read from its tensors (zeros in recompute mode)."""
        cache = self._cache
        if cache is None:
            layers = tuple((0, 0) for _ in range(self.backend.num_layers))
            return {"cache_layer_bytes": layers, "cache_allocated_bytes": 0,
                    "cache_used_bytes": 0, "cache_length": 0}
        return {"cache_layer_bytes": cache.layer_nbytes(), "cache_allocated_bytes": cache.nbytes,
                "cache_used_bytes": cache.used_nbytes, "cache_length": cache.stored_tokens}


def _check_logits(logits: torch.Tensor, step: int) -> None:
    check_logits(logits, step)  # (B, V); sampling would pick garbage from NaN


def _check_prompt(rows: list[list[int]], vocab: int) -> None:
    if not rows[0]:
        raise ValueError("The prompt is empty; type some text or give at least one token.")
    bad = [t for row in rows for t in row if not 0 <= t < vocab]
    if bad:
        raise ValueError(
            f"Prompt token id {bad[0]} is outside the model's vocabulary (0 … {vocab - 1}); "
            "use the tokenizer that belongs to this model."
        )


def _first_rows(groups: torch.Tensor, count: int) -> torch.Tensor:
    """(B,) group of each row → (count,) one row of each group."""
    rows = torch.arange(groups.shape[0], device=groups.device)
    return torch.empty(count, dtype=torch.long, device=groups.device).scatter_(0, groups, rows)


def _prompt_rows(
    prompt_ids: Sequence[int] | Sequence[Sequence[int]], batch_size: int
) -> list[list[int]]:
    """Normalise the prompt to one list of ids per row (all rows the same length)."""
    if len(prompt_ids) == 0:
        raise ValueError("The prompt is empty; type some text or give at least one token.")
    first = prompt_ids[0]
    if isinstance(first, Sequence) or (isinstance(first, torch.Tensor) and first.dim() > 0):
        rows = [[int(t) for t in row] for row in prompt_ids]  # type: ignore[union-attr]
        if batch_size not in (1, len(rows)):
            raise ValueError(
                f"Got {len(rows)} prompts but batch_size={batch_size}; give one prompt per row "
                "or a single prompt to share."
            )
        if len({len(r) for r in rows}) != 1:
            raise ValueError("All prompts in a batch must have the same number of tokens.")
        return rows
    row = [int(t) for t in prompt_ids]  # type: ignore[arg-type]
    return [list(row) for _ in range(batch_size)]
