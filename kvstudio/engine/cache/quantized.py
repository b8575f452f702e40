"""A quantized KV cache: K and V stored in fewer bits, dequantized for attention.

Owns `QuantizedLayer` (the kinds ``fp16``, ``int8`` and ``int4``; a cache of them
is a `KVCache`) and the quantize / dequantize functions it uses. Layout of one layer, for B rows and
T tokens (G K/V heads, head_dim d):

- ``fp16``: K and V as float16 (B, T, G, d); no scales. 2 bytes a number.
- ``int8``: K and V as int8 (B, T, G, d), symmetric, **one float16 scale per
  token and K/V head** (B, T, G, 1) = max|x| / 127 over the head's d numbers.
  d + 2 bytes per token and head.
- ``int4``: two 4-bit numbers per byte, uint8 (B, T, G, d/2), values −7 … 7
  stored as 1 … 15, one float16 scale per token and head = max|x| / 7.
  d/2 + 2 bytes per token and head. Really packed: the tensor holds half a
  byte per number.

Every `update` quantizes the new tokens (the newest token too, so attention
never sees an unquantized key), appends them, and returns the whole cache
dequantized to the model's dtype: that dequantized copy is a temporary of the
step, the cache holds only the quantized tensors and scales, and `nbytes`
measures exactly those. Bytes per token, all layers: 2·L·G·(d·bits/8 + 2)
(int8, int4) or 2·L·G·d·2 (fp16) — `formula_bytes_per_token`.
"""

from __future__ import annotations

import torch

from kvstudio.engine import formulas
from kvstudio.engine.cache.kv_cache import DynamicLayer, append_tokens, tensor_nbytes

QUANT_BITS: dict[str, int] = {"fp16": 16, "int8": 8, "int4": 4}
SCALE_BYTES = 2  # one float16 scale per token and K/V head
_QMAX = {8: 127, 4: 7}


def quantize(x: torch.Tensor, bits: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    """x (B, T, G, d) → stored tensor and per-token-per-head scales (B, T, G, 1) or None."""
    if bits == 16:
        return x.to(torch.float16), None
    qmax = _QMAX[bits]
    absmax = x.detach().abs().amax(dim=-1, keepdim=True).float()  # (B, T, G, 1)
    scale = (absmax / qmax).to(torch.float16)
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)  # all-zero head: any scale
    q = torch.round(x.float() / scale.float()).clamp_(-qmax, qmax)  # (B, T, G, d) integers
    if bits == 8:
        return q.to(torch.int8), scale
    if x.shape[-1] % 2:
        raise ValueError(f"A 4-bit cache packs two numbers a byte; head_dim {x.shape[-1]} is odd.")
    u = (q + 8).to(torch.uint8)  # 1 … 15
    packed = u[..., 0::2] | (u[..., 1::2] << 4)  # (B, T, G, d/2): even index low, odd high
    return packed, scale


def dequantize(
    stored: torch.Tensor, scale: torch.Tensor | None, bits: int, dtype: torch.dtype
) -> torch.Tensor:
    """The stored tensor back to numbers (B, T, G, d) in `dtype`."""
    if bits == 16:
        return stored.to(dtype)
    assert scale is not None
    if bits == 8:
        values = stored.float()
    else:
        low = (stored & 0x0F).float()
        high = (stored >> 4).float()
        values = torch.stack([low, high], dim=-1).flatten(-2) - 8.0  # (B, T, G, d)
    return (values * scale.float()).to(dtype)


def formula_bytes_per_token(kind: str, layers: int, kv_heads: int, head_dim: int) -> int:
    """Bytes one token takes in this layout, every layer, K and V, scales included."""
    bits = QUANT_BITS[kind]
    if bits == 16:
        return formulas.bytes_per_token(layers, kv_heads, head_dim, 2)
    return 2 * layers * kv_heads * (head_dim * bits // 8 + SCALE_BYTES)


class QuantizedLayer(DynamicLayer):
    """Stores K, V quantized (`keys`, `values` hold the stored tensors) plus their scales."""

    def __init__(self, bits: int) -> None:
        super().__init__()
        self.bits = bits
        self.key_scales: torch.Tensor | None = None  # (B, T, G, 1) float16
        self.value_scales: torch.Tensor | None = None

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        qk, sk = quantize(k, self.bits)
        qv, sv = quantize(v, self.bits)
        self.keys, self.values = append_tokens(self.keys, qk), append_tokens(self.values, qv)
        if sk is not None and sv is not None:  # int8, int4: one scale per token and head
            self.key_scales = append_tokens(self.key_scales, sk)
            self.value_scales = append_tokens(self.value_scales, sv)
        self.seq_length += k.shape[1]
        return (
            dequantize(self.keys, self.key_scales, self.bits, k.dtype),
            dequantize(self.values, self.value_scales, self.bits, v.dtype),
        )

    def part_nbytes(self) -> tuple[int, int]:
        """(K bytes, V bytes) stored, each including its scales."""
        k = tensor_nbytes(self.keys) + tensor_nbytes(self.key_scales)
        return k, tensor_nbytes(self.values) + tensor_nbytes(self.value_scales)

    def select_rows(self, rows: torch.Tensor) -> None:
        super().select_rows(rows)  # the stored keys and values (R, T, G, ·)
        if self.key_scales is not None and self.value_scales is not None:
            self.key_scales = self.key_scales.index_select(0, rows)  # (R, T, G, 1)
            self.value_scales = self.value_scales.index_select(0, rows)

    def crop(self, length: int) -> None:
        """Keep the first `length` positions of the stored tensors and of their scales."""
        super().crop(length)  # the stored keys and values (B, length, G, ·)
        if self.key_scales is not None and self.value_scales is not None:
            self.key_scales = self.key_scales[:, :length].clone()  # (B, length, G, 1)
            self.value_scales = self.value_scales[:, :length].clone()

    def reset(self) -> None:
        super().reset()
        self.key_scales = self.value_scales = None
