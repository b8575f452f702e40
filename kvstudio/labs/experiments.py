"""The labs as generators: compare modes, repeated sampling, length sweeps.

Owns the experiments a lecture runs. Each is a generator that yields small
frozen `Progress` records while it works (the window runs it on a worker
thread and draws them; the CLI prints a bar) and yields its frozen result
record last. `finish(generator)` runs one to the end and returns that result.

It measures with `Stepper` and compares against `formulas`; it never imports
Qt and never prints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

import torch

from kvstudio.engine import formulas, limits
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.cache.layout import CachePlan, cache_plan
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import MODES, Mode, SamplingSettings, StepRecord
from kvstudio.engine.small_files import read_text
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import REPO_ROOT

# The lab's prompt text: cut or repeated to exactly P tokens by `lab_prompt_ids`.
# The shipped resources/prompts/lab_long.txt (exactly 183 tokens in the shipped
# tokenizer) takes precedence; this paragraph is the fallback without it.
LAB_TEXT = (
    "언어 모델은 문장을 한 번에 한 토큰씩 만들어 냅니다. 새 토큰을 하나 만들 때마다 모델은 "
    "앞에 있는 모든 토큰을 바라보며 어텐션을 계산합니다. 이때 앞 토큰들의 키와 값은 이미 "
    "계산한 적이 있으므로, 저장해 두었다가 다시 쓰면 같은 계산을 되풀이하지 않아도 됩니다. "
    "이렇게 저장해 두는 공간을 KV 캐시라고 부릅니다. 캐시가 없으면 토큰이 늘어날수록 "
    "계산량이 제곱으로 커지고, 캐시가 있으면 한 걸음에 한 토큰만 새로 계산합니다. "
    "대신 캐시는 층의 수, 토큰의 수, 키·값 헤드의 수와 헤드 차원에 비례하는 메모리를 씁니다. "
)

LAB_PROMPT_FILE = REPO_ROOT / "resources" / "prompts" / "lab_long.txt"
MAX_PROMPT_FILE_BYTES = 1024 * 1024  # the lab's long prompt is about 2 KB


@dataclass(frozen=True)
class Progress:
    """One unit of work done: a generation step, with its record when there is one."""

    experiment: str  # "compare", "sampling" or "sweep"
    stage: str  # what is running now, e.g. "cached" or "T=0.7"
    done: int  # units finished so far
    total: int  # units in the whole experiment
    record: StepRecord | None = None  # the step just measured

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


def lab_text() -> str:
    """The lab's long prompt: resources/prompts/lab_long.txt when shipped, else LAB_TEXT."""
    try:
        return read_text(LAB_PROMPT_FILE, MAX_PROMPT_FILE_BYTES, "the lab's prompt text")
    except ValueError:
        return LAB_TEXT


