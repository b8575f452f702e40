"""The inference fast path (stacked, transposed weights; one RoPE) equals the plain path."""

from __future__ import annotations

import torch

from kvstudio.core.config import ModelConfig
from kvstudio.core.kv_cache import KVCache
from kvstudio.core.model import (
    Attention,
    MiniMindLM,
    apply_rope,
    apply_rope_fast,
    rope_tables,
    signed_sin,
)


def _model(qk_norm: bool = False) -> MiniMindLM:
    cfg = ModelConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=97,
        qk_norm=qk_norm,
        max_position_embeddings=256,
    )
    return MiniMindLM(cfg).init_weights(3).eval()


def test_rope_fast_equals_rotate_half_form() -> None:
    cos, sin = rope_tables(16, 20, 10_000.0)
    x = torch.randn(2, 20, 3, 16)
    torch.testing.assert_close(apply_rope_fast(x, cos, signed_sin(sin)), apply_rope(x, cos, sin))


def test_fused_inference_matches_training_path() -> None:
    model = _model()
    ids = torch.randint(0, 97, (2, 30))
    with torch.no_grad():
        fast = model(ids)
    with torch.enable_grad():
        plain = model(ids).detach()
    torch.testing.assert_close(fast, plain, rtol=1e-5, atol=1e-5)


def test_fused_weights_follow_in_place_updates() -> None:
    model = _model()
    ids = torch.randint(0, 97, (1, 12))
    with torch.no_grad():
        before = model(ids)
        model.model.layers[0].self_attn.k_proj.weight.mul_(2.0)  # e.g. load_state_dict
        model.model.layers[1].mlp.up_proj.weight.mul_(0.5)
        after = model(ids)
    with torch.enable_grad():
        plain = model(ids).detach()
    assert not torch.allclose(before, after)
    torch.testing.assert_close(after, plain, rtol=1e-5, atol=1e-5)


def test_grouped_attention_equals_materialised_repeat_kv() -> None:
    model = _model()
    ids = torch.randint(0, 97, (1, 25))
    with torch.no_grad():
        grouped = model(ids)
        Attention.use_repeat_kv = True
        try:
            repeated = model(ids)
        finally:
            Attention.use_repeat_kv = False
    torch.testing.assert_close(grouped, repeated)


def test_qk_norm_model_chunk_on_cache_matches_full_forward() -> None:
    model = _model(qk_norm=True)
    ids = torch.randint(0, 97, (1, 40))
    with torch.no_grad():
        cache = KVCache(2)
        model(ids[:, :31], cache)
        chunk = model(ids[:, 31:], cache)  # 9 tokens on top of 31 cached ones
        full = model(ids)
    torch.testing.assert_close(chunk, full[:, 31:], rtol=1e-5, atol=1e-5)
