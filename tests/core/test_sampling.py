"""Sampling on hand-made distributions: MiniMind's order and rules, batched, seeded."""

from __future__ import annotations

import math

import pytest
import torch

from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.sampling import (
    _inverse_cdf,
    apply_repetition_penalty,
    apply_top_p,
    filter_logits,
    new_generator,
    nucleus,
    presence_mask,
    sample_next,
    top_p_keep,
)


def logits_from_probs(*probs: float) -> torch.Tensor:
    return torch.log(torch.tensor([probs], dtype=torch.float32))  # (1, V)


def settings(**kw: float) -> SamplingSettings:
    base = {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "repetition_penalty": 1.0}
    base.update(kw)
    return SamplingSettings(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "p, survivors",
    [
        (0.01, 1),  # the top token always survives
        (0.4, 1),  # mass before token 2 is 0.5 > 0.4
        (0.7, 2),  # token 2 crosses 0.7 and is kept; mass before token 3 is 0.8
        (0.85, 3),
        (0.99, 4),
        (1.0, 4),  # off
    ],
)
def test_top_p_minimind_rule(p: float, survivors: int) -> None:
    logits = logits_from_probs(0.5, 0.3, 0.15, 0.05)
    _, _, kept = filter_logits(logits, settings(top_p=p))
    assert kept.tolist() == [survivors]


def test_top_p_is_order_independent() -> None:
    logits = logits_from_probs(0.05, 0.3, 0.5, 0.15)  # same distribution, shuffled
    filtered = apply_top_p(logits, 0.7)
    assert torch.isfinite(filtered).tolist() == [[False, True, True, False]]


@pytest.mark.parametrize("k, survivors", [(0, 5), (1, 1), (3, 3), (5, 5), (50, 5)])
def test_top_k_survivors(k: int, survivors: int) -> None:
    logits = torch.tensor([[3.0, 1.0, 2.0, 0.0, -1.0]])
    _, kept_k, kept_p = filter_logits(logits, settings(top_k=k))
    assert kept_k.tolist() == [survivors]
    assert kept_p.tolist() == [survivors]  # top-p off


def test_top_k_then_top_p_counts() -> None:
    logits = logits_from_probs(0.4, 0.3, 0.2, 0.1)
    # top-k 3 renormalises to 0.444, 0.333, 0.222: mass before the 3rd is 0.778 > 0.7
    _, kept_k, kept_p = filter_logits(logits, settings(top_k=3, top_p=0.7))
    assert (kept_k.item(), kept_p.item()) == (3, 2)


def test_survivors_are_per_row() -> None:
    logits = torch.cat(
        [logits_from_probs(0.9, 0.05, 0.03, 0.02), logits_from_probs(0.25, 0.25, 0.25, 0.25)]
    )
    _, _, kept = filter_logits(logits, settings(top_p=0.8))
    assert kept.tolist() == [1, 4]


def test_repetition_penalty_is_sign_aware() -> None:
    logits = torch.tensor([[2.0, -2.0, 1.0, -1.0]])
    seen = torch.tensor([[True, True, False, False]])
    out = apply_repetition_penalty(logits, seen, 2.0)
    assert out.tolist() == [[1.0, -4.0, 1.0, -1.0]]


def test_presence_mask() -> None:
    mask = presence_mask(torch.tensor([[0, 2, 2], [1, 1, 1]]), 4)
    assert mask.tolist() == [[True, False, True, False], [False, True, False, False]]


def test_temperature_zero_is_greedy_without_crash() -> None:
    logits = torch.tensor([[0.1, 5.0, 4.9, -3.0], [1.0, 0.0, 2.0, 0.5]])
    out = sample_next(logits, SamplingSettings.greedy_settings(), None, top_n=2)
    assert out.token_ids.tolist() == [1, 2]
    assert out.chosen_probability.tolist() == [1.0, 1.0]
    assert out.survivors_top_k.tolist() == [1, 1]
    assert out.top_ids[:, 0].tolist() == [1, 2]
    assert all(math.isfinite(p) for p in out.top_probs.flatten().tolist())


def test_greedy_with_penalty_avoids_seen_token() -> None:
    logits = torch.tensor([[3.0, 2.9, 0.0]])
    seen = torch.tensor([[True, False, False]])
    s = SamplingSettings(temperature=0.0, top_p=1.0, repetition_penalty=1.5)
    assert sample_next(logits, s, None, seen=seen).token_ids.tolist() == [1]


