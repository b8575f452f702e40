"""Frozen records that the engine yields: one per generation step, plus run settings.

Owns the data contract between the engine and everything that draws or saves
it (window, CLI, saved runs). Records hold plain Python values only (no
tensors), so they are cheap to send across threads and to write as JSON.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, NamedTuple

MIN_TEMPERATURE, MAX_TEMPERATURE = 1e-6, 100.0  # besides 0 (greedy); smaller overflows fp32
MIN_PENALTY, MAX_PENALTY = 0.01, 100.0  # repetition penalty; 1.0 = off

Mode = Literal["cached", "recompute"]
Phase = Literal["prefill", "decode"]
MODES: tuple[Mode, ...] = ("cached", "recompute")
DType = Literal["float32", "float16", "bfloat16"]  # weight dtypes a lab can run the model in
DTYPES: tuple[DType, ...] = ("float32", "float16", "bfloat16")
DEFAULT_REPEATS = 5  # rounds per lab timing: one sample of a few ms is mostly noise

# One definition of "ms/token" for every view (window, labs, CLI, slides):
# the median time of one decode step (steps 1 … N−1, one new token each); the
# prefill (step 0) is apart, as TTFT. tokens/s = 1000 ÷ (ms/token).


def check_temperature(t: float) -> float:
    """`t` if it is 0 (greedy) or within MIN … MAX_TEMPERATURE: the one temperature rule
    (every command, the window and the notebook); else ValueError."""
    if t != 0 and not MIN_TEMPERATURE <= t <= MAX_TEMPERATURE:
        raise ValueError(
            f"Temperature must be 0 (greedy) or between {MIN_TEMPERATURE:g} and "
            f"{MAX_TEMPERATURE:g}, got {t:g}: dividing logits by a tinier number "
            "overflows, and a huge one makes every token equally likely."
        )
    return t


@dataclass(frozen=True)
class SamplingSettings:
    """MiniMind's knobs, applied in MiniMind's order: temperature → penalty → top-k → top-p."""

    temperature: float = 0.85  # 0 = greedy (argmax), no division by zero
    top_k: int = 0  # 0 = off
    top_p: float = 0.85  # 1.0 = off; MiniMind's rule keeps the token that first crosses p
    repetition_penalty: float = 1.0  # 1.0 = off; >1 discourages tokens already in the text
    seed: int = 42  # seeds the run's own torch.Generator, never the global RNG

    def __post_init__(self) -> None:
        for name in ("temperature", "top_p", "repetition_penalty"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name} must be a number, got {value!r}.")
            if not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value}.")
        for name in ("top_k", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be a whole number, got {value!r}.")
        check_temperature(self.temperature)
        if self.top_k < 0:
            raise ValueError(f"top-k must be 0 (off) or a positive count, got {self.top_k}.")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top-p must be in (0, 1], got {self.top_p}; use 1.0 to turn it off.")
        if not MIN_PENALTY <= self.repetition_penalty <= MAX_PENALTY:
            raise ValueError(
                f"Repetition penalty must be between {MIN_PENALTY:g} and {MAX_PENALTY:g} "
                f"(1.0 = off), got {self.repetition_penalty:g}."
            )
        if not -(1 << 63) <= self.seed < (1 << 64):
            raise ValueError(f"The seed must fit in 64 bits, got {self.seed}.")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    @classmethod
    def greedy_settings(cls, seed: int = 42) -> SamplingSettings:
        return cls(temperature=0.0, top_k=0, top_p=1.0, repetition_penalty=1.0, seed=seed)


class Candidate(NamedTuple):
    """One of the most likely next tokens at a step (after all filters).

    A NamedTuple (immutable like the frozen records) because the stepper makes
    ten of them per row and step: three times cheaper to build than a dataclass.
    """

    token_id: int
    text: str
    probability: float


@dataclass(frozen=True)
class StepRecord:
    """Everything measured at one call of the stepper. Batch fields have one entry per row."""

    step: int  # 0 = prefill (first token), 1 … = decode
    phase: Phase
    mode: Mode
    token_ids: tuple[int, ...]  # chosen token per row
    token_texts: tuple[str, ...]  # text each chosen token adds, Hangul kept whole (may be "")
    tokens_fed: int  # tokens passed to forward at this step, per row (measured from the input)
    elapsed_s: float  # wall time of forward + sampling (perf_counter, device synchronised)
    cache_layer_bytes: tuple[tuple[int, int], ...]  # (K bytes, V bytes) per layer, from tensors
    cache_allocated_bytes: int  # what the cache holds in memory (static: preallocation)
    cache_used_bytes: int  # bytes holding real tokens
    cache_length: int  # tokens stored in the cache (sliding window: capped at W)
    attention_mask_shape: tuple[int, int]  # (batch, past + new) keys the step's queries saw
    survivors_top_k: tuple[int, ...]  # candidates left after top-k, per row (vocab if off)
    survivors_top_p: tuple[int, ...]  # candidates left after top-p, per row
    chosen_probability: tuple[float, ...]  # probability of the chosen token after filtering
    top_candidates: tuple[tuple[Candidate, ...], ...]  # per row, most likely first
    finished: tuple[bool, ...]  # per row: this row has produced eos (or hit the budget)
    last_logits: tuple[float, ...] | None = field(default=None, repr=False)  # row 0, if kept
    forward_rows: int = 0  # rows fed to forward (rows with one history share one); 0 = unknown

    @property
    def batch_size(self) -> int:
        return len(self.token_ids)

    @property
    def cache_total_bytes(self) -> int:
        return sum(k + v for k, v in self.cache_layer_bytes)

    @property
    def all_finished(self) -> bool:
        return all(self.finished)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["top_candidates"] = [[c._asdict() for c in row] for row in self.top_candidates]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepRecord:
        d = dict(data)
        d["token_ids"] = tuple(d["token_ids"])
        d["token_texts"] = tuple(d["token_texts"])
        d["cache_layer_bytes"] = tuple(tuple(x) for x in d["cache_layer_bytes"])
        d["attention_mask_shape"] = tuple(d["attention_mask_shape"])
        d["survivors_top_k"] = tuple(d["survivors_top_k"])
        d["survivors_top_p"] = tuple(d["survivors_top_p"])
        d["chosen_probability"] = tuple(d["chosen_probability"])
        d["top_candidates"] = tuple(
            tuple(Candidate(**c) for c in row) for row in d["top_candidates"]
        )
        d["finished"] = tuple(d["finished"])
        d.pop("logits_max", None)  # written by earlier versions; nothing read it
        if d.get("last_logits") is not None:
            d["last_logits"] = tuple(d["last_logits"])
        return cls(**d)


def decode_step_seconds(records: Iterable[StepRecord]) -> tuple[float, ...]:
    """The time of every decode step (the prefill, step 0, left out: it is the TTFT)."""
    return tuple(r.elapsed_s for r in records if r.step > 0)


def decode_seconds_per_token(records: Iterable[StepRecord]) -> float | None:
    """The course's ms/token, in seconds: the median decode step (None before one has run).

    The median, not the mean: one step slowed by something else on the machine
    (a garbage collection, another program) does not move it.
    """
    steps = decode_step_seconds(records)
    return float(statistics.median(steps)) if steps else None

