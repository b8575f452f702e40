"""The serving engine's loop: schedule → execute → update the requests → record the step.

Owns `LLMEngine`, one object per run of a set of requests under one
`SchedulerConfig`. It checks the requests (`check_requests`, before any work),
builds the parts (one `BlockPool` for the run, the `KVCacheManager` over it,
the `Scheduler`, the `ModelRunner`) and one `Request` per `RequestSpec`, and
its `step()` is only: hand the requests that arrive to the scheduler, ask it
for a plan (`Scheduler.schedule`), have the runner execute it
(`ModelRunner.execute_model`), have the scheduler apply the output
(`Scheduler.update_from_output`), and return the step's frozen `ServingStep`
(``records.py``). `steps()` repeats it until every request has finished.

Also `solo_run` / `solo_answer`: a request alone (a batch of one, whole prefill,
no prefix cache), the reference the serving lab holds every batched run to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.block_pool import BlockPool
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.sampling import new_generator
from kvstudio.engine.serving.kv_cache_manager import KVCacheManager
from kvstudio.engine.serving.model_runner import ModelRunner, serving_model
from kvstudio.engine.serving.outputs import EMPTY_OUTPUT, ModelRunnerOutput, SchedulerOutput
from kvstudio.engine.serving.records import (
    Phase,
    RequestSpec,
    RequestStep,
    SchedulerConfig,
    ServingStep,
)
from kvstudio.engine.serving.request import Request
from kvstudio.engine.serving.scheduler import Scheduler, blocks_for


def check_requests(
    backend: LanguageModel, requests: Sequence[RequestSpec], config: SchedulerConfig
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


class LLMEngine:
    """One run of `requests` under `config`: call `step()`, or iterate `steps()`, for its
    `ServingStep`s; `requests` holds each request's state (tokens, hits, steps)."""

    def __init__(
        self,
        backend: LanguageModel,
        requests: Sequence[RequestSpec],
        config: SchedulerConfig,
        sampling: SamplingSettings | None = None,
        keep_logits: bool = False,  # keep every chosen token's logits (the solo comparison)
    ) -> None:
        check_requests(backend, requests, config)
        model = serving_model(backend)
        sampling = sampling or SamplingSettings.greedy_settings()
        self.config = config
        pool = BlockPool(
            backend.num_layers, config.block_size, backend.num_kv_heads, backend.head_dim,
            budget=config.block_budget, dtype=next(model.parameters()).dtype,
            device=backend.device,
        )
        self.kv_cache_manager = KVCacheManager(pool, config.prefix_cache)
        self.scheduler = Scheduler(config, self.kv_cache_manager, backend.eos_token_id)
        self.model_runner = ModelRunner(backend, pool, sampling, keep_logits)
        self.requests = [  # in the given order; each with its own generator (seed + index)
            Request(spec, None if sampling.greedy
                    else new_generator(sampling.seed + spec.index, backend.device))
            for spec in requests
        ]
        self.by_id = {r.request_id: r for r in self.requests}
        self._arriving = list(self.requests)  # not handed to the scheduler yet
        # Safety net against a scheduling bug: no run can take more steps than this.
        self.step_limit = 2 * sum(len(r.prompt_ids) + r.max_new_tokens for r in requests) + max(
            r.arrival for r in requests) + 8

    def has_unfinished_requests(self) -> bool:
        return any(not r.is_finished for r in self.requests)

    # ---- the loop -------------------------------------------------------------------------
    def steps(self) -> Iterator[ServingStep]:
        """One `ServingStep` per step until every request has finished."""
        while self.has_unfinished_requests():
            if self.scheduler.step_index >= self.step_limit:
                raise RuntimeError("The scheduler made no progress; this is a bug.")
            yield self.step()

    def step(self) -> ServingStep:
        """Schedule → execute → update the requests → the step's record."""
        step = self.scheduler.step_index
        for r in [r for r in self._arriving if r.arrival <= step]:
            self._arriving.remove(r)
            self.scheduler.add_request(r)
        was_finished = {r.request_id for r in self.requests if r.is_finished}
        plan = self.scheduler.schedule()
        output = EMPTY_OUTPUT
        if plan.scheduled:
            output = self.model_runner.execute_model(plan, self.by_id)
        self.scheduler.update_from_output(plan, output)
        return self._record(plan, output, was_finished)

    # ---- the record -----------------------------------------------------------------------
    def _record(
        self, plan: SchedulerOutput, output: ModelRunnerOutput, was_finished: set[int]
    ) -> ServingStep:
        rows: list[RequestStep] = []
        prefill = decode = 0
        chunks = {c.request_id: c for c in plan.scheduled}
        preempted = set(plan.preempted)
        for r in self.requests:
            i = r.request_id
            chunk, pad = chunks.get(i), plan.padding.get(i, 0)
            count = chunk.num_tokens if chunk is not None else 0
            phase: Phase
            if chunk is not None and count:
                phase = "prefill" if chunk.is_prefill else "decode"
                if chunk.is_prefill:
                    prefill += count
                else:
                    decode += count
            elif pad:
                phase = "idle"
            elif i in preempted:
                phase = "preempted"
            elif i in was_finished or r.is_finished:
                phase = "finished"
            elif r.arrival > plan.step:
                phase = "future"
            else:
                phase = "waiting"
            rows.append(RequestStep(
                request=i, phase=phase, tokens_fed=count, padding_fed=pad,
                token=output.sampled.get(i), prefix_hit=plan.admitted.get(i, 0),
                blocks=len(r.block_table), computed=r.num_computed_tokens,
            ))
        pool = self.kv_cache_manager.pool
        return ServingStep(
            step=plan.step,
            requests=tuple(rows),
            prefill_tokens=prefill,
            decode_tokens=decode,
            padding_slots=plan.total_padding,
            batch_rows=sum(1 for r in rows if r.tokens_fed or r.padding_fed),
            idle_rows=sum(1 for r in rows if r.padding_fed and not r.tokens_fed),
            blocks_used=pool.blocks_in_use,
            blocks_free=pool.blocks_free,
            blocks_cached=self.kv_cache_manager.prefix.cached_only,
            prefix_hit_tokens=sum(plan.admitted.values()),
            cache_bytes=pool.used_nbytes,
            elapsed_s=output.elapsed_s,
            preempted=tuple(sorted(preempted)),
            admitted=tuple(sorted(plan.admitted)),
        )


def solo_run(
    backend: LanguageModel, request: RequestSpec, sampling: SamplingSettings | None = None,
    keep_logits: bool = False,
) -> Request:
    """The request run alone: a batch of one, its whole prompt in one prefill, no prefix cache."""
    alone = dataclasses.replace(request, arrival=0)
    engine = LLMEngine(backend, [alone], SchedulerConfig(max_batch=1), sampling, keep_logits)
    for _ in engine.steps():
        pass
    return engine.requests[0]


def solo_answer(
    backend: LanguageModel, request: RequestSpec, sampling: SamplingSettings | None = None
) -> tuple[int, ...]:
    """The tokens of `solo_run`."""
    return tuple(solo_run(backend, request, sampling).output_token_ids)