def test_sampling_is_seeded_and_leaves_global_rng_alone() -> None:
    logits = torch.randn(8, 50, generator=torch.Generator().manual_seed(0))
    s = settings(temperature=1.3, top_p=0.9, top_k=20)
    state = torch.random.get_rng_state()
    first = [sample_next(logits, s, g).token_ids.tolist() for g in [new_generator(5)] * 4]
    second = [sample_next(logits, s, g).token_ids.tolist() for g in [new_generator(5)] * 4]
    assert first == second
    assert torch.equal(state, torch.random.get_rng_state())


def test_filtered_tokens_are_never_sampled() -> None:
    logits = logits_from_probs(0.5, 0.3, 0.15, 0.05).repeat(500, 1)
    out = sample_next(logits, settings(top_p=0.7), new_generator(0))
    assert set(out.token_ids.tolist()) <= {0, 1}
    assert out.survivors_top_p.unique().tolist() == [2]
    # chosen probability is after filtering: 0.5/0.8 or 0.3/0.8
    assert set(round(p, 4) for p in out.chosen_probability.tolist()) <= {0.625, 0.375}


def test_banned_token_is_never_chosen() -> None:
    logits = torch.tensor([[10.0, 0.0, 0.0]]).repeat(100, 1)
    out = sample_next(logits, settings(), new_generator(0), banned_token=0)
    assert 0 not in out.token_ids.tolist()
    greedy = sample_next(logits, SamplingSettings.greedy_settings(), None, banned_token=0)
    assert 0 not in greedy.token_ids.tolist()


def test_sampling_needs_a_generator() -> None:
    with pytest.raises(ValueError, match="Generator"):
        sample_next(torch.zeros(1, 4), settings(), None)


def minimind_filter(logits: torch.Tensor, top_k: int, top_p: float, t: float) -> torch.Tensor:
    """MiniMind's own generate() filtering, verbatim in spirit: an independent reference."""
    logits = logits / t
    if top_k > 0:
        logits[logits < torch.topk(logits, top_k)[0][..., -1, None]] = -float("inf")
    if top_p < 1.0:
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)
        mask = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1) > top_p
        mask[..., 1:] = mask[..., :-1].clone()
        mask[..., 0] = 0
        logits[mask.scatter(1, sorted_indices, mask)] = -float("inf")
    return logits


@pytest.mark.parametrize(
    "top_k, top_p, temperature",
    [(0, 0.9, 1.0), (0, 0.5, 0.7), (20, 1.0, 1.0), (20, 0.8, 1.3), (0, 0.999, 2.0), (0, 1.0, 1.0)],
)
def test_matches_minimind_reference(top_k: int, top_p: float, temperature: float) -> None:
    """Survivor counts, allowed tokens and probabilities match MiniMind's sort-based code."""
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(16, 300, generator=gen) * torch.linspace(0.1, 4.0, 16)[:, None]
    s = settings(top_k=top_k, top_p=top_p, temperature=temperature)
    reference = minimind_filter(logits.clone(), top_k, top_p, temperature)
    filtered, ref_k, ref_p = filter_logits(logits, s)
    assert torch.equal(torch.isfinite(filtered), torch.isfinite(reference))
    out = sample_next(logits, s, new_generator(9), top_n=5)
    assert out.survivors_top_p.tolist() == torch.isfinite(reference).sum(-1).tolist()
    assert out.survivors_top_k.tolist() == ref_k.tolist()
    assert out.survivors_top_p.tolist() == ref_p.tolist()
    assert torch.isfinite(reference).gather(1, out.token_ids[:, None]).all()
    ref_probs = torch.softmax(reference, dim=-1)
    chosen = ref_probs.gather(1, out.token_ids[:, None]).squeeze(1)
    torch.testing.assert_close(out.chosen_probability, chosen)
    torch.testing.assert_close(out.top_probs, torch.topk(ref_probs, 5).values)


def test_draws_follow_the_distribution() -> None:
    logits = logits_from_probs(0.5, 0.3, 0.15, 0.05).repeat(20_000, 1)
    out = sample_next(logits, settings(), new_generator(0))
    freq = torch.bincount(out.token_ids, minlength=4).float() / 20_000
    torch.testing.assert_close(freq, torch.tensor([0.5, 0.3, 0.15, 0.05]), atol=0.015, rtol=0)


