"""The speculative-decoding lab: a draft proposes k tokens, the target checks them in one forward.

Owns `speculative_lab`: for every draft kind (the shipped draft model
``ko-draft`` and prompt lookup) and every k, one speculative run of the same
prompt, recorded round by round (`SpecRound`: drafted, accepted, the target's
correction or bonus token, rows appended to and cropped from each cache, both
caches' lengths), plus plain decoding of the same prompt as the reference;
then the totals: target forward calls per generated token, the measured
acceptance rate α, tokens per verify round measured against the formula
(1 − α^(k+1)) / (1 − α), and wall time against plain decoding (the median of
interleaved repeats, `Spread`). Greedy runs are compared token for token with
plain greedy decoding.

Also owns `load_draft` (the draft model folder, checked against the target's
vocabulary) and `run`, the lab as every front starts it
(``kvstudio.labs.registry.SPECULATIVE``): ko-draft where it fits, else prompt
lookup only. A generator that yields `Progress` and ends with a frozen
`SpeculativeLabResult`; it never imports Qt. The engine is
``kvstudio.engine.strategies.speculative``.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import torch

from kvstudio.engine.backends.minimind import LanguageModel, MiniMindBackend
from kvstudio.engine.generate import Stepper
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.sampling import new_generator
from kvstudio.engine.strategies.drafters import (
    DRAFT_KINDS,
    Drafter,
    DraftKind,
    ModelDrafter,
    PromptLookupDrafter,
)
from kvstudio.engine.strategies.speculative import (
    MAX_DRAFT_TOKENS,
    SpecRound,
    SpeculativeRun,
    expected_tokens_per_call,
)
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import MODELS_DIR, load_model_folder
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import Progress, Spread, answer_text, check_length, spread
from kvstudio.labs.common import prompt_ids as question_ids
from kvstudio.labs.course import COURSE

DRAFT_MODEL = "ko-draft"  # kvstudio/resources/models/ko-draft: 1 layer, trained for ko-chat
DEFAULT_KS: tuple[int, ...] = (1, 2, 4, 8)
DEFAULT_NEW_TOKENS = 64
DEFAULT_REPEATS = 3  # interleaved timing repeats (plain, then every kind × k, per repeat)


def load_draft(path: str | Path | None, target: LanguageModel) -> MiniMindLM:
    """The draft model in `path` (default: the shipped ko-draft), on the target's vocabulary."""
    folder = Path(path) if path is not None else MODELS_DIR / DRAFT_MODEL
    if path is None and not folder.is_dir():
        raise ValueError(
            f"The draft model {DRAFT_MODEL} is not shipped in {MODELS_DIR}; give a draft model "
            "folder, or use prompt lookup (no second model)."
        )
    loaded = load_model_folder(folder)
    if loaded.config.vocab_size != target.vocab_size:
        raise ValueError(
            f"The draft in {folder} has {loaded.config.vocab_size} tokens but the target has "
            f"{target.vocab_size}; a draft must use the target's tokenizer."
        )
    return loaded.model.eval()


def shipped_draft(target: LanguageModel) -> tuple[MiniMindLM | None, str]:
    """ko-draft when it is shipped and fits the target, else None and why (the window then
    runs prompt lookup only and says so)."""
    try:
        return load_draft(None, target), ""
    except ValueError as exc:
        return None, str(exc)


def target_model(backend: LanguageModel) -> MiniMindLM:
    """The MiniMind model behind `backend` (speculative decoding runs our own model only)."""
    if not isinstance(backend, MiniMindBackend):
        raise ValueError(
            "Speculative decoding runs on KV Studio's own MiniMind models (ko-chat, ko-base, "
            "a model folder or .pth); a transformers folder is not supported here."
        )
    return backend.model


