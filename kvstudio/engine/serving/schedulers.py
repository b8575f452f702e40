"""Schedulers: which requests feed which tokens at each step, over one `ServingEngine`.

Owns `Scheduler`, one object per run whose `steps()` yields a frozen
`ServingStep` per step until every request has finished. The policy is the
`SchedulerConfig`'s:

- **static** batching (MiniMind's ``generate``, HF's padded batch): when no
  batch runs, the waiting requests form one (at most ``max_batch`` rows, each
  reserving the blocks of its whole prompt + budget). Every row of a step is
  padded to the step's longest chunk (the prefill: the longest prompt), and a
  row that finished keeps being fed (an idle row) until the batch's last row
  finishes; only then are its blocks freed and the next batch formed.
  Wasted slots: Σ_r (P_max − P_r) + Σ_r (n_max − n_r) per batch (P: tokens
  prefilled, n: tokens generated).
- **continuous** batching (Orca, vLLM): every step, running requests feed their
  next token (decode rows first) or the rest of their prompt, finished ones
  leave and give their blocks back, and waiting ones join, first come first
  served, while the batch has a row and the pool has the blocks their prompt
  needs. A running request that needs a block when none is left preempts the
  newest request (its blocks are freed; it waits again at the front of the queue
  and is recomputed, prompt and answer so far, when readmitted).
- **chunked prefill** (``chunk`` = C, Sarathi, vLLM): continuous batching with
  at most C tokens per step, shared by decode rows (one each) and prompt chunks.

Blocks come from a `BlockPool` (``block_budget`` blocks at most) and prefix hits
from ``prefix.py``. Times are measured per step by the engine.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.block_pool import BlockPool, PoolFullError
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.serving.engine import Feed, ServingEngine, serving_model
from kvstudio.engine.serving.engine import Sequence as Running
from kvstudio.engine.serving.prefix import make_prefix_cache
from kvstudio.engine.serving.records import (
    Phase,
    Request,
    RequestStep,
    SchedulerConfig,
    ServingStep,
)


@dataclass(eq=False)
class Tracked:
    """A request's place in the scheduler: its sequence and what has happened to it."""

    seq: Running
    status: str = "future"  # future | waiting | running | finished
    admitted_at: int = -1  # admission order (preemption takes the newest)
    prefill_until: int = 0  # tokens to prefill at its admission (prompt, + answer if preempted)
    prefix_hit: int = 0  # prompt tokens its last admission took from the prefix cache
    preemptions: int = 0
    first_token_step: int | None = None
    finish_step: int | None = None

    @property
    def index(self) -> int:
        return self.seq.request.index


