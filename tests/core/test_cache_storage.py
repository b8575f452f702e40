"""The KV cache owns its storage, and the bytes it reports are the storage it holds.

K/V arrive from the model as views into a wider q|k|v projection; for one token
such a view even looks contiguous. A cache that kept the view would hold the
whole projection buffer while reporting only the view's bytes.
"""

from __future__ import annotations

import pytest
import torch

from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.kv_cache import ALL_CACHE_KINDS, CacheSpec, KVCache
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer

GREEDY = SamplingSettings.greedy_settings()


def storage_held(cache: KVCache) -> int:
    """Bytes of every distinct storage any tensor of the cache refers to."""
    storages: dict[int, int] = {}
    for layer in cache:
        for value in vars(layer).values():
            if isinstance(value, torch.Tensor) and value.numel():
                storage = value.untyped_storage()
                storages[storage.data_ptr()] = storage.nbytes()
    return sum(storages.values())


@pytest.mark.parametrize("prompt_tokens", [1, 6])
@pytest.mark.parametrize("kind", [k for k in ALL_CACHE_KINDS if k != "paged"])
def test_first_steps_report_the_storage_the_cache_holds(
    course_backend: MiniMindBackend, tokenizer: TextTokenizer, kind: str, prompt_tokens: int
) -> None:
    spec = CacheSpec(kind, max_length=16, window=4)  # type: ignore[arg-type]
    plan = course_backend.cache_plan(spec)
    prompt = [(7 * i + 3) % course_backend.vocab_size for i in range(prompt_tokens)]
    stepper = Stepper(
        course_backend,
        tokenizer,
        prompt,
        mode="cached",
        sampling=GREEDY,
        max_new_tokens=3,
        stop_at_eos=False,
        cache=spec,
    )
    for record in stepper:
        cache = stepper.cache
        assert isinstance(cache, KVCache)
        held = storage_held(cache)
        assert record.cache_allocated_bytes == held, f"step {record.step}"
        assert sum(k + v for k, v in record.cache_layer_bytes) == held
        positions = prompt_tokens + record.step
        assert record.cache_allocated_bytes == plan.allocated_bytes(positions)
        assert record.cache_used_bytes == plan.used_bytes(positions)


def test_one_token_prefill_is_2048_bytes_on_the_course_model(
    course_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    """The course model: 2·4·1·2·32·4 = 2,048 B for one token, and that is all it holds."""
    for kind in ("dynamic", "sliding"):
        stepper = Stepper(
            course_backend,
            tokenizer,
            [5],
            mode="cached",
            sampling=GREEDY,
            max_new_tokens=1,
            cache=CacheSpec(kind),  # type: ignore[arg-type]
        )
        first = next(iter(stepper))
        assert first.cache_allocated_bytes == first.cache_used_bytes == 2_048
        assert storage_held(stepper.cache) == 2_048  # type: ignore[arg-type]


@pytest.mark.parametrize("prompt_tokens", [1, 6])
def test_paged_first_steps_report_whole_blocks_of_their_pool(
    course_backend: MiniMindBackend, tokenizer: TextTokenizer, prompt_tokens: int
) -> None:
    """A paged cache holds whole blocks of its pool: ⌈T/b⌉·b tokens' worth per layer."""
    spec = CacheSpec("paged", block_size=4)
    plan = course_backend.cache_plan(spec)
    stepper = Stepper(
        course_backend, tokenizer, [5] * prompt_tokens, mode="cached", sampling=GREEDY,
        max_new_tokens=3, stop_at_eos=False, cache=spec,
    )
    for record in stepper:
        positions = prompt_tokens + record.step
        assert record.cache_allocated_bytes == plan.allocated_bytes(positions)
        assert record.cache_used_bytes == plan.used_bytes(positions)
        pool = stepper.cache.pool_nbytes  # type: ignore[union-attr]
        assert pool >= record.cache_allocated_bytes  # the pool grows by doubling
