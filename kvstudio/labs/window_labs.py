"""The lab panels' experiments that `experiments.py` does not already provide.

Owns, as generators that yield `Progress` (or one record per step) and end
with a frozen result, in the style of ``experiments.py``:

- `cache_vs_recompute`: `compare_modes` on the lab prompt, in a chosen dtype
  (fp32, fp16, bf16) to show the drift that 16-bit arithmetic brings;
  `repeated_cache_vs_recompute` repeats it in interleaved rounds and reports
  every timing as a median with its range (`Spread`); `repeated_prefill`
  does the same for the live run's time to first token;
- `temperature_lab`: `repeated_sampling` in cached mode and, as a check, in
  recompute mode with the same seed (the histograms must agree);
- `distribution_steps`: one `DistributionStep` per generated token, with the
  next-token distribution (after temperature, before the cut-offs) and where
  top-k and top-p cut it;
- `cache_kinds`: dynamic vs static vs sliding-window caches on one prompt;
- `sweep_with_fits`: `length_sweep` (repeated, medians) plus linear and
  quadratic fits of ms per token against context length; a fit whose R² is
  below `MIN_R_SQUARED` (or a parabola that bends down) is marked unusable.

It never imports Qt; the panels in ``kvstudio.ui.labs`` draw what it yields.
"""

from __future__ import annotations

import copy
import statistics
from collections.abc import Generator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import torch

from kvstudio.engine.backends.minimind import LanguageModel, MiniMindBackend
from kvstudio.engine.cache.kv_cache import CACHE_KINDS, CacheKind, CacheSpec
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import (
    DEFAULT_REPEATS,
    DTYPES,
    MODES,
    DType,
    Mode,
    SamplingSettings,
    StepRecord,
)
from kvstudio.engine.sampling import apply_repetition_penalty, presence_mask
from kvstudio.engine.tokenizer import TextTokenizer, TokenTexts
from kvstudio.labs.experiments import (
    CompareResult,
    ModeRun,
    Progress,
    SamplingResult,
    SweepResult,
    compare_modes,
    lab_prompt_ids,
    length_sweep,
    repeated_sampling,
    warm_up,
)

_TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


# ---- dtype ---------------------------------------------------------------------------------
def backend_in_dtype(backend: LanguageModel, dtype: DType) -> LanguageModel:
    """The same model with its weights (and so its cache) in `dtype`; a copy if it changes."""
    if dtype not in _TORCH_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}.")
    if not isinstance(backend, MiniMindBackend):
        raise ValueError(
            "Changing the dtype works for KV Studio's own models; load a MiniMind model or "
            "keep float32."
        )
    target = _TORCH_DTYPES[dtype]
    if next(backend.model.parameters()).dtype == target:
        return backend
    model = copy.deepcopy(backend.model).to(target).eval()
    return MiniMindBackend(model, name=f"{backend.name} ({dtype})")


# ---- cache vs recompute --------------------------------------------------------------------
def cache_vs_recompute(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    *,
    prompt_tokens: int = 183,
    new_tokens: int = 64,
    dtype: DType = "float32",
    warmup_tokens: int = 4,
    cache: CacheSpec | None = None,
) -> Generator[Progress | CompareResult, None, None]:
    """The course lab: greedy on the lab prompt in both modes (`compare_modes`), in `dtype`."""
    model = backend_in_dtype(backend, dtype)
    ids = lab_prompt_ids(tokenizer, prompt_tokens)
    yield from compare_modes(
        model, tokenizer, ids, new_tokens, cache=cache, warmup_tokens=warmup_tokens
    )


# ---- repeated timings ----------------------------------------------------------------------


@dataclass(frozen=True)
class Spread:
    """A repeated measurement: its median and the smallest and largest value."""

    median: float
    low: float
    high: float
    count: int  # how many measurements


