"""What every lab shares: the lab prompt, progress records, and the run checks.

Owns the lab's prompt text (`lab_text`, `lab_prompt_ids`; `lab_prompt`, which
cuts on a character boundary and says so), a typed question's ids (`prompt_ids`,
in the chat template when the model has one), `Progress` (the
small frozen record every lab generator yields while it works), `warm_up`,
`finish` (run a lab generator to its end and return its result), `in_parts` (several
runs as one: progress over the whole, their results), `greedy_stepper`
(the cache labs' measured run), `check_length` (a front's P + N against the model's
positions), `check_fits` (P + N within the model's positions and free memory) and
`Spread` / `spread` (a median with its range, for timings repeated in rounds).

Each lab module (`compare`, `sample`, `sweep`, `temperature`, `cutoff`,
`cache_kinds`, `paged`, `quantized`, `projector`, `chat`, `inspector`, `beam`) has the
name of its window lab and CLI subcommand. It never imports Qt and never prints.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from kvstudio.engine import limits
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import MODES, Mode, SamplingSettings, StepRecord
from kvstudio.engine.small_files import read_text
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.files.resources import PROMPTS_DIR
from kvstudio.labs.course import EMPTY_ANSWER

# The lab's prompt text: cut or repeated to exactly P tokens by `lab_prompt_ids`.
# The shipped kvstudio/resources/prompts/lab_long.txt (exactly 183 tokens in the shipped
# tokenizer) takes precedence; this paragraph is the fallback without it.
LAB_TEXT = (
    "언어 모델은 문장을 한 번에 한 토큰씩 만들어 냅니다. 새 토큰을 하나 만들 때마다 모델은 "
    "앞에 있는 모든 토큰을 바라보며 어텐션을 계산합니다. 이때 앞 토큰들의 키와 값은 이미 "
    "계산한 적이 있으므로, 저장해 두었다가 다시 쓰면 같은 계산을 되풀이하지 않아도 됩니다. "
    "이렇게 저장해 두는 공간을 KV 캐시라고 부릅니다. 캐시가 없으면 토큰이 늘어날수록 "
    "계산량이 제곱으로 커지고, 캐시가 있으면 한 걸음에 한 토큰만 새로 계산합니다. "
    "대신 캐시는 층의 수, 토큰의 수, 키·값 헤드의 수와 헤드 차원에 비례하는 메모리를 씁니다. "
)


LAB_PROMPT_FILE = PROMPTS_DIR / "lab_long.txt"
SHORT_PROMPT_FILE = PROMPTS_DIR / "lab_short.txt"  # 16 tokens


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


def lab_text(short: bool = False) -> str:
    """The lab's long prompt: kvstudio/resources/prompts/lab_long.txt when shipped, else LAB_TEXT.

    `short`: the seed notebook's 16-token sentence (lab_short.txt), else the same fallback.
    """
    path = SHORT_PROMPT_FILE if short else LAB_PROMPT_FILE
    try:
        return read_text(path, MAX_PROMPT_FILE_BYTES, "the lab's prompt text")
    except ValueError:
        return LAB_TEXT


def answer_text(tokenizer: TextTokenizer, ids: Sequence[int]) -> str:
    """Generated ids as a student reads them (`TextTokenizer.answer_text`: cut at the end of
    the turn, no role word or marker, a cut character as its bytes), never blank."""
    return tokenizer.answer_text(ids) or EMPTY_ANSWER


def prompt_ids(model: LoadedModel, text: str, raw: bool = False) -> list[int]:
    """The question as the model sees it: in the chat template when the model has one
    (`raw`: as is, the command line's ``--raw``); ValueError when it is empty."""
    tokenizer: TextTokenizer = model.tokenizer
    if not text.strip():
        raise ValueError("The prompt is empty: type a question for the lab.")
    ids = tokenizer.chat_ids(text) if model.is_chat and not raw else tokenizer.encode(text)
    if not ids:
        raise ValueError("The prompt encodes to no tokens; give some text.")
    return ids


@dataclass(frozen=True)
class LabPrompt:
    """The lab text as P tokens, cut on a character boundary (so maybe fewer than asked)."""

    ids: tuple[int, ...]
    asked: int  # the P asked for

    @property
    def note(self) -> str | None:
        """What the cut did, when it left a token out; None when P came out as asked."""
        if len(self.ids) == self.asked:
            return None
        return (
            f"the lab text is cut to {len(self.ids):,} tokens at a character boundary "
            f"({self.asked:,} asked: token {self.asked:,} holds only part of a character)"
        )


def lab_prompt(
    tokenizer: TextTokenizer, prompt_tokens: int, text: str | None = None
) -> LabPrompt:
    """`lab_prompt_ids`, but never cut inside a character: a split syllable's bytes are left
    out (P − 1 … P − 3 tokens then), and `LabPrompt.note` says so."""
    ids = lab_prompt_ids(tokenizer, prompt_tokens, text)
    whole = max(1, tokenizer.whole_characters(ids))
    return LabPrompt(tuple(ids[:whole]), prompt_tokens)


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

    The first forward pays for lazy set-up (kernel choice, allocator growth); a run's
    TTFT would otherwise include it.
    """
    greedy = SamplingSettings.greedy_settings()
    warm_ids = lab_prompt_ids(tokenizer, 8, prompt_text)
    for mode in modes:
        for _ in Stepper(
            backend, tokenizer, warm_ids, mode=mode, sampling=greedy, max_new_tokens=2
        ):
            pass


def greedy_stepper(
    backend: LanguageModel, tokenizer: TextTokenizer, prompt_ids: Sequence[int],
    new_tokens: int, **changes: Any,
) -> Stepper:
    """Greedy, exactly `new_tokens` tokens (eos banned), no candidates kept: how the cache
    labs measure a run. `changes`: its other `RunSettings` (mode, cache, batch_size)."""
    return Stepper(backend, tokenizer, prompt_ids, sampling=SamplingSettings.greedy_settings(),
                   max_new_tokens=new_tokens, stop_at_eos=False, top_n=0, **changes)


def check_length(model: LoadedModel, needed: int, what: str = "P + N", advice: str = "") -> None:
    """`needed` positions (``what``: P + N) within `model`'s; `advice` ends the message."""
    if needed > model.max_positions:
        raise ValueError(f"{what} = {needed} is more than the model's {model.max_positions} "
                         f"positions{advice}.")


R = TypeVar("R")


def finish(experiment: Iterator[object], result_type: type[R]) -> R:
    """Run an experiment generator to the end and return its result record."""
    last: object = None
    for last in experiment:  # noqa: B007 - only the final item matters
        pass
    if not isinstance(last, result_type):
        raise ValueError(f"The experiment ended without a {result_type.__name__}.")
    return last


def in_parts(
    parts: Sequence[Iterator[object]], result_type: type[R],
    stage: Callable[[int, str], str] = lambda index, stage: stage,
) -> Generator[Progress, None, list[R]]:
    """The lab generators of `parts` run one after the other as one run: their `Progress`
    over the whole (every part counts the same total), its stage named by `stage`
    (the part's index and its own stage); returns each part's result."""
    results: list[R] = []
    for index, part in enumerate(parts):
        for item in part:
            if isinstance(item, result_type):
                results.append(item)
            elif isinstance(item, Progress):
                yield replace(item, stage=stage(index, item.stage),
                              done=index * item.total + item.done, total=len(parts) * item.total)
    return results


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
