"""`crop`: cutting a cache back to its first n positions (what speculative decoding needs).

Dynamic, static, paged and the quantized kinds crop; a sliding window refuses
with a message. Two claims, of two kinds:

- **exact, by construction**: a crop keeps the first n stored rows (and their
  scales) bit for bit and holds the bytes of n tokens: it slices or frees
  storage and never recomputes a number;
- **within rounding**: the cropped cache is the cache of the first n tokens fed
  alone, and decodes as it does, to float32 rounding (`core.rounding`): the 12
  positions went through products of 12 rows, the 7 through products of 7, and a
  CPU's kernels sum a row in an order that depends on the row count.
"""

from __future__ import annotations

import pytest
import torch

from core.rounding import assert_within_rounding, max_gap, rounding_bound
from kvstudio.engine.cache.kinds import make_cache
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.model import MiniMindLM

CROPPABLE = ("dynamic", "static", "fp16", "int8", "int4")
QUANTIZED = ("fp16", "int8", "int4")


def stored(layer: object) -> list[torch.Tensor]:
    """A layer's stored tensors: keys and values, and a quantized layer's scales."""
    names = ("keys", "values", "key_scales", "value_scales")
    return [t for t in (getattr(layer, n, None) for n in names) if t is not None]


@pytest.mark.numeric
@pytest.mark.parametrize("kind", CROPPABLE)
def test_a_cropped_cache_is_the_cache_of_the_first_tokens(
    tiny_model: MiniMindLM, kind: str
) -> None:
    spec = CacheSpec(kind, max_length=64)  # type: ignore[arg-type]
    layers = tiny_model.config.num_hidden_layers
    ids = torch.arange(3, 15)[None]  # (1, 12)
    with torch.inference_mode():
        long, short = make_cache(layers, spec), make_cache(layers, spec)
        tiny_model(ids, long)  # 12 positions
        before = [[t[:, :7].clone() for t in stored(layer)] for layer in long]
        tiny_model(ids[:, :7], short)  # the first 7 only
        assert long.crop(7) == 5  # rows cut off
        assert long.seq_length == short.seq_length == long.stored_tokens == 7
        for layer, kept in zip(long, before, strict=True):  # exact: a crop only slices
            for tensor, rows in zip(stored(layer), kept, strict=True):
                assert torch.equal(tensor[:, :7], rows)
                assert not tensor[:, 7:].any()  # static: the slots after 7 are zeroed
        if kind != "static":  # a static cache keeps its whole preallocation
            assert long.nbytes == short.nbytes
        if kind not in QUANTIZED:  # the same K and V as feeding 7 tokens, to rounding
            for a, b in zip(long, short, strict=True):
                assert_within_rounding(a.keys[:, :7], b.keys[:, :7], f"{kind} keys")
                assert_within_rounding(a.values[:, :7], b.values[:, :7], f"{kind} values")
        # Decoding goes on as if the cut-off tokens had never been fed.
        step = torch.tensor([[40, 41]])
        after_crop, after_short = tiny_model(step, long), tiny_model(step, short)
        assert torch.equal(after_crop.argmax(-1), after_short.argmax(-1))
        if kind not in QUANTIZED:
            # (quantized: float32 rounding may move a number across a quantization step)
            assert_within_rounding(after_crop, after_short, f"{kind} next logits")


def test_a_crop_one_row_short_changes_the_next_logits(tiny_model: MiniMindLM) -> None:
    """The off-by-one the speculative round guards against: one stale row corrupts the next."""
    layers = tiny_model.config.num_hidden_layers
    ids = torch.arange(3, 15)[None]  # (1, 12)
    with torch.inference_mode():
        right, wrong = make_cache(layers), make_cache(layers)
        tiny_model(ids, right)
        tiny_model(ids, wrong)
        right.crop(7)
        wrong.crop(8)  # keeps one rejected row
        step = torch.tensor([[40]])
        good, bad = tiny_model(step, right), tiny_model(step, wrong)
        # Far past what rounding explains (about 3.7e5 EPS × max |logit|, not 64): the
        # tolerance of the test above cannot hide a stale row.
        assert max_gap(good, bad) > 1000 * rounding_bound(good)


def test_a_sliding_window_refuses_with_a_message(tiny_model: MiniMindLM) -> None:
    cache = make_cache(tiny_model.config.num_hidden_layers, CacheSpec("sliding", window=4))
    with torch.inference_mode():
        tiny_model(torch.arange(3, 12)[None], cache)
    with pytest.raises(ValueError, match=r"cannot be cropped.*dynamic"):
        cache.crop(4)


@pytest.mark.numeric
def test_a_paged_crop_gives_blocks_back_and_decodes_as_the_shorter_cache(
    tiny_model: MiniMindLM,
) -> None:
    spec = CacheSpec("paged", block_size=4)
    layers = tiny_model.config.num_hidden_layers
    ids = torch.arange(3, 15)[None]  # (1, 12): three full blocks
    with torch.inference_mode():
        long, short = make_cache(layers, spec), make_cache(layers, spec)
        tiny_model(ids, long)
        tiny_model(ids[:, :6], short)  # a block and a half
        assert long.live_blocks == 3
        assert long.crop(6) == 6 and long.seq_length == 6
        assert long.live_blocks == short.live_blocks == 2  # the third block is free again
        step = torch.tensor([[40, 41, 42]])  # fills the half block, then a new one
        after_crop, after_short = tiny_model(step, long), tiny_model(step, short)
        assert torch.equal(after_crop.argmax(-1), after_short.argmax(-1))
        assert_within_rounding(after_crop, after_short, "paged next logits")
        assert long.used_nbytes == short.used_nbytes


def test_a_paged_crop_copies_a_shared_block_before_writing(tiny_model: MiniMindLM) -> None:
    """Two rows share their prompt's blocks; after a crop into a shared block, the next write
    copies it, so the other row's keys stay as they were."""
    layers = tiny_model.config.num_hidden_layers
    cache = make_cache(layers, CacheSpec("paged", block_size=4))
    with torch.inference_mode():
        tiny_model(torch.arange(3, 9)[None], cache)  # 6 tokens: blocks 0 (full) and 1 (half)
        cache.select_rows(torch.tensor([0, 0]))  # two rows share both blocks
        cache.crop(5)
        before = cache.copies_on_write
        tiny_model(torch.tensor([[40], [41]]), cache)
        assert cache.copies_on_write == before + 1  # one row copied block 1, the other kept it


@pytest.mark.parametrize("length", [-1, 10])
def test_crop_refuses_a_length_outside_the_cache(tiny_model: MiniMindLM, length: int) -> None:
    cache = make_cache(tiny_model.config.num_hidden_layers)
    with torch.inference_mode():
        tiny_model(torch.arange(3, 9)[None], cache)  # 6 positions
    with pytest.raises(ValueError, match="from 0 to 6"):
        cache.crop(length)
    assert cache.crop(6) == 0 and cache.crop(0) == 6 and cache.seq_length == 0
