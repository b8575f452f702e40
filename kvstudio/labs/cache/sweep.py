"""The sweep lab: time per token against context length, with fitted curves.

Owns `length_sweep` (one run per (mode, P, N) point: tokens fed, time and
cache bytes against the formulas; `check_longest_fits`, its check and the lab's that
the longest run fits), `median_sweep` (rounds combined by medians)
and `sweep_with_fits` (the sweep, repeated, plus linear and quadratic fits of
ms per token against context length; a fit whose R² is below `MIN_R_SQUARED`,
or a parabola that bends down, is marked unusable) and `run` (the lab as every
front runs it). Generators that yield `Progress` and end with a frozen result;
it never imports Qt.
"""

from __future__ import annotations

import statistics
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from kvstudio.engine import formulas
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.records import MODES, Mode, decode_seconds_per_token
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import (
    Progress,
    check_fits,
    greedy_stepper,
    in_parts,
    lab_prompt_ids,
    warm_up,
)


# ---- length sweep --------------------------------------------------------------------------
@dataclass(frozen=True)
class SweepPoint:
    """One (mode, P, N) run of a sweep."""

    mode: Mode
    prompt_tokens: int
    new_tokens: int
    tokens_fed: int  # measured
    tokens_fed_formula: int
    seconds: float  # sum of step times, prefill included
    ttft_seconds: float
    cache_bytes: int  # measured at the end
    decode_seconds: float = 0.0  # the median decode step: the course's ms/token (prefill apart)

    @property
    def ms_per_token(self) -> float:
        """The course's ms/token: the median decode step (prefill apart, as TTFT)."""
        return 1000.0 * self.decode_seconds


@dataclass(frozen=True)
class SweepResult:
    model_label: str
    vary: Literal["prompt", "new"]  # which length grew
    points: tuple[SweepPoint, ...]

    def series(self, mode: Mode) -> tuple[SweepPoint, ...]:
        return tuple(p for p in self.points if p.mode == mode)


def point_lengths(vary: Literal["prompt", "new"], value: int, fixed: int) -> tuple[int, int]:
    """(P, N) of the sweep point whose varied length is `value`; the other length is `fixed`."""
    return (value, fixed) if vary == "prompt" else (fixed, value)


def check_longest_fits(
    backend: LanguageModel,
    vary: Literal["prompt", "new"],
    values: Sequence[int],
    fixed: int,
    cache: CacheSpec | None,
    modes: Sequence[Mode] = MODES,
) -> None:
    """Refuse a sweep whose longest run (P + N past the model's positions, or more memory
    than is free) could not run, in any of `modes`; no cache spec: the model's own cache."""
    prompt_tokens, new_tokens = point_lengths(vary, max(values), fixed)
    for mode in modes:
        check_fits(backend, 1, prompt_tokens, new_tokens, mode, cache or CacheSpec())


def length_sweep(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    *,
    vary: Literal["prompt", "new"] = "new",
    values: Sequence[int] = (8, 16, 32, 64, 128),
    fixed: int = 64,
    modes: Sequence[Mode] = MODES,
    cache: CacheSpec | None = None,
    prompt_text: str | None = None,
) -> Generator[Progress | SweepResult, None, None]:
    """Time and tokens fed as P (``vary="prompt"``) or N (``vary="new"``) grows.

    The other length is `fixed`. Greedy, exactly N tokens per run (eos ignored).
    """
    if vary not in ("prompt", "new"):
        raise ValueError(f"vary must be 'prompt' or 'new', got {vary!r}.")
    if not values or min(values) < 1:
        raise ValueError("Give positive lengths to sweep, e.g. 8,16,32,64.")
    check_longest_fits(backend, vary, values, fixed, cache, modes)  # before the first run starts
    total = len(values) * len(modes)
    warm_up(backend, tokenizer, modes, prompt_text)
    points = []
    done = 0
    for value in values:
        prompt_tokens, new_tokens = point_lengths(vary, value, fixed)
        prompt_ids = lab_prompt_ids(tokenizer, prompt_tokens, prompt_text)
        for mode in modes:
            records = list(greedy_stepper(backend, tokenizer, prompt_ids, new_tokens,
                                          mode=mode, cache=cache))
            points.append(
                SweepPoint(
                    mode=mode,
                    prompt_tokens=prompt_tokens,
                    new_tokens=new_tokens,
                    tokens_fed=sum(r.tokens_fed for r in records),
                    tokens_fed_formula=formulas.tokens_fed(mode, prompt_tokens, new_tokens),
                    seconds=sum(r.elapsed_s for r in records),
                    ttft_seconds=records[0].elapsed_s,
                    cache_bytes=records[-1].cache_allocated_bytes,
                    decode_seconds=decode_seconds_per_token(records) or 0.0,
                )
            )
            done += 1
            yield Progress("sweep", f"{mode} P={prompt_tokens} N={new_tokens}", done, total)
    yield SweepResult(
        model_label=backend.name, vary=vary, points=tuple(points)
    )


# ---- length sweep --------------------------------------------------------------------------
@dataclass(frozen=True)
class Fit:
    """A least-squares polynomial, highest power first (numpy's order), and its R²."""

    coefficients: tuple[float, ...]
    r_squared: float

    def __call__(self, x: Sequence[float] | np.ndarray) -> np.ndarray:
        return np.polyval(np.asarray(self.coefficients), np.asarray(x, dtype=float))


MIN_R_SQUARED = 0.8  # below this a fitted curve explains too little to be drawn


