"""What a run will cost before it starts, and when that is worth a question first.

Owns `RunCost` (tokens fed by the course formula and, once a speed has been
measured, the seconds), `generation_cost` and the thresholds past which the
window asks before running (its cost dialog) and the command line refuses
without ``--yes``: one rule for both; and the time model behind the seconds,
`StepTimes` (measured steps) and `StepTimeFit` (time per forward call =
a + b·tokens fed, least squares). Recompute feeds many tokens per call and is
far cheaper per token fed than a cached decode step, whose fixed cost a is
almost all of it: pricing a recompute run at the cached run's seconds per token
fed said "about 83 s" for a run of 7 s. Plain arithmetic on ``formulas``; it
imports no torch, so the window can ask before torch is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kvstudio.engine import formulas
from kvstudio.engine.records import MODES, Mode

COST_WARNING_TOKENS = 250_000  # tokens fed by the formula above which a run asks first
# (the course model feeds ~5,000–15,000 a second on a laptop core: the course defaults,
# five rounds of cache vs recompute included, never ask; a run of minutes does)
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
    seconds: float | None  # estimate from the fitted time per forward call; None = unmeasured
    fit: StepTimeFit | None = None  # the time model the estimate used

    @property
    def large(self) -> bool:
        """Worth a question before it starts (`is_costly`)."""
        return is_costly(self.tokens_fed, self.seconds)


@dataclass(frozen=True)
class StepTimeFit:
    """Seconds per forward call as a function of the tokens it feeds: a + b·tokens."""

    a: float  # fixed cost of a call, s (a cached decode step is nearly all a)
    b: float  # cost per token fed, s
    steps: int  # measured steps the fit is made from
    mode: Mode | None  # the mode those steps ran in; None = both

    def seconds(self, calls: int, tokens_fed: int) -> float:
        """Σ over the calls of a + b·fed = calls·a + b·(tokens fed in all)."""
        return calls * self.a + self.b * tokens_fed


@dataclass
class StepTimes:
    """Measured (tokens fed, seconds) of forward calls, per mode, as sums for least squares."""

    _sums: dict[Mode, list[float]] = field(default_factory=dict)  # n, Σx, Σy, Σx², Σxy

    def add(self, mode: Mode, tokens_fed: int, seconds: float) -> None:
        n, sx, sy, sxx, sxy = self._sums.get(mode, [0.0] * 5)
        x = float(tokens_fed)
        self._sums[mode] = [n + 1, sx + x, sy + seconds, sxx + x * x, sxy + x * seconds]

    def clear(self) -> None:
        self._sums.clear()

    def fit(self, mode: Mode) -> StepTimeFit | None:
        """The fit from `mode`'s steps when they span several sizes, else from every step.

        Every run's prefill is a forward of P tokens, so a cached run alone already
        gives two sizes (P and 1): enough to price a recompute run. None before any step.
        """
        own = self._fit(self._sums.get(mode), mode)
        if own is not None and own.b > 0:
            return own
        both = [self._sums[m] for m in MODES if m in self._sums]
        if not both:
            return None
        return self._fit([sum(column) for column in zip(*both, strict=True)], None)

    @staticmethod
    def _fit(sums: list[float] | None, mode: Mode | None) -> StepTimeFit | None:
        if not sums or sums[0] == 0:
            return None
        n, sx, sy, sxx, sxy = sums
        spread = n * sxx - sx * sx
        if spread <= 1e-9 * max(1.0, n * sxx):  # one size only: all of it per token
            return StepTimeFit(0.0, sy / sx if sx else 0.0, int(n), mode)
        b = (n * sxy - sx * sy) / spread
        a = (sy - b * sx) / n
        if b < 0:  # noise: no measurable cost per token
            return StepTimeFit(sy / n, 0.0, int(n), mode)
        if a < 0:  # no measurable fixed cost: through the origin
            return StepTimeFit(0.0, sxy / sxx, int(n), mode)
        return StepTimeFit(a, b, int(n), mode)


def generation_cost(
    mode: Mode,
    prompt_tokens: int,
    new_tokens: int,
    step_time: StepTimeFit | None = None,
    rows: int = 1,
) -> RunCost:
    """The cost of generating `new_tokens` after `prompt_tokens` in `mode`, for `rows` rows.

    With `step_time` the seconds are its a + b·tokens summed over the N forward
    calls (the rows share each call).
    """
    fed = rows * formulas.tokens_fed(mode, prompt_tokens, new_tokens)
    seconds = None if step_time is None else step_time.seconds(new_tokens, fed)
    return RunCost(mode, prompt_tokens, new_tokens, fed, seconds, step_time)
