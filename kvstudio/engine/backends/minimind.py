"""The small interface the generator drives, so other model implementations can plug in.

Owns `LanguageModel` (a `typing.Protocol`) and `MiniMindBackend`, which adapts
our own `MiniMindLM` + `KVCache` to it. A Hugging Face transformers model can
implement the same few members (see ``kvstudio.engine.backends.hf``) and
every experiment, the CLI and the window work unchanged.

The protocol is what a model does: forward the new tokens (returning the last
position's logits, or the last few positions' with an optional attention probe),
make a cache, and report a few facts (sizes, eos, the
cache plan). Everything about the cache itself is the cache's own verbs
(``cache/base.py``); the one loop that calls the forward is ``engine/decode.py``;
timing, sampling and records live in ``generate.py``.
"""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

import torch

from kvstudio.engine.cache.base import Cache, CacheLayer, KVCache
from kvstudio.engine.cache.kinds import make_cache
from kvstudio.engine.cache.layout import CachePlan, uniform_plan
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.model import AttentionProbe, MiniMindLM

__all__ = ["AttentionProbe", "LanguageModel", "MiniMindBackend"]

CacheT = TypeVar("CacheT", bound=Cache)  # each backend is fed back the caches it makes


@runtime_checkable
class LanguageModel(Protocol[CacheT]):
    """What the generator needs from a causal language model.

    The attributes describe the model and its cache geometry (for the formulas
    next to the measurements); the generator measures the cache through the
    cache's own verbs and only hands it back to `forward_last`.
    """

    name: str  # shown in the window and the CLI, e.g. "ko-chat" or "random-initialised"
    num_layers: int  # L
    num_kv_heads: int  # H_kv (after grouped-query sharing)
    head_dim: int  # d
    hidden_size: int  # C, the residual width (for the memory estimate)
    dtype_bytes: int  # bytes per cached number (fp32: 4)
    vocab_size: int  # logits width V
    max_positions: int  # P + N must fit (the RoPE table length)
    eos_token_id: int | None  # model's end-of-sequence id, if it has one
    device: torch.device

    def new_cache(self, spec: CacheSpec, batch_size: int) -> CacheT:
        """An empty cache of the given kind for `batch_size` rows."""
        ...

    def forward_last(
        self, input_ids: torch.Tensor, cache: CacheT | None, window: int | None
    ) -> torch.Tensor:
        """input_ids (B, T) → logits (B, V) of the last position.

        With a cache, the chunk continues the cached sequence and the cache is
        updated in place. Without one (recompute mode) the chunk starts at
        position 0 and `window`, if given, limits how far back each query looks,
        exactly as the sliding-window cache would.
        """
        ...

    def forward_tail(
        self, input_ids: torch.Tensor, cache: CacheT | None, keep: int,
        probe: AttentionProbe | None = None,
    ) -> torch.Tensor:
        """input_ids (B, T) → logits (B, keep, V) of the last `keep` positions.

        A speculative round verifies its drafts with one forward (keep = 1 + drafts);
        `probe`, if given, is called per layer with the queries and the keys they
        attend (the cache inspector). A backend that cannot probe raises ValueError.
        """
        ...

    def cache_plan(self, spec: CacheSpec) -> CachePlan:
        """What each layer keeps under `spec` (the byte formulas drawn beside the measurements)."""
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

    def new_cache(self, spec: CacheSpec, batch_size: int) -> KVCache[CacheLayer]:
        return make_cache(self.num_layers, spec)

    def forward_last(
        self, input_ids: torch.Tensor, cache: KVCache[CacheLayer] | None, window: int | None
    ) -> torch.Tensor:
        logits = self.model(input_ids, cache, window=window, logits_to_keep=1)
        return logits[:, -1]  # (B, V)

    def forward_tail(
        self, input_ids: torch.Tensor, cache: KVCache[CacheLayer] | None, keep: int,
        probe: AttentionProbe | None = None,
    ) -> torch.Tensor:
        return self.model(input_ids, cache, logits_to_keep=keep, probe=probe)  # (B, keep, V)

    def cache_plan(self, spec: CacheSpec) -> CachePlan:
        return uniform_plan(self, spec)
