"""The cache's verbs: one layer protocol every kind implements, and the cache as a list of layers.

Owns `CacheLayer` (the abstract layer: ``update(k, v) -> (K, V)``, its length,
the first visible key, the bytes it holds and uses, select and finish rows,
crop back to the first n positions, reset), `KVCache` (one layer per
transformer layer, the same verbs for the whole cache) and `Cache`, the part
of a cache the generator reads, which a transformers cache satisfies too.
The kinds live in ``kv_cache.py`` (dynamic, static, sliding), ``paged.py``
and ``quantized.py``; ``kinds.py`` builds the one a `CacheSpec` names.
As transformers' ``cache_utils`` and nanochat's ``KVCache``: each layer owns
its tensors; the model only calls ``update``.

K and V arrive after RoPE and before ``repeat_kv``, shaped (B, T, G, d):
B rows, T new tokens, G K/V heads, d head_dim.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Protocol, TypeVar, runtime_checkable

import torch

from kvstudio.engine.cache.spec import CacheSpec


class CacheLayer(ABC):
    """One transformer layer's K/V store."""

    seq_length: int  # positions this layer has seen (the next token's position)

    @abstractmethod
    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store k, v (B, T, G, d); return the keys and values attention sees (B, S, G, d)."""

    def visible_start(self, new_tokens: int) -> int:
        """Position of the first key `update` will return for `new_tokens` more tokens."""
        return 0

    @property
    @abstractmethod
    def stored_tokens(self) -> int:
        """Tokens this layer holds now (a sliding window stops at W − 1)."""

    @abstractmethod
    def part_nbytes(self) -> tuple[int, int]:
        """(K bytes, V bytes) of the memory this layer holds, read from its tensors."""

    @property
    def nbytes(self) -> int:
        """Bytes held (a static layer: its whole preallocation)."""
        k, v = self.part_nbytes()
        return k + v

    @property
    def used_nbytes(self) -> int:
        """Bytes holding real tokens."""
        return self.nbytes

    @abstractmethod
    def select_rows(self, rows: torch.Tensor) -> None:
        """Keep rows `rows` (R,) int64, in that order, repeats allowed."""

    def finish_rows(self, finished: torch.Tensor) -> None:  # noqa: B027 (a no-op by default)
        """Rows (R,) bool that produced eos. A dense layer keeps a column per step for every
        row anyway, so by default nothing changes (a paged layer stops growing them)."""

    def crop(self, length: int) -> None:
        """Keep only the first `length` positions (transformers' ``DynamicCache.crop``).

        Speculative decoding writes K/V for drafted tokens and cuts them off again
        when the target rejects them. A kind that cannot take tokens back refuses.
        """
        raise ValueError(
            f"A {type(self).__name__} cannot be cropped; speculative decoding needs the "
            "dynamic, static, paged or a quantized cache."
        )

    @abstractmethod
    def reset(self) -> None:
        """Forget everything: the layer is as new."""


def check_crop_length(length: int, seq_length: int) -> None:
    """The one check for `crop`: 0 ≤ length ≤ the positions a layer has seen."""
    if not 0 <= length <= seq_length:
        raise ValueError(
            f"Cannot crop a cache of {seq_length} positions to {length}; "
            f"choose a length from 0 to {seq_length}."
        )


LayerT = TypeVar("LayerT", bound=CacheLayer)


class KVCache(list[LayerT]):
    """One cache layer per transformer layer, all of the kind `spec` names.

    The whole cache answers with the same verbs as a layer: lengths from the first
    layer (they all see the same positions), bytes summed over layers.
    """

    def __init__(self, layers: Iterable[LayerT], spec: CacheSpec) -> None:
        super().__init__(layers)
        self.spec = spec

    @property
    def seq_length(self) -> int:
        """Positions processed so far (the next token's position)."""
        return self[0].seq_length if self else 0

    @property
    def stored_tokens(self) -> int:
        """Tokens stored now (a sliding window caps this at W − 1)."""
        return self[0].stored_tokens if self else 0

    @property
    def window(self) -> int | None:
        """The look-back limit attention must respect, or None for full causal attention."""
        return self.spec.attention_window

    def visible_start(self, new_tokens: int) -> int:
        return self[0].visible_start(new_tokens) if self else 0

    def visible_length(self, new_tokens: int) -> int:
        """Keys the next forward of `new_tokens` will see: the mask is (B, this)."""
        return self.seq_length + new_tokens - self.visible_start(new_tokens)

    def layer_nbytes(self) -> tuple[tuple[int, int], ...]:
        """(K bytes, V bytes) per layer: the memory each layer holds."""
        return tuple(layer.part_nbytes() for layer in self)

    @property
    def nbytes(self) -> int:
        return sum(layer.nbytes for layer in self)

    @property
    def used_nbytes(self) -> int:
        return sum(layer.used_nbytes for layer in self)

    def select_rows(self, rows: torch.Tensor) -> None:
        """Keep rows `rows` (R,) in every layer (rows that share work share a cache row)."""
        for layer in self:
            layer.select_rows(rows)

    def finish_rows(self, finished: torch.Tensor) -> None:
        """Rows (R,) bool that produced eos, told to every layer."""
        for layer in self:
            layer.finish_rows(finished)

    def crop(self, length: int) -> int:
        """Keep the first `length` positions in every layer; return how many were cut off."""
        check_crop_length(length, self.seq_length)
        removed = self.seq_length - length
        for layer in self:
            layer.crop(length)
        return removed

    def reset(self) -> None:
        for layer in self:
            layer.reset()


@runtime_checkable
class Cache(Protocol):
    """What the generator reads from a cache: our `KVCache`, or a transformers cache's wrapper."""

    @property
    def seq_length(self) -> int: ...  # positions processed

    @property
    def stored_tokens(self) -> int: ...

    def visible_length(self, new_tokens: int) -> int: ...

    def layer_nbytes(self) -> tuple[tuple[int, int], ...]: ...

    @property
    def nbytes(self) -> int: ...

    @property
    def used_nbytes(self) -> int: ...

    def select_rows(self, rows: torch.Tensor) -> None: ...

    def finish_rows(self, finished: torch.Tensor) -> None: ...
