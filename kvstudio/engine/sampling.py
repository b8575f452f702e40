"""Turning one step's logits into the next token, in MiniMind's order, for a whole batch.

Owns the sampling pipeline and what it reports:

    temperature → repetition penalty (sign-aware) → top-k (0 = off)
    → top-p (MiniMind's rule, ties by position) → greedy (temperature 0) or multinomial

and, per row, how many candidates survived top-k and top-p, the chosen token's
probability and the most likely candidates after filtering. Everything is
vectorised over the batch (no Python loop over rows) and all randomness comes
from the `torch.Generator` the caller passes in (the run owns it), never from
torch's global RNG.

It does not run the model or decode text; see ``generate.py``.

Letters in shape comments: B batch rows, V vocabulary, n candidates reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from kvstudio.engine.records import SamplingSettings

NEG_INF = float("-inf")


@dataclass(frozen=True)
class SampleOutput:
    """What `sample_next` decided, still as tensors (the stepper converts them once)."""

    token_ids: torch.Tensor  # (B,) int64, the chosen token per row
    chosen_probability: torch.Tensor  # (B,) float32, its probability after all filters
    survivors_top_k: torch.Tensor  # (B,) int64, candidates left after top-k (V if off)
    survivors_top_p: torch.Tensor  # (B,) int64, candidates left after top-p
    top_ids: torch.Tensor  # (B, n) int64, most likely candidates after filtering
    top_probs: torch.Tensor  # (B, n) float32, their probabilities


def check_logits(logits: torch.Tensor, step: int, model: str = "The model") -> None:
    """Refuse NaN logits before sampling picks garbage from them (or torch's multinomial
    raises its own error): the one message plain decoding, serving and speculative
    decoding give, `step` the index of the token being chosen."""
    if bool(logits.isnan().any()):
        raise ValueError(
            f"{model} produced NaN logits at step {step}: its weights are broken (NaN or "
            "inf inside). Load another checkpoint; this one cannot generate text."
        )


def new_generator(seed: int, device: torch.device | str = "cpu") -> torch.Generator:
    """A generator owned by one run: the same seed gives the same samples."""
    return torch.Generator(device=device).manual_seed(int(seed))


def presence_mask(ids: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """(B, T) token ids → (B, V) bool: which tokens already occur in each row."""
    mask = torch.zeros(ids.shape[0], vocab_size, dtype=torch.bool, device=ids.device)
    return mask.scatter_(1, ids, True)


def apply_repetition_penalty(
    logits: torch.Tensor, seen: torch.Tensor, penalty: float
) -> torch.Tensor:
    """Sign-aware penalty: divide positive logits, multiply negative ones, for seen tokens.

    logits (B, V) float, seen (B, V) bool. This is the rule of MiniMind's current
    ``model_minimind.py`` (the minimind-3 code with QK-norm: ``torch.where(score > 0,
    score / penalty, score * penalty)`` over each row's seen tokens) and of
    transformers' ``RepetitionPenaltyLogitsProcessor``. MiniMind2's ``generate``
    divided every seen logit (``logits[i, seen] /= penalty``), which *raises* the
    probability of a seen token whose logit is negative; KV Studio does not follow
    that older rule. Both agree on positive logits and when the penalty is 1.0.
    """
    if penalty == 1.0:
        return logits
    penalised = torch.where(logits > 0, logits / penalty, logits * penalty)  # (B, V)
    return torch.where(seen, penalised, logits)


def apply_top_k(logits: torch.Tensor, top_k: int) -> torch.Tensor:
    """Keep each row's `top_k` largest logits (ties with the k-th also survive); 0 = off."""
    if top_k <= 0 or top_k >= logits.shape[-1]:
        return logits
    kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]  # (B, 1)
    return logits.masked_fill(logits < kth, NEG_INF)