# ---- results --------------------------------------------------------------------------------
@dataclass(frozen=True)
class SpecRunResult:
    """One draft kind at one k: its rounds, its tokens and its totals."""

    draft_kind: DraftKind
    k: int
    rounds: tuple[SpecRound, ...]  # round 0 is the prefill
    token_ids: tuple[int, ...]
    text: str
    identical_to_plain: bool  # the same tokens as plain decoding (greedy: must be True)
    seconds: Spread  # wall time of the whole run, over the interleaved repeats

    @property
    def verify_rounds(self) -> tuple[SpecRound, ...]:
        return self.rounds[1:]

    @property
    def target_calls(self) -> int:
        return self.rounds[-1].target_calls

    @property
    def generated(self) -> int:
        return len(self.token_ids)

    @property
    def drafted(self) -> int:
        return sum(len(r.drafted) for r in self.rounds)

    @property
    def accepted(self) -> int:
        return sum(r.accepted for r in self.rounds)

    @property
    def verified(self) -> int:
        """Drafts the target judged: the accepted ones and each round's first rejected one."""
        return sum(r.verified for r in self.rounds)

    @property
    def alpha(self) -> float:
        """Measured acceptance rate: accepted ÷ judged (drafts after a rejection are never
        judged). The per-token α of Leviathan et al.'s formula."""
        return self.accepted / self.verified if self.verified else 0.0

    @property
    def calls_per_token(self) -> float:
        """Target forward calls per generated token (plain decoding: 1.0)."""
        return self.target_calls / self.generated if self.generated else 0.0

    @property
    def tokens_per_round(self) -> float:
        """Tokens committed per verify round (one target call each), measured."""
        rounds = self.verify_rounds
        return sum(len(r.committed) for r in rounds) / len(rounds) if rounds else 0.0

    @property
    def expected_tokens_per_round(self) -> float:
        """(1 − α^(m+1)) / (1 − α) at the measured α, averaged over the verify rounds with
        each round's own number of drafts m: k, except where prompt lookup found fewer
        (often none) or the budget's end left room for fewer."""
        rounds = self.verify_rounds
        if not rounds:
            return 0.0
        return sum(expected_tokens_per_call(self.alpha, len(r.drafted)) for r in rounds) / len(
            rounds
        )

    @property
    def formula_at_k(self) -> float:
        """(1 − α^(k+1)) / (1 − α) with the nominal k in every round (the textbook line)."""
        return expected_tokens_per_call(self.alpha, self.k)

    @property
    def mean_drafted(self) -> float:
        """Drafts per verify round (k for the draft model; less for prompt lookup)."""
        rounds = self.verify_rounds
        return sum(len(r.drafted) for r in rounds) / len(rounds) if rounds else 0.0

    @property
    def draft_forwards(self) -> int:
        return sum(r.draft_forwards for r in self.rounds)


@dataclass(frozen=True)
class SpeculativeLabResult:
    """Plain decoding and every kind × k run of one prompt."""

    target_label: str
    draft_label: str  # the draft model's folder name ("" without one)
    prompt_tokens: int
    new_tokens: int
    sampling: SamplingSettings
    stop_at_eos: bool
    plain_ids: tuple[int, ...]
    plain_text: str
    plain_seconds: Spread
    runs: tuple[SpecRunResult, ...]
    draft_note: str = ""  # why the draft model did not run, when it did not

    @property
    def greedy(self) -> bool:
        return self.sampling.greedy

    def run(self, kind: str, k: int) -> SpecRunResult:
        return next(r for r in self.runs if r.draft_kind == kind and r.k == k)

    @property
    def kinds(self) -> tuple[DraftKind, ...]:
        return tuple(dict.fromkeys(r.draft_kind for r in self.runs))

    @property
    def ks(self) -> tuple[int, ...]:
        return tuple(sorted({r.k for r in self.runs}))

    def speedup(self, run: SpecRunResult) -> float:
        """Plain decoding's median wall time ÷ this run's."""
        return self.plain_seconds.median / run.seconds.median if run.seconds.median else 0.0

    @property
    def all_identical(self) -> bool:
        return all(r.identical_to_plain for r in self.runs)


