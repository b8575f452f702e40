"""A generation run you advance one token at a time, in cached or recompute mode.

Owns the token loop and the measurements of each step: what was fed to the
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

It does not know about Qt, threads or plots; it never decodes the whole text per
step (each row has an `IncrementalDecoder`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence

import torch

from kvstudio.engine import limits
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.records import Candidate, Mode, SamplingSettings, StepRecord
from kvstudio.engine.sampling import new_generator, presence_mask, sample_next
from kvstudio.engine.tokenizer import REPLACEMENT, IncrementalDecoder, TextTokenizer

log = logging.getLogger(__name__)


class TokenTexts:
    """Memoised text of single tokens for candidate chips.

    A byte-level token that is only part of a UTF-8 character (half a Hangul
    syllable) would decode to ``�``; such tokens are shown as their bytes,
    e.g. ``<0xEB><0x8B>``, so no chip ever shows ``�``.
    """

    def __init__(self, tokenizer: TextTokenizer) -> None:
        self._tokenizer = tokenizer
        self._texts: dict[int, str] = {}

    def __call__(self, token_id: int) -> str:
        text = self._texts.get(token_id)
        if text is None:
            text = self._tokenizer.decode([token_id])
            if REPLACEMENT in text:
                text = _byte_notation(self._tokenizer, token_id)
            self._texts[token_id] = text
        return text


def _byte_notation(tokenizer: TextTokenizer, token_id: int) -> str:
    piece = tokenizer.backend.id_to_token(token_id) or ""
    raw = _bytelevel_to_bytes(piece)
    if raw is None:
        return f"<id {token_id}>"
    return "".join(f"<0x{b:02X}>" for b in raw)


def _bytelevel_to_bytes(piece: str) -> bytes | None:
    """Undo GPT-2's byte→unicode mapping used by byte-level BPE vocabularies."""
    table = _unicode_to_byte()
    try:
        return bytes(table[ch] for ch in piece)
    except KeyError:
        return None


_U2B: dict[str, int] = {}


def _unicode_to_byte() -> dict[str, int]:
    if not _U2B:
        printable = (
            list(range(ord("!"), ord("~") + 1))
            + list(range(ord("¡"), ord("¬") + 1))
            + list(range(ord("®"), ord("ÿ") + 1))
        )
        codes = printable[:]
        extra = 0
        for b in range(256):
            if b not in printable:
                printable.append(b)
                codes.append(256 + extra)
                extra += 1
        _U2B.update({chr(c): b for b, c in zip(printable, codes, strict=True)})
    return _U2B


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