@dataclass(frozen=True)
class ModeFits:
    mode: Mode
    context: tuple[int, ...]  # P + N of each run
    ms_per_token: tuple[float, ...]  # median decode step per point (median over the rounds)
    linear: Fit
    quadratic: Fit
    ms_low: tuple[float, ...] = ()  # fastest round per point (empty: one round)
    ms_high: tuple[float, ...] = ()  # slowest round per point

    def usable(self, fit: Fit) -> bool:
        """True when the curve means something: R² ≥ MIN_R_SQUARED, and a parabola opens up.

        Flat, noisy timings (the cached mode) give a low R² for any curve; a
        parabola bending down would predict faster tokens for longer contexts.
        """
        if fit.r_squared < MIN_R_SQUARED:
            return False
        return not (fit is self.quadratic and fit.coefficients[0] < 0)


@dataclass(frozen=True)
class SweepLabResult:
    sweep: SweepResult  # times are medians over the rounds
    fits: tuple[ModeFits, ...]
    repeats: int = 1  # rounds each point was measured

    def fits_for(self, mode: Mode) -> ModeFits:
        return next(f for f in self.fits if f.mode == mode)


def fit_polynomial(x: Sequence[float], y: Sequence[float], degree: int) -> Fit:
    """Least squares; with too few points the degree drops to what they determine."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(xs) == 0:
        raise ValueError("Nothing to fit: the sweep produced no points.")
    deg = min(degree, len(set(xs.tolist())) - 1)
    coeffs = np.polyfit(xs, ys, deg) if deg >= 0 else np.array([float(ys.mean())])
    coeffs = np.concatenate([np.zeros(degree - deg), coeffs])  # always degree + 1 numbers
    residual = ys - np.polyval(coeffs, xs)
    spread = float(((ys - ys.mean()) ** 2).sum())
    r2 = 1.0 - float((residual**2).sum()) / spread if spread > 0 else 1.0
    return Fit(tuple(float(c) for c in coeffs), r2)


def sweep_fits(sweep: SweepResult, rounds: Sequence[SweepResult] = ()) -> tuple[ModeFits, ...]:
    """Fits of `sweep` (the medians); `rounds` (every round) give each point's range."""
    out = []
    for mode in MODES:
        points = sweep.series(mode)
        if not points:
            continue
        context = [p.prompt_tokens + p.new_tokens for p in points]
        ms = [p.ms_per_token for p in points]
        per_round = [[p.ms_per_token for p in r.series(mode)] for r in rounds]
        low = tuple(min(v[i] for v in per_round) for i in range(len(ms))) if per_round else ()
        high = tuple(max(v[i] for v in per_round) for i in range(len(ms))) if per_round else ()
        out.append(
            ModeFits(
                mode=mode,
                context=tuple(context),
                ms_per_token=tuple(ms),
                linear=fit_polynomial(context, ms, 1),
                quadratic=fit_polynomial(context, ms, 2),
                ms_low=low,
                ms_high=high,
            )
        )
    return tuple(out)


def median_sweep(rounds: Sequence[SweepResult]) -> SweepResult:
    """One sweep whose times are the medians of the rounds (same points in the same order)."""
    first = rounds[0]
    points = []
    for index, point in enumerate(first.points):
        seconds = statistics.median(r.points[index].seconds for r in rounds)
        ttft = statistics.median(r.points[index].ttft_seconds for r in rounds)
        decode = statistics.median(r.points[index].decode_seconds for r in rounds)
        points.append(replace(point, seconds=seconds, ttft_seconds=ttft, decode_seconds=decode))
    return replace(first, points=tuple(points))


def sweep_with_fits(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    *,
    vary: Literal["prompt", "new"] = "prompt",
    values: Sequence[int] = (16, 32, 64, 128, 256),
    fixed: int = 32,
    repeats: int = 1,
    cache: CacheSpec | None = None,
) -> Generator[Progress | SweepLabResult, None, None]:
    """`length_sweep` `repeats` times, then median ms per token against context with fits.

    ms per token is the course's one definition: the median decode step of a
    run (prefill apart), then the median of that over the rounds. With N = 1
    there is no decode step and the point's ms per token is 0.
    """
    if repeats < 1:
        raise ValueError("Repeat the sweep at least once.")
    rounds = yield from in_parts(
        [length_sweep(backend, tokenizer, vary=vary, values=values, fixed=fixed, cache=cache)
         for _ in range(repeats)], SweepResult)
    sweep = median_sweep(rounds) if repeats > 1 else rounds[0]
    yield SweepLabResult(sweep, sweep_fits(sweep, rounds if repeats > 1 else ()), repeats)


def run(model: LoadedModel, params: Mapping[str, Any]) -> Iterator[Progress | SweepLabResult]:
    """The lab as every front runs it: `sweep_with_fits`, once the longest run fits (its
    positions, and its memory in both modes on ``params["cache"]``, the command line's
    ``--cache``; default: the model's own cache)."""
    values, fixed = params["values"], params["fixed"]
    longest = max(values) + fixed
    if longest > model.max_positions:
        raise ValueError(
            f"The longest run needs {longest} positions but the model has "
            f"{model.max_positions}; use shorter lengths."
        )
    cache = params.get("cache")
    check_longest_fits(model.backend, params["vary"], values, fixed, cache)
    return sweep_with_fits(model.backend, model.tokenizer, vary=params["vary"],
                           values=tuple(values), fixed=fixed, repeats=params["repeats"],
                           cache=cache)
