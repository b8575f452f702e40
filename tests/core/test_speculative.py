"""Speculative decoding (``engine/strategies/speculative.py``): identity with greedy, cache
bookkeeping, and the acceptance rule's distribution.

- greedy: the output equals plain greedy decoding (`Stepper`) token for token, on
  20 prompts, k ∈ {1, 2, 4, 8}, with a draft model and with prompt lookup;
- after every round the target cache holds the committed tokens but the newest
  (its rows grow by accepted + 1 a round) and dropped m − a rows; the draft
  model's cache dropped m − 1 − a (0 after a full accept);
- sampling: the token committed at the first drafted position is distributed as
  the target's p (χ² at a fixed seed), and the same test rejects a wrong rule.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import pytest
import torch

from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.generate import Stepper
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.sampling import new_generator
from kvstudio.engine.strategies.drafters import (
    ModelDrafter,
    PromptLookupDrafter,
    distributions,
    draw,
    lookup_ngram,
)
from kvstudio.engine.strategies.speculative import (
    SpeculativeRun,
    Verdict,
    accept_drafts,
    expected_tokens_per_call,
)
from kvstudio.engine.tokenizer import TextTokenizer

GREEDY = SamplingSettings(temperature=0.0, top_p=1.0)
NEW_TOKENS = 16
WORDS = ["오늘", "날씨", "가", "좋아서", "산책", "을", "했다", ".", "우리", "는", "친구", "와"]


def prompts(tokenizer: TextTokenizer) -> list[list[int]]:
    """20 prompts; half repeat a phrase, so prompt lookup finds n-grams to propose."""
    out = []
    for i in range(20):
        words = [WORDS[(i * 5 + j * 7) % len(WORDS)] for j in range(3 + i % 5)]
        text = " ".join(words * (2 if i % 2 else 1))
        out.append(tokenizer.encode(text))
    return out


@pytest.fixture(scope="module")
def models(tiny_model: MiniMindLM) -> tuple[MiniMindLM, MiniMindLM]:
    """A target with peaked (varied) greedy choices and a noisy copy of it as the draft."""
    target = copy.deepcopy(tiny_model)
    with torch.no_grad():
        for p in target.parameters():
            p.mul_(3.0)  # sharper logits: greedy text that does not repeat one token
    draft = copy.deepcopy(target)
    gen = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for p in draft.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * p.std() * 0.05)
    return target.eval(), draft.eval()


def plain_greedy(model: MiniMindLM, tokenizer: TextTokenizer, prompt: list[int]) -> list[int]:
    run = Stepper(
        MiniMindBackend(model), tokenizer, prompt, max_new_tokens=NEW_TOKENS, sampling=GREEDY
    )
    for _ in run:
        pass
    return run.generated_ids[0]


@pytest.mark.numeric  # one verify forward against plain decoding
@pytest.mark.parametrize("kind", ["model", "prompt-lookup"])
def test_greedy_speculative_decoding_equals_plain_greedy(
    models: tuple[MiniMindLM, MiniMindLM], tokenizer: TextTokenizer, kind: str
) -> None:
    target, draft = models
    accepted = rejected = 0
    for prompt in prompts(tokenizer):
        reference = plain_greedy(target, tokenizer, prompt)
        for k in (1, 2, 4, 8):
            drafter = (
                ModelDrafter(draft, GREEDY, new_generator(0))
                if kind == "model"
                else PromptLookupDrafter()
            )
            run = SpeculativeRun(
                target, drafter, prompt, k=k, max_new_tokens=NEW_TOKENS, sampling=GREEDY,
                eos_id=tokenizer.eos_id,
            )
            rounds = list(run)
            assert run.generated == reference, (kind, k, prompt)
            check_cache_rows(rounds, len(prompt), model_draft=kind == "model")
            accepted += sum(r.accepted for r in rounds)
            rejected += sum(r.verified - r.accepted for r in rounds)
            assert rounds[-1].target_calls == len(rounds)  # one target forward a round
    assert accepted > 20 and rejected > 20  # both paths of the rule were really taken


def check_cache_rows(rounds: Sequence, prompt_len: int, model_draft: bool) -> None:
    """After every round: target rows = committed − 1, grown by accepted + 1; crops m − a."""
    committed = prompt_len
    target_rows = 0
    for r in rounds:
        committed += len(r.committed)
        assert r.target_length == committed - 1
        if r.index == 0:
            assert r.target_length == prompt_len and r.target_appended == prompt_len
        elif r.next_token is not None:  # not cut short by eos
            m, a = len(r.drafted), r.accepted
            assert r.target_length == target_rows + a + 1
            assert r.target_appended == 1 + m and r.target_cropped == m - a
            if model_draft and m:
                assert r.draft_cropped == max(0, m - 1 - a)
                # The draft holds every committed token but the newest, or but the
                # newest two after a full accept (it never fed its last draft).
                assert r.draft_length == committed - (2 if a == m else 1)
        if not model_draft:
            assert r.draft_length is None and r.draft_appended == r.draft_cropped == 0
        target_rows = r.target_length


def test_the_draft_must_share_the_vocabulary(
    models: tuple[MiniMindLM, MiniMindLM], tiny_config: ModelConfig
) -> None:
    other = MiniMindLM(ModelConfig(**{**tiny_config.to_dict(), "vocab_size": 50})).init_weights(1)
    with pytest.raises(ValueError, match="vocabulary"):
        SpeculativeRun(models[0], ModelDrafter(other, GREEDY, new_generator(0)), [3, 4, 5])


def test_a_cache_that_cannot_crop_is_refused_before_the_run(
    models: tuple[MiniMindLM, MiniMindLM],
) -> None:
    with pytest.raises(ValueError, match="cannot be cropped"):
        SpeculativeRun(models[0], PromptLookupDrafter(), [3, 4, 5],
                       cache_spec=CacheSpec("sliding"))


@pytest.mark.numeric  # one verify forward against plain decoding
@pytest.mark.parametrize("kind", ["static", "paged", "int8"])
def test_every_croppable_cache_gives_the_greedy_tokens(
    models: tuple[MiniMindLM, MiniMindLM], tokenizer: TextTokenizer, kind: str
) -> None:
    """The target's cache kind changes nothing but its storage: static, paged (blocks go back
    to the pool) and int8 (its own greedy reference) crop like the dynamic cache."""
    target, draft = models
    prompt = prompts(tokenizer)[1]
    spec = CacheSpec(kind, max_length=128, block_size=4)  # type: ignore[arg-type]
    plain = Stepper(MiniMindBackend(target), tokenizer, prompt, max_new_tokens=NEW_TOKENS,
                    sampling=GREEDY, cache=spec)
    for _ in plain:
        pass
    run = SpeculativeRun(target, ModelDrafter(draft, GREEDY, new_generator(0)), prompt, k=4,
                         max_new_tokens=NEW_TOKENS, sampling=GREEDY, eos_id=tokenizer.eos_id,
                         cache_spec=spec)
    check_cache_rows(list(run), len(prompt), model_draft=True)
    assert run.generated == plain.generated_ids[0]


def test_prompt_lookup_proposes_what_followed_the_last_ngram() -> None:
    text = [5, 6, 7, 8, 9, 1, 5, 6, 7]
    assert lookup_ngram(text, 3) == (8, 9, 1)  # "5 6 7" seen before, then 8 9 1
    assert lookup_ngram(text, 10) == (8, 9, 1, 5, 6, 7)  # never past the text itself
    assert lookup_ngram([1, 2, 3], 4) == ()  # nothing repeats


# ---- sampling: the rule keeps the target's distribution --------------------------------------
VOCAB, DRAWS = 8, 6000
CHI2_CRITICAL_7DF = 24.32  # χ² with 7 degrees of freedom, p = 0.001


def chi_square(counts: torch.Tensor, probs: torch.Tensor) -> float:
    expected = probs * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


def tiny_vocab_distributions() -> tuple[torch.Tensor, torch.Tensor]:
    """p (3, 8) from a vocab-8 target, q (2, 8) from a different vocab-8 draft, through the
    pipeline; the draft's top-k 5 leaves tokens q never proposes, so the residual matters."""
    cfg = ModelConfig(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
        vocab_size=VOCAB, max_position_embeddings=64,
    )
    target, draft = MiniMindLM(cfg).init_weights(3), MiniMindLM(cfg).init_weights(4)
    ids = torch.tensor([[1, 5, 2]])

    def spread(logits: torch.Tensor) -> torch.Tensor:  # a random init's logits are all ≈ 0
        return (logits - logits.mean(-1, keepdim=True)) / logits.std(-1, keepdim=True) * 1.5

    p_settings = SamplingSettings(temperature=1.0, top_p=1.0)
    q_settings = SamplingSettings(temperature=1.0, top_p=1.0, top_k=5)
    with torch.inference_mode():
        p = distributions(spread(target(ids)[0]), p_settings, None)  # (3, 8)
        q = distributions(spread(draft(ids)[0, :2]), q_settings, None)  # (2, 8)
    return p, q


