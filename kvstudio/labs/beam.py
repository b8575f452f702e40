"""The beam search lab: beams per step, the rows each reorder copies, and transformers' answer.

Owns `beam_lab`: one `kvstudio.engine.strategies.beam.BeamSearch` run (a cache row per beam,
rows reordered after every step), its `BeamStep` records kept for the window and
the CLI, then the same search by transformers' own ``generate(num_beams=…)`` on
the model converted to a transformers folder (``files/convert.py``), when the hf
extra is installed and the model is ours: `TransformersCheck` says whether the
returned beams (token ids) and their scores agree. A generator that yields
`Progress` and ends with a `BeamLabResult`; it never imports Qt. `run` is the lab as
every front starts it (``kvstudio.labs.registry.BEAM``).
"""

from __future__ import annotations

import math
import tempfile
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvstudio.engine.backends.minimind import LanguageModel, MiniMindBackend
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.strategies.beam import BeamResult, BeamSearch, BeamSettings, BeamStep
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.convert import export_hf
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import Progress, answer_text, check_length, prompt_ids

SCORE_TOLERANCE = (1e-4, 1e-5)  # (absolute, relative): float32 sums of log-probs, two kernels
CHECK_POLL_S = 0.1  # how often the lab says it is still waiting for transformers' search


@dataclass(frozen=True)
class TransformersCheck:
    """transformers' ``generate(num_beams=…)`` on the converted model, against ours."""

    ran: bool  # False: not checked (`note` says why)
    same: bool  # same token ids and scores (within SCORE_TOLERANCE) for every returned beam
    sequences: tuple[tuple[tuple[int, ...], float], ...]  # transformers' (ids, score), best first
    note: str  # why it did not run, or "" when it ran


@dataclass(frozen=True)
class BeamLabResult:
    model: str
    prompt_ids: tuple[int, ...]
    steps: tuple[BeamStep, ...]  # one per step, in order
    search: BeamResult  # the returned hypotheses and the byte totals
    texts: tuple[str, ...]  # each returned hypothesis as a student reads it
    transformers: TransformersCheck

    @property
    def settings(self) -> BeamSettings:
        return self.search.settings

    @property
    def cumulative_reorder_bytes(self) -> tuple[int, ...]:
        """Per step: bytes the dense reorders copied so far (rows moved × bytes per row)."""
        return tuple(_running_sum(s.reorder_bytes for s in self.steps))

    @property
    def cumulative_cow_bytes(self) -> tuple[int, ...]:
        """Per step: bytes a paged cache's copies on write copied so far."""
        return tuple(_running_sum(s.cow_bytes for s in self.steps))


def _running_sum(values: Iterable[int]) -> list[int]:
    total, out = 0, []
    for value in values:
        total += value
        out.append(total)
    return out


def same_sequences(
    ours: Sequence[tuple[Sequence[int], float]], theirs: Sequence[tuple[Sequence[int], float]]
) -> bool:
    """The same ids in the same order, and every score equal within `SCORE_TOLERANCE`."""
    absolute, relative = SCORE_TOLERANCE
    return len(ours) == len(theirs) and all(
        list(a_ids) == list(b_ids) and math.isclose(a, b, rel_tol=relative, abs_tol=absolute)
        for (a_ids, a), (b_ids, b) in zip(ours, theirs, strict=True)
    )


