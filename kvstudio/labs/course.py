"""The course preset: the one named set of settings every view starts from.

Owns `COURSE` (a frozen `CoursePreset`): which embedded model each lab runs
on, the prompt size P and the token budget N of the cache labs, the sampling
knobs, the seed, the samples and temperatures of the sampling labs, and the
course's question. The window (sampling dock, live page, every lab), every
lab function's defaults and every `kvstudio` subcommand read it, so a lecturer
sees the same numbers wherever a lab runs.

Also owns `NOTEBOOK` (the seed notebook's case: P = 16, N = 64, cached and
recompute; ``kvstudio compare --preset notebook``, the cache lab's preset
choice), `settings_line` (the one line a sampling result, table or slide
prints to say which settings made it) and `setting_changes` (what a lab
changed from the course preset, so it says so). It never imports Qt and never
prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from kvstudio.engine.records import SamplingSettings

LabModel = Literal["ko-base", "ko-chat"]
CourseRole = Literal["cache", "paged", "sampling"]  # what kind of lab asks for its model


@dataclass(frozen=True)
class CoursePreset:
    """The course's settings: the cache labs on the base model, sampling on the chat model.

    Labs (a)–(d) of the course (cache vs recompute, cache kinds, length sweep,
    paged and quantized caches: ``kvstudio compare`` / ``sweep``) run on the
    base model with the long lab prompt cut to `prompt_tokens`; the sampling
    labs (``kvstudio sample``, the temperature and top-p labs, *Sample ×N*)
    run on the chat model with `question` in the chat template.
    """

    cache_model: LabModel = "ko-base"  # labs (a)–(d): a text continuation, no template
    chat_model: LabModel = "ko-chat"  # the sampling labs: a chat-tuned model answers
    prompt_tokens: int = 183  # P: kvstudio/resources/prompts/lab_long.txt is exactly 183 tokens
    new_tokens: int = 64  # N: 246 vs 13,728 tokens fed at P = 183
    sampling: SamplingSettings = field(default_factory=SamplingSettings)  # T 0.85, top-p 0.85
    # The live page bans eos until N (transformers' min_new_tokens; the sampling panel's
    # "Stop at eos" box): greedy ko-chat answers `question` in 6 tokens, too few steps for
    # the cache to pay off visibly; run to N = 64 it does (tests/ui/test_live_lesson.py).
    live_stop_at_eos: bool = False
    answer_tokens: int = 32  # a sampled answer's budget (most end with eos well before it)
    samples: int = 30  # samples per temperature
    temperatures: tuple[float, ...] = (0.3, 0.85, 1.5)  # below, at and above the course's T
    # Checked on ko-chat with this preset and seed: 90 everyday answers a lecturer can project.
    question: str = "주말에 뭐 하면 좋을까?"
    window: int = 64  # sliding window W (the cache keeps W − 1): under P + N − 1 = 246
    static_length: int = 512  # a static cache's preallocation: P + N fits
    sweep_vary: Literal["new", "prompt"] = "new"  # the length sweep varies N …
    sweep_lengths: tuple[int, ...] = (8, 16, 32, 64, 128)
    sweep_fixed: int = 64  # … at this P (recompute stays under the cost question's threshold)

    @property
    def temperature(self) -> float:
        return self.sampling.temperature

    @property
    def top_k(self) -> int:
        return self.sampling.top_k

    @property
    def top_p(self) -> float:
        return self.sampling.top_p

    @property
    def repetition_penalty(self) -> float:
        return self.sampling.repetition_penalty

    @property
    def seed(self) -> int:
        return self.sampling.seed

    def model_for_cache(self, kind: str) -> LabModel:
        """The model a cache lab runs on: the base model, but the paged lab's table is a
        sampling run (answers that end at different lengths), so the chat model."""
        return self.chat_model if kind == "paged" else self.cache_model

    def temperatures_text(self) -> str:
        """The temperatures as the window's field and the CLI's option write them."""
        return ", ".join(f"{t:g}" for t in self.temperatures)


@dataclass(frozen=True)
class CachePreset:
    """A prompt size and budget for the cache-vs-recompute lab, both modes."""

    name: str
    prompt_tokens: int
    new_tokens: int


COURSE = CoursePreset()
# What an answer that ended before its first token reads (the window translates it).
EMPTY_ANSWER = "(empty: eos at step 0)"
LECTURE = CachePreset("course", COURSE.prompt_tokens, COURSE.new_tokens)  # P = 183, N = 64
NOTEBOOK = CachePreset("notebook", 16, 64)  # the seed notebook: 16 prompt tokens, cache on/off
CACHE_PRESETS: dict[str, CachePreset] = {p.name: p for p in (LECTURE, NOTEBOOK)}


def top_k_text(top_k: int) -> str:
    return "off" if top_k == 0 else f"{top_k:,}"


def top_p_text(top_p: float) -> str:
    return "off" if top_p >= 1.0 else f"{top_p:g}"


def settings_line(
    settings: SamplingSettings,
    *,
    temperatures: tuple[float, ...] | None = None,
    answer_tokens: int | None = None,
    samples: int | None = None,
    model: str | None = None,
) -> str:
    """The settings that made a sampling result, in one line a table or slide prints.

    e.g. ``ko-chat · T 0.3, 0.85, 1.5 · top-k off · top-p 0.85 · penalty 1 · seed 42 ·
    30 samples · ≤ 32 tokens``.
    """
    if temperatures is not None:
        temperature = "T " + ", ".join(f"{t:g}" for t in temperatures)
    else:
        temperature = "greedy" if settings.greedy else f"T {settings.temperature:g}"
    parts = [model] if model else []
    parts += [
        temperature,
        f"top-k {top_k_text(settings.top_k)}",
        f"top-p {top_p_text(settings.top_p)}",
        f"penalty {settings.repetition_penalty:g}",
        f"seed {settings.seed}",
    ]
    if samples is not None:
        parts.append(f"{samples:,} samples")
    if answer_tokens is not None:
        parts.append(f"≤ {answer_tokens:,} tokens")
    return " · ".join(parts)


def setting_changes(settings: SamplingSettings, course: CoursePreset = COURSE) -> tuple[str, ...]:
    """What `settings` change from the course's sampling knobs, e.g. ``("top-p 1 (course 0.85)",)``.

    A lab that must change a setting (the greedy identity check, a temperature
    sweep) shows these on screen and in its headline.
    """
    base = course.sampling
    changes = []
    if settings.temperature != base.temperature:
        now = "greedy" if settings.greedy else f"T {settings.temperature:g}"
        changes.append(f"{now} (course T {base.temperature:g})")
    if settings.top_k != base.top_k:
        changes.append(f"top-k {top_k_text(settings.top_k)} (course {top_k_text(base.top_k)})")
    if settings.top_p != base.top_p:
        changes.append(f"top-p {top_p_text(settings.top_p)} (course {top_p_text(base.top_p)})")
    if settings.repetition_penalty != base.repetition_penalty:
        changes.append(f"penalty {settings.repetition_penalty:g} "
                       f"(course {base.repetition_penalty:g})")
    if settings.seed != base.seed:
        changes.append(f"seed {settings.seed} (course {base.seed})")
    return tuple(changes)


def lab_model_name(role: CourseRole) -> LabModel:
    """The embedded model the course runs a lab of this kind on (window and notebook alike)."""
    if role == "sampling":
        return COURSE.chat_model
    return COURSE.model_for_cache("paged" if role == "paged" else "dynamic")
