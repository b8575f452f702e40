"""The fused model (q|k|v and gate|up as one product, weights (in, out)) equals MiniMind written
plainly (``kvstudio/engine/readable_model.py``: separate (out, in) matrices, rotate_half,
repeat_kv copies), and its state dict is MiniMind's, names, shapes and order."""

from __future__ import annotations

import pytest
import torch

from kvstudio.engine.cache.kinds import make_cache
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import (
    Block,
    MiniMindLM,
    apply_rope,
    apply_rope_reference,
    rope_tables,
    signed_sin,
)
from kvstudio.engine.readable_model import ReadableDecoder as ReferenceDecoder

# Compares computations of different shapes (the fused model against MiniMind written plainly):
# rerun under other CPU kernels by tests/core/test_other_cpus.py.
pytestmark = pytest.mark.numeric

TOL = {"rtol": 1e-5, "atol": 1e-5}


def _model(qk_norm: bool = False, tied: bool = True) -> MiniMindLM:
    cfg = ModelConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=97,
        qk_norm=qk_norm,
        tie_word_embeddings=tied,
        max_position_embeddings=256,
    )
    model = MiniMindLM(cfg).init_weights(3).eval()
    with torch.no_grad():  # non-trivial norm weights, so a norm applied wrongly shows
        for name, p in model.named_parameters():
            if name.endswith("norm"):
                p.uniform_(0.5, 1.5)
    return model


def _minimind_state(model: MiniMindLM) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_rope_roll_form_equals_rotate_half_form() -> None:
    cos, sin = rope_tables(16, 20, 10_000.0)
    x = torch.randn(2, 20, 3, 16)
    fast = apply_rope(x, cos[:, None, :], signed_sin(sin)[:, None, :])
    torch.testing.assert_close(fast, apply_rope_reference(x, cos, sin))


