"""Sliding windows against transformers: our W is Mistral's ``sliding_window``, and hybrid
models' bytes follow a per-layer formula, and the cache goes in by the keyword the installed
transformers wants (tiny models, offline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from hf_fixtures import VOCAB, tiny_model

from kvstudio.engine import formulas
from kvstudio.engine.backends.hf import load_hf_backend
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.convert import export_hf
from kvstudio.labs.cache.compare import CompareResult, compare_modes
from kvstudio.labs.common import finish

transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.hf
GREEDY = SamplingSettings.greedy_settings()
WINDOW = 5


def greedy_run(backend: object, tok: TextTokenizer, prompt: list[int], mode: str,
               spec: CacheSpec, n: int = 12) -> Stepper:
    stepper = Stepper(backend, tok, prompt, mode=mode, sampling=GREEDY,  # type: ignore[arg-type]
                      max_new_tokens=n, cache=spec, stop_at_eos=False)
    list(stepper)
    return stepper


def mistral_folder(folder: Path, tokenizer: TextTokenizer, window: int) -> MiniMindBackend:
    """Our tiny model written as a Mistral folder with `window`: same weights, same window."""
    model = tiny_model()
    export_hf(model, tokenizer, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config.update(model_type="mistral", architectures=["MistralForCausalLM"],
                  sliding_window=window)
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return MiniMindBackend(model, name="ours")


@pytest.mark.filterwarnings("error:.*past_key_values.*:FutureWarning")
def test_our_window_is_mistrals_sliding_window(tokenizer: TextTokenizer, tmp_folder: Path) -> None:
    ours = mistral_folder(tmp_folder, tokenizer, WINDOW)
    hf, tok = load_hf_backend(tmp_folder)
    assert type(hf.model).__name__ == "MistralForCausalLM"
    assert hf.layer_windows() == (WINDOW, WINDOW)
    prompt = tok.encode("키와 값을 저장하면 다음 토큰을 만들 때")[:9]
    assert len(prompt) == 9 > WINDOW

    # Logits of the whole sequence, no cache: a query sees W keys, itself included.
    ids = torch.tensor([prompt])
    with torch.no_grad():
        theirs = hf.model(input_ids=ids, use_cache=False).logits
        mine = ours.model(ids, window=WINDOW)
        one_more = ours.model(ids, window=WINDOW + 1)
    torch.testing.assert_close(mine, theirs, rtol=1e-4, atol=1e-4)
    assert (one_more - theirs).abs().max() > 1e-2, "W + 1 keys must differ from Mistral's W"

    sliding = CacheSpec("sliding", window=WINDOW)
    runs = {
        "ours cached": greedy_run(ours, tok, prompt, "cached", sliding),
        "ours recompute": greedy_run(ours, tok, prompt, "recompute", sliding),
        "mistral cached": greedy_run(hf, tok, prompt, "cached", CacheSpec("dynamic")),
        "mistral recompute": greedy_run(hf, tok, prompt, "recompute", CacheSpec("dynamic")),
    }
    tokens = {name: run.generated_ids for name, run in runs.items()}
    assert len({str(t) for t in tokens.values()}) == 1, tokens
    assert len(set(tokens["ours cached"][0])) > 3, "a constant sequence would hide a bug"
    # Both caches keep W − 1 tokens per layer: the same bytes at every step.
    mine_bytes = [r.cache_used_bytes for r in runs["ours cached"].records]
    their_bytes = [r.cache_used_bytes for r in runs["mistral cached"].records]
    per_token = formulas.bytes_per_token(2, 2, 12, 4)
    assert mine_bytes == their_bytes == [per_token * (WINDOW - 1)] * 12
    assert max(r.attention_mask_shape[1] for r in runs["ours cached"].records[1:]) == WINDOW


def hybrid_folder(folder: Path, tokenizer: TextTokenizer) -> Path:
    """A random EXAONE-4.0-style model: 3 sliding layers (W = 8) and one full layer."""
    config = transformers.Exaone4Config(
        vocab_size=VOCAB, hidden_size=48, intermediate_size=96, num_hidden_layers=4,
        num_attention_heads=6, num_key_value_heads=2, head_dim=12, sliding_window=8,
        layer_types=["sliding_attention"] * 3 + ["full_attention"],
        max_position_embeddings=256, initializer_range=0.5, eos_token_id=2, bos_token_id=1,
    )
    torch.manual_seed(0)
    transformers.Exaone4ForCausalLM(config).save_pretrained(folder)
    tokenizer.save(folder)
    return folder


@pytest.mark.parametrize("kind", ["dynamic", "static"])
def test_hybrid_model_bytes_follow_the_per_layer_formula(
    kind: str, tokenizer: TextTokenizer, tmp_folder: Path
) -> None:
    hf, tok = load_hf_backend(hybrid_folder(tmp_folder, tokenizer))
    spec = CacheSpec(kind, max_length=64)  # type: ignore[arg-type]
    plan = hf.cache_plan(spec)
    assert plan.is_hybrid and plan.kinds_summary() == "sliding W=8 ×3, full ×1"
    prompt = tok.encode("키와 값을 저장하면 다음 토큰을")[:10]
    result = finish(compare_modes(hf, tok, prompt, 12, cache=spec, warmup_tokens=1),
                    CompareResult)
    assert result.identical
    c = result.cached
    T = len(prompt) + 11  # positions in the cache at the end
    # Sliding layers keep W − 1 = 7 (dynamic) or min(M, W) = 8 (static); the full one keeps T.
    kept = 7 if kind == "dynamic" else 8
    per_layer_token = formulas.cache_bytes(1, 1, 2, 12, 4)
    assert c.cache_used_bytes == c.cache_bytes_formula == per_layer_token * (3 * kept + T)
    allocated = 3 * kept + (64 if kind == "static" else T)
    assert c.cache_bytes == c.cache_allocated_formula == per_layer_token * allocated
    every_layer_full = formulas.cache_bytes(4, T, 2, 12, 4)
    assert c.cache_used_bytes < every_layer_full  # the saving the table shows
    for record in c.records:  # per layer, step by step
        positions = len(prompt) + record.step
        held = [k + v for k, v in record.cache_layer_bytes]
        assert held == [per_layer_token * t for t in plan.allocated_tokens(positions)]


def test_compare_and_info_show_a_hybrid_model(
    tokenizer: TextTokenizer, tmp_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kvstudio.cli.main import main

    folder = hybrid_folder(tmp_folder, tokenizer)
    argv = ["compare", "--model", str(folder), "--prompt-tokens", "12", "--new-tokens", "6"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "cache layers:      sliding W=8 ×3, full ×1" in out
    assert "formulas match:    tokens fed yes, cache bytes yes" in out
    # 12 tokens of the lab text would end inside a character: P is cut to 11, and says so
    assert "Note: the lab text is cut to 11 tokens at a character boundary (12 asked" in out
    assert "2·ΣT_l·H_kv·d·bytes = 2·(7+7+7+16)·2·12·4" in out  # full layer: P + N − 1 = 16
    assert main(["info", "--model", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "Layers: sliding W=8 ×3, full ×1" in out


def test_the_cache_goes_by_the_keyword_the_forward_takes() -> None:
    """transformers 5.24 deprecates ``past_key_values`` for ``cache``; older ones only know it."""
    from kvstudio.engine.backends.hf import cache_argument

    class New:
        def forward(self, input_ids: object, cache: object = None, **kwargs: object) -> None: ...

    class Old:
        def forward(self, input_ids: object, past_key_values: object = None) -> None: ...

    assert cache_argument(New()) == "cache"
    assert cache_argument(Old()) == "past_key_values"