# ---- the lab --------------------------------------------------------------------------------
def speculative_lab(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    *,
    draft: MiniMindLM | None,
    draft_label: str = DRAFT_MODEL,
    ks: Sequence[int] = DEFAULT_KS,
    kinds: Sequence[DraftKind] = DRAFT_KINDS,
    new_tokens: int = DEFAULT_NEW_TOKENS,
    sampling: SamplingSettings | None = None,
    stop_at_eos: bool = False,
    repeats: int = DEFAULT_REPEATS,
    draft_note: str = "",
) -> Generator[Progress | SpeculativeLabResult, None, None]:
    """Plain decoding and speculative decoding for every kind × k, `repeats` times interleaved.

    `sampling` defaults to greedy (the identity check); with a temperature the
    speculative runs keep the target's distribution but draw other numbers than
    plain decoding, so their tokens differ from it by chance, not by error.
    ``stop_at_eos=False`` (the default, as the cache labs) bans eos so every run
    makes exactly `new_tokens` tokens. An untimed 2-token run of each goes first.
    """
    target = target_model(backend)
    kinds = tuple(dict.fromkeys(kinds))
    for kind in kinds:
        if kind not in DRAFT_KINDS:
            raise ValueError(f"Unknown draft kind {kind!r}; choose {' or '.join(DRAFT_KINDS)}.")
    if "model" in kinds and draft is None:
        raise ValueError("The draft-model kind needs a draft model (ko-draft or a folder).")
    if not kinds or not ks:
        raise ValueError("Give at least one draft kind and one k.")
    for k in ks:
        if not 1 <= k <= MAX_DRAFT_TOKENS:
            raise ValueError(f"k must be 1 to {MAX_DRAFT_TOKENS}, got {k}.")
    if repeats < 1:
        raise ValueError(f"Time at least one repeat, got {repeats}.")
    if len(prompt_ids) + new_tokens + max(ks) > target.max_positions:
        raise ValueError(
            f"P + N + k = {len(prompt_ids) + new_tokens + max(ks):,} exceeds the model's "
            f"{target.max_positions:,} positions; use a shorter prompt or fewer tokens."
        )
    settings = sampling or SamplingSettings.greedy_settings()
    configs = [(kind, k) for kind in kinds for k in sorted(set(ks))]
    total = repeats * (1 + len(configs))
    done = 0
    plain_times: list[float] = []
    times: dict[tuple[str, int], list[float]] = {c: [] for c in configs}
    recorded: dict[tuple[str, int], tuple[tuple[SpecRound, ...], list[int]]] = {}
    plain_ids: list[int] = []

    def speculative_run(kind: DraftKind, k: int, n: int,
                        generator: torch.Generator | None = None) -> SpeculativeRun:
        return SpeculativeRun(
            target, make_drafter(kind, draft, settings, tokenizer, stop_at_eos), prompt_ids,
            k=k, max_new_tokens=n, sampling=settings, eos_id=tokenizer.eos_id,
            stop_at_eos=stop_at_eos, generator=generator,
        )

    # Untimed warm-up: the first forward of each model pays for lazy set-up (labs.common).
    for _ in plain_stepper(backend, tokenizer, prompt_ids, 2, settings, stop_at_eos):
        pass
    for kind in kinds:
        for _ in speculative_run(kind, 1, 2):
            pass
    for repeat in range(repeats):  # interleaved: every config once per repeat
        # A Progress after every step and round, so Cancel (checked between items) stops
        # a long run at once; the clocks leave out the time spent outside the run.
        stepper = plain_stepper(backend, tokenizer, prompt_ids, new_tokens, settings,
                                stop_at_eos)
        yield from timed(stepper, Progress("speculative", "plain", done, total), plain_times)
        plain_ids = stepper.generated_ids[0]
        done += 1
        yield Progress("speculative", "plain", done, total)
        for kind, k in configs:
            run = speculative_run(kind, k, new_tokens, new_generator(settings.seed))
            rounds = tuple((yield from timed(
                run, Progress("speculative", f"{kind} k={k}", done, total), times[(kind, k)])))
            if repeat == 0:
                recorded[(kind, k)] = (rounds, run.generated)
            done += 1
            yield Progress("speculative", f"{kind} k={k}", done, total)
    runs = tuple(
        SpecRunResult(
            draft_kind=kind, k=k, rounds=recorded[(kind, k)][0],
            token_ids=tuple(recorded[(kind, k)][1]),
            text=answer_text(tokenizer, recorded[(kind, k)][1]),
            identical_to_plain=recorded[(kind, k)][1] == plain_ids,
            seconds=spread(times[(kind, k)]),
        )
        for kind, k in configs
    )
    yield SpeculativeLabResult(
        target_label=backend.name, draft_label=draft_label if "model" in kinds else "",
        prompt_tokens=len(prompt_ids), new_tokens=new_tokens, sampling=settings,
        stop_at_eos=stop_at_eos, plain_ids=tuple(plain_ids),
        plain_text=answer_text(tokenizer, plain_ids), plain_seconds=spread(plain_times),
        runs=runs, draft_note=draft_note,
    )


def draft_lengths(ks: Iterable[int]) -> list[int]:
    """The k values to try, each once, smallest first ('8, 1, 4, 1' → 1, 4, 8)."""
    return sorted(set(ks))


