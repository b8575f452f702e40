"""How many steps the live plots' x axes span: the run so far plus room, or exactly the run.

Owns `planned_steps` and `store_steps`. A finished run fills its axes (a
10-token answer is not squeezed into the left 15 % of a 64-step budget);
a running one gets room for the next steps, growing in doublings (8, 16,
32 …, never past the budget) so the axes are redrawn a few times per run,
not at every step (axis repaints are the costliest part of a frame).
"""

from __future__ import annotations

from kvstudio.ui.run.store import RunStore, RunTrace

FIRST_SPAN = 8  # steps shown before a run has many: room to watch the first ones arrive


def planned_steps(done: int, budget: int, finished: bool) -> int:
    """Steps the x axis spans for a run with `done` steps out of at most `budget`."""
    if finished:
        return max(done, 1)
    span = FIRST_SPAN
    while span < done + max(2, done // 4):  # keep a quarter (at least 2 steps) free ahead
        span *= 2
    return max(1, min(budget, span)) if budget > 0 else span


def trace_steps(trace: RunTrace) -> int:
    if trace.known_steps:  # a replay: the saved run's length is known from the start
        return trace.known_steps
    return planned_steps(trace.total_steps, trace.info.max_new_tokens, trace.finished)


def store_steps(store: RunStore) -> int:
    """The span for every run on screen (0 when there is none)."""
    return max((trace_steps(t) for t in store.traces()), default=0)
