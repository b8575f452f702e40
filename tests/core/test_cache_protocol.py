"""Every cache kind keeps the same layer protocol (`CacheLayer`, ``cache/base.py``).

One test, run for dynamic, static, sliding, paged and the quantized kinds: update
shapes, lengths, the first visible key, bytes held and used against the course
formulas (`CachePlan`), selecting and finishing rows, and reset.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from kvstudio.engine.cache.base import Cache, CacheLayer, KVCache
from kvstudio.engine.cache.kinds import make_cache
from kvstudio.engine.cache.layout import CachePlan, uniform_plan
from kvstudio.engine.cache.spec import ALL_CACHE_KINDS, CacheSpec

B, G, d, L = 2, 2, 8, 3  # rows, K/V heads, head_dim, layers
PROMPT, DECODE = 5, 4  # prefill tokens, then single-token steps
WINDOW, BLOCK, STATIC = 4, 4, 16  # sliding W, paged block size, static length


@dataclass
class Geometry:
    """The facts `uniform_plan` reads from a backend."""

    num_layers: int = L
    num_kv_heads: int = G
    head_dim: int = d
    dtype_bytes: int = 4  # float32


def spec_of(kind: str) -> CacheSpec:
    return CacheSpec(kind, max_length=STATIC, window=WINDOW, block_size=BLOCK)  # type: ignore[arg-type]


def feed(
    cache: KVCache[CacheLayer], tokens: int, seed: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """One forward's worth of K/V (B, T, G, d) into every layer; returns what each gave back."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for layer in cache:
        k = torch.randn(B, tokens, G, d, generator=gen)
        v = torch.randn(B, tokens, G, d, generator=gen)
        out.append(layer.update(k, v))
    return out


def kept(kind: str, positions: int) -> int:
    """Tokens a layer holds after `positions` (a sliding window keeps W − 1)."""
    return min(positions, WINDOW - 1) if kind == "sliding" else positions


@pytest.mark.parametrize("kind", ALL_CACHE_KINDS)
def test_every_cache_kind_keeps_the_layer_protocol(kind: str) -> None:
    spec = spec_of(kind)
    cache = make_cache(L, spec)
    plan: CachePlan = uniform_plan(Geometry(), spec)
    assert isinstance(cache, Cache) and len(cache) == L
    assert all(isinstance(layer, CacheLayer) for layer in cache)
    assert (cache.seq_length, cache.stored_tokens, cache.nbytes, cache.used_nbytes) == (0, 0, 0, 0)

    # update: (B, T, G, d) in, every visible key out: (B, S, G, d) in the model's dtype.
    for keys, values in feed(cache, PROMPT, seed=0):
        assert keys.shape == values.shape == (B, PROMPT, G, d) and keys.dtype == torch.float32
    for step in range(DECODE):
        before = cache.seq_length
        start = cache.visible_start(1)
        assert start == (max(0, before - (WINDOW - 1)) if kind == "sliding" else 0)
        assert cache.visible_length(1) == before + 1 - start
        for keys, _ in feed(cache, 1, seed=1 + step):
            assert keys.shape == (B, kept(kind, before) + 1, G, d)

    # length and bytes, against the formulas the views draw beside them
    positions = PROMPT + DECODE
    assert cache.seq_length == positions and cache.stored_tokens == kept(kind, positions)
    assert all(layer.seq_length == positions for layer in cache)
    assert cache.nbytes == plan.allocated_bytes(positions, B)
    assert cache.used_nbytes == plan.used_bytes(positions, B)
    assert sum(k + v for k, v in cache.layer_nbytes()) == cache.nbytes
    assert all(k == v > 0 for k, v in cache.layer_nbytes())  # K and V alike, every layer

    # select rows: both rows continue row 1, so the next keys agree row for row
    cache.select_rows(torch.tensor([1, 1]))
    for keys, values in feed(cache, 1, seed=99):
        # (the token just fed differs per row; the rows held before it are row 1's, twice)
        assert torch.equal(keys[0, :-1], keys[1, :-1])
        assert torch.equal(values[0, :-1], values[1, :-1])
    positions += 1

    # finish rows: a paged cache stops growing a finished row, a dense one keeps a column
    used = cache.used_nbytes
    cache.finish_rows(torch.tensor([True, False]))
    for keys, _ in feed(cache, 1, seed=100):
        assert keys.shape[0] == B
    growing_rows = 1 if kind == "paged" else B
    one_token = plan.used_bytes(1, 1)  # one token, one row, every layer
    grown = cache.used_nbytes - used
    if kind == "sliding":
        assert grown == 0  # the window is full: one token in, one out
    else:
        assert grown == growing_rows * one_token

    # reset: as new, and usable again
    cache.reset()
    assert (cache.seq_length, cache.stored_tokens, cache.nbytes, cache.used_nbytes) == (0, 0, 0, 0)
    for keys, _ in feed(cache, PROMPT, seed=0):
        assert keys.shape == (B, PROMPT, G, d)
    assert cache.used_nbytes == plan.used_bytes(PROMPT, B)


def test_static_cache_refuses_a_step_past_its_length() -> None:
    cache = make_cache(1, spec_of("static"))
    feed(cache, STATIC, seed=0)
    with pytest.raises(ValueError, match=f"static cache holds {STATIC} tokens but {STATIC + 1}"):
        feed(cache, 1, seed=1)
