"""The cut-off lab: the next-token distribution and where top-k and top-p cut it.

Owns `distribution_steps`: one `DistributionStep` per generated token, with
the distribution after temperature (before the cut-offs) and where top-k and
top-p cut it, ending with a `DistributionRun`; `run` is the lab as every front
starts it (the registry's parameters); `widest_cut`, the step with the most top-p
survivors, which every front opens on. It never imports Qt.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings, StepRecord
from kvstudio.engine.sampling import apply_repetition_penalty, presence_mask
from kvstudio.engine.tokenizer import TextTokenizer, TokenTexts
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import answer_text, prompt_ids
from kvstudio.labs.course import COURSE

BARS = 20  # the most likely next tokens drawn at each step


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
    top_p_mass: float | None = None  # renormalised mass of every top-p survivor (bars or not)
    chosen_text: str = ""  # the chosen token's text (also when it is not among the bars)
    vocab_size: int = 0  # V: the tokens the distribution spans (0: not measured)
    chosen_place: int | None = None  # the chosen token's rank in all V, 1 = most likely
    chosen_probability_before: float = 0.0  # its probability after temperature, before cuts

    def chosen_outside(self) -> bool:
        """Whether the chosen token lies past the bars drawn (its rank is known)."""
        return self.chosen_rank is None and self.chosen_place is not None

    def after_top_k(self) -> tuple[float, ...]:
        """The bars' probabilities as top-p sees them: renormalised over the top-k survivors.

        Bars cut by top-k get 0. Their running sum is the cumulative mass that
        top-p compares with p.
        """
        k = self.top_k_cut if self.top_k_cut is not None else len(self.probabilities)
        mass = max(self.top_k_mass, 1e-12)
        return tuple(p / mass if i < k else 0.0 for i, p in enumerate(self.probabilities))

    def kept_mass(self) -> float:
        """The renormalised probability of the tokens top-p keeps (≥ p by its definition).

        Counted over every survivor, also those beyond the bars (top-k off keeps many)."""
        if self.top_p_mass is not None:
            return self.top_p_mass
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
    bars: int = BARS,
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
            kept = min(record.survivors_top_p[0], full.shape[0])  # top-p's survivors, all of them
            top_p_mass = float(torch.topk(full, kept).values.sum()) / max(top_k_mass, 1e-12)
            probs, ids = torch.topk(full, min(bars, x.shape[-1]))
            chosen = record.token_ids[0]
            chosen_p = float(full[chosen])
            place = int((full > full[chosen]).sum()) + 1  # ties: the best rank it shares
        id_list = [int(i) for i in ids.tolist()]
        yield DistributionStep(
            record=record,
            token_ids=tuple(id_list),
            token_texts=tuple(texts(i) for i in id_list),
            probabilities=tuple(float(p) for p in probs.tolist()),
            top_k_cut=k if settings.top_k > 0 and k < len(id_list) else None,
            top_p_cut=min(record.survivors_top_p[0], len(id_list)),
            chosen_rank=id_list.index(chosen) if chosen in id_list else None,
            top_k_mass=top_k_mass if settings.top_k > 0 else 1.0,
            top_p_mass=min(top_p_mass, 1.0),
            chosen_text=texts(chosen),
            vocab_size=int(full.shape[0]),
            chosen_place=place,
            chosen_probability_before=chosen_p,
        )
        history.append(chosen)
    records = stepper.records
    yield DistributionRun(
        settings=settings,
        survivors_top_k=tuple(r.survivors_top_k[0] for r in records),
        survivors_top_p=tuple(r.survivors_top_p[0] for r in records),
        text=answer_text(tokenizer, stepper.generated_ids[0]),
    )


def widest_cut(steps: Sequence[DistributionStep]) -> int:
    """The index of the step with the most top-p survivors (ties: the earliest)."""
    counts = [s.record.survivors_top_p[0] for s in steps]
    return counts.index(max(counts))


def sampling(params: Mapping[str, Any]) -> SamplingSettings:
    """The knobs the lab runs with (the penalty: the course's)."""
    return SamplingSettings(
        temperature=params["temperature"],
        top_k=params["top_k"],
        top_p=params["top_p"],
        repetition_penalty=COURSE.repetition_penalty,
        seed=params["seed"],
    )


def run(model: LoadedModel,
        params: Mapping[str, Any]) -> Iterator[DistributionStep | DistributionRun]:
    """The lab as every front runs it: the question, stepped, one distribution a step."""
    ids = prompt_ids(model, params["prompt"])
    return distribution_steps(model.backend, model.tokenizer, ids, sampling(params),
                              new_tokens=params["new_tokens"], bars=BARS)
