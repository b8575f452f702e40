"""The small interface the stepper drives, so other model implementations can plug in.

Owns `LanguageModel` (a `typing.Protocol`) and `MiniMindBackend`, which adapts
our own `MiniMindLM` + `KVCache` to it. A Hugging Face transformers model can
implement the same few members (see ``kvstudio.engine.backends.hf``) and
every experiment, the CLI and the window work unchanged.

The protocol is deliberately minimal: a forward pass that returns the last
position's logits, a way to make a cache, and a way to *measure* that cache
from its tensors. Timing, sampling and records live in ``generate.py``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch

from kvstudio.engine.cache.kv_cache import CacheSpec, KVCache
from kvstudio.engine.cache.paged import PagedKVCache
from kvstudio.engine.cache.quantized import QUANT_BITS, QuantizedKVCache
from kvstudio.engine.model import MiniMindLM


@runtime_checkable
class LanguageModel(Protocol):
    """What the stepper needs from a causal language model.

    Attributes describe the cache geometry (for the formulas next to the
    measurements). `cache` objects are opaque to the stepper: it only passes
    them back to the methods below.
    """

    name: str  # shown in the window and the CLI, e.g. "ko-chat" or "random-initialised"
    num_layers: int  # L
    num_kv_heads: int  # H_kv (after grouped-query sharing)
    head_dim: int  # d
    dtype_bytes: int  # bytes per cached number (fp32: 4)
    vocab_size: int  # logits width V
    eos_token_id: int | None  # model's end-of-sequence id, if it has one
    device: torch.device

    def new_cache(self, spec: CacheSpec, batch_size: int) -> Any:
        """An empty cache of the given kind for `batch_size` rows."""
        ...

    def forward_last(
        self, input_ids: torch.Tensor, cache: Any | None, window: int | None
    ) -> torch.Tensor:
        """input_ids (B, T) → logits (B, V) of the last position.

        With a cache, the chunk continues the cached sequence and the cache is
        updated in place. Without one (recompute mode) the chunk starts at
        position 0 and `window`, if given, limits how far back each query looks,
        exactly as the sliding-window cache would.
        """
        ...

    def cache_layer_bytes(self, cache: Any) -> tuple[tuple[int, int], ...]:
        """(K bytes, V bytes) per layer, measured from the cache's tensors."""
        ...

    def cache_length(self, cache: Any) -> int:
        """Tokens currently stored (a sliding window caps this at W)."""
        ...

    def cache_allocated_bytes(self, cache: Any) -> int:
        """Bytes the cache holds in memory (a static cache: its whole preallocation)."""
        ...

    def cache_used_bytes(self, cache: Any) -> int:
        """Bytes holding real tokens."""
        ...

    def mask_len(self, cache: Any | None, new_tokens: int) -> int:
        """Keys the next forward of `new_tokens` tokens will see (the mask's second size).

        For `cache=None` (recompute) this is simply `new_tokens`.
        """
        ...


class MiniMindBackend:
    """`LanguageModel` for our own MiniMind-compatible `MiniMindLM`."""

    def __init__(self, model: MiniMindLM, name: str = "minimind") -> None:
        cfg = model.config
        self.model = model.eval()
        self.name = name
        self.num_layers = cfg.num_hidden_layers
        self.num_kv_heads = cfg.num_key_value_heads
        self.head_dim = cfg.resolved_head_dim
        first = next(model.parameters())
        self.dtype_bytes = first.element_size()
        self.vocab_size = cfg.vocab_size
        self.max_positions = cfg.max_position_embeddings  # P + N must fit (RoPE table length)
        self.hidden_size = cfg.hidden_size
        self.eos_token_id: int | None = cfg.eos_token_id
        self.device = first.device

    def new_cache(self, spec: CacheSpec, batch_size: int) -> KVCache | PagedKVCache:
        # Layers allocate on their first update, so the batch size is not needed here.
        if spec.kind == "paged":
            return PagedKVCache(self.num_layers, spec)
        if spec.kind in QUANT_BITS:
            return QuantizedKVCache(self.num_layers, spec)
        return KVCache(self.num_layers, spec)

    def forward_last(
        self, input_ids: torch.Tensor, cache: KVCache | None, window: int | None
    ) -> torch.Tensor:
        # A PagedKVCache comes here too: it quacks like a KVCache (layers with `update`,
        # `seq_length`, `window`, `visible_start`), typed as KVCache for subclasses' sake.
        logits = self.model(input_ids, cache, window=window, logits_to_keep=1)
        return logits[:, -1]  # (B, V)

    def finish_cache_rows(self, cache: KVCache | PagedKVCache, finished: torch.Tensor) -> None:
        """Rows (R,) bool that produced eos (optional member): a paged cache stops growing them."""
        if isinstance(cache, PagedKVCache):
            cache.finish_rows(finished.tolist())

    def select_cache_rows(self, cache: KVCache | PagedKVCache, rows: torch.Tensor) -> None:
        """Keep cache rows `rows` (R,) int64, in that order, repeats allowed (optional member).

        The stepper uses it to let rows share work: a prompt's prefill is computed
        once and copied to every row, and rows that have chosen the same tokens so
        far share one row of the cache. The copies are real tensors, so the
        measured bytes are what the cache really holds (a paged cache copies block
        tables and counts references instead; its shared blocks are stored once).
        """
        if isinstance(cache, PagedKVCache | QuantizedKVCache):
            cache.select_rows(rows)
            return
        for layer in cache:
            if layer.keys is not None and layer.values is not None:
                layer.keys = layer.keys.index_select(0, rows)  # (R, T, G, d)
                layer.values = layer.values.index_select(0, rows)

    def cache_layer_bytes(self, cache: KVCache | PagedKVCache) -> tuple[tuple[int, int], ...]:
        return cache.layer_nbytes()

    def cache_length(self, cache: KVCache | PagedKVCache) -> int:
        return cache[0].stored_tokens if len(cache) else 0

    def cache_allocated_bytes(self, cache: KVCache | PagedKVCache) -> int:
        return cache.nbytes

    def cache_used_bytes(self, cache: KVCache | PagedKVCache) -> int:
        return cache.used_nbytes

    def mask_len(self, cache: KVCache | PagedKVCache | None, new_tokens: int) -> int:
        if cache is None:
            return new_tokens
        return cache.visible_length(new_tokens)
