"""The inference path (inference.py: folded weights, fused adds) equals the module path."""

from __future__ import annotations

import pytest
import torch

from kvstudio.engine.cache.kinds import make_cache
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.inference import apply_rope_fast, signed_sin
from kvstudio.engine.model import Attention, MiniMindLM, apply_rope, rope_tables


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


@pytest.mark.parametrize("qk_norm", [False, True])
@pytest.mark.parametrize("kind", ["dynamic", "static", "sliding"])
def test_inference_path_decodes_like_module_path(kind: str, qk_norm: bool) -> None:
    """Prefill then one-token steps on each cache kind: same logits and same cached K/V."""
    model = _model(qk_norm=qk_norm)
    model.model.norm.weight.data.uniform_(0.5, 1.5)  # non-trivial norms, so folding matters
    for block in model.model.layers:
        block.input_layernorm.weight.data.uniform_(0.5, 1.5)
    ids = torch.randint(0, 97, (2, 20), generator=torch.Generator().manual_seed(1))
    spec = CacheSpec(kind, max_length=32, window=8)  # type: ignore[arg-type]
    results = []
    for grad in (False, True):
        cache = make_cache(2, spec)
        with torch.set_grad_enabled(grad):
            logits = [model(ids[:, :12], cache)]
            logits += [model(ids[:, t : t + 1], cache) for t in range(12, 20)]
        keys = [layer.keys.detach() for layer in cache if layer.keys is not None]
        results.append((torch.cat(logits, dim=1).detach(), keys))
    (fast, fast_keys), (plain, plain_keys) = results
    torch.testing.assert_close(fast, plain, rtol=1e-5, atol=1e-5)
    for a, b in zip(fast_keys, plain_keys, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_inference_weights_follow_replaced_parameters() -> None:
    """load_state_dict(assign=True) swaps the parameter objects: the snapshot must follow."""
    model, other = _model(), MiniMindLM(_model().config).init_weights(9).eval()
    ids = torch.randint(0, 97, (1, 12))
    with torch.no_grad():
        model(ids)  # build the snapshot from the old weights
        model.load_state_dict(other.state_dict(), assign=True)
        fast = model(ids)
        expected = other(ids)
    torch.testing.assert_close(fast, expected)


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
    """On the module path (autograd on), where `use_repeat_kv` applies."""
    model = _model()
    ids = torch.randint(0, 97, (1, 25))
    with torch.enable_grad():
        grouped = model(ids)
        Attention.use_repeat_kv = True
        try:
            repeated = model(ids)
        finally:
            Attention.use_repeat_kv = False
    torch.testing.assert_close(grouped.detach(), repeated.detach())


def test_qk_norm_model_chunk_on_cache_matches_full_forward() -> None:
    model = _model(qk_norm=True)
    ids = torch.randint(0, 97, (1, 40))
    with torch.no_grad():
        cache = make_cache(2)
        model(ids[:, :31], cache)
        chunk = model(ids[:, 31:], cache)  # 9 tokens on top of 31 cached ones
        full = model(ids)
    torch.testing.assert_close(chunk, full[:, 31:], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("foreach", [False, True])
def test_inference_weights_follow_an_optimizer_step(foreach: bool) -> None:
    """Training between evaluations (the trainer does this) must not leave a stale snapshot."""
    model = _model()
    ids = torch.randint(0, 97, (2, 16))
    with torch.no_grad():
        before = model(ids)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, foreach=foreach)
    loss = model(ids).logsumexp(-1).mean()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        after = model(ids)
    with torch.enable_grad():
        plain = model(ids).detach()
    assert not torch.allclose(before, after)
    torch.testing.assert_close(after, plain, rtol=1e-5, atol=1e-5)