def spread(values: Sequence[float]) -> Spread:
    if not values:
        raise ValueError("No measurements to summarise.")
    return Spread(float(statistics.median(values)), float(min(values)), float(max(values)),
                  len(values))


@dataclass(frozen=True)
class RepeatedCompare:
    """Interleaved rounds of `compare_modes` (cached, recompute, cached, …): timing medians.

    Tokens, bytes and Δlogit are the same every round (greedy, same input);
    they come from the first round. Times are summarised over all rounds.
    """

    rounds: tuple[CompareResult, ...]

    @property
    def first(self) -> CompareResult:
        return self.rounds[0]

    def run(self, mode: Mode) -> ModeRun:
        return self.first.cached if mode == "cached" else self.first.recompute

    def _runs(self, mode: Mode) -> list[ModeRun]:
        return [r.cached if mode == "cached" else r.recompute for r in self.rounds]

    def step_ms(self, mode: Mode) -> tuple[Spread, ...]:
        runs = self._runs(mode)
        steps = min(len(r.step_seconds) for r in runs)
        return tuple(spread([1000 * r.step_seconds[i] for r in runs]) for i in range(steps))

    def ttft_ms(self, mode: Mode) -> Spread:
        return spread([1000 * r.ttft_seconds for r in self._runs(mode)])

    def decode_ms_per_token(self, mode: Mode) -> Spread:
        return spread([1000 * r.decode_seconds_per_token for r in self._runs(mode)])

    def total_ms(self, mode: Mode) -> Spread:
        return spread([1000 * r.total_seconds for r in self._runs(mode)])

    @property
    def speed_ratio(self) -> float:
        """Median total time of recompute over median total time of cached."""
        return self.total_ms("recompute").median / max(self.total_ms("cached").median, 1e-9)

    @property
    def speed_ratios(self) -> Spread:
        """The ratio in each round (how much it varies)."""
        return spread([r.speed_ratio for r in self.rounds])


def repeated_cache_vs_recompute(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    *,
    repeats: int = DEFAULT_REPEATS,
    prompt_tokens: int = 183,
    new_tokens: int = 64,
    dtype: DType = "float32",
    warmup_tokens: int = 4,
    cache: CacheSpec | None = None,
) -> Generator[Progress | RepeatedCompare, None, None]:
    """`cache_vs_recompute` `repeats` times; progress over all rounds, then the medians."""
    if repeats < 1:
        raise ValueError("Repeat the measurement at least once.")
    rounds: list[CompareResult] = []
    model = backend_in_dtype(backend, dtype)  # once: the rounds then reuse it
    for index in range(repeats):
        for item in cache_vs_recompute(
            model, tokenizer, prompt_tokens=prompt_tokens, new_tokens=new_tokens,
            dtype=dtype, warmup_tokens=warmup_tokens, cache=cache,
        ):
            if isinstance(item, CompareResult):
                rounds.append(item)
            else:
                yield replace(item, stage=f"{item.stage} (round {index + 1}/{repeats})",
                              done=index * item.total + item.done, total=repeats * item.total)
    yield RepeatedCompare(tuple(rounds))


@dataclass(frozen=True)
class PrefillTimes:
    """Time to first token of one prompt, measured `rounds` times per mode (interleaved)."""

    prompt_tokens: int
    ms: dict[Mode, tuple[float, ...]]  # every round's TTFT, per mode

    def ttft_ms(self, mode: Mode) -> Spread:
        return spread(self.ms[mode])


