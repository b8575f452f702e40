"""Our beam search against transformers' own ``generate(num_beams=…)`` on the converted folder.

Same returned beams (token ids, eos included) and scores (float32 tolerance) for a few
prompts, K ∈ {2, 4}, length_penalty ∈ {1.0, 2.0, 0.5} and early_stopping True / False /
"never". The end-of-sequence id is a token the model often picks, so hypotheses end with
eos at different lengths and the finished-hypothesis bookkeeping and early stopping matter.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hf_fixtures import tiny_model

from kvstudio.engine.backends.hf import transformers_beam_search
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.strategies.beam import BeamSearch, BeamSettings, EarlyStopping
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import save_model_folder
from kvstudio.files.convert import export_hf
from kvstudio.labs.beam import same_sequences

pytestmark = pytest.mark.hf
PROMPTS = ("키와 값을", "The KV cache", "값을 저장하면")
NEW_TOKENS = 10


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory, tokenizer: TextTokenizer) -> Path:
    return export_hf(tiny_model(), tokenizer, tmp_path_factory.mktemp("beam") / "hf")


def _ours(backend: MiniMindBackend, prompt: list[int], settings: BeamSettings) -> list[
        tuple[tuple[int, ...], float]]:
    search = BeamSearch(backend, prompt, settings)
    for _ in search:
        pass
    assert search.result is not None
    return [(h.tokens, h.score) for h in search.result.sequences]


@pytest.mark.parametrize("prompt_text", PROMPTS)
def test_beams_and_scores_equal_transformers(
    converted: Path, tokenizer: TextTokenizer, prompt_text: str
) -> None:
    backend = MiniMindBackend(tiny_model())
    prompt = tokenizer.encode(prompt_text)
    # eos := the third token of the unpenalised best beam, so some hypotheses end with it.
    backend.eos_token_id = None
    plain = _ours(backend, prompt, BeamSettings(num_beams=2, max_new_tokens=NEW_TOKENS))
    eos = plain[0][0][2]
    backend.eos_token_id = eos
    ended_with_eos = 0
    cases: list[tuple[int, float, EarlyStopping]] = [
        (K, lp, es) for K in (2, 4) for lp in (1.0, 2.0) for es in (True, False)
    ] + [(4, 0.5, "never"), (3, 2.0, "never")]
    for K, lp, es in cases:
        settings = BeamSettings(num_beams=K, length_penalty=lp, early_stopping=es,
                                max_new_tokens=NEW_TOKENS, num_return_sequences=K)
        ours = _ours(backend, prompt, settings)
        theirs = transformers_beam_search(
            converted, prompt, num_beams=K, length_penalty=lp, early_stopping=es,
            max_new_tokens=NEW_TOKENS, num_return_sequences=K, eos_token_id=eos,
        )
        assert [ids for ids, _ in ours] == [tuple(ids) for ids, _ in theirs], (K, lp, es)
        for (_, a), (_, b) in zip(ours, theirs, strict=True):
            assert a == pytest.approx(b, rel=1e-5, abs=1e-4), (K, lp, es)
        assert same_sequences(ours, theirs)
        ended_with_eos += sum(1 for ids, _ in ours if ids[-1] == eos)
    assert ended_with_eos > 0  # the eos bookkeeping was exercised


def test_cli_beam_says_same_as_transformers(
    tokenizer: TextTokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kvstudio.cli.main import main

    folder = save_model_folder(tiny_model(), tokenizer, tmp_path / "ours")
    code = main(["beam", "--model", str(folder), "--prompt", "키와 값을", "--raw",
                 "--beams", "3", "--new-tokens", "6", "--length-penalty", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "same as transformers: yes" in out
    assert "step  beam  from" in out


def test_the_lab_on_a_transformers_model_drives_its_cache_and_agrees(
    converted: Path, tokenizer: TextTokenizer
) -> None:
    """Our loop over transformers' own model and cache (rows reordered with its
    ``reorder_cache``) returns what its ``generate(num_beams=…)`` returns."""
    from kvstudio.engine.backends.hf import load_hf_backend
    from kvstudio.labs.beam import BeamLabResult, beam_lab
    from kvstudio.labs.common import finish

    backend, hf_tokenizer = load_hf_backend(converted)
    settings = BeamSettings(num_beams=3, length_penalty=2.0, max_new_tokens=6,
                            num_return_sequences=3)
    result = finish(beam_lab(backend, hf_tokenizer, tokenizer.encode(PROMPTS[0]), settings),
                    BeamLabResult)
    assert result.transformers.ran and result.transformers.same
    # The same beams as our own model on the same weights.
    ours = _ours(MiniMindBackend(tiny_model()), tokenizer.encode(PROMPTS[0]), settings)
    assert [h.tokens for h in result.search.sequences] == [ids for ids, _ in ours]
