"""Beam search on our model and cache: one cache row per beam, rows reordered after every step.

Owns `BeamSettings` (beams, length penalty, early stopping, token budget, sequences
returned), `BeamSearch` (its policy on the one decode loop, ``decode.run``: one
frozen `BeamStep` per step, then a `BeamResult`), `BlockLedger` (what a paged
cache's block tables would share instead of copying) and the records.

The scores and the finished-hypothesis bookkeeping are transformers'
``GenerationMixin._beam_search`` (5.x), operation for operation, for one prompt:

- each step keeps the 2·K best continuations (K beams; ``beams_to_keep``) of
  ``log_softmax(logits) + running score`` over all beams and tokens;
- a continuation *hits the stopping criteria* when its token is eos or the
  sequence reaches P + N tokens; such a continuation leaves the running beams
  (its running score gets −1e9) and, **if it is among the first K of the 2·K**,
  it may enter the K finished hypotheses with the score
  ``sum of log-probs / (generated tokens) ** length_penalty`` (eos counted);
- ``early_stopping=True`` stops as soon as K hypotheses are finished;
  ``False`` stops when the best running beam, divided by the current length
  to the power of the penalty, cannot beat the worst finished one; ``"never"``
  with a positive penalty divides by the longest possible length instead.

The prompt is fed once (one cache row); after step 0 the reorder copies that
row into K rows. Transformers prefills K identical rows; the scores are the same.

**Reorder bytes.** After choosing, row i of the next step continues beam
``parent[i]``, so the cache's rows are reordered with ``select_rows(parent)``
(``index_select`` on the batch dimension). A row *moves* when its parent is
another row (``parent[i] != i``; at step 0 every row but row 0 is new): an
in-place reorder has to write exactly those rows, each ``row_bytes`` = bytes
per token (2·L·G·d·dtype bytes) × tokens stored per row, so ``reorder_bytes``
= rows moved × row_bytes. ``index_select`` itself writes every row into new
storage (``index_select_bytes`` = rows × row_bytes). As transformers does, the rows are
reordered after the last step too (that step's record says ``done``).

**What copy on write would do instead.** A paged cache (``cache/paged.py``)
reorders by copying block tables and counting references: no K or V byte moves.
A row copies a block only when it appends a token to a block another row still
references (copy on write). `BlockLedger` replays the same tables: after each
reorder, ``blocks_shared`` = Σ over blocks (references − 1), the block copies
the sharing saved, and ``blocks_copied`` = the copies on write the next append
makes (one per extra row on a shared, not yet full last block).

Letters in shape comments: K beams, R cache rows (1 before the first reorder,
then K), V vocabulary, P prompt tokens.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import torch

from kvstudio.engine import decode, formulas, limits
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.base import Cache
from kvstudio.engine.cache.spec import CacheSpec

__all__ = [
    "BeamHypothesis",
    "BeamResult",
    "BeamRow",
    "BeamSearch",
    "BeamSettings",
    "BeamStep",
    "BlockLedger",
    "EarlyStopping",
]

EarlyStopping = bool | Literal["never"]
EARLY_STOPPING_CHOICES: tuple[EarlyStopping, ...] = (True, False, "never")
_NEG = -1.0e9  # transformers' "never choose this" score


@dataclass(frozen=True)
class BeamSettings:
    """How one beam search runs (the knobs of transformers' ``generate(num_beams=…)``)."""

    num_beams: int = 4  # K, cache rows after the first step
    length_penalty: float = 1.0  # finished score = Σ log p / length ** this
    early_stopping: EarlyStopping = False  # True, False or "never" (transformers' meanings)
    max_new_tokens: int = 16  # N, the token budget
    num_return_sequences: int = 1  # best finished hypotheses returned (≤ K)

    def __post_init__(self) -> None:
        if self.num_beams < 2:
            raise ValueError(
                f"Beam search needs at least 2 beams, got {self.num_beams} (one beam is greedy "
                "decoding)."
            )
        if self.max_new_tokens < 1:
            raise ValueError(f"Generate at least one token, got {self.max_new_tokens}.")
        if not 1 <= self.num_return_sequences <= self.num_beams:
            raise ValueError(
                f"Return between 1 and {self.num_beams} sequences (the beams), got "
                f"{self.num_return_sequences}."
            )
        if not any(self.early_stopping is choice or self.early_stopping == choice == "never"
                   for choice in EARLY_STOPPING_CHOICES):
            raise ValueError(
                f"early_stopping is True, False or 'never', got {self.early_stopping!r}."
            )
        if not -100.0 <= self.length_penalty <= 100.0:
            raise ValueError(f"Choose a length penalty in -100 … 100, got {self.length_penalty}.")

    @property
    def candidates(self) -> int:
        """Continuations kept per step before the stopping check: 2·K (one eos id)."""
        return 2 * self.num_beams


@dataclass(frozen=True)
class BeamRow:
    """One running beam after a step."""

    tokens: tuple[int, ...]  # generated tokens so far (the prompt not included)
    score: float  # cumulative log-probability (no length penalty)
    parent: int  # the row (beam) of the previous step it continues
    stopped: bool = False  # its last token is eos or the budget is spent: it runs no further


@dataclass(frozen=True)
class BeamHypothesis:
    """A finished hypothesis: ended with eos or reached the budget."""

    tokens: tuple[int, ...]  # generated tokens, eos included when it ended with eos
    score: float  # Σ log p / len(tokens) ** length_penalty
    log_prob: float  # Σ log p, before the length penalty
    parent: int = 0  # the cache row it continued at its last step


@dataclass(frozen=True)
class BeamStep:
    """What one step chose and what reordering the cache for it cost."""

    step: int  # 0 = the prefill step
    beams: tuple[BeamRow, ...]  # K running beams, best score first
    finished: tuple[BeamHypothesis, ...]  # finished so far, best first (at most K)
    rows_before: int  # R, cache rows before the reorder (1 at step 0, else K)
    stored_tokens: int  # tokens each cache row holds when reordered (P + step)
    row_bytes: int  # bytes of one row: bytes per token × stored_tokens
    rows_moved: int  # rows i with parent[i] != i
    reorder_bytes: int  # rows_moved × row_bytes: what an in-place reorder writes
    index_select_bytes: int  # K × row_bytes: what index_select writes (every row, new storage)
    block_size: int  # b, tokens per block of the paged cache compared
    blocks_shared: int  # block references shared instead of copied after the reorder
    blocks_copied: int  # copies on write the next append makes
    block_bytes: int  # one block, every layer, K and V
    done: bool  # the search stops after this step

    @property
    def cow_bytes(self) -> int:
        """Bytes a paged cache copies for this reorder: its copies on write."""
        return self.blocks_copied * self.block_bytes



@dataclass(frozen=True)
class BeamResult:
    """The best finished hypotheses and the run's totals."""

    settings: BeamSettings
    prompt_tokens: int  # P
    sequences: tuple[BeamHypothesis, ...]  # num_return_sequences, best first
    steps: int  # steps run (forward passes)
    bytes_per_token: int  # 2·L·G·d·dtype bytes
    reorder_bytes: int  # Σ over steps
    index_select_bytes: int  # Σ over steps
    cow_bytes: int  # Σ over steps


class BlockLedger:
    """The block tables a paged cache would keep for the beams (no tensors, only counts).

    The same rules as ``PagedKVCache``: a row's tokens fill blocks of b in order; selecting
    rows copies tables and counts references; appending to a block another row references,
    unless it is full, first copies it (copy on write).
    """

    def __init__(self, prompt_tokens: int, block_size: int) -> None:
        if block_size < 1:
            raise ValueError(f"A block holds at least 1 token, got {block_size}.")
        self.block_size = block_size
        self.refs: dict[int, int] = {}  # block id → rows referencing it
        self._next = 0
        prompt_blocks = -(-prompt_tokens // block_size)
        self.tables: list[list[int]] = [[self._new() for _ in range(prompt_blocks)]]
        self.lengths = [prompt_tokens]  # tokens per row

    def _new(self) -> int:
        block, self._next = self._next, self._next + 1
        self.refs[block] = 1
        return block

    def _drop(self, block: int) -> None:
        self.refs[block] -= 1
        if self.refs[block] == 0:
            del self.refs[block]

    def select(self, parents: Sequence[int]) -> int:
        """Rows continue `parents`; return the block references now shared (Σ refs − 1)."""
        tables = [list(self.tables[p]) for p in parents]
        for table in tables:
            for block in table:
                self.refs[block] += 1
        for table in self.tables:
            for block in table:
                self._drop(block)
        self.tables = tables
        self.lengths = [self.lengths[p] for p in parents]
        return sum(count - 1 for count in self.refs.values())

    def append(self) -> int:
        """Every row stores one more token; return the blocks copied on write."""
        copies = 0
        for r, table in enumerate(self.tables):
            offset = self.lengths[r] % self.block_size
            if offset == 0:
                table.append(self._new())
            elif self.refs[table[-1]] > 1:
                self._drop(table[-1])
                table[-1] = self._new()
                copies += 1
            self.lengths[r] += 1
        return copies

    def copies_on_next_append(self) -> int:
        """Copies `append` would make now: per shared, not full last block, its references − 1."""
        last_blocks = {
            table[-1]
            for table, n in zip(self.tables, self.lengths, strict=True)
            if table and n % self.block_size
        }
        return sum(self.refs[block] - 1 for block in last_blocks)


class BeamSearch:
    """Beam search for one prompt, one cache row per beam; iterate it for `BeamStep`s.

    ``for step in search: …`` runs the loop; then `result` holds the `BeamResult`. The
    cache is `cache` (R rows, R = K after step 0), readable between steps.
    """

    def __init__(
        self,
        backend: LanguageModel,
        prompt_ids: Sequence[int],
        settings: BeamSettings,
        *,
        cache: CacheSpec | None = None,
        block_size: int = 16,
    ) -> None:
        if not prompt_ids:
            raise ValueError("The prompt is empty; give at least one token.")
        spec = cache or CacheSpec("dynamic")
        if spec.kind == "sliding":
            raise ValueError(
                "Beam search here runs on a full cache; choose dynamic, static or paged."
            )
        limits.check_run(
            backend, batch=settings.num_beams, prompt_len=len(prompt_ids),
            new_tokens=settings.max_new_tokens, cached=True, cache_kind=spec.kind,
            cache_length=spec.max_length, block_size=spec.block_size,
        )
        spec.check_room(len(prompt_ids) + settings.max_new_tokens)
        self.backend = backend
        self.settings = settings
        self.prompt = [int(t) for t in prompt_ids]
        self.spec = spec
        self.cache: Cache = backend.new_cache(spec, 1)
        self.ledger = BlockLedger(len(self.prompt), block_size)
        self.bytes_per_token = formulas.model_bytes_per_token(backend)
        self.block_bytes = self.bytes_per_token * block_size
        self.result: BeamResult | None = None

    def __iter__(self) -> Iterator[BeamStep]:
        return self._run()

    @torch.inference_mode()
    def _run(self) -> Iterator[BeamStep]:
        s = self.settings
        K, C, N, P = s.num_beams, s.candidates, s.max_new_tokens, len(self.prompt)
        eos = self.backend.eos_token_id
        device = self.backend.device
        # Running beams: tokens and scores; transformers starts beam 0 at 0 and the others at
        # −1e9, so the first step's candidates all continue beam 0.
        running: list[list[int]] = [[] for _ in range(K)]
        running_scores = torch.full((K,), _NEG, dtype=torch.float32)  # (K,)
        running_scores[0] = 0.0
        # Finished hypotheses: K slots, −1e9 while empty.
        finished: list[list[int]] = [[] for _ in range(K)]
        finished_scores = torch.full((K,), _NEG, dtype=torch.float32)  # (K,)
        finished_log_probs = [0.0] * K
        finished_parents = [0] * K
        is_finished = torch.zeros(K, dtype=torch.bool)  # (K,)
        improvable = True  # transformers' is_early_stop_heuristic_unsatisfied
        top_k_mask = torch.arange(C) < K  # (C,): only the first K candidates may finish
        totals = [0, 0, 0]  # reorder, index_select, copy-on-write bytes
        step = 0
        built: list[BeamStep] = []  # the record `choose` built at this step

        def choose(logits: torch.Tensor) -> torch.Tensor:
            """The beams' policy for the loop: logits (R, V) → the K tokens fed next (K,),
            after the scores, the finished hypotheses and the cache's reorder."""
            nonlocal running, running_scores, finished, finished_scores, finished_log_probs
            nonlocal finished_parents, is_finished, improvable
            log_probs = torch.log_softmax(logits.float(), dim=-1).cpu()  # (R, V)
            V = log_probs.shape[-1]
            if log_probs.shape[0] != K:  # step 0: one row, the same for every beam
                log_probs = log_probs.expand(K, V)  # (K, V)
            accumulated = (log_probs + running_scores[:, None]).reshape(-1)  # (K·V,)
            cand_scores, flat = torch.topk(accumulated, k=C)  # (C,) best first
            cand_parent = torch.div(flat, V, rounding_mode="floor")  # (C,)
            cand_token = flat % V  # (C,)
            cand_tokens = [
                running[int(p)] + [int(t)] for p, t in zip(cand_parent, cand_token, strict=True)
            ]
            length = step + 1  # generated tokens of every candidate
            hits = (cand_token == eos) if eos is not None else torch.zeros(C, dtype=torch.bool)
            if length >= N:
                hits = torch.ones(C, dtype=torch.bool)  # the budget: every candidate stops
            # e. The K best candidates that did not stop run on.
            masked = cand_scores + hits.to(torch.float32) * _NEG  # (C,)
            keep = torch.topk(masked, k=K).indices  # (K,)
            running = [cand_tokens[int(i)] for i in keep]
            running_scores = masked[keep]  # (K,)
            shown_scores = cand_scores[keep]  # (K,) without the −1e9 of a stopped beam
            stopped = hits[keep]  # (K,)
            parents = [int(cand_parent[int(i)]) for i in keep]
            # f. Stopped candidates among the first K may enter the finished hypotheses.
            just_finished = hits & top_k_mask  # (C,)
            penalised = cand_scores / (length**s.length_penalty)  # (C,)
            full = bool(is_finished.all()) and s.early_stopping is True
            penalised = penalised + float(full) * _NEG
            penalised = penalised + float(not improvable) * _NEG
            penalised = penalised + (~just_finished).to(torch.float32) * _NEG
            merged_scores = torch.cat([finished_scores, penalised])  # (K + C,)
            merged_tokens = finished + cand_tokens
            merged_log_probs = finished_log_probs + [float(x) for x in cand_scores]
            merged_parents = finished_parents + [int(p) if step else 0 for p in cand_parent]
            merged_done = torch.cat([is_finished, just_finished])  # (K + C,)
            best = torch.topk(merged_scores, k=K).indices  # (K,)
            finished = [merged_tokens[int(i)] for i in best]
            finished_scores = merged_scores[best]
            finished_log_probs = [merged_log_probs[int(i)] for i in best]
            finished_parents = [merged_parents[int(i)] for i in best]
            is_finished = merged_done[best]
            # g. The stopping heuristic, at the new length.
            if s.early_stopping == "never" and s.length_penalty > 0.0:
                best_length = N
            else:
                best_length = length
            best_possible = running_scores[:1] / (best_length**s.length_penalty)  # (1,)
            worst = torch.where(is_finished, finished_scores.min(), _NEG)  # (K,)
            improvable = improvable and bool((best_possible > worst).any())
            all_full = bool(is_finished.all()) and s.early_stopping is True
            go_on = improvable and not all_full and not bool(hits.all())

            # The cache: row i continues beam parents[i].
            rows_before = 1 if step == 0 else K
            stored = P + step
            row_bytes = self.bytes_per_token * stored
            # Step 0's candidates all continue beam 0 (the others start at −1e9): one row.
            cache_rows = [0] * K if rows_before == 1 else parents
            moved = sum(1 for i, p in enumerate(cache_rows) if p != i)
            self.cache.select_rows(torch.tensor(cache_rows, dtype=torch.long, device=device))
            shared = self.ledger.select(cache_rows)
            copies = self.ledger.copies_on_next_append()
            record = BeamStep(
                step=step,
                beams=tuple(
                    BeamRow(tuple(toks), float(score), parent, bool(stop))
                    for toks, score, parent, stop in zip(
                        running, shown_scores, cache_rows, stopped, strict=True
                    )
                ),
                finished=tuple(
                    BeamHypothesis(tuple(toks), float(score), lp, parent)
                    for toks, score, lp, parent, done in zip(
                        finished, finished_scores, finished_log_probs, finished_parents,
                        is_finished, strict=True,
                    )
                    if bool(done)
                ),
                rows_before=rows_before,
                stored_tokens=stored,
                row_bytes=row_bytes,
                rows_moved=moved,
                reorder_bytes=moved * row_bytes,
                index_select_bytes=K * row_bytes,
                block_size=self.ledger.block_size,
                blocks_shared=shared,
                blocks_copied=copies,
                block_bytes=self.block_bytes,
                done=not go_on,
            )
            built.append(record)
            return torch.tensor([toks[-1] for toks in running], dtype=torch.long, device=device)

        # The one decode loop: the prompt once (one cache row), then each beam's newest token.
        feed = torch.tensor([self.prompt], dtype=torch.long, device=device)  # (1, P)
        for _fed in decode.run(self.backend, feed, self.cache, choose, steps=N):
            record = built.pop()
            totals[0] += record.reorder_bytes
            totals[1] += record.index_select_bytes
            totals[2] += record.cow_bytes
            yield record
            step += 1
            if record.done:
                break
            self.ledger.append()
        returned = [
            BeamHypothesis(tuple(toks), float(score), lp, parent)
            for toks, score, lp, parent in zip(
                finished, finished_scores, finished_log_probs, finished_parents, strict=True
            )
        ][: s.num_return_sequences]
        self.result = BeamResult(
            settings=s,
            prompt_tokens=P,
            sequences=tuple(returned),
            steps=step,
            bytes_per_token=self.bytes_per_token,
            reorder_bytes=totals[0],
            index_select_bytes=totals[1],
            cow_bytes=totals[2],
        )