def transformers_check(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    search: BeamResult,
) -> TransformersCheck:
    """transformers' beam search on the same weights: our model converted to a transformers
    folder (a temporary one, as `kvstudio convert` writes it), or a transformers model as
    loaded."""
    from kvstudio.engine.backends.hf import (
        HFBackend,
        require_transformers,
        transformers_beam_search,
    )

    if not isinstance(backend, MiniMindBackend | HFBackend):
        return TransformersCheck(False, False, (), "not checked: an unknown kind of model")
    try:
        require_transformers()
    except ValueError:
        return TransformersCheck(
            False, False, (), "not checked: transformers is not installed (pip install -e '.[hf]')"
        )
    s = search.settings
    options: dict[str, Any] = dict(
        num_beams=s.num_beams,
        length_penalty=s.length_penalty,
        early_stopping=s.early_stopping,
        max_new_tokens=s.max_new_tokens,
        num_return_sequences=s.num_return_sequences,
        eos_token_id=backend.eos_token_id,
    )
    if isinstance(backend, HFBackend):
        theirs = transformers_beam_search(backend.model, list(prompt_ids), **options)
    else:
        with tempfile.TemporaryDirectory(prefix="kvstudio-beam-") as tmp:
            folder = export_hf(backend.model, tokenizer, Path(tmp) / "hf")
            theirs = transformers_beam_search(folder, list(prompt_ids), **options)
    ours = [(h.tokens, h.score) for h in search.sequences]
    found = tuple((tuple(ids), score) for ids, score in theirs)
    return TransformersCheck(True, same_sequences(ours, theirs), found, "")


def _in_background(
    work: Callable[[], TransformersCheck], waiting: Progress
) -> Generator[Progress, None, TransformersCheck]:
    """`work()` on a daemon thread, `waiting` yielded every `CHECK_POLL_S` until it ends.

    transformers' import, the conversion and its ``generate`` are one long call
    with no step to stop at: run here, Cancel (checked between yields) and closing
    the window no longer wait for it (Cancel took 13.2 s). A cancelled check runs on
    to its end unseen; as a daemon thread it never keeps the process alive.
    """
    outcome: list[TransformersCheck | BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # handed to the lab's thread, raised there
            outcome.append(exc)
        finally:
            done.set()

    threading.Thread(target=run, name="kvstudio-beam-check", daemon=True).start()
    while not done.wait(CHECK_POLL_S):
        yield waiting
    found = outcome[0]
    if isinstance(found, BaseException):
        raise found
    return found


def beam_lab(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    settings: BeamSettings,
    *,
    block_size: int = 16,
    check_transformers: bool = True,
) -> Generator[Progress | BeamLabResult, None, None]:
    """Beam search step by step on a dynamic cache, then transformers' check."""
    prompt = list(prompt_ids)
    search = BeamSearch(backend, prompt, settings, cache=CacheSpec("dynamic"),
                        block_size=block_size)
    total = settings.max_new_tokens + (1 if check_transformers else 0)
    steps: list[BeamStep] = []
    for step in search:
        steps.append(step)
        yield Progress("beam", "step", len(steps), total)
    assert search.result is not None  # set when the loop ends
    result = search.result
    if check_transformers:
        waiting = Progress("beam", "transformers", settings.max_new_tokens, total)
        yield waiting
        check = yield from _in_background(
            lambda: transformers_check(backend, tokenizer, prompt, result), waiting)
    else:
        check = TransformersCheck(False, False, (), "not checked")
    yield BeamLabResult(
        model=backend.name,
        prompt_ids=tuple(prompt),
        steps=tuple(steps),
        search=result,
        texts=tuple(answer_text(tokenizer, h.tokens) for h in result.sequences),
        transformers=check,
    )


def run(model: LoadedModel, params: Mapping[str, Any]) -> Iterator[Progress | BeamLabResult]:
    """The lab as every front runs it: the question, K beams returning K answers (or
    ``params["num_return"]``, the command line's ``--return``), N tokens; ``params["raw"]``
    (``--raw``): the question without the chat template."""
    ids = prompt_ids(model, params["prompt"], params.get("raw", False))
    settings = BeamSettings(
        num_beams=params["beams"],
        length_penalty=params["length_penalty"],
        early_stopping=params["early_stopping"],
        max_new_tokens=params["new_tokens"],
        num_return_sequences=params.get("num_return") or params["beams"],
    )
    check_length(model, len(ids) + settings.max_new_tokens)
    return beam_lab(model.backend, model.tokenizer, ids, settings,
                    block_size=params["block_size"], check_transformers=params["transformers"])