@pytest.mark.parametrize("tied", [True, False])
@pytest.mark.parametrize("qk_norm", [False, True])
def test_prefill_equals_the_plain_reference(qk_norm: bool, tied: bool) -> None:
    model = _model(qk_norm, tied)
    reference = ReferenceDecoder(model.config, _minimind_state(model))
    ids = torch.randint(0, 97, (2, 30), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(model(ids), reference.forward(ids), **TOL)
        for window in (1, 5):  # recompute with a window: the mask a sliding cache implies
            expected = ReferenceDecoder(model.config, _minimind_state(model)).forward(
                ids, window=window
            )
            torch.testing.assert_close(model(ids, window=window), expected, **TOL)


@pytest.mark.parametrize("qk_norm", [False, True])
@pytest.mark.parametrize("kind", ["dynamic", "static", "paged", "fp16"])
def test_cached_decode_equals_the_plain_reference(kind: str, qk_norm: bool) -> None:
    """Prefill then one-token steps on each cache kind: same logits and same cached keys."""
    model = _model(qk_norm)
    reference = ReferenceDecoder(model.config, _minimind_state(model))
    ids = torch.randint(0, 97, (1, 20), generator=torch.Generator().manual_seed(2))
    spec = CacheSpec(kind, max_length=32, block_size=4)  # type: ignore[arg-type]
    cache = make_cache(2, spec)
    with torch.no_grad():
        ours = [model(ids[:, :12], cache)] + [
            model(ids[:, t : t + 1], cache) for t in range(12, 20)
        ]
        theirs = [reference.forward(ids[:, :12], use_cache=True)]
        theirs += [reference.forward(ids[:, t : t + 1], use_cache=True) for t in range(12, 20)]
    tol = {"rtol": 2e-3, "atol": 2e-3} if kind == "fp16" else TOL  # fp16-stored K/V
    torch.testing.assert_close(torch.cat(ours, dim=1), torch.cat(theirs, dim=1), **tol)
    assert cache.seq_length == 20
    if kind in ("dynamic", "static"):
        for layer, keys in zip(cache, reference.keys, strict=True):
            assert keys is not None
            torch.testing.assert_close(layer.keys[:, :20], keys, **TOL)  # before repeat_kv: G


def test_sliding_cache_decode_equals_windowed_recompute() -> None:
    model = _model()
    ids = torch.randint(0, 97, (1, 24), generator=torch.Generator().manual_seed(3))
    cache = make_cache(2, CacheSpec("sliding", window=6))
    with torch.no_grad():
        steps = [model(ids[:, :10], cache)] + [
            model(ids[:, t : t + 1], cache) for t in range(10, 24)
        ]
        expected = ReferenceDecoder(model.config, _minimind_state(model)).forward(ids, window=6)
    torch.testing.assert_close(torch.cat(steps, dim=1), expected, **TOL)


def test_training_gradients_equal_the_plain_reference() -> None:
    """Autograd through the fused forward: the loss and the gradient of every MiniMind tensor."""
    model = _model(qk_norm=True).train()
    ids = torch.randint(0, 97, (2, 16), generator=torch.Generator().manual_seed(4))
    loss = model(ids).logsumexp(-1).mean()
    loss.backward()
    ours = {name: p.grad for name, p in model.named_parameters()}
    grads = MiniMindLM(model.config)  # holds our gradients in MiniMind's layout via the hook
    with torch.no_grad():
        for name, p in grads.named_parameters():
            grad = ours[name]
            assert grad is not None
            p.copy_(grad)
    state = {k: v.detach().clone().requires_grad_() for k, v in model.state_dict().items()}
    state["lm_head.weight"] = state["model.embed_tokens.weight"]  # tied: one tensor
    reference = ReferenceDecoder(model.config, {})
    reference.w = state
    expected_loss = reference.forward(ids).logsumexp(-1).mean()
    expected_loss.backward()
    torch.testing.assert_close(loss, expected_loss, **TOL)
    for name, grad in grads.state_dict().items():
        expected = state[name].grad
        assert expected is not None
        torch.testing.assert_close(grad, expected, rtol=1e-4, atol=1e-5, msg=name)


@pytest.mark.parametrize("tied", [True, False])
@pytest.mark.parametrize("qk_norm", [False, True])
def test_state_dict_keeps_minimind_names_shapes_and_order(qk_norm: bool, tied: bool) -> None:
    model = _model(qk_norm, tied)
    cfg = model.config
    state = model.state_dict()
    C, F_, V = cfg.hidden_size, cfg.resolved_intermediate_size, cfg.vocab_size
    H, G, d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.resolved_head_dim
    layer = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"]
    layer += ["self_attn.q_norm", "self_attn.k_norm"] if qk_norm else []
    layer += ["input_layernorm", "post_attention_layernorm"]
    layer += ["mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"]
    names = ["model.embed_tokens.weight"]
    names += [f"model.layers.{i}.{n}.weight" for i in range(2) for n in layer]
    names += ["model.norm.weight", "lm_head.weight"]
    assert list(state) == names  # MiniMind's order: the seeded initialisation depends on it
    shapes = {"q_proj": (H * d, C), "k_proj": (G * d, C), "v_proj": (G * d, C),
              "o_proj": (C, H * d), "gate_proj": (F_, C), "up_proj": (F_, C),
              "down_proj": (C, F_)}  # fmt: skip
    for name, tensor in state.items():
        short = name.split(".")[-2]
        if short in shapes:
            assert tuple(tensor.shape) == shapes[short], name
    assert tuple(state["lm_head.weight"].shape) == (V, C)
    if tied:
        assert state["lm_head.weight"] is state["model.embed_tokens.weight"]
    # Round trip: a fresh model loads it (strict) and gives the same logits.
    again = MiniMindLM(cfg)
    again.load_state_dict({k: v.clone() for k, v in state.items()})
    ids = torch.randint(0, 97, (1, 9))
    with torch.no_grad():
        torch.testing.assert_close(again(ids), model(ids))
    for name, tensor in again.state_dict().items():
        torch.testing.assert_close(tensor, state[name], rtol=0, atol=0)


def test_a_minimind_pth_with_both_tied_names_loads() -> None:
    """MiniMind's own torch.save lists the tied matrix twice; either name alone also loads."""
    model = _model()
    state = _minimind_state(model)
    ids = torch.randint(0, 97, (1, 9))
    with torch.no_grad():
        expected = model(ids)
        for drop in (None, "lm_head.weight", "model.embed_tokens.weight"):
            partial = {k: v for k, v in state.items() if k != drop}
            loaded = MiniMindLM(model.config)
            loaded.load_state_dict(partial)
            torch.testing.assert_close(loaded(ids), expected)


def test_grouped_attention_equals_materialised_repeat_kv() -> None:
    model = _model()
    ids = torch.randint(0, 97, (1, 25))
    with torch.no_grad():
        grouped = model(ids)
        Block.use_repeat_kv = True
        try:
            repeated = model(ids)
        finally:
            Block.use_repeat_kv = False
    torch.testing.assert_close(grouped, repeated)


def test_qk_norm_model_chunk_on_cache_matches_full_forward() -> None:
    model = _model(qk_norm=True)
    ids = torch.randint(0, 97, (1, 40))
    with torch.no_grad():
        cache = make_cache(2)
        model(ids[:, :31], cache)
        chunk = model(ids[:, 31:], cache)  # 9 tokens on top of 31 cached ones
        full = model(ids)
    torch.testing.assert_close(chunk, full[:, 31:], **TOL)


def test_the_probe_sees_the_queries_and_keys_attention_used() -> None:
    """Per layer: q after RoPE (B, T, H, d) and the keys the cache returned (B, S, G, d)."""
    model = _model(qk_norm=True)
    reference = ReferenceDecoder(model.config, _minimind_state(model))
    ids = torch.randint(0, 97, (1, 14))
    seen: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
    cache = make_cache(2)
    with torch.no_grad():
        model(ids[:, :13], cache)
        reference.forward(ids[:, :13], use_cache=True)
        model(ids[:, 13:], cache, probe=lambda i, q, k: seen.__setitem__(i, (q, k)))
        reference.forward(ids[:, 13:], use_cache=True)
    assert sorted(seen) == [0, 1]
    for i, (q, k) in seen.items():
        assert q.shape == (1, 1, 4, 16) and k.shape == (1, 14, 2, 16)
        torch.testing.assert_close(q, reference.queries[i], **TOL)
        torch.testing.assert_close(k, reference.attended_keys[i], **TOL)