def blocks_for(tokens: int, block_size: int) -> int:
    """Blocks that hold `tokens` tokens: ⌈tokens / b⌉."""
    return -(-tokens // block_size)


def check_requests(
    backend: LanguageModel, requests: Sequence[Request], config: SchedulerConfig
) -> None:
    """Refuse, before any work, a request past the model's positions or the block budget."""
    if not requests:
        raise ValueError("There are no requests to serve.")
    if len({r.index for r in requests}) != len(requests):
        raise ValueError("Two requests have the same index; number them 0, 1, ….")
    if backend.max_positions and config.block_size > backend.max_positions:
        raise ValueError(
            f"A block of {config.block_size:,} tokens is longer than the model's "
            f"{backend.max_positions:,} positions; one block would hold more than any "
            "request. Use a block of 16 to 256 tokens."
        )
    for r in requests:
        total = len(r.prompt_ids) + r.max_new_tokens
        if total > backend.max_positions:
            raise ValueError(
                f"Request {r.index + 1} needs {len(r.prompt_ids):,} prompt + "
                f"{r.max_new_tokens:,} new = {total:,} positions, past the model's "
                f"{backend.max_positions:,}; shorten it or lower its token budget."
            )
        need = blocks_for(total, config.block_size) + (config.prefix_cache == "radix")
        if config.block_budget is not None and need > config.block_budget:
            raise ValueError(
                f"Request {r.index + 1} alone needs up to {need:,} blocks of "
                f"{config.block_size} tokens ({total:,} positions"
                + (", one more to copy a shared block" if config.prefix_cache == "radix" else "")
                + f"), more than the budget of {config.block_budget:,}; raise the block "
                "budget or lower its token budget."
            )


class Scheduler:
    """One run of `requests` under `config`: iterate `steps()` for its `ServingStep`s."""

    def __init__(
        self,
        backend: LanguageModel,
        requests: Sequence[Request],
        config: SchedulerConfig,
        sampling: SamplingSettings | None = None,
        keep_logits: bool = False,  # keep every chosen token's logits (the solo comparison)
    ) -> None:
        check_requests(backend, requests, config)
        model = serving_model(backend)
        self.config = config
        self.pool = BlockPool(
            backend.num_layers, config.block_size, backend.num_kv_heads, backend.head_dim,
            budget=config.block_budget, dtype=next(model.parameters()).dtype,
            device=backend.device,
        )
        self.engine = ServingEngine(backend, self.pool, sampling or
                                    SamplingSettings.greedy_settings(), keep_logits)
        self.prefix = make_prefix_cache(config.prefix_cache, self.pool)
        self.items = [Tracked(self.engine.start(r)) for r in requests]
        self.by_index = {t.index: t for t in self.items}
        self.waiting: list[Tracked] = []  # first come, first served; the preempted in front
        self.batch: list[Tracked] = []  # static batching: the rows of the running batch
        self.step_index = 0
        self.admissions = 0
        # Safety net against a scheduling bug: no run can take more steps than this.
        self.step_limit = 2 * sum(len(r.prompt_ids) + r.max_new_tokens for r in requests) + max(
            r.arrival for r in requests) + 8

    # ---- the run ------------------------------------------------------------------------
    def steps(self) -> Iterator[ServingStep]:
        """One `ServingStep` per step until every request has finished."""
        while any(t.status != "finished" for t in self.items):
            if self.step_index >= self.step_limit:
                raise RuntimeError("The scheduler made no progress; this is a bug.")
            yield self.step()

    def step(self) -> ServingStep:
        step = self.step_index
        for t in self.items:
            if t.status == "future" and t.seq.request.arrival <= step:
                t.status = "waiting"
                self.waiting.append(t)
        starts = {t.index: t.seq.computed for t in self.items}
        was_finished = {t.index for t in self.items if t.status == "finished"}
        self._preempted: list[Tracked] = []
        self._admitted: list[Tracked] = []
        if self.config.policy == "static":
            feeds, padding = self._plan_static()
        else:
            feeds, padding = self._plan_continuous(), {}
        chosen: dict[int, int] = {}
        elapsed = 0.0
        if feeds:
            chosen, elapsed = self.engine.forward_step(feeds, sum(padding.values()))
        fed = {f.sequence.request.index: f.count for f in feeds}
        for t in self.items:
            if t.index in fed:
                self.prefix.insert(t.seq.tokens[: t.seq.computed], t.seq.table)
        for index in chosen:
            self._after_token(self.by_index[index], step)
        if self.batch and all(t.status == "finished" for t in self.batch):
            for t in self.batch:  # static: the batch ends, its rows' blocks go back
                self.engine.release(t.seq)
            self.batch = []
        record = self._record(step, starts, fed, padding, chosen, was_finished, elapsed)
        self.step_index += 1
        return record

    def _after_token(self, t: Tracked, step: int) -> None:
        if t.first_token_step is None:
            t.first_token_step = step
        if self.engine.is_done(t.seq):
            t.status = "finished"
            t.finish_step = step
            if self.config.policy == "continuous":
                self.engine.release(t.seq)

    # ---- blocks -------------------------------------------------------------------------
    def _room(self) -> float:
        """Blocks a request could still get: free ones and those only the prefix cache holds."""
        if self.pool.budget is None:
            return math.inf
        return self.pool.blocks_free + self.prefix.cached_only

    def _take(self, seq: Running, count: int) -> None:
        """Blocks for `count` tokens of `seq`, evicting prefix-cache entries when needed."""
        while True:
            try:
                self.engine.take_blocks(seq, count)
                return
            except PoolFullError:
                if not self.prefix.evict():
                    raise RuntimeError("The block pool ran out after its check; a bug.") from None

    def _admit(self, t: Tracked, hit: int) -> None:
        self.waiting.remove(t)
        t.status = "running"
        t.admitted_at = self.admissions
        self.admissions += 1
        t.prefill_until = len(t.seq.tokens)
        t.prefix_hit = hit
        self._admitted.append(t)

    def _match(self, t: Tracked) -> int:
        """Start `t` from the prefix cache's longest match; the hit in tokens."""
        hit, blocks = self.prefix.match(t.seq.tokens)
        t.seq.table, t.seq.computed = blocks, hit
        return hit

    def _preempt(self, t: Tracked) -> None:
        """Free `t`'s blocks; it waits again, first in line, to be recomputed."""
        self.engine.release(t.seq)
        t.status = "waiting"
        t.preemptions += 1
        self.waiting.insert(0, t)
        self._preempted.append(t)

    # ---- static batching ------------------------------------------------------------------
    def _plan_static(self) -> tuple[list[Feed], dict[int, int]]:
        if not self.batch:
            self._form_batch()
        live = [t for t in self.batch if t.status == "running"]
        width = max((t.seq.remaining for t in live), default=0)  # the step's longest chunk
        feeds: list[Feed] = []
        padding: dict[int, int] = {}
        for t in self.batch:
            if t.status == "running":
                self._take(t.seq, t.seq.remaining)
                feeds.append(Feed(t.seq, t.seq.remaining))
                padding[t.index] = width - t.seq.remaining
            else:
                padding[t.index] = width  # a finished row is still fed
        return feeds, padding

    def _form_batch(self) -> None:
        reserved = 0  # blocks the rows admitted so far will still take (allocated lazily)
        b = self.config.block_size
        for t in list(self.waiting):
            if len(self.batch) == self.config.max_batch:
                break
            hit = self._match(t)
            r = t.seq.request
            # Its whole prompt + budget, less the blocks it shares, plus a copy of a shared
            # block its first token must be written into.
            need = blocks_for(len(t.seq.tokens) + r.max_new_tokens, b) - len(t.seq.table)
            need += self.engine.blocks_needed(t.seq, 1) - (hit % b == 0)
            if need > self._room() - reserved:  # (after the match: its hits are its own now)
                self.engine.release(t.seq)
                break
            reserved += need
            self._admit(t, hit)
            self.batch.append(t)

    # ---- continuous batching -------------------------------------------------------------
    def _plan_continuous(self) -> list[Feed]:
        budget = self.config.chunk if self.config.chunk is not None else math.inf
        running = sorted((t for t in self.items if t.status == "running"),
                         key=lambda t: t.admitted_at)
        decoding = [t for t in running if t.seq.computed >= t.prefill_until]
        prefilling = [t for t in running if t.seq.computed < t.prefill_until]
        feeds: list[Feed] = []
        scheduled: set[Tracked] = set()
        for t in decoding + prefilling:
            if budget <= 0:
                break
            if t.status != "running":
                continue  # preempted to make room for an earlier one
            count = int(min(t.seq.remaining, budget))
            if not self._make_room(t, count, scheduled):
                continue
            self._take(t.seq, count)
            feeds.append(Feed(t.seq, count))
            scheduled.add(t)
            budget -= count
        running_now = sum(1 for t in self.items if t.status == "running")
        while self.waiting and budget > 0 and running_now < self.config.max_batch:
            t = self.waiting[0]
            if t in self._preempted:
                break  # not readmitted in the step that preempted it
            hit = self._match(t)
            count = int(min(t.seq.remaining, budget))
            if self.engine.blocks_needed(t.seq, count) > self._room():
                self.engine.release(t.seq)  # gives the matched blocks back
                break  # first come, first served: the others wait behind it
            self._admit(t, hit)
            self._take(t.seq, count)
            feeds.append(Feed(t.seq, count))
            budget -= count
            running_now += 1
        return feeds

    def _make_room(self, t: Tracked, count: int, scheduled: set[Tracked]) -> bool:
        """Preempt the newest unscheduled requests until `t`'s chunk fits; False if `t` itself
        had to go."""
        need = self.engine.blocks_needed(t.seq, count)
        while need > self._room():
            candidates = [u for u in self.items if u.status == "running" and u not in scheduled]
            victim = max(candidates, key=lambda u: u.admitted_at)
            self._preempt(victim)
            if victim is t:
                return False
            need = self.engine.blocks_needed(t.seq, count)
        return True

    # ---- the record -----------------------------------------------------------------------
    def _record(
        self, step: int, starts: dict[int, int], fed: dict[int, int], padding: dict[int, int],
        chosen: dict[int, int], was_finished: set[int], elapsed: float,
    ) -> ServingStep:
        rows: list[RequestStep] = []
        prefill = decode = 0
        preempted = {t.index for t in self._preempted if t.status == "waiting"}
        admitted = {t.index: t.prefix_hit for t in self._admitted}
        for t in self.items:
            i = t.index
            count, pad = fed.get(i, 0), padding.get(i, 0)
            phase: Phase
            if count:
                is_prefill = starts[i] < t.prefill_until or i in admitted
                phase = "prefill" if is_prefill else "decode"
                if is_prefill:
                    prefill += count
                else:
                    decode += count
            elif pad:
                phase = "idle"
            elif i in preempted:
                phase = "preempted"
            elif i in was_finished or t.status == "finished":
                phase = "finished"
            elif t.status == "future":
                phase = "future"
            else:
                phase = "waiting"
            rows.append(RequestStep(
                request=i, phase=phase, tokens_fed=count, padding_fed=pad,
                token=chosen.get(i), prefix_hit=admitted.get(i, 0), blocks=len(t.seq.table),
                computed=t.seq.computed,
            ))
        pads = sum(padding.values())
        return ServingStep(
            step=step,
            requests=tuple(rows),
            prefill_tokens=prefill,
            decode_tokens=decode,
            padding_slots=pads,
            batch_rows=sum(1 for r in rows if r.tokens_fed or r.padding_fed),
            idle_rows=sum(1 for r in rows if r.padding_fed and not r.tokens_fed),
            blocks_used=self.pool.blocks_in_use,
            blocks_free=self.pool.blocks_free,
            blocks_cached=self.prefix.cached_only,
            prefix_hit_tokens=sum(admitted.values()),
            cache_bytes=self.pool.used_nbytes,
            elapsed_s=elapsed,
            preempted=tuple(sorted(preempted)),
            admitted=tuple(sorted(admitted)),
        )


def solo_run(
    backend: LanguageModel, request: Request, sampling: SamplingSettings | None = None,
    keep_logits: bool = False,
) -> Running:
    """The request run alone: a batch of one, its whole prompt in one prefill, no prefix cache."""
    alone = Request(request.index, request.text, request.prompt_ids, 0, request.max_new_tokens)
    scheduler = Scheduler(backend, [alone], SchedulerConfig(max_batch=1), sampling, keep_logits)
    for _ in scheduler.steps():
        pass
    return scheduler.items[0].seq


def solo_answer(
    backend: LanguageModel, request: Request, sampling: SamplingSettings | None = None
) -> tuple[int, ...]:
    """The tokens of `solo_run`."""
    return tuple(solo_run(backend, request, sampling).answer)