def always_accept(
    p: torch.Tensor, q: torch.Tensor | None, drafts: Sequence[int], gen: torch.Generator
) -> Verdict:
    return Verdict(accepted=len(drafts), next_token=0)


def resample_from_p(
    p: torch.Tensor, q: torch.Tensor | None, drafts: Sequence[int], gen: torch.Generator
) -> Verdict:
    """The right acceptance test but the correction drawn from p instead of max(0, p − q)."""
    assert q is not None
    for i, token in enumerate(drafts):
        if float(torch.rand(1, generator=gen)) < min(1.0, float(p[i, token] / q[i, token])):
            continue
        return Verdict(accepted=i, next_token=draw(p[i], gen))
    return Verdict(accepted=len(drafts), next_token=draw(p[-1], gen))


@pytest.mark.parametrize(
    ("rule", "deterministic", "matches"),
    [
        (accept_drafts, False, True),
        (accept_drafts, True, True),
        (always_accept, False, False),  # the same test must catch a wrong rule
        (resample_from_p, False, False),
    ],
)
def test_first_drafted_position_follows_the_target_distribution(
    rule: Callable[..., Verdict], deterministic: bool, matches: bool
) -> None:
    p, q = tiny_vocab_distributions()
    assert chi_square(q[0] * DRAWS, p[0]) > 100  # p and q really differ
    gen = new_generator(2024)
    counts = torch.zeros(VOCAB)
    for _ in range(DRAWS):
        if deterministic:  # prompt lookup: fixed drafts, q one-hot
            drafts, q_used = [3, 1], None
        else:
            drafts = [int(torch.multinomial(q[i], 1, generator=gen)) for i in range(2)]
            q_used = q
        verdict = rule(p, q_used, drafts, gen)
        first = drafts[0] if verdict.accepted >= 1 else verdict.next_token
        counts[first] += 1
    statistic = chi_square(counts, p[0])
    assert (statistic < CHI2_CRITICAL_7DF) is matches, statistic


