"""The cache inspector: old rows never change, one row per step, recompute equals the cache.

The attention weights are checked against a plain MiniMind decoder written in the
(``kvstudio/engine/readable_model.py``), which shares no code with the model or the probe.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.readable_model import ReadableDecoder as ReferenceDecoder
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import MODELS_DIR, load_model_folder
from kvstudio.labs.inspector import CacheFrame, CacheInspector

# Compares computations of different shapes (recomputed rows against cached rows): rerun under
# other CPU kernels by tests/core/test_other_cpus.py.
pytestmark = pytest.mark.numeric

KINDS = {
    "dynamic": CacheSpec("dynamic"),
    "static": CacheSpec("static", max_length=40),
    "sliding": CacheSpec("sliding", window=6),
}


def prompt(tok: TextTokenizer) -> list[int]:
    return tok.chat_ids("서울은 어떤 도시인가요?")


def frames(backend: MiniMindBackend, tok: TextTokenizer, **kw: object) -> list[CacheFrame]:
    kw.setdefault("max_new_tokens", 6)
    kw.setdefault("stop_at_eos", False)
    return list(CacheInspector(backend, tok, prompt(tok), **kw))  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["dynamic", "static"])
def test_old_rows_unchanged_and_one_row_per_step(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, kind: str
) -> None:
    P = len(prompt(tokenizer))
    run = frames(tiny_backend, tokenizer, cache=KINDS[kind])
    assert run[0].rows_appended == (P, P) and run[0].old_rows_compared == 0
    for index, frame in enumerate(run[1:], start=1):
        assert frame.old_rows_max_delta == (0.0, 0.0) and frame.old_rows_unchanged
        assert frame.rows_appended == (1, 1)  # exactly one row per layer
        assert frame.old_rows_compared == P + index - 1
        assert frame.held_rows() == P + index


@pytest.mark.parametrize("kind", ["dynamic", "static"])
def test_a_corrupted_row_is_caught(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, kind: str
) -> None:
    inspector = CacheInspector(
        tiny_backend, tokenizer, prompt(tokenizer), cache=KINDS[kind], max_new_tokens=5
    )
    inspector.step()
    assert inspector.step().old_rows_unchanged
    keys = inspector.cache[1].keys
    assert keys is not None
    with torch.inference_mode():
        keys[0, 3, 1, 5] += 0.25  # one number of one cached row of layer 1
    frame = inspector.step()
    assert frame.old_rows_max_delta[0] == 0.0
    assert frame.old_rows_max_delta[1] == pytest.approx(0.25)
    assert not frame.old_rows_unchanged


def test_static_empty_slots_are_empty(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    frame = frames(tiny_backend, tokenizer, cache=KINDS["static"])[-1]
    held = frame.held_rows()
    assert len(frame.positions) == 40 and frame.keys.shape[1] == 40
    assert frame.positions[held:] == (-1,) * (40 - held)
    assert np.isnan(frame.keys[:, held:]).all() and np.isnan(frame.values[:, held:]).all()
    assert np.isnan(frame.attention[:, :, held:]).all()
    assert not np.isnan(frame.keys[:, :held]).any()
    assert frame.row_texts[held:] == ("",) * (40 - held)


def test_sliding_window_evicted_rows_leave_the_view(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    run = frames(tiny_backend, tokenizer, cache=KINDS["sliding"])
    for frame in run:
        assert frame.held_rows() == 5  # W = 6 keys per query, itself included: 5 kept
        assert frame.positions == tuple(range(frame.query_position - 4, frame.query_position + 1))
        assert frame.old_rows_unchanged
    assert run[1].rows_appended == (1, 1) and run[1].old_rows_compared == 4
    # The query saw keys the cache no longer holds: that weight is reported, not hidden.
    total = np.nansum(run[-1].attention, axis=-1) + run[-1].evicted_attention  # (L, H)
    np.testing.assert_allclose(total, 1.0, atol=1e-5)


def test_recompute_rows_equal_the_cached_rows(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    run = frames(tiny_backend, tokenizer, mode="recompute")
    cached = frames(tiny_backend, tokenizer, mode="cached")
    assert [f.token_id for f in run] == [f.token_id for f in cached]
    assert run[0].recompute_max_delta_k == (0.0, 0.0)  # same shapes at the prefill: bit-equal
    for frame in run:
        assert frame.recompute_dtype_match is True and frame.dtype == "float32"
        assert frame.recompute_max_delta_k is not None and frame.recompute_max_delta_v is not None
        assert max(frame.recompute_max_delta_k + frame.recompute_max_delta_v) < 1e-5
    assert cached[0].recompute_max_delta_k is None


def reference_weights(backend: MiniMindBackend, ids: list[int], layer: int) -> torch.Tensor:
    """The last query's attention weights (H, S) from the plain reference decoder."""
    model = backend.model
    reference = ReferenceDecoder(model.config, model.state_dict())
    with torch.no_grad():
        reference.forward(torch.tensor([ids]))
    q = reference.queries[layer][0, -1]  # (H, d), after RoPE
    k = reference.attended_keys[layer][0]  # (T, G, d)
    H, G, d = q.shape[0], k.shape[1], q.shape[1]
    k = k.repeat_interleave(H // G, dim=1)  # (T, H, d)
    scores = torch.einsum("hd,thd->ht", q, k) / math.sqrt(d)
    return torch.softmax(scores, dim=-1)


def test_attention_weights_match_the_reference(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    inspector = CacheInspector(tiny_backend, tokenizer, prompt(tokenizer), max_new_tokens=4)
    for _ in range(3):
        frame = inspector.step()
    ids = inspector.tokens[: frame.query_position + 1]
    for layer in range(frame.num_layers):
        expected = reference_weights(tiny_backend, ids, layer).numpy()
        np.testing.assert_allclose(frame.attention[layer], expected, atol=1e-5)
    assert frame.query_heads(1) == (2, 3)  # 4 query heads share 2 K/V heads
    texts = frame.row_texts
    assert len(texts) == len(ids) and texts[-1] == inspector._token_text(ids[-1])


def test_inspector_on_ko_chat() -> None:
    folder = MODELS_DIR / "ko-chat"
    if not (folder / "model.safetensors").exists():
        pytest.skip("the shipped ko-chat model is not in kvstudio/resources/models")
    loaded = load_model_folder(folder)
    backend = MiniMindBackend(loaded.model, name="ko-chat")
    for kind in ("dynamic", "static"):
        run = frames(backend, loaded.tokenizer, cache=KINDS[kind])
        assert all(f.old_rows_unchanged for f in run)
        assert all(f.rows_appended == (1, 1, 1, 1) for f in run[1:])
        assert run[-1].keys.shape[1:] == ((40 if kind == "static" else run[-1].held_rows()), 2, 32)
    recompute = frames(backend, loaded.tokenizer, mode="recompute")
    assert max(max(f.recompute_max_delta_k or (0.0,)) for f in recompute) < 1e-4


def test_inspector_refuses_what_it_cannot_show(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    with pytest.raises(ValueError, match="static cache holds 8"):
        CacheInspector(
            tiny_backend, tokenizer, prompt(tokenizer), cache=CacheSpec("static", max_length=8)
        )
    with pytest.raises(ValueError, match="transformers"):
        CacheInspector(object(), tokenizer, [1, 2])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        CacheInspector(tiny_backend, tokenizer, [])
