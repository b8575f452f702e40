"""One request while the engine serves it: its mutable state, and where it is in its life.

Owns `RequestStatus` (WAITING → RUNNING → FINISHED; a RUNNING request that loses
its blocks to make room is PREEMPTED: it waits again, first in line, and is
recomputed when readmitted) and `Request`, the one object per request that the
scheduler, the KV cache manager, the model runner and the engine all share: its
token ids (prompt, then the output so far), how many of them have K/V in the
pool (``num_computed_tokens``), its block table, its own generator, and what the
labs read afterwards (its prefix hit, preemptions, first-token and finish steps,
the logits that chose each output token when kept). What was asked (prompt ids,
arrival step, token budget) is its frozen `RequestSpec` (``records.py``).

Also `max_logit_gap`: how far two runs of one request moved its logits.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import torch

from kvstudio.engine.serving.records import RequestSpec


class RequestStatus(enum.Enum):
    """Where a request is. One that has not arrived yet is WAITING and not yet handed to
    the scheduler (its phase in the records is "future")."""

    WAITING = "waiting"  # in the queue, never admitted yet
    RUNNING = "running"  # admitted: it holds blocks and is fed every step it fits
    PREEMPTED = "preempted"  # admitted once, then lost its blocks; in the queue again
    FINISHED = "finished"  # produced eos or reached its token budget


@dataclass(eq=False)
class Request:
    """A request as it is served (one per `RequestSpec`, compared by identity)."""

    spec: RequestSpec
    generator: torch.Generator | None  # its own draws (sampling), so batching changes none
    status: RequestStatus = RequestStatus.WAITING
    all_token_ids: list[int] = field(default_factory=list)  # prompt + output so far
    output_token_ids: list[int] = field(default_factory=list)
    num_computed_tokens: int = 0  # tokens whose K/V are in the pool
    block_table: list[int] = field(default_factory=list)  # block ids, in position order
    logits: list[torch.Tensor] = field(default_factory=list)  # (V,) per output token, if kept
    admitted_at: int = -1  # admission order (preemption takes the newest)
    prefill_until: int = 0  # tokens to prefill at its admission (prompt, + output if preempted)
    prefix_hit: int = 0  # prompt tokens its last admission took from the prefix cache
    num_preemptions: int = 0
    first_token_step: int | None = None
    finish_step: int | None = None

    def __post_init__(self) -> None:
        if not self.all_token_ids:
            self.all_token_ids = list(self.spec.prompt_ids)

    # ---- what was asked --------------------------------------------------------------------
    @property
    def request_id(self) -> int:
        """Its index (its line order in the requests file)."""
        return self.spec.index

    @property
    def arrival(self) -> int:
        """The scheduler step at which it arrives."""
        return self.spec.arrival

    @property
    def max_tokens(self) -> int:
        """Its token budget (eos ends it earlier)."""
        return self.spec.max_new_tokens

    # ---- where it is -----------------------------------------------------------------------
    @property
    def num_tokens(self) -> int:
        """Prompt + output so far."""
        return len(self.all_token_ids)

    @property
    def num_tokens_to_compute(self) -> int:
        """Tokens still to feed before it can choose its next token."""
        return self.num_tokens - self.num_computed_tokens

    @property
    def is_finished(self) -> bool:
        return self.status is RequestStatus.FINISHED

    def append_output_token(self, token: int) -> None:
        self.all_token_ids.append(token)
        self.output_token_ids.append(token)

    def check_stop(self, eos: int | None) -> bool:
        """Its last token was eos, or its budget is spent."""
        out = self.output_token_ids
        return bool(out) and (out[-1] == eos or len(out) >= self.max_tokens)


def max_logit_gap(a: Request, b: Request) -> float | None:
    """max |Δlogit| between two runs of one request (both with ``keep_logits``), over the
    output tokens chosen after the same tokens: up to and including the first one where
    their outputs part (later logits follow different histories). None when either run
    kept no logits."""
    if not a.logits or not b.logits:
        return None
    gap = 0.0
    for i, (x, y) in enumerate(zip(a.logits, b.logits, strict=False)):
        gap = max(gap, float((x - y).abs().max()))  # x, y: (V,)
        if a.output_token_ids[i] != b.output_token_ids[i]:
            break
    return gap
