"""Beam search's cache (tiny model): each reorder's bytes, the rows after it, the paged ledger.

Agreement with transformers' ``generate(num_beams=…)`` is tests/hf/test_beam_hf.py.
"""

from __future__ import annotations

from typing import cast

import pytest
import torch

from kvstudio.engine import formulas
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.base import KVCache
from kvstudio.engine.cache.kv_cache import DynamicLayer
from kvstudio.engine.cache.paged import PagedKVCache
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.strategies.beam import BeamSearch, BeamSettings, BlockLedger
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.beam import BeamLabResult, beam_lab
from kvstudio.labs.common import finish, lab_prompt_ids

# Compares computations of different shapes (reordered beam caches against each beam recomputed):
# rerun under other CPU kernels by tests/core/test_other_cpus.py.
pytestmark = pytest.mark.numeric

PROMPT = "키와 값을 저장하면 다음 토큰을"


def _bytes_per_token(backend: MiniMindBackend) -> int:
    return formulas.bytes_per_token(
        backend.num_layers, backend.num_kv_heads, backend.head_dim, backend.dtype_bytes
    )


def test_reorder_bytes_are_rows_moved_times_bytes_per_row(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    prompt = tokenizer.encode(PROMPT)
    search = BeamSearch(tiny_backend, prompt, BeamSettings(num_beams=4, max_new_tokens=6))
    per_token = _bytes_per_token(tiny_backend)
    previous_rows = 1
    for step in search:
        cache = cast(KVCache[DynamicLayer], search.cache)
        # The bytes per row are what the cache holds per row, measured from its tensors.
        assert cache.nbytes == 4 * step.row_bytes == 4 * per_token * (len(prompt) + step.step)
        parents = [beam.parent for beam in step.beams]
        moved = sum(1 for row, parent in enumerate(parents) if parent != row)
        if previous_rows == 1:  # the prompt's one row becomes K rows
            assert parents == [0, 0, 0, 0] and moved == 3
        assert step.rows_before == previous_rows
        assert step.rows_moved == moved
        assert step.reorder_bytes == moved * per_token * (len(prompt) + step.step)
        assert step.index_select_bytes == 4 * step.row_bytes
        previous_rows = 4
    assert search.result is not None and search.result.steps == 6


def test_the_cache_after_each_step_is_each_beams_sequence_recomputed(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    prompt = tokenizer.encode(PROMPT)
    search = BeamSearch(tiny_backend, prompt, BeamSettings(num_beams=3, max_new_tokens=5))
    for step in search:
        cache = cast(KVCache[DynamicLayer], search.cache)
        for row, beam in enumerate(step.beams):
            # Row `row` holds the prompt and every token of its beam but the newest (fed next).
            fresh = tiny_backend.new_cache(CacheSpec("dynamic"), 1)
            sequence = prompt + list(beam.tokens[:-1])
            tiny_backend.forward_last(torch.tensor([sequence]), fresh, None)
            for ours, recomputed in zip(cache, fresh, strict=True):
                assert ours.keys is not None and recomputed.keys is not None
                assert ours.keys.shape[1] == len(sequence)
                torch.testing.assert_close(ours.keys[row], recomputed.keys[0])
                torch.testing.assert_close(ours.values[row], recomputed.values[0])


def test_the_block_ledger_is_what_the_paged_cache_does(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    """Beam search on a real paged cache (b = 4): its reference counts and copies on write are
    the ledger's, and it chooses the dynamic cache's beams."""
    prompt = tokenizer.encode(PROMPT)
    settings = BeamSettings(num_beams=4, max_new_tokens=9)
    paged = BeamSearch(tiny_backend, prompt, settings, cache=CacheSpec("paged", block_size=4),
                       block_size=4)
    dense = list(BeamSearch(tiny_backend, prompt, settings))
    expected_copies = None
    copies_seen = 0
    for step, dense_step in zip(paged, dense, strict=True):
        cache = cast(PagedKVCache, paged.cache)
        if expected_copies is not None:  # the append of this step made the copies foreseen
            assert cache.copies_on_write - copies_seen == expected_copies
        copies_seen = cache.copies_on_write
        assert step.blocks_shared == sum(n - 1 for n in cache.ref_counts if n > 1)
        assert step.blocks_shared > 0
        expected_copies = step.blocks_copied
        assert step.beams == dense_step.beams
    assert copies_seen > 0  # beams that split copied a shared half-full block


def test_ledger_counts_by_hand() -> None:
    ledger = BlockLedger(prompt_tokens=6, block_size=4)  # blocks [0: 4 tokens, 1: 2 tokens]
    assert ledger.select([0, 0, 0]) == 2 * 2  # both blocks, two extra references each
    assert ledger.copies_on_next_append() == 2  # the half-full block: two rows copy it
    assert ledger.append() == 2
    # Tables [0, 2], [0, 3], [0, 1]; rows 0, 0, 2 → block 0 thrice (2 extra), block 2 twice (1).
    assert ledger.select([0, 0, 2]) == 3


def test_beam_lab_result_and_cumulative_bytes(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    prompt = lab_prompt_ids(tokenizer, 10)
    settings = BeamSettings(num_beams=2, max_new_tokens=4, num_return_sequences=2)
    result = finish(
        beam_lab(tiny_backend, tokenizer, prompt, settings, check_transformers=False),
        BeamLabResult,
    )
    assert len(result.texts) == 2 and not result.transformers.ran
    assert result.cumulative_reorder_bytes[-1] == result.search.reorder_bytes
    assert result.cumulative_cow_bytes[-1] == result.search.cow_bytes
    assert [h.score for h in result.search.sequences] == sorted(
        (h.score for h in result.search.sequences), reverse=True)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_beams": 1}, "at least 2 beams"),
        ({"num_return_sequences": 5}, "between 1 and 4"),
        ({"early_stopping": "sometimes"}, "True, False or 'never'"),
        ({"max_new_tokens": 0}, "at least one token"),
    ],
)
def test_bad_settings_say_what_to_do(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BeamSettings(**kwargs)  # type: ignore[arg-type]
