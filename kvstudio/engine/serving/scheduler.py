"""The scheduler: which requests feed which tokens at each step, and what a step's output changes.

Owns `Scheduler`. `schedule()` plans one step and returns it as a frozen
`SchedulerOutput` (``outputs.py``): it admits, preempts and takes blocks
through the `KVCacheManager`, but never runs the model. `update_from_output`
applies the `ModelRunnerOutput` of that plan to the requests (tokens computed,
tokens chosen, the prefix cache, finished requests and their blocks). The
policy is the `SchedulerConfig`'s:

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
  and is recomputed, prompt and output so far, when readmitted).
- **chunked prefill** (``chunk`` = C, Sarathi, vLLM): continuous batching with
  at most C tokens per step, shared by decode rows (one each) and prompt chunks.
"""

from __future__ import annotations

import math

from kvstudio.engine.serving.kv_cache_manager import KVCacheManager
from kvstudio.engine.serving.outputs import ModelRunnerOutput, ScheduledChunk, SchedulerOutput
from kvstudio.engine.serving.records import SchedulerConfig
from kvstudio.engine.serving.request import Request, RequestStatus


def blocks_for(tokens: int, block_size: int) -> int:
    """Blocks that hold `tokens` tokens: ⌈tokens / b⌉."""
    return -(-tokens // block_size)


class Scheduler:
    """One run's queue, running set and policy: `schedule()` plans a step, the engine runs it,
    `update_from_output` applies its result."""

    def __init__(
        self, config: SchedulerConfig, kv_cache_manager: KVCacheManager, eos_token_id: int | None
    ) -> None:
        self.config = config
        self.kv_cache_manager = kv_cache_manager
        self.eos_token_id = eos_token_id
        self.requests: dict[int, Request] = {}  # every request added, by id
        self.waiting: list[Request] = []  # first come, first served; the preempted in front
        self.running: list[Request] = []  # admitted and not finished, in admission order
        self.batch: list[Request] = []  # static batching: the rows of the running batch
        self.step_index = 0  # the step the next `schedule()` plans
        self.admissions = 0
        # What the plan being built did (reset by `schedule`).
        self._admitted: dict[int, int] = {}
        self._preempted: list[Request] = []

    def add_request(self, request: Request) -> None:
        """A request that has arrived: it waits at the back of the queue."""
        self.requests[request.request_id] = request
        request.status = RequestStatus.WAITING
        self.waiting.append(request)

    # ---- the plan -------------------------------------------------------------------------
    def schedule(self) -> SchedulerOutput:
        """Plan one step: admit, preempt, take each chunk's blocks. The model does not run."""
        self._admitted, self._preempted = {}, []
        padding: dict[int, int] = {}
        if self.config.policy == "static":
            chunks, padding = self._schedule_static()
        else:
            chunks = self._schedule_continuous()
        plan = SchedulerOutput(
            step=self.step_index, scheduled=tuple(chunks), padding=padding,
            admitted=dict(self._admitted),
            preempted=tuple(r.request_id for r in self._preempted),
        )
        self.step_index += 1
        return plan

    def _chunk(self, request: Request, count: int) -> ScheduledChunk:
        """Take the blocks for `count` more tokens of `request`; its chunk of the plan."""
        self.kv_cache_manager.allocate_slots(request, count)
        start = request.num_computed_tokens
        return ScheduledChunk(request.request_id, start, count, start < request.prefill_until)

    def _admit(self, request: Request, hit: int) -> None:
        self.waiting.remove(request)
        request.status = RequestStatus.RUNNING
        request.admitted_at = self.admissions
        self.admissions += 1
        request.prefill_until = request.num_tokens
        request.prefix_hit = hit
        self.running.append(request)
        self._admitted[request.request_id] = hit

    def _preempt(self, request: Request) -> None:
        """Free `request`'s blocks; it waits again, first in line, to be recomputed."""
        self.kv_cache_manager.free(request)
        self.running.remove(request)
        request.status = RequestStatus.PREEMPTED
        request.num_preemptions += 1
        self.waiting.insert(0, request)
        self._preempted.append(request)

    # ---- static batching ------------------------------------------------------------------
    def _schedule_static(self) -> tuple[list[ScheduledChunk], dict[int, int]]:
        if not self.batch:
            self._form_batch()
        live = [r for r in self.batch if r.status is RequestStatus.RUNNING]
        width = max((r.num_tokens_to_compute for r in live), default=0)  # the longest chunk
        chunks: list[ScheduledChunk] = []
        padding: dict[int, int] = {}
        for r in self.batch:
            if r.status is RequestStatus.RUNNING:
                chunks.append(self._chunk(r, r.num_tokens_to_compute))
                padding[r.request_id] = width - r.num_tokens_to_compute
            else:
                padding[r.request_id] = width  # a finished row is still fed
        return chunks, padding

    def _form_batch(self) -> None:
        kv = self.kv_cache_manager
        reserved = 0  # blocks the rows admitted so far will still take (allocated lazily)
        b = self.config.block_size
        for r in list(self.waiting):
            if len(self.batch) == self.config.max_batch:
                break
            hit = kv.match_prefix(r)
            # Its whole prompt + budget, less the blocks it shares, plus a copy of a shared
            # block its first token must be written into.
            need = blocks_for(r.num_tokens + r.max_tokens, b) - len(r.block_table)
            need += kv.blocks_needed(r, 1) - (hit % b == 0)
            if need > kv.room() - reserved:  # (after the match: its hits are its own now)
                kv.free(r)
                break
            reserved += need
            self._admit(r, hit)
            self.batch.append(r)

    # ---- continuous batching -------------------------------------------------------------
    def _schedule_continuous(self) -> list[ScheduledChunk]:
        kv = self.kv_cache_manager
        budget = self.config.chunk if self.config.chunk is not None else math.inf
        running = sorted(self.running, key=lambda r: r.admitted_at)
        decoding = [r for r in running if r.num_computed_tokens >= r.prefill_until]
        prefilling = [r for r in running if r.num_computed_tokens < r.prefill_until]
        chunks: list[ScheduledChunk] = []
        scheduled: set[int] = set()
        for r in decoding + prefilling:
            if budget <= 0:
                break
            if r.status is not RequestStatus.RUNNING:
                continue  # preempted to make room for an earlier one
            count = int(min(r.num_tokens_to_compute, budget))
            if not self._make_room(r, count, scheduled):
                continue
            chunks.append(self._chunk(r, count))
            scheduled.add(r.request_id)
            budget -= count
        while self.waiting and budget > 0 and len(self.running) < self.config.max_batch:
            r = self.waiting[0]
            if r in self._preempted:
                break  # not readmitted in the step that preempted it
            hit = kv.match_prefix(r)
            count = int(min(r.num_tokens_to_compute, budget))
            if kv.blocks_needed(r, count) > kv.room():
                kv.free(r)  # gives the matched blocks back
                break  # first come, first served: the others wait behind it
            self._admit(r, hit)
            chunks.append(self._chunk(r, count))
            budget -= count
        return chunks

    def _make_room(self, request: Request, count: int, scheduled: set[int]) -> bool:
        """Preempt the newest unscheduled requests until `request`'s chunk fits; False if
        `request` itself had to go."""
        kv = self.kv_cache_manager
        need = kv.blocks_needed(request, count)
        while need > kv.room():
            candidates = [r for r in self.running if r.request_id not in scheduled]
            victim = max(candidates, key=lambda r: r.admitted_at)
            self._preempt(victim)
            if victim is request:
                return False
            need = kv.blocks_needed(request, count)
        return True

    # ---- applying a step's output --------------------------------------------------------
    def update_from_output(self, plan: SchedulerOutput, output: ModelRunnerOutput) -> None:
        """What the step did to its requests: tokens computed and chosen, the prefix cache
        told what they stored, finished requests' blocks freed (static: the whole batch's,
        once its last row finishes)."""
        for chunk in plan.scheduled:
            self.requests[chunk.request_id].num_computed_tokens += chunk.num_tokens
        for request_id, token in output.sampled.items():
            request = self.requests[request_id]
            request.append_output_token(token)
            if request_id in output.logits:
                request.logits.append(output.logits[request_id])
        for request_id in sorted(c.request_id for c in plan.scheduled):
            self.kv_cache_manager.cache_blocks(self.requests[request_id])
        for request_id in output.sampled:
            request = self.requests[request_id]
            if request.first_token_step is None:
                request.first_token_step = plan.step
            if request.check_stop(self.eos_token_id):
                self._finish(request, plan.step)
        if self.batch and all(r.is_finished for r in self.batch):
            for r in self.batch:  # static: the batch ends, its rows' blocks go back
                self.kv_cache_manager.free(r)
            self.batch = []

    def _finish(self, request: Request, step: int) -> None:
        request.status = RequestStatus.FINISHED
        request.finish_step = step
        self.running.remove(request)
        if self.config.policy == "continuous":
            self.kv_cache_manager.free(request)
