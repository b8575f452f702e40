"""The inference forward pass: `model.py`'s maths with the weights prepared once.

Owns `InferenceWeights` (a frozen snapshot of a model's weights, laid out for
decoding on a CPU) and `inference_forward`, which runs the decoder on it. The
model calls it whenever autograd is off; training and the reference path use
the modules in ``model.py``, and ``tests/core/test_model_fastpath.py`` checks
that both give the same logits, cache and tokens.

What differs from the module path, and why (course model, one decode step):

- **Weights transposed to (in, out) and stacked** (q|k|v, gate|up): one product
  instead of three, and MKL multiplies one row by an (in, out) matrix faster
  (the LM head: 137 µs against 176 µs for ``F.linear`` on the (out, in) weight).
- **RMSNorm weights folded into the next product.** ``(w ⊙ x̂) @ W = x̂ @ (diag(w) W)``
  and the per-row 1/rms commutes with the product, so a norm costs three small
  kernels for its 1/rms and one multiply after the product.
- **Residual adds fused into the products** (``addmm``) on a 2-D hidden state.
- **One RoPE for q|k**, as a roll instead of ``rotate_half``'s slices and cat.
- **No module calls.** A decode step is ~100 small kernels; at a few µs of
  Python and dispatch each, that overhead was as large as the products.

Together these took a bare decode step from about 2.0 to 1.3–1.6 ms (``kvstudio bench``).
Results agree with the module path to fp32 rounding (≈1e-5 on the logits).

Letters in shape comments: B batch, T new tokens, N = B·T rows, S visible keys,
H query heads, G K/V heads, d head_dim, C hidden, F MLP width, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from kvstudio.engine.cache.kv_cache import DynamicLayer


def signed_sin(sin: torch.Tensor) -> torch.Tensor:
    """sin with its first half negated, so rotate_half(x)·sin = roll(x, d/2)·signed_sin."""
    half = sin.shape[-1] // 2
    return torch.cat([-sin[..., :half], sin[..., half:]], dim=-1)


def apply_rope_fast(x: torch.Tensor, cos: torch.Tensor, sin_signed: torch.Tensor) -> torch.Tensor:
    """RoPE on x (B, T, heads, d) with cos, sin_signed (T, d): three kernels instead of seven."""
    half = x.shape[-1] // 2
    rolled = torch.roll(x, shifts=half, dims=-1)  # [x2, x1]
    return torch.addcmul(x * cos[:, None, :], rolled, sin_signed[:, None, :])


# Called per layer as probe(layer, q (B, T, H, d), k (B, S, G, d)) with the queries after RoPE
# and the keys they attended (the cache inspector); None on the ordinary path costs one test.
AttentionProbe = Callable[[int, torch.Tensor, torch.Tensor], None]


@dataclass(frozen=True)
class LayerWeights:
    """One decoder block's weights, (in, out), with the block's RMSNorm weights folded in."""

    qkv: torch.Tensor  # (C, (H+2G)·d), input_layernorm folded into the rows
    o: torch.Tensor  # (H·d, C)
    gate_up: torch.Tensor  # (C, 2F), post_attention_layernorm folded into the rows
    down: torch.Tensor  # (F, C)
    q_norm: torch.Tensor | None  # (d,) QK-norm weights (minimind-3), or None
    k_norm: torch.Tensor | None  # (d,)


@dataclass(frozen=True)
class InferenceWeights:
    """Everything `inference_forward` reads: a snapshot, rebuilt when a parameter changes."""

    embed: torch.Tensor  # (V, C), the embedding parameter itself (rows are looked up)
    layers: tuple[LayerWeights, ...]
    lm_head: torch.Tensor  # (C, V), final norm folded into the rows
    eps: torch.Tensor  # () RMSNorm epsilon, a tensor so addcmul takes it without a copy
    n_heads: int  # H
    n_kv_heads: int  # G
    head_dim: int  # d


def fold_linear(*weights: torch.Tensor, norm: torch.Tensor | None = None) -> torch.Tensor:
    """Stack (out, in) weights and transpose to (in, Σout); scale row i by norm[i] if given."""
    stacked = torch.cat([w.detach() for w in weights]).t()  # (in, Σout)
    if norm is not None:
        stacked = norm.detach().float()[:, None] * stacked.float()
    return stacked.to(weights[0].dtype).contiguous()


def inverse_rms(x: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    """x (…, C) → 1/sqrt(mean(x²) + eps) (…, 1), in fp32 as MiniMind computes it."""
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True, dtype=torch.float32)  # ‖x‖
    inv = torch.addcmul(eps, norm, norm, value=1.0 / x.shape[-1]).rsqrt_()  # (…, 1)
    return inv if x.dtype == torch.float32 else inv.to(x.dtype)


def _qk_norm(x: torch.Tensor, weight: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    return x * inverse_rms(x, eps) * weight


def inference_forward(
    w: InferenceWeights,
    input_ids: torch.Tensor,  # (B, T)
    cache_layers: Sequence[DynamicLayer] | None,
    cos: torch.Tensor,  # (T, d)
    sin_signed: torch.Tensor,  # (T, d), see `signed_sin`
    mask: torch.Tensor | None,  # (T, S) bool, None = every key visible (or plain causal)
    causal: bool,  # True when the mask is SDPA's own square triangle
    logits_to_keep: int,
    probe: AttentionProbe | None = None,
) -> torch.Tensor:
    """Logits (B, T', V) for the last `logits_to_keep` positions (0 = all T).

    Same contract as ``MiniMindLM.forward``, which works out positions and the
    mask; the cache layers are updated in place exactly as on the module path.
    `probe`, if given, sees each layer's queries and the keys they attend.
    """
    B, T = input_ids.shape
    H, G, d = w.n_heads, w.n_kv_heads, w.head_dim
    grouped = H != G
    is_causal = causal and mask is None and T > 1
    x = F.embedding(input_ids, w.embed).view(B * T, -1)  # (N, C)
    for i, layer in enumerate(w.layers):
        # Attention: x̂ @ (diag(w_in) Wqkv) = (x @ Wqkv') · 1/rms(x)
        qkv = (x @ layer.qkv).mul_(inverse_rms(x, w.eps)).view(B, T, H + 2 * G, d)
        qk, v = qkv[:, :, : H + G], qkv[:, :, H + G :]  # (B, T, H+G, d), (B, T, G, d)
        if layer.q_norm is not None and layer.k_norm is not None:
            q_part = _qk_norm(qk[:, :, :H], layer.q_norm, w.eps)
            qk = torch.cat([q_part, _qk_norm(qk[:, :, H:], layer.k_norm, w.eps)], dim=2)
        qk = apply_rope_fast(qk, cos, sin_signed)
        q, k = qk[:, :, :H], qk[:, :, H:]  # (B, T, H, d), (B, T, G, d)
        if cache_layers is not None:
            k, v = cache_layers[i].update(k, v)  # (B, S, G, d): after RoPE, before repeat_kv
        if probe is not None:
            probe(i, q, k)
        y = F.scaled_dot_product_attention(
            q.transpose(1, 2),  # (B, H, T, d)
            k.transpose(1, 2),  # (B, G, S, d)
            v.transpose(1, 2),
            attn_mask=mask,
            is_causal=is_causal,
            enable_gqa=grouped,
        )  # (B, H, T, d)
        x = torch.addmm(x, y.transpose(1, 2).reshape(B * T, H * d), layer.o)  # x + attn
        # MLP: SwiGLU with post_attention_layernorm folded into gate|up
        gate, up = (x @ layer.gate_up).mul_(inverse_rms(x, w.eps)).chunk(2, dim=-1)  # (N, F) ×2
        x = torch.addmm(x, F.silu(gate).mul_(up), layer.down)  # x + mlp
    if logits_to_keep and logits_to_keep < T:
        x = x.view(B, T, -1)[:, -logits_to_keep:].reshape(B * logits_to_keep, -1)
        T = logits_to_keep
    logits = (x @ w.lm_head).mul_(inverse_rms(x, w.eps))  # (N', V)
    return logits.view(B, T, -1)
