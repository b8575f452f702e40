"""Which KV cache to build: `CacheSpec` (kind plus its one size parameter), without torch.

Owns the cache kinds' names and their settings, so the window's settings and
panels can name a cache before torch is imported (start-up shows the window
first). The caches themselves live in ``kv_cache.py``, which re-exports these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CacheKind = Literal["dynamic", "static", "sliding", "paged", "fp16", "int8", "int4"]
CACHE_KINDS: tuple[CacheKind, ...] = ("dynamic", "static", "sliding")  # the window's kinds
# Built by their own modules (``paged.py``, ``quantized.py``), for the scale labs.
SCALE_CACHE_KINDS: tuple[CacheKind, ...] = ("paged", "fp16", "int8", "int4")
ALL_CACHE_KINDS: tuple[CacheKind, ...] = CACHE_KINDS + SCALE_CACHE_KINDS


@dataclass(frozen=True)
class CacheSpec:
    """Which cache to build: kind plus its one size parameter."""

    kind: CacheKind = "dynamic"
    max_length: int = 2048  # static: preallocated tokens
    window: int = 64  # sliding: keys each query sees, itself included (transformers' meaning)
    block_size: int = 16  # paged: tokens per block

    def __post_init__(self) -> None:
        if self.kind not in ALL_CACHE_KINDS:
            raise ValueError(
                f"Unknown cache kind {self.kind!r}; choose one of {', '.join(ALL_CACHE_KINDS)}."
            )
        if self.block_size < 1:
            raise ValueError(f"A paged cache block holds at least 1 token, got {self.block_size}.")

    def check_room(self, needed: int) -> None:
        """Refuse `needed` positions a static cache cannot hold (other kinds always have room)."""
        if self.kind == "static":
            check_static_room(self.max_length, needed)

    @property
    def attention_window(self) -> int | None:
        """The look-back limit attention must respect, or None for full causal attention."""
        return self.window if self.kind == "sliding" else None


def check_static_room(max_length: int, needed: int) -> None:
    """The one static-cache length check: `needed` positions must fit in `max_length`."""
    if needed > max_length:
        raise ValueError(
            f"The static cache holds {max_length} tokens but {needed} are needed; raise its "
            "length, generate fewer tokens or use the dynamic cache."
        )
