"""The temperature lab: one prompt sampled at several temperatures.

Owns `temperature_lab`: `repeated_sampling` in cached mode and, as a check,
in recompute mode with the same seed (the histograms must agree), ending with
a `TemperatureLabResult`; `run` is the lab as every front starts it (the
registry's parameters). Every knob but the temperature is the course
preset's (`COURSE.sampling`: top-k off, top-p 0.85, penalty 1.0) unless the
caller gives its own; the result says which (`settings_line`, `changes`). It
never imports Qt.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.records import MODES, Mode, SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import Progress, check_fits, in_parts, prompt_ids
from kvstudio.labs.course import COURSE, setting_changes
from kvstudio.labs.sampling.sample import SamplingResult, repeated_sampling


# ---- temperature ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TemperatureLabResult:
    """Repeated sampling in cached mode, and the same seed again in recompute mode."""

    cached: SamplingResult
    recompute: SamplingResult | None  # None when the check was skipped

    @property
    def settings_line(self) -> str:
        """The settings that made the result (the chart's and the slide's settings line)."""
        return self.cached.settings_line

    @property
    def changes(self) -> tuple[str, ...]:
        """What the lab changed from the course preset (besides T, which it sweeps)."""
        return setting_changes(replace(self.cached.settings, temperature=COURSE.temperature))

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
    samples: int = COURSE.samples,
    new_tokens: int = COURSE.answer_tokens,
    seed: int = COURSE.seed,
    check_both_modes: bool = True,
    settings: SamplingSettings | None = None,
) -> Generator[Progress | TemperatureLabResult, None, None]:
    """k temperatures × `samples` samples with one seed, then the same in recompute mode.

    `settings` gives top-k, top-p and the penalty (default: the course's); its
    temperature is replaced by each of `temperatures` and its seed by `seed`.
    """
    settings = replace(settings or COURSE.sampling, seed=seed)
    modes: tuple[Mode, ...] = MODES if check_both_modes else ("cached",)
    parts = [repeated_sampling(backend, tokenizer, prompt_ids, temperatures, samples,
                               new_tokens, settings=settings, mode=mode) for mode in modes]
    results = yield from in_parts(parts, SamplingResult,
                                  lambda index, stage: f"{modes[index]} {stage}")
    yield TemperatureLabResult(results[0], results[1] if len(results) > 1 else None)


def sampling(params: Mapping[str, Any]) -> SamplingSettings:
    """The knobs the lab runs with (each temperature replaces the temperature)."""
    return SamplingSettings(COURSE.temperature, params["top_k"], params["top_p"],
                            params["penalty"], params["seed"])


def run(model: LoadedModel,
        params: Mapping[str, Any]) -> Iterator[Progress | TemperatureLabResult]:
    """The lab as every front runs it: the question sampled at each of the temperatures
    (``params["raw"]``, the command line's ``--raw``: without the chat template), once
    the batch of samples fits the model's positions and memory."""
    ids = prompt_ids(model, params["prompt"], params.get("raw", False))
    check_fits(model.backend, params["samples"], len(ids), params["new_tokens"], "cached",
               CacheSpec())
    return temperature_lab(
        model.backend,
        model.tokenizer,
        ids,
        tuple(params["temperatures"]),  # at least one: the registry's check
        samples=params["samples"],
        new_tokens=params["new_tokens"],
        seed=params["seed"],
        check_both_modes=params["both_modes"],
        settings=sampling(params),
    )