class Stepper:
    """One generation run; call `step()` for the next token or iterate for all of them.

    `prompt_ids` is one prompt (shared by every row) or one prompt per row (all
    the same length; there is no padding). Step 0 is the prefill.
    """

    def __init__(
        self,
        backend: LanguageModel,
        tokenizer: TextTokenizer,
        prompt_ids: Sequence[int] | Sequence[Sequence[int]],
        *,
        mode: Mode = "cached",
        sampling: SamplingSettings | None = None,
        max_new_tokens: int = 64,
        cache: CacheSpec | None = None,
        batch_size: int = 1,
        stop_at_eos: bool = True,
        top_n: int = 10,
        keep_logits: bool = False,
        share_prefill: bool = True,
        share_identical_rows: bool = False,
    ) -> None:
        if mode not in ("cached", "recompute"):
            raise ValueError(f"Unknown mode {mode!r}; choose 'cached' or 'recompute'.")
        if max_new_tokens < 1:
            raise ValueError(
                f"Generate at least one new token, got max_new_tokens={max_new_tokens}."
            )
        if batch_size < 1:
            raise ValueError(f"Batch size must be at least 1, got {batch_size}.")
        rows = _prompt_rows(prompt_ids, batch_size)
        batch_size = len(rows)
        prompt_len = len(rows[0])
        if prompt_len == 0:
            raise ValueError("The prompt is empty; type some text or give at least one token.")
        vocab = backend.vocab_size
        bad = [t for row in rows for t in row if not 0 <= t < vocab]
        if bad:
            raise ValueError(
                f"Prompt token id {bad[0]} is outside the model's vocabulary (0 … {vocab - 1}); "
                "use the tokenizer that belongs to this model."
            )
        self.backend = backend
        self.tokenizer = tokenizer
        self.mode: Mode = mode
        self.sampling = sampling or SamplingSettings()
        self.max_new_tokens = max_new_tokens
        self.cache_spec = cache or CacheSpec()
        self.batch_size = batch_size
        self.stop_at_eos = stop_at_eos
        self.top_n = top_n
        self.keep_logits = keep_logits
        self.prompt_len = prompt_len
        self.eos_id: int | None = (
            tokenizer.eos_id if tokenizer.eos_id is not None else backend.eos_token_id
        )
        needed = prompt_len + max_new_tokens
        static = self.cache_spec.kind == "static" and mode == "cached"
        if static and needed > self.cache_spec.max_length:
            raise ValueError(
                f"The static cache holds {self.cache_spec.max_length} tokens but this run needs "
                f"{needed}; raise its length or generate fewer tokens."
            )

        limits.check_run(
            backend, batch=batch_size, prompt_len=prompt_len, new_tokens=max_new_tokens,
            cached=mode == "cached", cache_kind=self.cache_spec.kind,
            cache_length=self.cache_spec.max_length if self.cache_spec.kind == "static"
            else self.cache_spec.window,
            block_size=self.cache_spec.block_size,
        )  # positions and memory, before anything is allocated
        device = backend.device
        self.device = device
        self._sync = device.type in ("cuda", "mps")  # CPU work is synchronous already
        self._window = self.cache_spec.attention_window
        self._generator = new_generator(self.sampling.seed, device)
        with torch.inference_mode():
            # The whole sequence lives in one buffer: prompt, then one column per step.
            self._tokens = torch.empty(
                batch_size, prompt_len + max_new_tokens, dtype=torch.long, device=device
            )  # (B, P + N)
            self._tokens[:, :prompt_len] = torch.tensor(rows, dtype=torch.long, device=device)
            self._seen: torch.Tensor | None = None
            if self.sampling.repetition_penalty != 1.0:
                self._seen = presence_mask(self._tokens[:, :prompt_len], vocab)  # (B, V)
            self._finished_t = torch.zeros(batch_size, dtype=torch.bool, device=device)  # (B,)
        self._cache = backend.new_cache(self.cache_spec, batch_size) if mode == "cached" else None
        # Rows that share work are fed to the model as one "forward row": at first the
        # rows with one prompt (their prefill), and with share_identical_rows every group
        # of rows with one history. Needs the backend's `select_cache_rows` when cached.
        can_select = self._cache is None or hasattr(backend, "select_cache_rows")
        self._share_rows = share_identical_rows and batch_size > 1 and can_select
        first_of: dict[tuple[int, ...], int] = {}
        if (share_prefill or self._share_rows) and batch_size > 1 and can_select:
            groups = [first_of.setdefault(tuple(row), len(first_of)) for row in rows]
        else:
            groups = list(range(batch_size))
        self._groups: torch.Tensor | None = None  # (B,) forward row of each row; None = own
        self._representatives: torch.Tensor | None = None  # (G,) one row of each group
        if len(set(groups)) < batch_size:
            self._groups = torch.tensor(groups, dtype=torch.long, device=device)
            self._representatives = torch.tensor(
                [groups.index(g) for g in range(len(set(groups)))], dtype=torch.long, device=device
            )
        # Tell the cache which rows finished (a paged cache stops growing them); optional.
        self._finish_rows = (
            getattr(backend, "finish_cache_rows", None)
            if self._cache is not None and stop_at_eos
            else None
        )
        self._zero_layers = tuple((0, 0) for _ in range(backend.num_layers))
        # Primed with the prompt's last tokens: a syllable the prompt cut in half is
        # completed by the first new token and shown whole (a UTF-8 character ≤ 4 bytes).
        self._decoders = [IncrementalDecoder(tokenizer, context=row[-4:]) for row in rows]
        self._token_text = TokenTexts(tokenizer)
        self._generated: list[list[int]] = [[] for _ in range(batch_size)]
        self._finished = [False] * batch_size
        self._step = 0
        self._done = False
        self.last_logits: torch.Tensor | None = None  # (B, V) raw logits of the latest step
        self.records: list[StepRecord] = []

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
    def cache(self) -> object | None:
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
        step, batch, prompt_len = self._step, self.batch_size, self.prompt_len
        seq_len = prompt_len + step  # tokens known before this step
        if self._cache is not None:
            # narrow() is a view like [:, a:b] without Python's slice parsing (hot path).
            input_ids = (
                self._tokens.narrow(1, 0, prompt_len)  # (B, P)
                if step == 0
                else self._tokens.narrow(1, seq_len - 1, 1)  # (B, 1)
            )
        else:
            input_ids = self._tokens.narrow(1, 0, seq_len)  # (B, P + step): the whole sequence
        tokens_fed = int(input_ids.shape[1])
        mask_len = self.backend.mask_len(self._cache, tokens_fed)
        last_step = step + 1 >= self.max_new_tokens
        banned = self.eos_id if (not self.stop_at_eos and self.eos_id is not None) else None

        if self._sync:
            _synchronize(self.device)
        t0 = time.perf_counter()
        groups, representatives = self._groups, self._representatives
        if groups is None or representatives is None:
            logits = self.backend.forward_last(input_ids, self._cache, self._window)  # (B, V)
            forward_rows = batch
        else:  # one forward row per group of rows with the same history
            fed = input_ids.index_select(0, representatives)  # (G, T)
            logits = self.backend.forward_last(fed, self._cache, self._window)  # (G, V)
            logits = logits.index_select(0, groups)  # (B, V), each row its group's logits
            forward_rows = int(fed.shape[0])
        if bool(logits.isnan().any()):  # (B, V); sampling would pick garbage from NaN
            raise ValueError(
                f"The model produced NaN logits at step {step}: its weights are broken (NaN or "
                "inf inside). Load another checkpoint; this one cannot generate text."
            )
        out = sample_next(
            logits,
            self.sampling,
            self._generator,
            seen=self._seen,
            top_n=self.top_n,
            banned_token=banned,
        )
        next_ids = out.token_ids  # (B,)
        if self.stop_at_eos and self.eos_id is not None:
            # Rows that already finished keep receiving eos (MiniMind's batch semantics).
            next_ids = next_ids.masked_fill(self._finished_t, self.eos_id)
        self._tokens.select(1, seq_len).copy_(next_ids)  # column seq_len
        if groups is not None:
            self._regroup(groups, next_ids)
        if self._seen is not None:
            self._seen.scatter_(1, next_ids[:, None], True)
        if self._sync:
            _synchronize(self.device)
        elapsed = time.perf_counter() - t0

        # One small transfer per field (no per-element .item(), no stacking kernels).
        token_ids: list[int] = next_ids.tolist()
        surv_k: list[int] = out.survivors_top_k.tolist()
        surv_p: list[int] = out.survivors_top_p.tolist()
        chosen: list[float] = out.chosen_probability.tolist()
        prob_rows: list[list[float]] = out.top_probs.tolist()  # B × n candidate probabilities
        id_rows: list[list[int]] = out.top_ids.tolist()  # B × n candidate ids
        self.last_logits = logits
        last_logits = tuple(logits[0].float().tolist()) if self.keep_logits else None

        texts: list[str] = []
        candidates = []
        token_text = self._token_text
        for r, tid in enumerate(token_ids):
            if self._finished[r]:
                texts.append("")  # padding eos after the row ended
            else:
                self._generated[r].append(tid)
                is_eos = self.stop_at_eos and tid == self.eos_id
                texts.append("" if is_eos else self._decoders[r].push(tid))
                if is_eos:
                    self._finished[r] = True
            candidates.append(
                tuple(
                    [
                        Candidate(i, token_text(i), p)
                        for i, p in zip(id_rows[r], prob_rows[r], strict=True)
                        if p > 0.0
                    ]
                )
            )
        if self.stop_at_eos and self.eos_id is not None:
            self._finished_t |= next_ids == self.eos_id
            if self._finish_rows is not None:  # cache rows: one per group when rows share
                reps = self._representatives
                rows_done = self._finished_t if reps is None else self._finished_t[reps]
                self._finish_rows(self._cache, rows_done)
        if last_step:
            for r in range(batch):
                if not self._finished[r]:
                    texts[r] += self._decoders[r].flush()
        finished_rows = tuple(True for _ in range(batch)) if last_step else tuple(self._finished)

        if self._cache is not None:
            layer_bytes = self.backend.cache_layer_bytes(self._cache)
            allocated = self.backend.cache_allocated_bytes(self._cache)
            used = self.backend.cache_used_bytes(self._cache)
            cache_length = self.backend.cache_length(self._cache)
        else:
            layer_bytes, allocated, used, cache_length = self._zero_layers, 0, 0, 0

        record = StepRecord(
            step=step,
            phase="prefill" if step == 0 else "decode",
            mode=self.mode,
            token_ids=tuple(token_ids),
            token_texts=tuple(texts),
            tokens_fed=tokens_fed,
            elapsed_s=elapsed,
            cache_layer_bytes=layer_bytes,
            cache_allocated_bytes=allocated,
            cache_used_bytes=used,
            cache_length=cache_length,
            attention_mask_shape=(batch, mask_len),
            survivors_top_k=tuple(surv_k),
            survivors_top_p=tuple(surv_p),
            chosen_probability=tuple(chosen),
            top_candidates=tuple(candidates),
            finished=finished_rows,
            last_logits=last_logits,
            forward_rows=forward_rows,
        )
        self._step += 1
        self._done = last_step or all(self._finished)
        self.records.append(record)
        return record

    def _regroup(self, groups: torch.Tensor, next_ids: torch.Tensor) -> None:
        """After a shared step: split the groups whose rows chose different tokens.

        `groups` (B,) is each row's forward row before this step. The cache keeps one
        row per new group, copied from the forward row it continues.
        """
        if self._share_rows:
            key = groups * self.backend.vocab_size + next_ids  # (B,) history → its own key
            unique, new_groups = torch.unique(key, sorted=True, return_inverse=True)
            count = int(unique.shape[0])
            if count < self.batch_size:
                parents = unique // self.backend.vocab_size  # (G',) forward row each continues
                unchanged = count == int(self._representatives.shape[0])  # type: ignore[union-attr]
                if self._cache is not None and not unchanged:
                    self.backend.select_cache_rows(self._cache, parents)  # type: ignore[attr-defined]
                self._groups = new_groups
                self._representatives = _first_rows(new_groups, count)
                return
        # From now on every row has its own history: forward row r continues row r's.
        if self._cache is not None:
            self.backend.select_cache_rows(self._cache, groups)  # type: ignore[attr-defined]
        self._groups = self._representatives = None


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
