"""The paged and quantized caches and the scale projector, against hand counts.

The tiny seeded model (conftest) runs every check; `ko-base`, when shipped,
runs the paged-vs-dynamic greedy check too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.cache.paged import PagedKVCache
from kvstudio.engine.cache.quantized import dequantize, formula_bytes_per_token, quantize
from kvstudio.engine.generate import Stepper
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import MODELS_DIR, load_model_folder
from kvstudio.files.loaded import LoadedModel, from_minimind
from kvstudio.labs.cache.paged import PagedLabResult, paged_memory
from kvstudio.labs.cache.quantized import QuantLabResult, quantized_cache
from kvstudio.labs.common import Progress, finish, lab_prompt_ids
from kvstudio.labs.projector import ProjectionCheck, projection_check
from kvstudio.labs.registry import PAGED, QUANTIZED
from kvstudio.labs.scale import PRESETS, geometry_of_backend, load_config, preset, variants

# Compares computations of different shapes (paged against dynamic, shared rows against their
# own): rerun under other CPU kernels by tests/core/test_other_cpus.py.
pytestmark = pytest.mark.numeric


def _greedy(backend, tokenizer, prompt, spec, n=24, **kw):  # type: ignore[no-untyped-def]
    stepper = Stepper(
        backend,
        tokenizer,
        prompt,
        sampling=SamplingSettings.greedy_settings(),
        max_new_tokens=n,
        cache=spec,
        stop_at_eos=False,
        top_n=0,
        **kw,
    )
    for _ in stepper:
        pass
    return stepper


# ---- paged: same tokens ----------------------------------------------------------------------
@pytest.mark.parametrize("block_size", [1, 16, 7])  # 7 does not divide the 40-token prompt
def test_paged_gives_the_dynamic_cache_greedy_tokens(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, block_size: int
) -> None:
    prompt = lab_prompt_ids(tokenizer, 40)
    assert 40 % 7 != 0
    dynamic = _greedy(tiny_backend, tokenizer, prompt, CacheSpec("dynamic"))
    paged = _greedy(tiny_backend, tokenizer, prompt, CacheSpec("paged", block_size=block_size))
    assert paged.generated_ids == dynamic.generated_ids
    cache = paged.cache
    assert isinstance(cache, PagedKVCache)
    tokens = 40 + 24 - 1
    assert cache.live_blocks == -(-tokens // block_size)


@pytest.mark.parametrize("block_size", [1, 4, 7])
def test_paged_decodes_bit_for_bit_as_the_dynamic_cache(
    tiny_backend: MiniMindBackend, block_size: int
) -> None:
    """Exact by construction, whatever the kernels: a paged cache hands attention each row's
    keys and values gathered from its blocks into the (B, S, G, d) tensor a dynamic cache
    holds, so the forward makes the same calls on the same shapes and numbers, and
    ``torch.equal`` is the right comparison (unlike batched against alone)."""
    model = tiny_backend.model
    dynamic = tiny_backend.new_cache(CacheSpec("dynamic"), 2)
    paged = tiny_backend.new_cache(CacheSpec("paged", block_size=block_size), 2)
    feed = torch.stack([torch.arange(3, 15), torch.arange(20, 32)])  # (2, 12)
    with torch.inference_mode():
        for _ in range(6):  # the prefill, then five decode steps
            expected, actual = model(feed, dynamic), model(feed, paged)
            assert torch.equal(actual, expected)
            feed = expected[:, -1].argmax(-1, keepdim=True)  # (2, 1)


@pytest.mark.parametrize("block_size", [1, 16, 5])  # 5 does not divide 183
def test_paged_matches_dynamic_on_ko_base(block_size: int) -> None:
    folder = MODELS_DIR / "ko-base"
    if not (folder / "config.json").exists():
        pytest.skip("ko-base is not shipped in this checkout")
    loaded = load_model_folder(folder)
    backend = MiniMindBackend(loaded.model, name="ko-base")
    prompt = lab_prompt_ids(loaded.tokenizer, 183)
    dynamic = _greedy(backend, loaded.tokenizer, prompt, CacheSpec("dynamic"), n=32)
    spec = CacheSpec("paged", block_size=block_size)
    paged = _greedy(backend, loaded.tokenizer, prompt, spec, n=32)
    assert paged.generated_ids == dynamic.generated_ids


def test_paged_batch_rows_equal_dynamic_rows(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    """Different prompts per row (no sharing): every row's tokens equal the dynamic cache's."""
    rows = [lab_prompt_ids(tokenizer, 12, text=t) for t in ("하나 둘 셋", "가나다라", "hello")]
    dynamic = _greedy(tiny_backend, tokenizer, rows, CacheSpec("dynamic"), n=10)
    paged = _greedy(tiny_backend, tokenizer, rows, CacheSpec("paged", block_size=4), n=10)
    assert paged.generated_ids == dynamic.generated_ids


# ---- paged: hand counts ----------------------------------------------------------------------
def _fill(cache: PagedKVCache, lengths: list[int], heads: int = 2, d: int = 8) -> None:
    """Write rows of the given lengths straight into the cache (one layer per call)."""
    B, longest = len(lengths), max(lengths)
    k = torch.randn(B, 1, heads, d)
    for t in range(longest):
        for layer in cache:
            layer.update(k + t, k - t)
        cache.finish_rows(torch.tensor([t + 1 >= n for n in lengths]))


def test_block_counts_and_bytes_match_a_hand_count() -> None:
    """Three rows of 5, 16 and 21 tokens, b = 4, 2 layers, G = 2, d = 8, fp32."""
    cache = PagedKVCache(2, CacheSpec("paged", block_size=4))
    _fill(cache, [5, 16, 21])
    assert cache.lengths == [5, 16, 21]
    # ⌈5/4⌉ + ⌈16/4⌉ + ⌈21/4⌉ = 2 + 4 + 6 = 12 blocks
    assert cache.live_blocks == 12
    assert [len(row) for row in cache.block_table()] == [2, 4, 6]
    block = 4 * 2 * 8 * 4  # b · G · d · 4 bytes = 256 bytes for K (and as much for V)
    assert cache.block_nbytes() == (block, block)
    assert cache.nbytes == 12 * 2 * block * 2  # blocks × (K + V) × layers = 12,288
    # Slots holding tokens: 5 + 16 + 21 = 42 tokens × 2·G·d·4 bytes × 2 layers
    assert cache.used_nbytes == 42 * 2 * 2 * 8 * 4 * 2
    # Waste only in each row's last block: 3 + 0 + 3 empty slots
    assert cache.nbytes - cache.used_nbytes == (3 + 0 + 3) * 2 * 2 * 8 * 4 * 2


def test_a_shared_prefix_block_is_stored_once() -> None:
    cache = PagedKVCache(1, CacheSpec("paged", block_size=4))
    prompt = torch.randn(1, 6, 2, 8)  # 6 tokens: one full block, one block with 2 slots
    cache[0].update(prompt, -prompt)
    cache.select_rows(torch.tensor([0, 0, 0]))  # three rows share the prompt
    assert cache.live_blocks == 2  # stored once, not three times
    table = cache.block_table()
    assert [ref.block for ref in table[0]] == [ref.block for ref in table[2]]
    assert all(ref.shared for row in table for ref in row)
    new = torch.randn(3, 1, 2, 8)
    cache[0].update(new, -new)  # every row appends to the shared half-full block
    table = cache.block_table()
    full_blocks = {row[0].block for row in table}
    assert len(full_blocks) == 1 and table[0][0].shared  # the full block stays shared
    assert len({row[1].block for row in table}) == 3  # the half-full one was copied
    assert cache.copies_on_write == 2  # the last row to append keeps the original
    assert cache.live_blocks == 1 + 3
    keys, _ = cache[0].update(new, -new)  # (3, 8, 2, 8) gathered
    for r in range(3):
        assert torch.equal(keys[r, :6], prompt[0])
        assert torch.equal(keys[r, 6], new[r, 0])


def test_sampling_rows_share_the_prompt_blocks(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    prompt = lab_prompt_ids(tokenizer, 20)  # b = 8: two full blocks shared, one copied per row
    result = finish(
        paged_memory(
            tiny_backend,
            tokenizer,
            prompt,
            samples=6,
            new_tokens=10,
            block_size=8,
            greedy_tokens=4,
        ),
        PagedLabResult,
    )
    assert result.same_samples and result.greedy_identical
    # A row stores its prompt and every token it fed: the one that ended it is never fed,
    # and a row that finished early stops growing (here rows end after 5, 9 and 10 tokens).
    assert len(set(result.answer_lengths)) > 1
    assert result.row_lengths == tuple(20 + n - 1 for n in result.answer_lengths)
    first = result.paged_steps[0].table  # after the prefill: every row holds blocks 0, 1, 2
    assert len({tuple(ref.block for ref in row) for row in first}) == 1
    assert result.paged_steps[0].held_bytes == 3 * result.block_bytes
    assert result.hand_count_blocks * result.block_bytes == result.paged_bytes[-1]
    assert result.copies_on_write == 5
    per_token = result.bytes_per_token
    assert result.static_bytes[-1] == 6 * (20 + 10) * per_token
    assert result.dynamic_bytes[-1] == 6 * (20 + len(result.dynamic_bytes) - 1) * per_token
    assert result.paged_bytes[-1] < result.dynamic_bytes[-1] < result.static_bytes[-1]


# ---- quantized -------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["fp16", "int8", "int4"])
def test_quantized_bytes_equal_the_layout_formula(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, kind: str
) -> None:
    prompt = lab_prompt_ids(tokenizer, 30)
    stepper = _greedy(tiny_backend, tokenizer, prompt, CacheSpec(kind), n=8)  # type: ignore[arg-type]
    L, G, d = tiny_backend.num_layers, tiny_backend.num_kv_heads, tiny_backend.head_dim
    tokens = 30 + 8 - 1
    # int8: 2·L·G·(d + 2) bytes a token: d int8 numbers + one float16 scale per head
    per_token = {
        "fp16": 2 * L * G * d * 2,
        "int8": 2 * L * G * (d + 2),
        "int4": 2 * L * G * (d // 2 + 2),
    }
    assert formula_bytes_per_token(kind, L, G, d) == per_token[kind]
    assert stepper.records[-1].cache_allocated_bytes == tokens * per_token[kind]


def test_int8_and_int4_round_trip_within_half_a_step() -> None:
    x = torch.randn(2, 5, 3, 16) * 3
    for bits, qmax in ((8, 127), (4, 7)):
        stored, scale = quantize(x, bits)
        assert scale is not None and scale.dtype == torch.float16
        assert stored.shape[-1] == (16 if bits == 8 else 8)  # 4-bit: two numbers a byte
        back = dequantize(stored, scale, bits, torch.float32)
        step = x.abs().amax(-1, keepdim=True) / qmax
        assert ((back - x).abs() <= step * 0.5 + 1e-3).all()


def test_quantized_lab_reports_drift_against_the_reference(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    prompt = lab_prompt_ids(tokenizer, 24)
    result = finish(quantized_cache(tiny_backend, tokenizer, prompt, new_tokens=12), QuantLabResult)
    int8, int4 = result.run("int8"), result.run("int4")
    assert result.reference.cache_bytes == 4 * result.reference.cache_tokens * 2 * 2 * 2 * 16
    assert 0 < int8.max_logit_diff < int4.max_logit_diff
    for run in result.runs:
        assert run.cache_bytes == run.formula_bytes < result.reference.cache_bytes


# ---- the labs' declared runs, given a front's prompt (compare --cache) -----------------------
@pytest.fixture(scope="module")
def tiny_loaded(tiny_model: MiniMindLM, tokenizer: TextTokenizer) -> LoadedModel:
    return from_minimind(tiny_model, tokenizer, "tiny")


def test_quantized_run_takes_a_front_prompt(
    tiny_loaded: LoadedModel, tokenizer: TextTokenizer
) -> None:
    prompt = lab_prompt_ids(tokenizer, 17)[::-1]  # not the lab text's first 17 tokens
    given = finish(QUANTIZED.run(tiny_loaded, {"new_tokens": 5}, prompt_ids=prompt),
                   QuantLabResult)
    direct = finish(quantized_cache(tiny_loaded.backend, tokenizer, prompt, new_tokens=5),
                    QuantLabResult)
    assert given == direct and given.prompt_tokens == 17
    own = finish(QUANTIZED.run(tiny_loaded, {"prompt_tokens": 17, "new_tokens": 5}),
                 QuantLabResult)
    assert own.reference.token_ids != given.reference.token_ids  # the lab text, not `prompt`


def test_paged_run_checks_the_greedy_prompt_on_a_front_prompt(
    tiny_loaded: LoadedModel, tokenizer: TextTokenizer
) -> None:
    prompt = lab_prompt_ids(tokenizer, 11)
    items = list(PAGED.run(tiny_loaded, {"samples": 3, "new_tokens": 4, "block_size": 4},
                           greedy_prompt_ids=prompt, greedy_tokens=6))
    result = items[-1]
    assert isinstance(result, PagedLabResult)
    greedy = [i.record for i in items if isinstance(i, Progress) and i.stage == "greedy"]
    assert len(greedy) == 2 * 6 and result.greedy_tokens == 6 and result.greedy_identical
    assert greedy[0] is not None and greedy[0].tokens_fed == 11  # the prefill: our prompt
    assert result.samples == 3 and result.new_tokens == 4


def test_the_labs_refuse_what_they_cannot_run_before_any_work(
    tiny_loaded: LoadedModel, tokenizer: TextTokenizer
) -> None:
    positions = tiny_loaded.max_positions
    too_long = lab_prompt_ids(tokenizer, positions)
    with pytest.raises(ValueError, match="shorter prompt or fewer new tokens"):
        QUANTIZED.run(tiny_loaded, {"new_tokens": 1}, prompt_ids=too_long)
    with pytest.raises(ValueError, match="greedy check's P \\+ N"):
        PAGED.run(tiny_loaded, {"samples": 2}, greedy_prompt_ids=too_long, greedy_tokens=1)
    # The sampling run's bounds are the lab's (the window's boxes), for every front.
    with pytest.raises(ValueError, match="samples must be between 1 and 64"):
        PAGED.run(tiny_loaded, {"samples": 65})
    with pytest.raises(ValueError, match="new_tokens must be between 1 and 512"):
        PAGED.run(tiny_loaded, {"new_tokens": 513})


# ---- projector -------------------------------------------------------------------------------
@pytest.mark.parametrize("batch", [1, 3])
def test_projection_equals_the_bytes_of_a_real_run(
    course_backend: MiniMindBackend, tokenizer: TextTokenizer, batch: int
) -> None:
    prompt = lab_prompt_ids(tokenizer, 50)
    check = finish(
        projection_check(course_backend, tokenizer, prompt, batch=batch, new_tokens=6),
        ProjectionCheck,
    )
    assert check.context == 55
    assert check.measured_bytes == batch * 55 * 2048  # the course model: 2,048 bytes a token
    assert check.projected_bytes == check.measured_bytes


def test_presets_by_hand() -> None:
    llama = preset("llama-3.1-8b")
    assert llama.bytes_per_token(16) == 2 * 32 * 8 * 128 * 2 == 131_072
    assert llama.cache_bytes(32768, 8) == 32 * 1024**3  # 8 × 32,768 × 128 KiB = 32 GiB
    assert llama.parameters == 8_030_261_248  # the published 8.03 B
    assert preset("exaone-4.0-1.2b").bytes_per_token(16) == 2 * 30 * 8 * 64 * 2 == 61_440
    assert preset("llama-3.1-70b").bytes_per_token(16) == 327_680
    assert preset("llama-2-7b").bytes_per_token(16) == 524_288  # MHA: 4× Llama-3.1-8B
    mistral = preset("mistral-7b-v0.1")
    # the cache keeps W − 1 = 4,095 tokens, as SlidingWindowLayer does
    assert mistral.cache_bytes(32768, 1) == mistral.cache_bytes(4096, 1) == 4095 * 131_072
    rows = {r.label: r for r in variants(llama, 32768, 8)}
    assert rows["without GQA (H_kv = H)"].total_bytes == 4 * rows["as configured"].total_bytes
    # 8 bits: d·1 byte + a float16 scale per token and K/V head (the quantized layout)
    eight = rows["8-bit cache (scales incl.)"]
    assert eight.bytes_per_token == 2 * 32 * 8 * (128 + 2)
    assert eight.total_bytes == eight.bytes_per_token * 32768 * 8
    assert set(PRESETS) >= {"exaone-4.0-1.2b", "llama-3.1-70b", "mistral-7b-v0.1"}


def test_config_json_folder_and_bad_files(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    raw = {
        "hidden_size": 5120,
        "num_hidden_layers": 8,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "sliding_window": 4096,
        "layer_types": ["sliding_attention"] * 3
        + ["full_attention"]
        + ["sliding_attention"] * 3
        + ["full_attention"],
        "vocab_size": 1000,
        "intermediate_size": 100,
    }
    (folder / "config.json").write_text(json.dumps(raw))
    g = load_config(folder)
    assert (g.layers, g.kv_heads, g.head_dim, g.window, g.window_layers) == (8, 8, 128, 4096, 6)
    per_layer = 2 * 8 * 128 * 2
    assert g.cache_bytes(10_000, 1) == per_layer * (2 * 10_000 + 6 * 4095)  # W − 1 kept
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"config\.json"):
        load_config(tmp_path / "bad.json")
    with pytest.raises(ValueError, match=r"No config\.json"):
        load_config(tmp_path / "missing")
    (tmp_path / "partial.json").write_text(json.dumps({"hidden_size": 64}))
    with pytest.raises(ValueError, match="num_hidden_layers"):
        load_config(tmp_path / "partial.json")


def test_geometry_of_the_loaded_model(course_backend: MiniMindBackend) -> None:
    g = geometry_of_backend(course_backend)
    assert g.bytes_per_token(32) == 2048
    assert g.parameters == course_backend.model.num_parameters


def test_paged_follows_rows_that_share_identical_histories(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    """The window's repeated sampling shares rows while they agree; paged keeps up with it."""
    prompt = lab_prompt_ids(tokenizer, 18)
    runs = []
    for spec in (CacheSpec("dynamic"), CacheSpec("paged", block_size=4)):
        stepper = Stepper(
            tiny_backend,
            tokenizer,
            prompt,
            sampling=SamplingSettings(temperature=0.7, seed=3),
            max_new_tokens=12,
            cache=spec,
            batch_size=8,
            share_identical_rows=True,
            top_n=0,
        )
        for _ in stepper:
            pass
        runs.append(stepper)
    assert runs[1].generated_ids == runs[0].generated_ids
    cache = runs[1].cache
    assert isinstance(cache, PagedKVCache)
    assert cache.live_blocks <= sum(len(t) for t in cache.tables)  # shared blocks counted once