def repeated_prefill(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    *,
    repeats: int = DEFAULT_REPEATS,
    cache: CacheSpec | None = None,
) -> Generator[Progress | PrefillTimes, None, None]:
    """The live run's TTFT, `repeats` times in each mode (cached, recompute, cached, …).

    The first forward of a run is the prefill in both modes, so the two should
    agree; one sample of a few ms is mostly noise, the median is not.
    """
    if repeats < 1:
        raise ValueError("Repeat the measurement at least once.")
    warm_up(backend, tokenizer, MODES)
    times: dict[Mode, list[float]] = {mode: [] for mode in MODES}
    greedy = SamplingSettings.greedy_settings()
    for index in range(repeats):
        for mode in MODES:
            stepper = Stepper(backend, tokenizer, list(prompt_ids), mode=mode, sampling=greedy,
                              max_new_tokens=1, cache=cache, stop_at_eos=False, top_n=0)
            record = stepper.step()
            times[mode].append(1000.0 * record.elapsed_s)
            done = index * len(MODES) + MODES.index(mode) + 1
            yield Progress("prefill", mode, done, repeats * len(MODES), record)
    yield PrefillTimes(len(prompt_ids), {mode: tuple(v) for mode, v in times.items()})


# ---- temperature ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TemperatureLabResult:
    """Repeated sampling in cached mode, and the same seed again in recompute mode."""

    cached: SamplingResult
    recompute: SamplingResult | None  # None when the check was skipped

    @property
    def same_in_both_modes(self) -> bool | None:
        """Same seed → same answers per temperature in both modes (None: not checked)."""
        if self.recompute is None:
            return None
        return all(
            a.answers == b.answers
            for a, b in zip(self.cached.temperatures, self.recompute.temperatures, strict=True)
        )

    @property
    def same_answers_count(self) -> tuple[int, int] | None:
        """(samples whose answer is the same in both modes, all samples); None: not checked.

        Cached and recompute logits differ by float rounding (about 1e-5 in fp32: a
        one-row product rounds differently from a many-row one), so a draw that sits
        right at a boundary of the cumulative distribution can tip the other way.
        """
        if self.recompute is None:
            return None
        same = total = 0
        for a, b in zip(self.cached.temperatures, self.recompute.temperatures, strict=True):
            same += sum(x == y for x, y in zip(a.answers, b.answers, strict=True))
            total += len(a.answers)
        return same, total


def temperature_lab(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    temperatures: Sequence[float],
    *,
    samples: int = 30,
    new_tokens: int = 16,
    seed: int = 42,
    check_both_modes: bool = True,
) -> Generator[Progress | TemperatureLabResult, None, None]:
    """k temperatures × `samples` samples with one seed, then the same in recompute mode."""
    settings = SamplingSettings(temperature=1.0, top_k=0, top_p=1.0, seed=seed)
    modes: tuple[Mode, ...] = MODES if check_both_modes else ("cached",)
    per_mode = len(temperatures) * new_tokens
    results: dict[Mode, SamplingResult] = {}
    for index, mode in enumerate(modes):
        for item in repeated_sampling(
            backend,
            tokenizer,
            prompt_ids,
            temperatures,
            samples,
            new_tokens,
            settings=settings,
            mode=mode,
        ):
            if isinstance(item, SamplingResult):
                results[mode] = item
            else:
                yield replace(
                    item,
                    stage=f"{mode} {item.stage}",
                    done=index * per_mode + item.done,
                    total=len(modes) * per_mode,
                )
    yield TemperatureLabResult(results["cached"], results.get("recompute"))


# ---- top-k / top-p -------------------------------------------------------------------------
@dataclass(frozen=True)
class DistributionStep:
    """The next-token distribution at one step and where the filters cut it."""

    record: StepRecord  # the stepper's record of this step
    token_ids: tuple[int, ...]  # the `bars` most likely tokens, most likely first
    token_texts: tuple[str, ...]
    probabilities: tuple[float, ...]  # after temperature and penalty, before top-k/top-p
    top_k_cut: int | None  # bars left of this index survive top-k (None: off / beyond bars)
    top_p_cut: int  # bars left of this index survive top-k and top-p
    chosen_rank: int | None  # index of the chosen token among the bars (None: not shown)
    top_k_mass: float = 1.0  # probability of the top-k survivors before renormalising

    def after_top_k(self) -> tuple[float, ...]:
        """The bars' probabilities as top-p sees them: renormalised over the top-k survivors.

        Bars cut by top-k get 0. Their running sum is the cumulative mass that
        top-p compares with p.
        """
        k = self.top_k_cut if self.top_k_cut is not None else len(self.probabilities)
        mass = max(self.top_k_mass, 1e-12)
        return tuple(p / mass if i < k else 0.0 for i, p in enumerate(self.probabilities))

    def kept_mass(self) -> float:
        """The renormalised probability of the tokens top-p keeps (≥ p by its definition)."""
        return float(sum(self.after_top_k()[: self.top_p_cut]))

    @property
    def step(self) -> int:
        return self.record.step


