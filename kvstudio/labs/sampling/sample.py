"""The sample lab: many samples of one prompt, and the histogram of their tokens.

Owns `repeated_sampling` (S samples of N tokens with one seed, cached or
recompute) and its records `SamplingResult` and `TemperatureResult`, and what
a student reads of each answer (`answer_text`: cut at the end of the turn, no
role word or template marker, bytes of a cut character as ``<0xEC>``, an empty
answer as `EMPTY_ANSWER`). The knobs start from the course preset
(`kvstudio.labs.course.COURSE`). A generator that yields `Progress` and ends
with a frozen result; it never imports Qt.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Generator, Sequence
from dataclasses import dataclass, replace

from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import Mode, SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.common import Progress, answer_text, check_fits
from kvstudio.labs.course import COURSE, EMPTY_ANSWER, settings_line

__all__ = ["EMPTY_ANSWER", "SamplingResult", "TemperatureResult", "answer_text",
           "repeated_sampling"]


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

    @property
    def settings_line(self) -> str:
        """The settings that made this result, for its table, chart and slide."""
        return settings_line(
            self.settings,
            temperatures=tuple(t.temperature for t in self.temperatures),
            answer_tokens=self.new_tokens,
            samples=self.samples,
            model=self.model_label,
        )


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
    the course's (`COURSE.sampling`: top-k off, top-p 0.85, penalty 1.0, seed 42). Every temperature
    starts from the same seed. Rows that have chosen the same tokens so far
    share one forward row (`Stepper`'s ``share_identical_rows``): at a low
    temperature most samples agree for many steps, and each is computed once.
    """
    if not temperatures:
        raise ValueError("Give at least one temperature, e.g. 0.3,0.7,1.0,1.3.")
    if samples < 1:
        raise ValueError(f"Draw at least one sample per temperature, got {samples}.")
    base = settings or COURSE.sampling
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
        if done < (i + 1) * new_tokens:  # the batch finished early: its remaining steps are done
            done = (i + 1) * new_tokens
            yield Progress("sampling", f"T={temperature:g}", done, total)
        answers = tuple(answer_text(tokenizer, ids) for ids in stepper.generated_ids)
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
