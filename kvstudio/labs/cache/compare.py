"""The compare lab: cached against recompute on one prompt.

Owns `compare_modes` (one greedy run per mode: time per step, time to first
token, tokens fed and cache bytes against the formulas, and whether the two
modes chose the same tokens), `cache_vs_recompute` (the same in a chosen dtype,
fp32, fp16 or bf16, to show the drift 16-bit arithmetic brings),
`repeated_cache_vs_recompute` (interleaved rounds, every timing a median with
its range), `single_mode` (one mode alone, one round: the command line's
``--mode``), `run` (the lab as every front runs it: a preset's P and N, the
notebook's sentence) and `repeated_prefill` (the live run's time to first
token, repeated). Generators that yield `Progress` and end with a frozen
result; it never imports Qt.
"""

from __future__ import annotations

import copy
import statistics
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from kvstudio.engine import formulas
from kvstudio.engine.backends.minimind import LanguageModel, MiniMindBackend
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.cache.layout import CachePlan
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
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import (
    Progress,
    Spread,
    check_fits,
    check_length,
    greedy_stepper,
    in_parts,
    lab_prompt_ids,
    lab_text,
    spread,
    warm_up,
)
from kvstudio.labs.course import CACHE_PRESETS, LECTURE, NOTEBOOK


# ---- compare modes -------------------------------------------------------------------------
@dataclass(frozen=True)
class ModeRun:
    """One mode's greedy run in a comparison: measurements next to their formulas."""

    mode: Mode
    token_ids: tuple[int, ...]  # generated ids (row 0)
    text: str
    tokens_fed: int  # measured: sum of what was passed to forward
    tokens_fed_formula: int  # P + (N − 1) or P·N + N(N − 1)/2
    tokens_fed_per_step: tuple[int, ...]  # measured, one per step
    step_seconds: tuple[float, ...]  # elapsed per step (step 0 = prefill / TTFT)
    total_seconds: float  # sum of step_seconds
    cache_bytes: int  # measured at the end (allocated; 0 in recompute mode)
    cache_used_bytes: int  # measured at the end, bytes holding real tokens
    cache_bytes_formula: int  # used: Σ_l 2·T_l·H_kv·d·bytes (2·L·T·H_kv·d·bytes if alike)
    records: tuple[StepRecord, ...]
    cache_allocated_formula: int = 0  # allocated: the used formula, or the static preallocation
    cache_plan: CachePlan | None = None  # per-layer kinds the formulas used (cached mode)
    cache_pool_bytes: int | None = None  # a paged cache: its pool tensors (None: no pool)

    @property
    def allocated_matches(self) -> bool:
        return self.cache_bytes == self.cache_allocated_formula

    @property
    def used_matches(self) -> bool:
        return self.cache_used_bytes == self.cache_bytes_formula

    @property
    def ttft_seconds(self) -> float:
        """Time to first token: the prefill step."""
        return self.step_seconds[0]

    @property
    def decode_seconds_per_token(self) -> float:
        """The course's ms/token (in s): the median decode step, prefill apart (0 when N = 1)."""
        rest = self.step_seconds[1:]
        return float(statistics.median(rest)) if rest else 0.0


@dataclass(frozen=True)
class CompareResult:
    """Cached vs recompute on the same prompt, greedy in both."""

    model_label: str
    prompt_tokens: int  # P
    new_tokens: int  # N
    cache_spec: CacheSpec
    cached: ModeRun
    recompute: ModeRun
    identical: bool  # the two modes chose the same tokens
    first_divergent_step: int | None  # first step where they differ, if any
    max_abs_logit_diff: tuple[float, ...]  # per step, max |Δlogit| (same context until divergence)

    @property
    def speed_ratio(self) -> float:
        """How many times longer recompute took than cached (total time)."""
        return self.recompute.total_seconds / max(self.cached.total_seconds, 1e-12)

    @property
    def max_logit_diff(self) -> float:
        return max(self.max_abs_logit_diff, default=0.0)