def top_p_threshold(logits: torch.Tensor, top_p: float) -> tuple[torch.Tensor, torch.Tensor]:
    """MiniMind's nucleus size and its smallest kept logit: logits (B, V) → (B, 1), (B, 1).

    Sort the logits descending, softmax the sorted row and keep every
    *position* whose cumulative probability before it is at most p: the token
    that first crosses p is kept and the top token always survives. Returns m,
    the number of positions kept (≥ 1), and the m-th largest logit (never -inf,
    so a removed token is never kept). Only sorted values are needed (no
    argsort); which tokens fill the m places is `top_p_keep`'s job.

    Exact by construction, on any CPU or GPU: the cumulative sums come from the
    same three operations on the same tensor as in MiniMind's `generate` (sort,
    softmax of the sorted logits, cumsum), so they round the same way whatever
    kernel runs. (A softmax of the unsorted row sums its normaliser in another
    order, one ulp away, and a cut that falls within that ulp of p would keep
    one token more or less.) The cut is then applied as a logit threshold:
    logits are the inputs, so nothing is rounded again.
    """
    ordered = _sorted_descending(logits)  # (B, V) values only, -inf last
    cumulative = torch.softmax(ordered, dim=-1).cumsum(dim=-1)  # (B, V), non-decreasing
    # How many of the first V-1 cumulative sums are ≤ p: a binary search per row
    # (summing a (B, V) bool compare costs ~20× more on the CPU).
    target = torch.full((logits.shape[0], 1), top_p, dtype=cumulative.dtype, device=logits.device)
    at_most_p = torch.searchsorted(cumulative, target, right=True)  # (B, 1)
    kept = 1 + at_most_p.clamp_(max=logits.shape[-1] - 1)  # (B, 1), m ≥ 1
    threshold = ordered.gather(1, kept - 1)  # (B, 1), the m-th largest logit
    return kept, threshold.clamp_min(torch.finfo(logits.dtype).min)


