"""Which KV cache to build: `CacheSpec` (kind plus its one size parameter), without torch.

Owns the cache kinds' names and their settings, so the window's settings and
panels can name a cache before torch is imported (start-up shows the window
first). The caches themselves live in ``kv_cache.py``, which re-exports these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CacheKind = Literal["dynamic", "static", "sliding"]
CACHE_KINDS: tuple[CacheKind, ...] = ("dynamic", "static", "sliding")


@dataclass(frozen=True)
class CacheSpec:
    """Which cache to build: kind plus its one size parameter."""

    kind: CacheKind = "dynamic"
    max_length: int = 2048  # static: preallocated tokens
    window: int = 64  # sliding: tokens each query may look back on

    def __post_init__(self) -> None:
        if self.kind not in CACHE_KINDS:
            raise ValueError(f"Unknown cache kind {self.kind!r}; choose one of {CACHE_KINDS}.")

    @property
    def attention_window(self) -> int | None:
        """The look-back limit attention must respect, or None for full causal attention."""
        return self.window if self.kind == "sliding" else None