def minimind_top_p_survivors(logits: torch.Tensor, top_p: float) -> list[int]:
    """How many tokens MiniMind's top-p mask keeps per row (sort positions, not values)."""
    sorted_logits, _ = torch.sort(logits.float(), descending=True, stable=True)
    mask = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1) > top_p
    mask[..., 1:], mask[..., 0] = mask[..., :-1].clone(), False
    return (~mask).sum(dim=-1).tolist()


def test_top_p_keeps_tied_tokens_by_sort_position_as_minimind_does() -> None:
    """[1, 1, 1, 1] at p = 0.5: the mass before the 3rd place is 0.5 ≤ p, before the 4th 0.75."""
    logits = torch.tensor([[1.0, 1.0, 1.0, 1.0]])
    s = SamplingSettings(temperature=1, top_p=0.5, top_k=0)
    out = sample_next(logits, s, new_generator(0))
    assert out.survivors_top_p.tolist() == [3] == minimind_top_p_survivors(logits, 0.5)
    # A stable sort puts the lowest ids first: token 3 is the one left out.
    assert top_p_keep(logits, 0.5).tolist() == [[True, True, True, False]]
    draws = sample_next(logits.repeat(2000, 1), s, new_generator(1)).token_ids
    assert set(draws.tolist()) == {0, 1, 2}
    _, _, kept = filter_logits(logits, s)
    assert kept.tolist() == [3]


def test_top_p_ties_only_trim_the_tokens_tied_at_the_cut() -> None:
    # 0.4 then four tokens of 0.15: p = 0.6 keeps 0.4 + two of the ties (mass before 3rd = 0.55).
    logits = logits_from_probs(0.15, 0.4, 0.15, 0.15, 0.15)
    keep = top_p_keep(logits, 0.6)
    assert keep.tolist() == [[True, True, True, False, False]]


@pytest.mark.numeric
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_top_p_survivors_match_minimind_on_every_row(dtype: torch.dtype) -> None:
    """The survivor count is MiniMind's on every row; 16-bit logits tie often.

    Exact by construction (`top_p_threshold` runs MiniMind's own sort, softmax and
    cumsum), so it holds under every kernel: marked `numeric` to be run again
    under the ones other CPUs take.
    """
    gen = torch.Generator().manual_seed(3)
    logits = (torch.randn(64, 6400, generator=gen) * 2.0).to(dtype)  # (B, V) with exact ties
    for p in (0.5, 0.85, 0.95):
        expected = minimind_top_p_survivors(logits, p)
        out = sample_next(logits, settings(top_p=p), new_generator(0))
        assert out.survivors_top_p.tolist() == expected
        _, _, kept = filter_logits(logits, settings(top_p=p))
        assert kept.tolist() == expected
    if dtype == torch.float32:
        return
    # The case the rule is about really happens here: a tie straddles the cut.
    probs = torch.softmax(logits.float(), dim=-1)
    kept_at_least = (probs >= torch.sort(probs, descending=True).values.gather(
        1, torch.tensor(minimind_top_p_survivors(logits, 0.85))[:, None] - 1)).sum(-1)
    assert (kept_at_least > torch.tensor(minimind_top_p_survivors(logits, 0.85))).any()


def test_nucleus_zeroes_what_the_mask_drops() -> None:
    """The numpy masking used on the CPU agrees with the torch mask, zeros included."""
    gen = torch.Generator().manual_seed(4)
    logits = torch.randn(8, 500, generator=gen) * 3.0
    logits[:, 7] = float("-inf")  # a token top-k removed: it can never be kept
    probs = torch.softmax(logits, dim=-1)
    for p in (0.05, 0.5, 0.9, 0.999, 0.99999999):
        kept, survivors = nucleus(logits, probs, p)
        keep = top_p_keep(logits, p)
        assert torch.equal(kept, probs * keep)
        assert survivors.tolist() == keep.sum(dim=-1).tolist()
        assert not keep[:, 7].any()


def test_a_draw_at_the_very_top_never_picks_a_removed_token() -> None:
    """uniform × total can round up to the total; the last token here has probability 0."""
    cdf = torch.tensor([[0.25, 1.0, 1.0, 1.0]])  # tokens 2 and 3 were removed
    total = cdf[:, -1:]
    assert _inverse_cdf(cdf, total.clone(), total).tolist() == [1]
    assert _inverse_cdf(cdf, torch.tensor([[0.25]]), total).tolist() == [1]
    assert _inverse_cdf(cdf, torch.tensor([[0.0]]), total).tolist() == [0]