def top_p_keep(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """MiniMind's nucleus as a mask: logits (B, V) → keep (B, V) bool, exactly m per row.

    MiniMind keeps the first m positions of the sorted list, so when several
    tokens tie with the m-th largest logit only as many as fit are kept
    (``[1, 1, 1, 1]`` at p = 0.5 keeps 3). Ties are broken as a *stable*
    descending sort orders them: the lower token id first. (MiniMind's
    ``torch.sort`` is not stable, so which tied token it drops is arbitrary;
    how many it keeps is the same.) Exact ties are rare in fp32 logits and
    common in bf16/fp16 ones.
    """
    if top_p >= 1.0:
        return torch.ones_like(logits, dtype=torch.bool)
    kept, threshold = top_p_threshold(logits, top_p)
    return _drop_surplus_ties(logits, logits >= threshold, kept, threshold)


def _drop_surplus_ties(
    logits: torch.Tensor, keep: torch.Tensor, kept: torch.Tensor, threshold: torch.Tensor
) -> torch.Tensor:
    """Drop, per row, the tokens tied at `threshold` beyond the m = `kept` places.

    logits (B, V), keep (B, V) bool = logits ≥ threshold, kept and threshold (B, 1).
    The tied tokens with the highest ids go first (a stable sort puts them last).
    Usually nothing is tied past m and `keep` comes back unchanged.
    """
    surplus = keep.sum(dim=-1, keepdim=True) - kept  # (B, 1), > 0 only where ties spill over
    if not bool((surplus > 0).any()):
        return keep
    tied = logits == threshold  # (B, V)
    rank = tied.cumsum(dim=-1)  # (B, V): 1, 2, … along each row's tied tokens, by id
    places = tied.sum(dim=-1, keepdim=True) - surplus.clamp_min(0)  # (B, 1) ties that fit
    return keep & (~tied | (rank <= places))


def nucleus(
    logits: torch.Tensor, probs: torch.Tensor, top_p: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """probs (B, V) with the tokens outside the nucleus of `logits` (B, V) set to 0
    (not renormalised), and the survivors per row (B,) int64. p = 1.0 = off.
    `probs` is softmax(`logits`); the tokens are `top_p_keep`'s.

    On the CPU the masking runs in numpy: torch's comparison to a bool mask and
    the bool × float product take ~10× longer there for a (30, 6400) batch.
    """
    if top_p >= 1.0:
        everyone = torch.full(
            probs.shape[:1], probs.shape[1], dtype=torch.int64, device=probs.device
        )
        return probs, everyone
    kept, threshold = top_p_threshold(logits, top_p)  # (B, 1) each
    if probs.device.type == "cpu":
        keep = logits.numpy() >= threshold.numpy()  # (B, V) bool
        counts = np.count_nonzero(keep, axis=-1)  # (B,)
        if (counts > kept.numpy()[:, 0]).any():  # ties past the m-th place (16-bit logits)
            keep = _drop_surplus_ties(logits, torch.from_numpy(keep), kept, threshold).numpy()
            counts = np.count_nonzero(keep, axis=-1)
        masked = torch.from_numpy(probs.numpy() * keep)  # (B, V)
        return masked, torch.from_numpy(counts.astype(np.int64))
    keep_t = _drop_surplus_ties(logits, logits >= threshold, kept, threshold)
    return probs * keep_t, keep_t.sum(dim=-1)


def _sorted_descending(values: torch.Tensor) -> torch.Tensor:
    """Each row sorted high to low. numpy's SIMD sort is ~10× torch's on CPU."""
    if values.device.type == "cpu":
        ascending = np.sort(values.detach().numpy(), axis=-1)
        return torch.from_numpy(np.ascontiguousarray(ascending[:, ::-1]))
    return torch.sort(values, dim=-1, descending=True).values


def apply_top_p(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Remove (set to -inf) the tokens outside each row's top-p nucleus; p = 1.0 = off."""
    if top_p >= 1.0:
        return logits
    keep = top_p_keep(logits.float(), top_p)
    return logits.masked_fill(~keep, NEG_INF)


def filter_logits(
    logits: torch.Tensor,
    settings: SamplingSettings,
    seen: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Apply temperature, penalty, top-k and top-p; return (filtered, survivors_k, survivors_p).

    logits (B, V) → filtered (B, V) float32 with -inf for removed tokens; survivor
    counts (B,) int64. At temperature 0 no temperature is applied (the logits are
    only penalised): greedy takes the argmax, which every filter keeps anyway.
    """
    x = logits.float()
    if settings.temperature > 0:
        x = x / settings.temperature
    if seen is not None:
        x = apply_repetition_penalty(x, seen, settings.repetition_penalty)
    x = apply_top_k(x, settings.top_k)
    survivors_k = torch.isfinite(x).sum(dim=-1)  # (B,)
    x = apply_top_p(x, settings.top_p)
    survivors_p = torch.isfinite(x).sum(dim=-1) if settings.top_p < 1.0 else survivors_k
    return x, survivors_k, survivors_p


def sample_next(
    logits: torch.Tensor,
    settings: SamplingSettings,
    generator: torch.Generator | None,
    *,
    seen: torch.Tensor | None = None,
    top_n: int = 10,
    banned_token: int | None = None,
) -> SampleOutput:
    """Choose the next token for every row of `logits` (B, V).

    `seen` (B, V) bool marks tokens already in each row (for the repetition
    penalty). `banned_token` (e.g. eos while a minimum length is not reached) is
    removed before filtering, as transformers' ``min_new_tokens`` does.

    Temperature 0 is greedy: the argmax is chosen, the reported probability is
    1.0 and both survivor counts are 1 (nothing else could be chosen); the top
    candidates then show the model's own distribution (softmax of the penalised
    logits at temperature 1), which is what a lecturer wants to look at.
    A generator is required unless the settings are greedy.

    Same rules as `filter_logits`; the token is drawn by inverse CDF with one
    uniform number per row from the run's generator (cheaper than
    `torch.multinomial` over a batch, and the same draws in both modes).
    """
    if logits.dim() != 2:
        raise ValueError(f"sample_next expects logits shaped (batch, vocab), got {logits.shape}.")
    x = logits if logits.dtype == torch.float32 else logits.float()
    batch, vocab = x.shape
    if banned_token is not None and not 0 <= banned_token < vocab:
        banned_token = None  # e.g. eos of a tokenizer larger than this model's vocabulary
    n = min(top_n, vocab)
    if settings.greedy:
        if banned_token is not None:  # one kernel, and the caller's logits stay as they were
            x = x.index_fill(1, _index(banned_token, x.device), NEG_INF)
        return _greedy(x, settings, seen, n)
    if generator is None:
        raise ValueError("Sampling with temperature > 0 needs the run's torch.Generator.")
    x = x / settings.temperature  # a new tensor: the caller's logits stay as they were
    if banned_token is not None:
        x.index_fill_(1, _index(banned_token, x.device), NEG_INF)
    if seen is not None:
        x = apply_repetition_penalty(x, seen, settings.repetition_penalty)
    if 0 < settings.top_k < vocab:
        x = apply_top_k(x, settings.top_k)
        survivors_k = torch.isfinite(x).sum(dim=-1)  # (B,)
    else:  # top-k off: every token but a banned one is a candidate
        candidates = vocab - (banned_token is not None)
        survivors_k = torch.full((batch,), candidates, dtype=torch.int64, device=x.device)
    probs = torch.softmax(x, dim=-1)  # (B, V), 0 where removed
    if settings.top_p < 1.0:
        probs, survivors_p = nucleus(x, probs, settings.top_p)  # not renormalised
    else:
        survivors_p = survivors_k
    # Inverse CDF on the unnormalised probabilities: the draw scales the uniform
    # number to each row's total, so only the reported numbers are divided.
    cdf = probs.cumsum(dim=-1)  # (B, V)
    total = cdf[:, -1:]  # (B, 1), the kept probability mass
    uniform = torch.rand(batch, 1, generator=generator, device=x.device)  # (B, 1)
    token_ids = _inverse_cdf(cdf, uniform * total, total)  # (B,)
    if n > 0:
        top_probs, top_ids = torch.topk(probs, n, dim=-1)  # (B, n)
        top_probs = top_probs / total
    else:
        top_probs, top_ids = _empty_top(batch, x.device)
    return SampleOutput(
        token_ids=token_ids,
        chosen_probability=(probs.gather(1, token_ids[:, None]) / total).squeeze(1),
        survivors_top_k=survivors_k,
        survivors_top_p=survivors_p,
        top_ids=top_ids,
        top_probs=top_probs,
    )


def _greedy(
    x: torch.Tensor, settings: SamplingSettings, seen: torch.Tensor | None, n: int
) -> SampleOutput:
    batch = x.shape[0]
    if seen is not None:
        x = apply_repetition_penalty(x, seen, settings.repetition_penalty)
    ones = _ones(batch, x.device)
    if n > 0:
        # One topk gives both the argmax (its first column) and the candidates.
        top_ids = torch.topk(x, n, dim=-1).indices  # (B, n), most likely first
        top_probs = torch.softmax(x, dim=-1).gather(1, top_ids)  # (B, n)
        token_ids = top_ids.select(1, 0)  # (B,)
    else:
        top_probs, top_ids = _empty_top(batch, x.device)
        token_ids = torch.argmax(x, dim=-1)  # (B,)
    return SampleOutput(
        token_ids=token_ids,
        chosen_probability=_ones(batch, x.device, torch.float32),
        survivors_top_k=ones,
        survivors_top_p=ones,
        top_ids=top_ids,
        top_probs=top_probs,
    )


def _inverse_cdf(cdf: torch.Tensor, target: torch.Tensor, total: torch.Tensor) -> torch.Tensor:
    """Index drawn from each row of a cumulative sum `cdf` (B, K) at `target` (B, 1).

    `target` is a uniform number in [0, 1) times the row's `total` (B, 1); the
    product can round up to the total itself, so it is kept just below it. The
    first index whose CDF exceeds the target is then always a token of
    probability > 0: the CDF does not rise at the others.
    """
    below_total = torch.nextafter(total, torch.zeros_like(total))  # (B, 1)
    index = torch.searchsorted(cdf, torch.minimum(target, below_total), right=True)  # (B, 1)
    return index.squeeze(1)


@lru_cache(maxsize=64)
def _index(token_id: int, device: torch.device) -> torch.Tensor:
    """A one-element index tensor, made once per token and device (not per step)."""
    with torch.inference_mode(False):  # a normal tensor: usable inside and outside inference
        return torch.tensor([token_id], device=device)


@lru_cache(maxsize=64)
def _ones(batch: int, device: torch.device, dtype: torch.dtype = torch.int64) -> torch.Tensor:
    """Constant ones (B,), made once per shape; callers only read them."""
    with torch.inference_mode(False):
        return torch.ones(batch, dtype=dtype, device=device)


def _empty_top(batch: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    return (
        torch.zeros(batch, 0, dtype=torch.float32, device=device),
        torch.zeros(batch, 0, dtype=torch.int64, device=device),
    )