def compare_modes(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    new_tokens: int,
    *,
    cache: CacheSpec | None = None,
    warmup_tokens: int = 4,
    stop_at_eos: bool = False,
    top_n: int = 5,
    seed: int = 0,
) -> Generator[Progress | CompareResult, None, None]:
    """Greedy generation in both modes; yields `Progress` per step, then a `CompareResult`.

    With ``stop_at_eos=False`` (default, like the notebook's ``min_new_tokens``)
    exactly `new_tokens` tokens are generated so the formulas apply. A short
    untimed warm-up runs both modes first so the first measured step is not
    paying for lazy initialisation.
    """
    spec = cache or CacheSpec()
    for mode in MODES:  # positions and memory for the full run, before the warm-up
        check_fits(backend, 1, len(prompt_ids), new_tokens, mode, spec)
    runs, diffs = yield from _greedy_runs(backend, tokenizer, prompt_ids, new_tokens, MODES,
                                          spec, warmup_tokens, stop_at_eos, top_n, seed)
    cached_ids, recompute_ids = runs["cached"].token_ids, runs["recompute"].token_ids
    divergent = next(
        (i for i, (a, b) in enumerate(zip(cached_ids, recompute_ids, strict=False)) if a != b),
        None,
    )
    if divergent is None and len(cached_ids) != len(recompute_ids):
        divergent = min(len(cached_ids), len(recompute_ids))
    yield CompareResult(
        model_label=backend.name,
        prompt_tokens=len(prompt_ids),
        new_tokens=new_tokens,
        cache_spec=spec,
        cached=runs["cached"],
        recompute=runs["recompute"],
        identical=divergent is None,
        first_divergent_step=divergent,
        max_abs_logit_diff=tuple(diffs),
    )


def _greedy_runs(
    backend: LanguageModel, tokenizer: TextTokenizer, prompt_ids: Sequence[int],
    new_tokens: int, modes: Sequence[Mode], spec: CacheSpec, warmup_tokens: int,
    stop_at_eos: bool, top_n: int = 5, seed: int = 0,
) -> Generator[Progress, None, tuple[dict[Mode, ModeRun], list[float]]]:
    """Each of `modes` greedy, `Progress` per step; returns each mode's `ModeRun` and, with
    two modes, every step's max |Δlogit| between them (`compare_modes`, `single_mode`).

    An untimed warm-up of `warmup_tokens` runs every mode first, so the first measured
    step is not paying for lazy initialisation. The modes then advance in lockstep, so
    each step's |Δlogit| is taken while both logits rows exist and only the maximum is
    kept: memory stays one row per mode however long the run (keeping every step's logits
    grew by V floats a step)."""
    warm = min(warmup_tokens, new_tokens)
    total = len(modes) * (warm + new_tokens)
    done = 0

    def make(mode: Mode, n: int) -> Stepper:  # one mode's greedy run of n tokens
        return Stepper(backend, tokenizer, prompt_ids, mode=mode,
                       sampling=SamplingSettings.greedy_settings(seed), max_new_tokens=n,
                       cache=spec, stop_at_eos=stop_at_eos, top_n=top_n)

    for mode in modes:
        if warm:
            for _ in make(mode, warm):
                done += 1
                yield Progress("compare", "warm-up", done, total)
    steppers = {mode: make(mode, new_tokens) for mode in modes}
    diffs: list[float] = []
    while not all(s.finished for s in steppers.values()):
        rows: dict[Mode, torch.Tensor] = {}
        for mode, stepper in steppers.items():
            if stepper.finished:
                continue
            record = stepper.step()
            if stepper.last_logits is not None:  # set by every step
                rows[mode] = stepper.last_logits[0]  # (V,)
            done += 1
            yield Progress("compare", mode, done, total, record)
        if len(rows) == 2:
            diffs.append(float((rows["cached"].float() - rows["recompute"].float()).abs().max()))
    return {mode: _mode_run(backend, stepper, spec) for mode, stepper in steppers.items()}, diffs


