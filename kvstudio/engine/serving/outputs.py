"""What one engine step hands from part to part: the scheduler's plan, the model runner's output.

Owns the two frozen records of a step's inside (the step's record for the labs
is ``records.py``'s `ServingStep`):

- `SchedulerOutput`, the plan `Scheduler.schedule` returns and nothing else
  makes: which requests feed tokens this step and how many each
  (`ScheduledChunk`: a prompt chunk, or one decode token), the padding slots
  static batching adds per row, the requests it admitted (with their prefix
  hits) and the ones it preempted. Its blocks are already taken; the model has
  not run.
- `ModelRunnerOutput`, what `ModelRunner.execute_model` returns: the token each
  request whose chunk reached its last token chose, the logits that chose it
  (when kept) and the step's time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class ScheduledChunk:
    """One request's tokens in a step: token ids [start, start + num_tokens)."""

    request_id: int
    start: int  # its computed tokens when scheduled (the chunk's first position)
    num_tokens: int  # a prompt chunk (prefill), or 1 (decode)
    is_prefill: bool  # part of what it had to prefill at admission (prompt, + output if preempted)


@dataclass(frozen=True)
class SchedulerOutput:
    """One step's plan: who runs, how many tokens each, who joined and who was preempted."""

    step: int
    scheduled: tuple[ScheduledChunk, ...]  # in the packed forward's row order
    padding: Mapping[int, int] = field(default_factory=dict)  # request → blank slots (static)
    admitted: Mapping[int, int] = field(default_factory=dict)  # request → prefix-hit tokens
    preempted: tuple[int, ...] = ()  # requests that lost their blocks this step (in order)

    @property
    def total_padding(self) -> int:
        return sum(self.padding.values())


@dataclass(frozen=True)
class ModelRunnerOutput:
    """The tokens one step chose (request → token, in row order) and what it took."""

    sampled: Mapping[int, int]
    logits: Mapping[int, torch.Tensor]  # request → (V,) that chose its token, if kept
    elapsed_s: float  # packing the rows, the forward and the sampling


EMPTY_OUTPUT = ModelRunnerOutput(sampled={}, logits={}, elapsed_s=0.0)
