"""What a serving run records: one frozen `ServingStep` per scheduler step.

Owns the step contract the serving lab, its CLI and its window draw:
`RequestStep` (what one request did in one step: its phase, the tokens it fed,
the token it produced, the prefix-cache hit it got, the blocks it holds) and
`ServingStep` (the whole step: every request's `RequestStep`, tokens fed split
into prefill and decode, padding and idle rows, blocks in use, free and held
only by the prefix cache, the cache's bytes and the step's time). Per-request
and whole-run figures (TTFT, inter-token latency, throughput, wasted slots)
are computed from these records by ``kvstudio.labs.serving.lab``.

Also the inputs those records describe: `RequestSpec` (one request as written:
its prompt ids, arrival step and token budget; frozen, what the labs keep; the
engine's mutable `Request` is ``request.py``) and `SchedulerConfig` (the policy
and its knobs).

Names are stable: fields are only ever added (with defaults), never renamed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Policy = Literal["static", "continuous"]
POLICIES: tuple[Policy, ...] = ("static", "continuous")
PrefixMode = Literal["none", "blocks", "radix"]
PREFIX_MODES: tuple[PrefixMode, ...] = ("none", "blocks", "radix")


@dataclass(frozen=True)
class RequestSpec:
    """One request as asked: its prompt ids (system prompt and template included), when it
    arrives, and its token budget. The engine serves it as a `request.Request`."""

    index: int  # its line order in the requests file (0, 1, …)
    text: str  # the line's question, as written (without the @K prefix)
    prompt_ids: tuple[int, ...]  # what the model is fed (ChatML on a chat model)
    arrival: int = 0  # the scheduler step at which it arrives (@K)
    max_new_tokens: int = 32  # its token budget (eos ends it earlier)


@dataclass(frozen=True)
class SchedulerConfig:
    """Which policy runs and its knobs (the CLI's options, the window lab's fields)."""

    policy: Policy = "continuous"
    max_batch: int = 8  # requests running at once (static: rows of one batch)
    chunk: int | None = None  # chunked prefill: tokens per step (prefill + decode); None = off
    block_size: int = 16  # b: tokens per block of the pool
    block_budget: int | None = None  # blocks the pool may hold (the memory budget); None = any
    prefix_cache: PrefixMode = "none"  # none | blocks (vLLM) | radix (SGLang)

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"Unknown policy {self.policy!r}; choose static or continuous.")
        if self.prefix_cache not in PREFIX_MODES:
            raise ValueError(
                f"Unknown prefix cache {self.prefix_cache!r}; choose none, blocks or radix."
            )
        if self.max_batch < 1:
            raise ValueError(f"The batch needs at least one row, got {self.max_batch}.")
        if self.block_size < 1:
            raise ValueError(f"A block holds at least one token, got {self.block_size}.")
        if self.chunk is not None and self.chunk < 1:
            raise ValueError(f"A prefill chunk is at least one token, got {self.chunk}.")
        if self.block_budget is not None and self.block_budget < 1:
            raise ValueError(f"The block budget is at least one block, got {self.block_budget}.")
        if self.chunk is not None and self.policy == "static":
            raise ValueError("Chunked prefill is a continuous-batching policy; drop --chunk "
                             "or use --policy continuous.")

    @property
    def label(self) -> str:
        """e.g. ``continuous · chunk 32 · b 16 · prefix blocks · max batch 8``."""
        parts: list[str] = [self.policy]
        if self.chunk is not None:
            parts.append(f"chunk {self.chunk}")
        parts += [f"b {self.block_size}", f"prefix {self.prefix_cache}",
                  f"max batch {self.max_batch}"]
        if self.block_budget is not None:
            parts.append(f"budget {self.block_budget} blocks")
        return " · ".join(parts)

# What a request did in one step (one cell of the requests × steps timeline):
# - "future": it has not arrived yet (its @K step is later);
# - "waiting": arrived, not running (no room in the batch or the block budget);
# - "prefill": fed a chunk of its prompt (its last chunk also produces the first token);
# - "decode": fed its previous token and produced the next;
# - "idle": held a row of the batch but produced nothing (static batching: a row that
#   finished keeps being fed until the batch's last row finishes);
# - "preempted": was running, lost its blocks this step (recomputed when readmitted);
# - "finished": produced eos or reached its token budget in an earlier step.
Phase = Literal["future", "waiting", "prefill", "decode", "idle", "preempted", "finished"]


@dataclass(frozen=True)
class RequestStep:
    """One request in one scheduler step."""

    request: int  # the request's index (its line order in the requests file)
    phase: Phase
    tokens_fed: int  # real tokens this request fed to the forward this step (0 when none)
    padding_fed: int  # slots fed for it that produce nothing (static: padding, idle rows)
    token: int | None  # the token it produced this step, None when it produced none
    prefix_hit: int  # prompt tokens taken from the prefix cache when admitted this step
    blocks: int  # blocks its block table holds after the step (shared blocks included)
    computed: int  # tokens whose K/V it holds after the step (prompt + answer so far)


@dataclass(frozen=True)
class ServingStep:
    """One scheduler step: one forward over the requests the policy scheduled.

    Token slots: every row of the packed forward is a slot. ``prefill_tokens +
    decode_tokens`` are the useful ones; ``padding_slots`` were fed but produce
    nothing (static batching's padding to the longest prompt, and rows that
    finished but are still fed). Blocks count the pool's budget: ``blocks_used``
    are referenced by a running request or the prefix cache, ``blocks_cached`` of
    those only by the prefix cache (evicted when a request needs room), and
    ``blocks_free = budget − blocks_used`` (for an unlimited pool: the blocks
    allocated so far and not in use).
    """

    step: int  # 0, 1, … (arrival steps @K count in these)
    requests: tuple[RequestStep, ...]  # one per request, in request order
    prefill_tokens: int  # prompt tokens fed (all chunks of this step)
    decode_tokens: int  # decode tokens fed (one per decoding request)
    padding_slots: int  # slots fed that produce nothing
    batch_rows: int  # requests that fed at least one slot (rows of the batch)
    idle_rows: int  # rows of the batch that fed only padding (static: finished rows)
    blocks_used: int  # blocks referenced (by requests or the prefix cache)
    blocks_free: int  # blocks left within the budget
    blocks_cached: int  # blocks held only by the prefix cache (evictable)
    prefix_hit_tokens: int  # prompt tokens served from the prefix cache this step
    cache_bytes: int  # K and V bytes of the blocks in use, every layer (from the pool tensors)
    elapsed_s: float  # wall time of the step: packing the rows, the forward, sampling
    preempted: tuple[int, ...] = ()  # requests preempted this step (blocks freed, recomputed)
    admitted: tuple[int, ...] = ()  # requests admitted this step (first scheduled)
