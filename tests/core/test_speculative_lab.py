"""The speculative lab headless (``labs/speculative.py``): totals that add up, and its checks."""

from __future__ import annotations

import copy

import pytest
import torch

from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.strategies.speculative import expected_tokens_per_call
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.common import Progress, finish
from kvstudio.labs.speculative import SpeculativeLabResult, speculative_lab

# Compares computations of different shapes (a verify forward of k + 1 tokens against one at a
# time): rerun under other CPU kernels by tests/core/test_other_cpus.py.
pytestmark = pytest.mark.numeric


@pytest.fixture(scope="module")
def target(tiny_model: MiniMindLM) -> MiniMindBackend:
    """The tiny model with sharper logits, so its greedy text does not repeat one token."""
    sharp = copy.deepcopy(tiny_model)
    with torch.no_grad():
        for p in sharp.parameters():
            p.mul_(3.0)
    return MiniMindBackend(sharp.eval(), name="tiny-sharp")


@pytest.fixture(scope="module")
def draft(target: MiniMindBackend) -> MiniMindLM:
    """A noisy copy of the target: it agrees with it often, not always."""
    noisy = copy.deepcopy(target.model)
    gen = torch.Generator().manual_seed(11)
    with torch.no_grad():
        for p in noisy.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * p.std() * 0.05)
    return noisy.eval()


def test_the_totals_add_up_and_greedy_is_identical(
    target: MiniMindBackend, tokenizer: TextTokenizer, draft: MiniMindLM
) -> None:
    prompt = tokenizer.encode("오늘 날씨 어때? 오늘 날씨 어때?")
    items = list(speculative_lab(target, tokenizer, prompt, draft=draft, ks=(4, 1),
                                 new_tokens=12, repeats=2))
    assert all(isinstance(i, Progress) for i in items[:-1])
    assert items[-2].done == items[-2].total == 2 * (1 + 4)  # plain + 2 kinds × 2 ks, twice
    result = items[-1]
    assert isinstance(result, SpeculativeLabResult)
    assert result.ks == (1, 4) and result.kinds == ("model", "prompt-lookup")
    assert result.all_identical and len(result.plain_ids) == 12  # eos banned: exactly N
    for run in result.runs:
        assert run.generated == 12 and run.seconds.count == 2
        assert run.target_calls == len(run.rounds)  # one target forward a round
        assert run.calls_per_token == pytest.approx(len(run.rounds) / 12)
        assert run.tokens_per_round * len(run.verify_rounds) == pytest.approx(12 - 1)
        assert run.alpha == pytest.approx(run.accepted / run.verified)
        assert run.formula_at_k == pytest.approx(expected_tokens_per_call(run.alpha, run.k))
    model_k4 = result.run("model", 4)
    assert model_k4.mean_drafted > 1  # the budget's end shortens the last rounds only
    assert 0 < model_k4.accepted < model_k4.drafted


def test_sampling_runs_are_reproducible(
    target: MiniMindBackend, tokenizer: TextTokenizer, draft: MiniMindLM
) -> None:
    settings = SamplingSettings(temperature=0.9, top_p=0.9, seed=3)

    def run() -> SpeculativeLabResult:
        return finish(speculative_lab(target, tokenizer, [5, 6, 7], draft=draft, ks=(2,),
                                      new_tokens=8, sampling=settings, repeats=1),
                      SpeculativeLabResult)

    first, second = run(), run()
    assert [r.token_ids for r in first.runs] == [r.token_ids for r in second.runs]
    assert not first.greedy


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"ks": (0,)}, "k must be"),
        ({"ks": ()}, "at least one"),
        ({"kinds": ("beam",)}, "Unknown draft kind"),
        ({"draft": None}, "needs a draft model"),
        ({"repeats": 0}, "at least one repeat"),
        ({"new_tokens": 5000}, "positions"),
    ],
)
def test_bad_settings_are_one_clear_error(
    target: MiniMindBackend, tokenizer: TextTokenizer, draft: MiniMindLM,
    changes: dict, message: str,
) -> None:
    kwargs: dict = {"draft": draft, "ks": (2,), "new_tokens": 4, "repeats": 1, **changes}
    with pytest.raises(ValueError, match=message):
        next(speculative_lab(target, tokenizer, [5, 6, 7], **kwargs))