def run(model: LoadedModel, params: Mapping[str, Any]) -> Iterator[Progress | SpeculativeLabResult]:
    """The lab as every front runs it: the question at every k, greedy at temperature 0
    (else the course's top-k, top-p and seed), ko-draft and prompt lookup.

    The command line's own options, when given: ``raw`` (the question without the chat
    template), ``sampling`` (its top-k, top-p, penalty and seed), ``kinds`` and ``draft``
    (the draft kinds to run and the draft model's folder: loaded here, a draft that does
    not fit is refused, not left out) and ``stop_at_eos``.
    """
    ks = draft_lengths(params["ks"])
    ids = question_ids(model, params["question"], params.get("raw", False))
    n = params["new_tokens"]
    check_length(model, len(ids) + n + max(ks), "P + N + k")
    temperature = params["temperature"]
    settings = params.get("sampling") or (
        SamplingSettings.greedy_settings(COURSE.seed) if temperature == 0
        else SamplingSettings(temperature=temperature, top_k=COURSE.top_k,
                              top_p=COURSE.top_p, seed=COURSE.seed)
    )
    kinds: tuple[DraftKind, ...] | None = params.get("kinds")
    if kinds is not None:
        path = params.get("draft")
        draft = load_draft(path, model.backend) if "model" in kinds else None
        return speculative_lab(
            model.backend, model.tokenizer, ids, draft=draft, draft_label=path or DRAFT_MODEL,
            ks=ks, kinds=kinds, new_tokens=n, sampling=settings,
            stop_at_eos=params.get("stop_at_eos", False), repeats=params["repeats"])
    return _with_shipped_draft(model.backend, model.tokenizer, ids, ks=ks, new_tokens=n,
                               sampling=settings, repeats=params["repeats"])


def _with_shipped_draft(
    backend: LanguageModel, tokenizer: TextTokenizer, ids: Sequence[int], *, ks: Sequence[int],
    new_tokens: int, sampling: SamplingSettings, repeats: int,
) -> Generator[Progress | SpeculativeLabResult, None, None]:
    """`speculative_lab` with ko-draft where it fits the target, else prompt lookup only (the
    result's `draft_note` says why). The draft loads here, on the lab's thread."""
    draft, why = shipped_draft(backend)
    kinds: tuple[DraftKind, ...] = DRAFT_KINDS if draft is not None else ("prompt-lookup",)
    yield from speculative_lab(
        backend, tokenizer, ids, draft=draft, ks=ks, kinds=kinds, new_tokens=new_tokens,
        sampling=sampling, repeats=repeats, draft_note=why,
    )


def make_drafter(
    kind: DraftKind,
    draft: MiniMindLM | None,
    settings: SamplingSettings,
    tokenizer: TextTokenizer,
    stop_at_eos: bool,
) -> Drafter:
    """A fresh drafter of `kind` for one run (the draft model gets its own cache)."""
    if kind == "prompt-lookup":
        return PromptLookupDrafter()
    if draft is None:
        raise ValueError("The draft-model kind needs a draft model.")
    banned = None if stop_at_eos else tokenizer.eos_id
    # The draft draws from its own generator: the target's stream stays the run's.
    return ModelDrafter(draft, settings, new_generator(settings.seed + 1), banned_token=banned)


Item = TypeVar("Item")


def timed(
    items: Iterable[Item], progress: Progress, seconds: list[float]
) -> Generator[Progress, None, list[Item]]:
    """Every item of `items`, a `progress` yielded after each; their time goes to `seconds`.

    The clock runs only while `items` computes: not while the caller handles a
    yield (drawing, printing), so the run is timed as if it ran in one piece.
    """
    out: list[Item] = []
    elapsed = 0.0
    iterator: Iterator[Item] = iter(items)
    while True:
        started = time.perf_counter()
        try:
            item = next(iterator)
        except StopIteration:
            elapsed += time.perf_counter() - started
            break
        elapsed += time.perf_counter() - started
        out.append(item)
        yield progress
    seconds.append(elapsed)
    return out


def plain_stepper(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    new_tokens: int,
    settings: SamplingSettings,
    stop_at_eos: bool,
) -> Stepper:
    """The reference run, not started: one token per target forward (the dynamic cache)."""
    return Stepper(
        backend, tokenizer, list(prompt_ids), sampling=settings, max_new_tokens=new_tokens,
        stop_at_eos=stop_at_eos, top_n=0,
    )
