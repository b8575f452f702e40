"""What a run will cost before it starts, and when that is worth a question first.

Owns `RunCost` (tokens fed by the course formula and, once a speed has been
measured, the seconds), `generation_cost` and the thresholds past which the
window asks before running (its cost dialog) and the command line refuses
without ``--yes``: one rule for both. Plain arithmetic on ``formulas``; it
imports no torch, so the window can ask before torch is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvstudio.engine import formulas
from kvstudio.engine.records import Mode

COST_WARNING_TOKENS = 50_000  # tokens fed by the formula above which a run asks first
COST_WARNING_SECONDS = 20.0  # or an estimated time above this


def is_costly(tokens_fed: int, seconds: float | None = None) -> bool:
    """Worth a question before it starts: many tokens fed, or a long estimated time."""
    return tokens_fed >= COST_WARNING_TOKENS or (
        seconds is not None and seconds >= COST_WARNING_SECONDS
    )


@dataclass(frozen=True)
class RunCost:
    """What a run will cost before it starts: tokens fed by the course formula, and time."""

    mode: Mode
    prompt_tokens: int  # P
    new_tokens: int  # N (the budget; eos may end it sooner)
    tokens_fed: int  # P+(N−1) cached, P·N+N(N−1)/2 recompute (per row, times the rows)
    seconds: float | None  # estimate from the measured seconds per token fed; None = unmeasured

    @property
    def large(self) -> bool:
        """Worth a question before it starts (`is_costly`)."""
        return is_costly(self.tokens_fed, self.seconds)


def generation_cost(
    mode: Mode,
    prompt_tokens: int,
    new_tokens: int,
    seconds_per_token: float | None = None,
    rows: int = 1,
) -> RunCost:
    """The cost of generating `new_tokens` after `prompt_tokens` in `mode`, for `rows` rows."""
    fed = rows * formulas.tokens_fed(mode, prompt_tokens, new_tokens)
    seconds = None if seconds_per_token is None else fed * seconds_per_token
    return RunCost(mode, prompt_tokens, new_tokens, fed, seconds)