@dataclass(frozen=True)
class DistributionRun:
    """Survivors per step over the whole run."""

    settings: SamplingSettings
    survivors_top_k: tuple[int, ...]
    survivors_top_p: tuple[int, ...]
    text: str


def distribution_steps(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    settings: SamplingSettings,
    *,
    new_tokens: int = 32,
    bars: int = 20,
) -> Generator[DistributionStep | DistributionRun, None, None]:
    """Step a sampled run; yield the distribution of each step, then the survivor counts.

    The distribution shown is what top-k and top-p see: softmax of the logits
    divided by the temperature (1 when greedy) after the repetition penalty.
    """
    stepper = Stepper(
        backend,
        tokenizer,
        prompt_ids,
        sampling=settings,
        max_new_tokens=new_tokens,
        stop_at_eos=True,
        top_n=bars,
    )
    texts = TokenTexts(tokenizer)
    history = list(prompt_ids)
    while not stepper.finished:
        record = stepper.step()
        logits = stepper.last_logits
        if logits is None:  # every step sets it; keeps mypy and a future backend honest
            raise ValueError("The stepper did not report logits; cannot draw the distribution.")
        with torch.inference_mode():
            x = logits[:1].float()  # (1, V)
            if settings.temperature > 0:
                x = x / settings.temperature
            if settings.repetition_penalty != 1.0:
                seen = presence_mask(torch.tensor([history], device=x.device), x.shape[-1])
                x = apply_repetition_penalty(x, seen, settings.repetition_penalty)
            full = torch.softmax(x, dim=-1)[0]  # (V,)
            k = record.survivors_top_k[0]
            top_k_mass = float(torch.topk(full, k).values.sum()) if 0 < k < full.shape[0] else 1.0
            probs, ids = torch.topk(full, min(bars, x.shape[-1]))
        id_list = [int(i) for i in ids.tolist()]
        chosen = record.token_ids[0]
        yield DistributionStep(
            record=record,
            token_ids=tuple(id_list),
            token_texts=tuple(texts(i) for i in id_list),
            probabilities=tuple(float(p) for p in probs.tolist()),
            top_k_cut=k if settings.top_k > 0 and k < len(id_list) else None,
            top_p_cut=min(record.survivors_top_p[0], len(id_list)),
            chosen_rank=id_list.index(chosen) if chosen in id_list else None,
            top_k_mass=top_k_mass if settings.top_k > 0 else 1.0,
        )
        history.append(chosen)
    records = stepper.records
    yield DistributionRun(
        settings=settings,
        survivors_top_k=tuple(r.survivors_top_k[0] for r in records),
        survivors_top_p=tuple(r.survivors_top_p[0] for r in records),
        text=stepper.text(0),
    )


# ---- cache kinds ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CacheKindRun:
    """One cache kind's greedy run: memory and mask per step."""

    kind: CacheKind
    spec: CacheSpec
    allocated_bytes: tuple[int, ...]  # per step
    used_bytes: tuple[int, ...]  # per step
    cache_length: tuple[int, ...]  # tokens stored after each step
    mask_shapes: tuple[tuple[int, int], ...]  # (batch, keys seen) per step
    token_ids: tuple[int, ...]
    text: str