def single_mode(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    new_tokens: int,
    mode: Mode,
    *,
    dtype: DType = "float32",
    cache: CacheSpec | None = None,
    warmup_tokens: int = 4,
    stop_at_eos: bool = False,
) -> Generator[Progress | ModeRun, None, None]:
    """One mode alone, greedy, in `dtype`, after an untimed warm-up of `warmup_tokens`:
    `Progress` per step, then its `ModeRun` (one round: every time a single measurement)."""
    model = backend_in_dtype(backend, dtype)
    runs, _ = yield from _greedy_runs(model, tokenizer, prompt_ids, new_tokens, (mode,),
                                      cache or CacheSpec(), warmup_tokens, stop_at_eos)
    yield runs[mode]


def _mode_run(backend: LanguageModel, stepper: Stepper, spec: CacheSpec) -> ModeRun:
    records = tuple(stepper.records)
    steps = len(records)
    prompt = stepper.prompt_len
    fed = tuple(r.tokens_fed for r in records)
    last = records[-1]
    plan = backend.cache_plan(spec) if stepper.mode == "cached" else None
    if plan is not None:
        positions = prompt + steps - 1  # the last token chosen is never fed
        formula_bytes = plan.used_bytes(positions, stepper.batch_size)
        allocated_formula = plan.allocated_bytes(positions, stepper.batch_size)
    else:
        formula_bytes = allocated_formula = 0
    return ModeRun(
        mode=stepper.mode,
        token_ids=tuple(stepper.generated_ids[0]),
        text=stepper.tokenizer.plain_text(stepper.generated_ids[0]),
        tokens_fed=sum(fed),
        tokens_fed_formula=formulas.tokens_fed(stepper.mode, prompt, steps),
        tokens_fed_per_step=fed,
        step_seconds=tuple(r.elapsed_s for r in records),
        total_seconds=sum(r.elapsed_s for r in records),
        cache_bytes=last.cache_allocated_bytes,
        cache_used_bytes=last.cache_used_bytes,
        cache_bytes_formula=formula_bytes,
        records=records,
        cache_allocated_formula=allocated_formula,
        cache_plan=plan,
        cache_pool_bytes=getattr(stepper.cache, "pool_nbytes", None),
    )


_TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


# ---- dtype ---------------------------------------------------------------------------------
def backend_in_dtype(backend: LanguageModel, dtype: DType) -> LanguageModel:
    """The same model with its weights (and so its cache) in `dtype`; a copy if it changes."""
    if dtype not in _TORCH_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}.")
    target = _TORCH_DTYPES[dtype]
    if getattr(backend, "dtype", None) == target:  # a transformers model already in it
        return backend
    if not isinstance(backend, MiniMindBackend):
        raise ValueError(
            "Changing the dtype works for KV Studio's own models; load a MiniMind model or "
            "keep float32."
        )
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
    prompt_text: str | None = None,
    prompt_ids: Sequence[int] | None = None,
    stop_at_eos: bool = False,
) -> Generator[Progress | CompareResult, None, None]:
    """The course lab: greedy on the lab prompt in both modes (`compare_modes`), in `dtype`.

    `prompt_text`: the text cut or repeated to P tokens (default: the long lab text;
    the notebook preset gives the 16-token sentence); `prompt_ids`: the prompt itself
    instead (the command line's)."""
    model = backend_in_dtype(backend, dtype)
    ids = (list(prompt_ids) if prompt_ids is not None
           else lab_prompt_ids(tokenizer, prompt_tokens, prompt_text))
    yield from compare_modes(model, tokenizer, ids, new_tokens, cache=cache,
                             warmup_tokens=warmup_tokens, stop_at_eos=stop_at_eos)


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
    def decode_ratio(self) -> float:
        """Median decode ms/token of recompute over that of cached (step 0, TTFT, apart):
        what the cache saves per generated token, the figure every front states first."""
        cached = self.decode_ms_per_token("cached").median
        return self.decode_ms_per_token("recompute").median / max(cached, 1e-9)

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
    prompt_text: str | None = None,
    prompt_ids: Sequence[int] | None = None,
    stop_at_eos: bool = False,
) -> Generator[Progress | RepeatedCompare, None, None]:
    """`cache_vs_recompute` `repeats` times; progress over all rounds, then the medians."""
    if repeats < 1:
        raise ValueError("Repeat the measurement at least once.")
    model = backend_in_dtype(backend, dtype)  # once: the rounds then reuse it
    parts = [cache_vs_recompute(
        model, tokenizer, prompt_tokens=prompt_tokens, new_tokens=new_tokens, dtype=dtype,
        warmup_tokens=warmup_tokens, cache=cache, prompt_text=prompt_text,
        prompt_ids=prompt_ids, stop_at_eos=stop_at_eos,
    ) for _ in range(repeats)]
    rounds = yield from in_parts(parts, CompareResult,
                                 lambda index, stage: f"{stage} (round {index + 1}/{repeats})")
    yield RepeatedCompare(tuple(rounds))


