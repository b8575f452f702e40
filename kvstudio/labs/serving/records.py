"""What the serving lab measured: per request, per scheduler run, and the whole result.

Owns the frozen records `serving.py` ends with and the window lab, the CLI and
the exports read: `RequestOutcome` (one request's tokens, its prefix hit, its
times, whether it chose its solo run's tokens and how far its logits were from
the solo run's), `RunTotals` (one scheduler's totals: throughput, wasted token
slots beside the formula, peak blocks and bytes), `SchedulerRun` (one
scheduler's steps, outcomes and totals) and `ServingResult` (every scheduler
run on one set of requests). The step records themselves are
``kvstudio.engine.serving.records`` (`ServingStep`).

Times follow the timing policy (``labs.common``): each is a `Spread` over the
k interleaved repeats of the whole run (``count`` = k); with k = 1 it is a
single measurement and is labelled so. A time is model time: the sum of the
steps' ``elapsed_s`` from the request's arrival step, so waiting in the queue
counts and the Python bookkeeping between steps does not.

Names are stable: fields are only ever added (with defaults), never renamed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.serving.records import RequestSpec, SchedulerConfig, ServingStep
from kvstudio.labs.common import Spread


@dataclass(frozen=True)
class RequestOutcome:
    """One request under one scheduler."""

    request: RequestSpec  # index, question text, prompt ids, arrival step, budget
    answer_ids: tuple[int, ...]  # the tokens it generated (eos included when it ended so)
    answer_text: str  # the answer as a student reads it
    solo_ids: tuple[int, ...]  # the same request run alone (batch of one, whole prefill)
    prefix_hit: int  # prompt tokens served from the prefix cache (its last admission)
    first_token_step: int  # the step that produced its first token
    finish_step: int  # the step that produced its last token
    preemptions: int  # times it lost its blocks and was recomputed
    ttft_s: Spread  # arrival → first token (model time; count = repeats)
    itl_p50_s: Spread | None  # inter-token latency, median over its tokens (None: one token)
    itl_p95_s: Spread | None  # inter-token latency, 95th percentile
    e2e_s: Spread  # arrival → last token
    # max |Δlogit| against the solo run, over the tokens chosen after the same history
    # (float32 rounding: products over a batch's rows round differently from one row's;
    # None when not measured)
    max_abs_logit_diff: float | None = None

    @property
    def prompt_tokens(self) -> int:
        return len(self.request.prompt_ids)

    @property
    def answer_tokens(self) -> int:
        return len(self.answer_ids)

    @property
    def identical_to_solo(self) -> bool:
        """Batching changed no token: the same tokens as its run alone (the logits are the
        same to float32 rounding, `max_abs_logit_diff`)."""
        return self.answer_ids == self.solo_ids


@dataclass(frozen=True)
class RunTotals:
    """One scheduler's run, summed."""

    steps: int  # scheduler steps until the last request finished
    answer_tokens: int  # tokens generated, every request
    prefill_tokens: int  # prompt tokens fed (recomputation after preemption included)
    decode_tokens: int  # decode tokens fed
    padding_slots: int  # wasted token slots, measured from the steps
    padding_formula: int  # the same from the arithmetic (static: Σ(P_max − P_r) + Σ(n_max − n_r)
    #                      per batch; continuous: 0)
    prefix_hit_tokens: int  # prompt tokens served from the prefix cache
    preemptions: int  # preemptions, every request
    peak_blocks: int  # most blocks in use at once (prefix cache's included)
    peak_cache_bytes: int  # K and V bytes of those blocks, from the pool tensors
    block_bytes: int  # one block, every layer, K and V
    total_s: Spread  # the whole run, model time (count = repeats)
    throughput_tps: Spread  # answer tokens / total time, per repeat

    @property
    def slots_fed(self) -> int:
        return self.prefill_tokens + self.decode_tokens + self.padding_slots


@dataclass(frozen=True)
class SchedulerRun:
    """One scheduler configuration over the requests: its steps (first repeat), outcomes and
    totals."""

    config: SchedulerConfig
    steps: tuple[ServingStep, ...]  # the first repeat's steps (the tokens are the same in all)
    outcomes: tuple[RequestOutcome, ...]  # one per request, in request order
    totals: RunTotals

    @property
    def all_identical(self) -> bool:
        """Every request chose the tokens of its solo run."""
        return all(o.identical_to_solo for o in self.outcomes)

    @property
    def max_abs_logit_diff(self) -> float | None:
        """The largest |Δlogit| against the solo runs, every request (None: not measured)."""
        gaps = [o.max_abs_logit_diff for o in self.outcomes if o.max_abs_logit_diff is not None]
        return max(gaps) if gaps else None


@dataclass(frozen=True)
class ServingResult:
    """The serving lab's result: every scheduler it ran on the same requests."""

    model: str  # the model's name, as the window shows it
    system: str  # the shared system prompt ("" when none)
    requests: tuple[RequestSpec, ...]
    runs: tuple[SchedulerRun, ...]  # one per scheduler configuration asked for
    repeats: int  # k: each run repeated k times, interleaved; times are medians of k
    greedy: bool  # greedy decoding (else sampled, each request with its own seeded generator)
    bytes_per_token: int  # 2·L·H_kv·d·bytes, every layer
    # How every request chose its tokens (`greedy` above; each request seeds its own).
    sampling: SamplingSettings = field(default_factory=SamplingSettings.greedy_settings)

    @property
    def single_measurement(self) -> bool:
        """Times are single measurements (k = 1), and say so."""
        return self.repeats == 1