def test_a_sampled_run_is_reproducible_and_keeps_the_bookkeeping(
    models: tuple[MiniMindLM, MiniMindLM], tokenizer: TextTokenizer
) -> None:
    target, draft = models
    settings = SamplingSettings(temperature=0.9, top_p=0.9, top_k=20, repetition_penalty=1.1)

    def sampled() -> tuple[list[int], list]:
        run = SpeculativeRun(
            target, ModelDrafter(draft, settings, new_generator(1)), prompts(tokenizer)[3], k=4,
            max_new_tokens=NEW_TOKENS, sampling=settings, eos_id=tokenizer.eos_id,
        )
        rounds = list(run)
        return run.generated, rounds

    first, rounds = sampled()
    assert sampled()[0] == first and len(first) == NEW_TOKENS
    check_cache_rows(rounds, len(prompts(tokenizer)[3]), model_draft=True)


def test_expected_tokens_per_call_formula() -> None:
    assert expected_tokens_per_call(0.0, 4) == 1.0
    assert expected_tokens_per_call(1.0, 4) == 5.0
    assert expected_tokens_per_call(0.5, 2) == pytest.approx(1.75)
    with pytest.raises(ValueError):
        expected_tokens_per_call(1.5, 2)


def test_a_sampled_run_draws_the_first_drafted_token_from_the_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """End to end on vocab-8 models: over many runs sharing one seeded generator, the token
    a round commits at its first drafted position is distributed as plain sampling from the
    target (the exact marginal over the prefill's token); always accepting fails the test."""
    cfg = ModelConfig(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
        vocab_size=VOCAB, max_position_embeddings=64,
    )

    def model(seed: int) -> MiniMindLM:
        m = MiniMindLM(cfg).init_weights(seed).eval()
        with torch.no_grad():
            for p in m.parameters():
                p.mul_(3.0)  # spread the logits of a random init
        return m

    target, draft = model(3), model(4)
    prompt = [1, 5, 2]
    settings = SamplingSettings(temperature=1.0, top_p=1.0, top_k=6)  # the pipeline, top-k on
    with torch.inference_mode():
        first = distributions(target(torch.tensor([prompt]))[0, -1:], settings, None)[0]
        exact = torch.zeros(VOCAB)  # P(token 2) = Σ_t P(t) · P(token 2 | t)
        for t in range(VOCAB):
            if first[t] > 0:
                after = target(torch.tensor([[*prompt, t]]))[0, -1:]
                exact += first[t] * distributions(after, settings, None)[0]

    def second_tokens(draws: int) -> torch.Tensor:
        gen = new_generator(7)  # one generator for every draw: a fixed seed
        counts = torch.zeros(VOCAB)
        for _ in range(draws):
            run = SpeculativeRun(
                target, ModelDrafter(draft, settings, gen), prompt, k=2, max_new_tokens=4,
                sampling=settings, generator=gen,
            )
            rounds = list(run)
            assert len(rounds[1].drafted) == 2  # the first drafted position is token 2
            counts[run.generated[1]] += 1
        return counts

    statistic = chi_square(second_tokens(1000), exact)
    assert statistic < CHI2_CRITICAL_7DF, statistic
    monkeypatch.setattr("kvstudio.engine.strategies.speculative.accept_drafts", always_accept)
    assert chi_square(second_tokens(200), exact) > CHI2_CRITICAL_7DF