@dataclass(frozen=True)
class CacheKindsResult:
    prompt_tokens: int
    new_tokens: int
    window: int
    runs: tuple[CacheKindRun, ...]  # dynamic, static, sliding

    def run(self, kind: CacheKind) -> CacheKindRun:
        return next(r for r in self.runs if r.kind == kind)

    @property
    def window_covers_context(self) -> bool:
        """Every query sees the whole context: W ≥ P + N − 1 keys (W counts the query itself)."""
        return self.window >= self.prompt_tokens + self.new_tokens - 1

    def identical_to_dynamic(self, kind: CacheKind) -> bool:
        return self.run(kind).token_ids == self.run("dynamic").token_ids

    def first_divergent_step(self, kind: CacheKind) -> int | None:
        a, b = self.run(kind).token_ids, self.run("dynamic").token_ids
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)


def cache_kinds(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    *,
    new_tokens: int = 32,
    window: int = 64,
    static_length: int | None = None,
) -> Generator[Progress | CacheKindsResult, None, None]:
    """Greedy, cached, the same prompt with each cache kind; exactly `new_tokens` tokens."""
    needed = len(prompt_ids) + new_tokens
    specs = {
        "dynamic": CacheSpec("dynamic"),
        "static": CacheSpec("static", max_length=static_length or needed),
        "sliding": CacheSpec("sliding", window=window),
    }
    greedy = SamplingSettings.greedy_settings()
    total = len(CACHE_KINDS) * new_tokens
    done = 0
    runs = []
    for kind in CACHE_KINDS:
        stepper = Stepper(
            backend,
            tokenizer,
            prompt_ids,
            mode="cached",
            sampling=greedy,
            max_new_tokens=new_tokens,
            cache=specs[kind],
            stop_at_eos=False,
            top_n=0,
        )
        for record in stepper:
            done += 1
            yield Progress("cache-kinds", kind, done, total, record)
        recs = stepper.records
        runs.append(
            CacheKindRun(
                kind=kind,
                spec=specs[kind],
                allocated_bytes=tuple(r.cache_allocated_bytes for r in recs),
                used_bytes=tuple(r.cache_used_bytes for r in recs),
                cache_length=tuple(r.cache_length for r in recs),
                mask_shapes=tuple(r.attention_mask_shape for r in recs),
                token_ids=tuple(stepper.generated_ids[0]),
                text=stepper.text(0),
            )
        )
    yield CacheKindsResult(len(prompt_ids), new_tokens, window, tuple(runs))


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
    ms_per_token: tuple[float, ...]  # total time / N (median over the rounds)
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
        ms = [1000.0 * p.seconds / p.new_tokens for p in points]
        per_round = [[1000.0 * p.seconds / p.new_tokens for p in r.series(mode)] for r in rounds]
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
        points.append(replace(point, seconds=seconds, ttft_seconds=ttft))
    return replace(first, points=tuple(points))


def sweep_with_fits(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    *,
    vary: Literal["prompt", "new"] = "prompt",
    values: Sequence[int] = (16, 32, 64, 128, 256),
    fixed: int = 32,
    repeats: int = 1,
) -> Generator[Progress | SweepLabResult, None, None]:
    """`length_sweep` `repeats` times, then median ms per token against context with fits."""
    if repeats < 1:
        raise ValueError("Repeat the sweep at least once.")
    rounds: list[SweepResult] = []
    for index in range(repeats):
        for item in length_sweep(backend, tokenizer, vary=vary, values=values, fixed=fixed):
            if isinstance(item, SweepResult):
                rounds.append(item)
            else:
                yield replace(item, done=index * item.total + item.done,
                              total=repeats * item.total)
    sweep = median_sweep(rounds) if repeats > 1 else rounds[0]
    yield SweepLabResult(sweep, sweep_fits(sweep, rounds if repeats > 1 else ()), repeats)