def lab_prompt_ids(
    tokenizer: TextTokenizer, prompt_tokens: int, text: str | None = None
) -> list[int]:
    """Exactly `prompt_tokens` ids from `text` (default: `lab_text()`), cut or repeated."""
    if text is None:
        text = lab_text()
    if prompt_tokens < 1:
        raise ValueError(f"The prompt needs at least one token, got {prompt_tokens}.")
    ids = tokenizer.encode(text)
    if not ids:
        raise ValueError("The lab text encodes to no tokens; give some text.")
    repeats = -(-prompt_tokens // len(ids))
    return (ids * repeats)[:prompt_tokens]


def warm_up(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    modes: Sequence[Mode] = MODES,
    prompt_text: str | None = None,
) -> None:
    """Untimed: a 2-token run per mode, so the first measured step is not the first forward.

    The first forward pays for lazy set-up (the inference weights, kernel choice,
    allocator growth); a run's TTFT would otherwise include it.
    """
    greedy = SamplingSettings.greedy_settings()
    warm_ids = lab_prompt_ids(tokenizer, 8, prompt_text)
    for mode in modes:
        for _ in Stepper(
            backend, tokenizer, warm_ids, mode=mode, sampling=greedy, max_new_tokens=2
        ):
            pass


R = TypeVar("R")


def finish(experiment: Iterator[object], result_type: type[R]) -> R:
    """Run an experiment generator to the end and return its result record."""
    last: object = None
    for last in experiment:  # noqa: B007 - only the final item matters
        pass
    if not isinstance(last, result_type):
        raise ValueError(f"The experiment ended without a {result_type.__name__}.")
    return last


def check_fits(
    backend: LanguageModel, batch: int, prompt_len: int, new_tokens: int, mode: Mode,
    spec: CacheSpec,
) -> None:
    """P + N within the model's positions and the run within free memory (`limits`)."""
    limits.check_run(
        backend, batch=batch, prompt_len=prompt_len, new_tokens=new_tokens,
        cached=mode == "cached", cache_kind=spec.kind,
        cache_length=spec.max_length if spec.kind == "static" else spec.window,
        block_size=spec.block_size,
    )


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
        """Mean time of the steps after the prefill (0 when N = 1)."""
        rest = self.step_seconds[1:]
        return sum(rest) / len(rest) if rest else 0.0


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
    greedy = SamplingSettings.greedy_settings(seed)
    for mode in MODES:  # positions and memory for the full run, before the warm-up
        check_fits(backend, 1, len(prompt_ids), new_tokens, mode, spec)
    warm = min(warmup_tokens, new_tokens)
    total = 2 * warm + 2 * new_tokens
    done = 0

    def make(mode: Mode, n: int) -> Stepper:
        return Stepper(
            backend,
            tokenizer,
            prompt_ids,
            mode=mode,
            sampling=greedy,
            max_new_tokens=n,
            cache=spec,
            stop_at_eos=stop_at_eos,
            top_n=top_n,
        )

    for mode in MODES:
        if warm:
            for _ in make(mode, warm):
                done += 1
                yield Progress("compare", "warm-up", done, total)

    # Both modes advance in lockstep, so each step's |Δlogit| is taken while both
    # logits rows exist and only the maximum is kept: memory stays one row per mode
    # however long the run (keeping every step's logits grew by V floats a step).
    steppers = {mode: make(mode, new_tokens) for mode in MODES}
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
    runs = {mode: _mode_run(backend, stepper, spec) for mode, stepper in steppers.items()}

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


def _mode_run(backend: LanguageModel, stepper: Stepper, spec: CacheSpec) -> ModeRun:
    records = tuple(stepper.records)
    steps = len(records)
    prompt = stepper.prompt_len
    fed = tuple(r.tokens_fed for r in records)
    last = records[-1]
    plan = cache_plan(backend, spec) if stepper.mode == "cached" else None
    if plan is not None:
        positions = prompt + steps - 1  # the last token chosen is never fed
        formula_bytes = plan.used_bytes(positions, stepper.batch_size)
        allocated_formula = plan.allocated_bytes(positions, stepper.batch_size)
    else:
        formula_bytes = allocated_formula = 0
    return ModeRun(
        mode=stepper.mode,
        token_ids=tuple(stepper.generated_ids[0]),
        text=stepper.text(0),
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
    )


# ---- repeated sampling ---------------------------------------------------------------------
@dataclass(frozen=True)
class TemperatureResult:
    """n samples at one temperature, generated as one batch of n rows."""

    temperature: float
    answers: tuple[str, ...]  # one per sample, in row order
    counts: tuple[tuple[str, int], ...]  # distinct answers, most frequent first
    seconds: float  # wall time of the whole batch (sum of step times)
    steps: int  # generation steps the batch needed

    @property
    def distinct(self) -> int:
        return len(self.counts)


@dataclass(frozen=True)
class SamplingResult:
    """k temperatures × n samples."""

    model_label: str
    prompt_tokens: int
    samples: int  # n per temperature
    new_tokens: int  # budget per sample
    settings: SamplingSettings  # the shared knobs (temperature replaced per row of the table)
    temperatures: tuple[TemperatureResult, ...]

    @property
    def total_seconds(self) -> float:
        return sum(t.seconds for t in self.temperatures)


def repeated_sampling(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    temperatures: Sequence[float],
    samples: int,
    new_tokens: int,
    *,
    settings: SamplingSettings | None = None,
    mode: Mode = "cached",
    cache: CacheSpec | None = None,
    stop_at_eos: bool = True,
    top_n: int = 3,
) -> Generator[Progress | SamplingResult, None, None]:
    """Sample `samples` answers at each temperature (one batch of rows per temperature).

    `settings` holds the other knobs (top-k, top-p, penalty, seed); by default
    top-p and top-k are off so only the temperature varies. Every temperature
    starts from the same seed. Rows that have chosen the same tokens so far
    share one forward row (`Stepper`'s ``share_identical_rows``): at a low
    temperature most samples agree for many steps, and each is computed once.
    """
    if not temperatures:
        raise ValueError("Give at least one temperature, e.g. 0.3,0.7,1.0,1.3.")
    if samples < 1:
        raise ValueError(f"Draw at least one sample per temperature, got {samples}.")
    base = settings or SamplingSettings(temperature=1.0, top_k=0, top_p=1.0)
    for temperature in temperatures:  # every setting is valid before the first batch runs
        replace(base, temperature=float(temperature))
    check_fits(backend, samples, len(prompt_ids), new_tokens, mode, cache or CacheSpec())
    total = len(temperatures) * new_tokens
    done = 0
    results = []
    for i, temperature in enumerate(temperatures):
        stepper = Stepper(
            backend,
            tokenizer,
            prompt_ids,
            mode=mode,
            sampling=replace(base, temperature=float(temperature)),
            max_new_tokens=new_tokens,
            cache=cache,
            batch_size=samples,
            stop_at_eos=stop_at_eos,
            top_n=top_n,
            share_identical_rows=True,
        )
        for record in stepper:
            done += 1
            yield Progress("sampling", f"T={temperature:g}", done, total, record)
        done = (i + 1) * new_tokens  # a batch that finished early skips its remaining steps
        answers = tuple(stepper.texts())
        counts = tuple(Counter(answers).most_common())
        results.append(
            TemperatureResult(
                temperature=float(temperature),
                answers=answers,
                counts=counts,
                seconds=sum(r.elapsed_s for r in stepper.records),
                steps=len(stepper.records),
            )
        )
    yield SamplingResult(
        model_label=backend.name,
        prompt_tokens=len(prompt_ids),
        samples=samples,
        new_tokens=new_tokens,
        settings=base,
        temperatures=tuple(results),
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
    seconds: float  # sum of step times
    ttft_seconds: float
    cache_bytes: int  # measured at the end


@dataclass(frozen=True)
class SweepResult:
    model_label: str
    vary: Literal["prompt", "new"]  # which length grew
    points: tuple[SweepPoint, ...]

    def series(self, mode: Mode) -> tuple[SweepPoint, ...]:
        return tuple(p for p in self.points if p.mode == mode)


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
    greedy = SamplingSettings.greedy_settings()
    longest_p = max(values) if vary == "prompt" else fixed
    longest_n = fixed if vary == "prompt" else max(values)
    for mode in modes:  # the longest run must fit before the first one starts
        check_fits(backend, 1, longest_p, longest_n, mode, cache or CacheSpec())
    total = len(values) * len(modes)
    warm_up(backend, tokenizer, modes, prompt_text)
    points = []
    done = 0
    for value in values:
        prompt_tokens, new_tokens = (value, fixed) if vary == "prompt" else (fixed, value)
        prompt_ids = lab_prompt_ids(tokenizer, prompt_tokens, prompt_text)
        for mode in modes:
            stepper = Stepper(
                backend,
                tokenizer,
                prompt_ids,
                mode=mode,
                sampling=greedy,
                max_new_tokens=new_tokens,
                cache=cache,
                stop_at_eos=False,
                top_n=0,
            )
            records = list(stepper)
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
                )
            )
            done += 1
            yield Progress("sweep", f"{mode} P={prompt_tokens} N={new_tokens}", done, total)
    yield SweepResult(
        model_label=backend.name, vary=vary, points=tuple(points)
    )
