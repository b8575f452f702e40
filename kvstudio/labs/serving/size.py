"""How big a serving run is before it starts, and the rule every front refuses it by.

Owns `run_steps` (the scheduler steps a configuration takes at most, without eos or
preemption, from the arrival steps and token budgets), `timeline_cells` (requests ×
steps, for every configuration and round: the serving lab keeps one `RequestStep`
record per cell, and each step visits every request) and `check_size`, the one rule
the command line, the window and the notebook apply before any work: past
`ASK_CELLS` cells a run is refused (the command line runs it with ``--yes``, after
checking the records fit the free memory).

A file of 256 lines ``@100000 hi`` is 100,001 steps × 256 requests: 25.6 million
records, about 4 GB, most of them "not arrived yet". It never imports Qt and never
prints.
"""

from __future__ import annotations

from collections.abc import Sequence

from kvstudio.engine import limits
from kvstudio.engine.serving.records import RequestSpec, SchedulerConfig

ASK_CELLS = 1_000_000  # requests × steps × rounds past which a run is refused or asked first
BYTES_PER_CELL = 160  # one RequestStep record and its share of its ServingStep (measured)


def run_steps(requests: Sequence[RequestSpec], config: SchedulerConfig) -> int:
    """Steps one run under `config` takes at most without eos or preemption: the last
    arrival, then ⌈requests ÷ max batch⌉ waves of the longest request (its prefill steps,
    ⌈P ÷ chunk⌉ with chunked prefill, plus its token budget)."""
    if not requests:
        return 0
    last = max(r.arrival for r in requests)
    waves = -(-len(requests) // config.max_batch)
    longest = max(
        (1 if config.chunk is None else -(-len(r.prompt_ids) // config.chunk)) + r.max_new_tokens
        for r in requests
    )
    return last + waves * longest


def timeline_cells(
    requests: Sequence[RequestSpec], configs: Sequence[SchedulerConfig], repeats: int
) -> int:
    """Request-step records the lab keeps: requests × steps, every configuration and round."""
    return len(requests) * repeats * sum(run_steps(requests, c) for c in configs)


def check_size(
    requests: Sequence[RequestSpec],
    configs: Sequence[SchedulerConfig],
    repeats: int,
    *,
    confirmed: bool = False,
    confirm_hint: str = "",
    device: object = "cpu",
) -> int:
    """The run's cells if it may start; else ValueError with the one sentence every front
    shows (`confirm_hint`, e.g. the command line's ``--yes``, is added after it).

    `confirmed` (the command line's ``--yes``) runs a large one, if its records fit the
    free memory (`limits.check_fits_memory`).
    """
    cells = timeline_cells(requests, configs, repeats)
    if cells < ASK_CELLS:
        return cells
    steps = max(run_steps(requests, c) for c in configs)
    runs = repeats * len(configs)
    what = (f"This serving run keeps {len(requests):,} requests × up to {steps:,} steps"
            + (f" × {runs:,} runs" if runs > 1 else "")
            + f" = {cells:,} request-step records (about {limits.gib(cells * BYTES_PER_CELL)})")
    if confirmed:
        limits.check_fits_memory(
            cells * BYTES_PER_CELL, what, device,
            "Lower the arrival steps (@K) or the token budgets, or serve fewer requests.")
        return cells
    raise ValueError(
        f"{what}, past the {ASK_CELLS:,} at which KV Studio stops first: every step visits "
        "every request, arrived or not. Lower the arrival steps (@K) or the token budgets "
        "(+N, answer tokens), serve fewer requests or use fewer rounds."
        + (f" {confirm_hint}" if confirm_hint else "")
    )
