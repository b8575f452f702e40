"""What each layer's KV cache keeps, and the byte formulas that follow from it, per layer.

Owns `LayerPlan` (one layer: full or sliding attention, its window W, the most
tokens it keeps, what a static cache allocates up front) and `CachePlan` (all
layers plus the cache geometry); a backend gives its plan (``backend.cache_plan(spec)``:
`uniform_plan` derives the plain one from the `CacheSpec`, a hybrid model's is per layer).

Why per layer: a hybrid model (EXAONE-4.0's larger models, Gemma, gpt-oss,
Mistral-style configs with ``layer_types``) mixes sliding-window and full
attention, so its layers hold different token counts:

    bytes = Σ_l 2 · T_l · H_kv · d · bytes,  T_l = T (full) or min(T, kept by the window)

With every layer alike this is the lecture's 2·L·T·H_kv·d·bytes (``formulas``).
Nothing here measures tensors; the stepper does, and the two are compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kvstudio.engine import formulas
from kvstudio.engine.cache.quantized import QUANT_BITS, formula_bytes_per_token
from kvstudio.engine.cache.spec import CacheSpec

LayerKind = Literal["full", "sliding"]


@dataclass(frozen=True)
class LayerPlan:
    """One layer's cache: what it keeps and what it allocates."""

    kind: LayerKind = "full"
    window: int | None = None  # W: keys a query sees, itself included (sliding layers)
    keeps: int | None = None  # most tokens kept between steps (None: every token)
    preallocated: int | None = None  # tokens allocated up front (static caches), else None
    block_size: int | None = None  # paged caches: memory comes in blocks of this many tokens

    def tokens(self, cached: int) -> int:
        """Tokens this layer holds when `cached` positions are in the cache."""
        return cached if self.keeps is None else min(cached, self.keeps)

    def allocated_tokens(self, cached: int) -> int:
        """Tokens' worth of memory this layer holds: its preallocation, whole blocks, or T_l."""
        if self.preallocated is not None:
            return self.preallocated
        held = self.tokens(cached)
        if self.block_size:
            return -(-held // self.block_size) * self.block_size  # ⌈T/b⌉ blocks of b
        return held

    def label(self) -> str:
        """'full' or 'sliding W=8' (for tables and the cache plot)."""
        return f"sliding W={self.window}" if self.kind == "sliding" else "full"


@dataclass(frozen=True)
class CachePlan:
    """Every layer's plan plus the geometry the byte formulas need."""

    layers: tuple[LayerPlan, ...]
    kv_heads: int  # H_kv
    head_dim: int  # d
    dtype_bytes: int  # bytes per cached number
    token_bytes: int | None = None  # one token in one layer, K and V, if not 2·H_kv·d·bytes

    @property
    def is_hybrid(self) -> bool:
        """Some layers slide and some attend to everything."""
        kinds = {layer.kind for layer in self.layers}
        return kinds == {"full", "sliding"}

    @property
    def uniform(self) -> bool:
        """Every layer keeps and allocates alike (the lecture's L·T formula applies)."""
        return len(set(self.layers)) <= 1

    def used_tokens(self, cached: int) -> list[int]:
        return [layer.tokens(cached) for layer in self.layers]

    def allocated_tokens(self, cached: int) -> list[int]:
        return [layer.allocated_tokens(cached) for layer in self.layers]

    def used_bytes(self, cached: int, batch_size: int = 1) -> int:
        """Bytes holding real tokens: Σ_l 2·T_l·H_kv·d·bytes (· batch)."""
        return self._bytes(self.used_tokens(cached), batch_size)

    def allocated_bytes(self, cached: int, batch_size: int = 1) -> int:
        """Bytes held in memory: the used bytes, each layer's preallocation (static) or
        its whole blocks (paged)."""
        return self._bytes(self.allocated_tokens(cached), batch_size)

    def _bytes(self, tokens: list[int], batch_size: int) -> int:
        if self.token_bytes is not None:  # a quantized layout: scales included
            return sum(tokens) * self.token_bytes * batch_size
        return formulas.cache_bytes_layers(
            tokens, self.kv_heads, self.head_dim, self.dtype_bytes, batch_size
        )

    def kinds_summary(self) -> str:
        """Layer kinds in order, runs grouped: 'sliding W=8 ×3, full ×1' or 'full ×4'."""
        groups: list[tuple[str, int]] = []
        for layer in self.layers:
            label = layer.label()
            if groups and groups[-1][0] == label:
                groups[-1] = (label, groups[-1][1] + 1)
            else:
                groups.append((label, 1))
        return ", ".join(f"{label} ×{count}" for label, count in groups)

    def formula_text(self, cached: int, allocated: bool = False, batch_size: int = 1) -> str:
        """The formula with this run's numbers, e.g. '2·4·183·2·32·4' or '2·(7+7+7+20)·2·32·4'."""
        tokens = self.allocated_tokens(cached) if allocated else self.used_tokens(cached)
        rows = f"·{batch_size}" if batch_size != 1 else ""
        tail = f"{self.kv_heads}·{self.head_dim}·{self.dtype_bytes}{rows}"
        if len(set(tokens)) <= 1:
            return f"2·{len(tokens)}·{tokens[0] if tokens else 0}·{tail}"
        return f"2·({'+'.join(str(t) for t in tokens)})·{tail}"


def spec_layer(spec: CacheSpec) -> LayerPlan:
    """The layer plan our own `KVCache` follows for `spec` (every layer alike)."""
    if spec.kind == "sliding":
        return LayerPlan("sliding", spec.window, formulas.window_keeps(spec.window))
    if spec.kind == "static":
        return LayerPlan("full", preallocated=spec.max_length)
    if spec.kind == "paged":
        return LayerPlan("full", block_size=spec.block_size)
    return LayerPlan("full")


def uniform_plan(backend: Any, spec: CacheSpec) -> CachePlan:
    """Every layer as `spec` says: our own model, and any backend without its own plan."""
    kv_heads, head_dim = int(backend.num_kv_heads), int(backend.head_dim)
    token_bytes = None
    if spec.kind in QUANT_BITS:  # fp16 / int8 / int4 layouts, their scales included
        token_bytes = formula_bytes_per_token(spec.kind, 1, kv_heads, head_dim)
    return CachePlan(
        layers=(spec_layer(spec),) * int(backend.num_layers),
        kv_heads=kv_heads,
        head_dim=head_dim,
        dtype_bytes=int(backend.dtype_bytes),
        token_bytes=token_bytes,
    )


def plan_from_windows(
    windows: Sequence[int | None],
    spec: CacheSpec,
    kv_heads: int,
    head_dim: int,
    dtype_bytes: int,
    *,
    sliding_keeps_extra: int = 0,
) -> CachePlan:
    """A plan from per-layer windows (None = full attention), as transformers' caches keep them.

    transformers' dynamic sliding layer keeps W − 1 tokens (``sliding_keeps_extra=0``);
    its static sliding layer allocates and keeps min(M, W) (pass 1 and a static spec).
    """
    static = spec.kind == "static"
    layers = []
    for window in windows:
        if window is None:
            layers.append(LayerPlan("full", preallocated=spec.max_length if static else None))
        else:
            keeps = window - 1 + sliding_keeps_extra
            keeps = min(keeps, spec.max_length) if static else keeps
            layers.append(LayerPlan("sliding", window, keeps, keeps if static else None))
    return CachePlan(tuple(layers), kv_heads, head_dim, dtype_bytes)