def preset_lengths(params: Mapping[str, Any]) -> tuple[int, int]:
    """P and N of a run: the preset's where `params` hold the course's (the defaults), so
    ``preset="notebook"`` alone gives the seed notebook's P = 16; a P or N given otherwise
    stays."""
    preset = CACHE_PRESETS[params["preset"]]
    p, n = params["prompt_tokens"], params["new_tokens"]
    return (preset.prompt_tokens if p == LECTURE.prompt_tokens else p,
            preset.new_tokens if n == LECTURE.new_tokens else n)


def run(model: LoadedModel,
        params: Mapping[str, Any]) -> Iterator[Progress | RepeatedCompare | ModeRun]:
    """The lab as every front runs it: `repeated_cache_vs_recompute` with the preset's P and
    N (`preset_lengths`); the notebook preset at its P = 16 is the seed notebook's sentence.

    The command line's own options, when given: ``prompt_ids`` (its prompt, P its length),
    ``cache`` (its ``--cache``; the run must fit it in every mode it runs), ``stop_at_eos``
    and ``mode`` ("both", the default; "cached" or "recompute": that mode alone, one round,
    `single_mode`, ending with its `ModeRun`)."""
    mode = params.get("mode", "both")
    if mode != "both" and mode not in MODES:
        raise ValueError(f"mode must be both, cached or recompute, got {mode!r}.")
    p, n = preset_lengths(params)
    ids = params.get("prompt_ids")
    p = len(ids) if ids is not None else p
    notebook = CACHE_PRESETS[params["preset"]] is NOTEBOOK and p == NOTEBOOK.prompt_tokens
    text = lab_text(short=True) if notebook else None  # the notebook's sentence
    check_length(model, p + n, advice="; lower P or N")
    cache = params.get("cache")
    for each in MODES if mode == "both" else (mode,):
        check_fits(model.backend, 1, p, n, each, cache or CacheSpec())
    if mode != "both":
        return single_mode(
            model.backend, model.tokenizer,
            ids if ids is not None else lab_prompt_ids(model.tokenizer, p, text), n, mode,
            dtype=params["dtype"], cache=cache, warmup_tokens=params["warmup"],
            stop_at_eos=params.get("stop_at_eos", False))
    return repeated_cache_vs_recompute(
        model.backend, model.tokenizer, repeats=params["repeats"], prompt_tokens=p,
        new_tokens=n, dtype=params["dtype"], warmup_tokens=params["warmup"], prompt_text=text,
        cache=cache, prompt_ids=ids, stop_at_eos=params.get("stop_at_eos", False),
    )


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
    for index in range(repeats):
        for mode in MODES:
            record = greedy_stepper(backend, tokenizer, prompt_ids, 1, mode=mode,
                                    cache=cache).step()
            times[mode].append(1000.0 * record.elapsed_s)
            done = index * len(MODES) + MODES.index(mode) + 1
            yield Progress("prefill", mode, done, repeats * len(MODES), record)
    yield PrefillTimes(len(prompt_ids), {mode: tuple(v) for mode, v in times.items()})
