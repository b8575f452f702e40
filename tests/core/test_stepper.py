"""The stepper: cached and recompute agree, and every number it records is measured."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch

from kvstudio.engine import formulas
from kvstudio.engine.backends.minimind import LanguageModel, MiniMindBackend
from kvstudio.engine.cache.base import Cache
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.cache.layout import CachePlan, uniform_plan
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.generate import Stepper
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.records import SamplingSettings, StepRecord
from kvstudio.engine.tokenizer import REPLACEMENT, TextTokenizer

# The tests marked `numeric` compare computations of different shapes (cached vs recompute: a
# prefill of P against one token a step; rows batched or shared against alone): rerun under
# other CPU kernels by tests/core/test_other_cpus.py. The others count, validate or follow a
# script, which no kernel changes.

GREEDY = SamplingSettings.greedy_settings()


def run(backend: LanguageModel, tok: TextTokenizer, prompt: Sequence[int], **kw: object) -> Stepper:
    stepper = Stepper(backend, tok, prompt, **kw)  # type: ignore[arg-type]
    list(stepper)
    return stepper


def prompt_of(n: int, vocab: int) -> list[int]:
    return [(7 * i + 3) % vocab for i in range(n)]


def shared_and_separate(
    backend: LanguageModel,
    tok: TextTokenizer,
    sharing: dict[str, bool],
    not_sharing: dict[str, bool],
    *,
    mode: str,
    kind: str,
    sampling: SamplingSettings,
    new_tokens: int,
    rows: int,
) -> tuple[Stepper, Stepper]:
    """The same batched run of a 12-token prompt with row sharing and without."""
    kw = dict(
        mode=mode,
        sampling=sampling,
        max_new_tokens=new_tokens,
        batch_size=rows,
        stop_at_eos=False,
        cache=CacheSpec(kind, max_length=64, window=8),  # type: ignore[arg-type]
    )
    prompt = prompt_of(12, backend.vocab_size)
    shared = run(backend, tok, prompt, **sharing, **kw)
    separate = run(backend, tok, prompt, **not_sharing, **kw)
    return shared, separate


@pytest.mark.numeric
@pytest.mark.parametrize("p, n", [(1, 1), (1, 12), (9, 1), (17, 9), (40, 24)])
def test_greedy_tokens_identical_between_modes(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, p: int, n: int
) -> None:
    prompt = prompt_of(p, tiny_backend.vocab_size)
    runs = {}
    for mode in ("cached", "recompute"):
        stepper = Stepper(
            tiny_backend,
            tokenizer,
            prompt,
            mode=mode,
            sampling=GREEDY,
            max_new_tokens=n,
            stop_at_eos=False,
        )
        logits = []
        for _ in stepper:
            assert stepper.last_logits is not None
            logits.append(stepper.last_logits[0].clone())
        runs[mode] = (stepper.generated_ids[0], torch.stack(logits))
    assert runs["cached"][0] == runs["recompute"][0]
    assert len(runs["cached"][0]) == n
    max_diff = (runs["cached"][1] - runs["recompute"][1]).abs().max().item()
    assert max_diff < 1e-4


def test_tokens_fed_are_measured_and_match_formulas(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    prompt = prompt_of(183, tiny_backend.vocab_size)
    for mode, expected in (("cached", 246), ("recompute", 13_728)):
        s = run(
            tiny_backend,
            tokenizer,
            prompt,
            mode=mode,
            sampling=GREEDY,
            max_new_tokens=64,
            stop_at_eos=False,
            top_n=0,
        )
        fed = [r.tokens_fed for r in s.records]
        assert sum(fed) == expected == formulas.tokens_fed(mode, 183, 64)
        assert fed == formulas.tokens_fed_per_step(mode, 183, 64)
        assert [r.phase for r in s.records[:2]] == ["prefill", "decode"]
        assert [r.step for r in s.records] == list(range(64))


def test_dynamic_cache_bytes_course_model(
    course_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    s = Stepper(
        course_backend,
        tokenizer,
        prompt_of(100, course_backend.vocab_size),
        sampling=GREEDY,
        max_new_tokens=3,
        stop_at_eos=False,
    )
    first = s.step()  # the prefill: the cache now holds the 100 prompt tokens
    assert first.cache_total_bytes == 204_800 == formulas.cache_bytes(4, 100, 2, 32, 4)
    assert first.cache_layer_bytes == ((25_600, 25_600),) * 4
    assert first.cache_length == 100
    assert first.cache_allocated_bytes == first.cache_used_bytes == 204_800
    second = s.step()
    assert second.cache_total_bytes == formulas.cache_bytes(4, 101, 2, 32, 4)
    assert second.attention_mask_shape == (1, 101)  # 100 cached keys + the new one


@pytest.mark.numeric
def test_static_cache_reports_preallocation(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    geometry = (tiny_backend.num_layers, tiny_backend.num_kv_heads, tiny_backend.head_dim, 4)
    L, H, d, b = geometry
    s = run(
        tiny_backend,
        tokenizer,
        prompt_of(10, tiny_backend.vocab_size),
        sampling=GREEDY,
        max_new_tokens=5,
        stop_at_eos=False,
        cache=CacheSpec("static", max_length=32),
    )
    for i, r in enumerate(s.records):
        assert r.cache_allocated_bytes == formulas.cache_bytes(L, 32, H, d, b)
        assert r.cache_used_bytes == formulas.cache_bytes(L, 10 + i, H, d, b)
        assert r.cache_length == 10 + i
    dynamic = run(
        tiny_backend,
        tokenizer,
        prompt_of(10, tiny_backend.vocab_size),
        sampling=GREEDY,
        max_new_tokens=5,
        stop_at_eos=False,
    )
    assert dynamic.generated_ids == s.generated_ids


def test_static_cache_too_small_is_a_clear_error(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    with pytest.raises(ValueError, match="static cache"):
        Stepper(
            tiny_backend,
            tokenizer,
            [1, 2, 3],
            max_new_tokens=10,
            cache=CacheSpec("static", max_length=8),
        )


@pytest.mark.numeric
def test_sliding_window_matches_recompute_and_stops_growing(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    window = 8
    spec = CacheSpec("sliding", window=window)
    prompt = prompt_of(5, tiny_backend.vocab_size)
    runs = {}
    for mode in ("cached", "recompute"):
        s = Stepper(
            tiny_backend,
            tokenizer,
            prompt,
            mode=mode,
            sampling=GREEDY,
            max_new_tokens=20,
            stop_at_eos=False,
            cache=spec,
        )
        logits = []
        for _ in s:
            assert s.last_logits is not None
            logits.append(s.last_logits[0].clone())
        runs[mode] = (s, torch.stack(logits))
    cached, recompute = runs["cached"][0], runs["recompute"][0]
    assert cached.generated_ids == recompute.generated_ids
    assert (runs["cached"][1] - runs["recompute"][1]).abs().max().item() < 1e-4
    per_token = formulas.bytes_per_token(
        tiny_backend.num_layers, tiny_backend.num_kv_heads, tiny_backend.head_dim, 4
    )
    lengths = [r.cache_length for r in cached.records]
    assert lengths == [min(5 + i, window - 1) for i in range(20)]  # W − 1 kept, as transformers
    assert [r.cache_total_bytes for r in cached.records] == [per_token * n for n in lengths]
    assert max(r.attention_mask_shape[1] for r in cached.records) == window  # itself included
    # A full (unwindowed) run sees all past tokens, so its answer generally differs.
    full = run(
        tiny_backend, tokenizer, prompt, sampling=GREEDY, max_new_tokens=20, stop_at_eos=False
    )
    assert full.records[-1].cache_length == 24


@pytest.mark.numeric
def test_same_seed_same_samples_in_both_modes(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    s = SamplingSettings(temperature=1.0, top_k=40, top_p=0.9, repetition_penalty=1.1, seed=3)
    prompt = prompt_of(12, tiny_backend.vocab_size)
    kw = dict(sampling=s, max_new_tokens=16, batch_size=3, stop_at_eos=False)
    a = run(tiny_backend, tokenizer, prompt, mode="cached", **kw)
    b = run(tiny_backend, tokenizer, prompt, mode="recompute", **kw)
    c = run(tiny_backend, tokenizer, prompt, mode="cached", **kw)
    assert a.generated_ids == b.generated_ids == c.generated_ids
    assert len({tuple(row) for row in a.generated_ids}) > 1  # rows differ: really sampled
    other = run(
        tiny_backend,
        tokenizer,
        prompt,
        mode="cached",
        **{**kw, "sampling": SamplingSettings(temperature=1.0, top_p=0.9, seed=4)},
    )
    assert other.generated_ids != a.generated_ids


def test_temperature_zero_in_stepper_is_argmax(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    s = Stepper(
        tiny_backend,
        tokenizer,
        prompt_of(6, tiny_backend.vocab_size),
        sampling=SamplingSettings(temperature=0.0, top_p=0.5, top_k=3),
        max_new_tokens=6,
        stop_at_eos=False,
    )
    for record in s:
        assert s.last_logits is not None
        assert record.token_ids[0] == int(s.last_logits[0].argmax())
        assert record.survivors_top_p == (1,)
        assert record.chosen_probability == (1.0,)


def test_records_are_plain_and_round_trip(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    s = run(
        tiny_backend,
        tokenizer,
        prompt_of(5, tiny_backend.vocab_size),
        sampling=SamplingSettings(temperature=0.8, top_p=0.9),
        max_new_tokens=4,
        batch_size=2,
        keep_logits=True,
        stop_at_eos=False,
        top_n=4,
    )
    r = s.records[-1]
    assert r.finished == (True, True)
    assert r.last_logits is not None and len(r.last_logits) == tiny_backend.vocab_size
    assert all(len(row) <= 4 for row in r.top_candidates)
    assert all(c.probability > 0 for row in r.top_candidates for c in row)
    assert StepRecord.from_dict(r.to_dict()) == r
    with pytest.raises(ValueError, match="finished"):
        s.step()


# ---- a scripted backend: exact control over what the "model" prefers -----------------------
class ScriptedCache:
    """A `Cache` that only counts tokens: 8 bytes of K and 8 of V per token, one layer."""

    def __init__(self) -> None:
        self.seq_length = 0

    @property
    def stored_tokens(self) -> int:
        return self.seq_length

    def visible_length(self, new_tokens: int) -> int:
        return self.seq_length + new_tokens

    def layer_nbytes(self) -> tuple[tuple[int, int], ...]:
        return ((8 * self.seq_length, 8 * self.seq_length),)

    @property
    def nbytes(self) -> int:
        return 16 * self.seq_length

    @property
    def used_nbytes(self) -> int:
        return self.nbytes

    def select_rows(self, rows: torch.Tensor) -> None:
        pass

    def finish_rows(self, finished: torch.Tensor) -> None:
        pass


class ScriptedBackend:
    """A `LanguageModel` whose logits put each row's next scripted token on top."""

    name = "scripted"
    num_layers, num_kv_heads, head_dim, dtype_bytes, hidden_size = 1, 1, 2, 4, 2
    max_positions = 2048
    eos_token_id: int | None = None
    device = torch.device("cpu")

    def __init__(self, vocab_size: int, scripts: list[list[int]]) -> None:
        self.vocab_size = vocab_size
        self.scripts = scripts
        self.calls = 0

    def new_cache(self, spec: CacheSpec, batch_size: int) -> ScriptedCache:
        return ScriptedCache()

    def forward_last(
        self, input_ids: torch.Tensor, cache: ScriptedCache | None, window: int | None
    ) -> torch.Tensor:
        step = self.calls
        self.calls += 1
        logits = torch.zeros(input_ids.shape[0], self.vocab_size)
        for row, script in enumerate(self.scripts):
            logits[row, script[min(step, len(script) - 1)]] = 10.0
        if cache is not None:
            cache.seq_length += input_ids.shape[1]
        return logits

    def forward_tail(
        self, input_ids: torch.Tensor, cache: ScriptedCache | None, keep: int,
        probe: object = None,
    ) -> torch.Tensor:
        return self.forward_last(input_ids, cache, None)[:, None].expand(-1, keep, -1)

    def cache_plan(self, spec: CacheSpec) -> CachePlan:
        return uniform_plan(self, spec)


def test_scripted_backend_satisfies_protocol(tokenizer: TextTokenizer) -> None:
    assert isinstance(ScriptedBackend(10, [[1]]), LanguageModel)
    assert isinstance(ScriptedCache(), Cache)


def test_batch_rows_keep_receiving_eos(tokenizer: TextTokenizer) -> None:
    eos = tokenizer.eos_id
    assert eos is not None
    a, b = tokenizer.encode("가나")[:1] * 2, tokenizer.encode("다")[:1] * 5
    backend = ScriptedBackend(tokenizer.vocab_size, [[a[0], eos, 7, 7, 7], [b[0]] * 3 + [eos, 9]])
    # Each row follows its own script, so the rows must not share their prompt's prefill.
    s = run(backend, tokenizer, [5, 6], sampling=GREEDY, max_new_tokens=10, batch_size=2,
            share_prefill=False)
    assert [r.finished for r in s.records] == [
        (False, False),
        (True, False),
        (True, False),
        (True, True),
    ]
    assert [r.token_ids[0] for r in s.records] == [a[0], eos, eos, eos]  # eos padding
    assert s.generated_ids == [[a[0], eos], [b[0]] * 3 + [eos]]
    assert s.records[2].token_texts[0] == ""
    assert s.finished and len(s.records) == 4  # stopped before the budget


def test_stop_at_eos_false_generates_exactly_n(tokenizer: TextTokenizer) -> None:
    eos = tokenizer.eos_id
    assert eos is not None
    backend = ScriptedBackend(tokenizer.vocab_size, [[eos]])  # the model always wants eos
    s = run(backend, tokenizer, [5], sampling=GREEDY, max_new_tokens=7, stop_at_eos=False)
    assert len(s.generated_ids[0]) == 7 and eos not in s.generated_ids[0]
    assert [r.finished for r in s.records] == [(False,)] * 6 + [(True,)]


def test_split_hangul_never_shows_replacement_char(tokenizer: TextTokenizer) -> None:
    text = "캐시를 쓰면 됩니다. 삣앐"  # the last syllables are not in the BPE: byte tokens
    ids = tokenizer.encode(text)
    assert any(REPLACEMENT in tokenizer.decode([i]) for i in ids)  # some token splits a syllable
    backend = ScriptedBackend(tokenizer.vocab_size, [[*ids, ids[-1]]])
    s = run(backend, tokenizer, [5], sampling=GREEDY, max_new_tokens=len(ids), stop_at_eos=False)
    pieces = [r.token_texts[0] for r in s.records]
    assert all(REPLACEMENT not in p for p in pieces)
    assert "".join(pieces) == text == s.text()
    chips = [c.text for r in s.records for c in r.top_candidates[0]]
    assert all(REPLACEMENT not in c for c in chips)


def test_bad_inputs_are_value_errors(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    with pytest.raises(ValueError, match="empty"):
        Stepper(tiny_backend, tokenizer, [])
    with pytest.raises(ValueError, match="vocabulary"):
        Stepper(tiny_backend, tokenizer, [10**6])
    with pytest.raises(ValueError, match="mode"):
        Stepper(tiny_backend, tokenizer, [1], mode="fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same number"):
        Stepper(tiny_backend, tokenizer, [[1, 2], [3]], batch_size=2)


def test_static_length_only_limits_the_cached_mode(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    spec = CacheSpec("static", max_length=8)
    s = run(
        tiny_backend,
        tokenizer,
        [1, 2, 3],
        mode="recompute",
        max_new_tokens=10,
        cache=spec,
        sampling=GREEDY,
        stop_at_eos=False,
    )
    assert len(s.generated_ids[0]) == 10
    assert all(r.cache_allocated_bytes == 0 for r in s.records)


@pytest.mark.numeric
@pytest.mark.parametrize("mode", ["cached", "recompute"])
@pytest.mark.parametrize("kind", ["dynamic", "static", "sliding"])
def test_rows_sharing_a_prompt_share_the_prefill(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, mode: str, kind: str
) -> None:
    shared, separate = shared_and_separate(
        tiny_backend, tokenizer, {"share_prefill": True}, {"share_prefill": False},
        mode=mode, kind=kind,
        sampling=SamplingSettings(temperature=1.0, top_p=0.9, seed=11), new_tokens=10, rows=4,
    )
    assert shared.generated_ids == separate.generated_ids
    for a, b in zip(shared.records, separate.records, strict=True):
        assert a.cache_layer_bytes == b.cache_layer_bytes
        assert a.cache_length == b.cache_length and a.tokens_fed == b.tokens_fed
        assert a.attention_mask_shape == b.attention_mask_shape == (4, a.attention_mask_shape[1])
    if mode == "cached" and kind == "dynamic":
        assert shared.records[0].cache_total_bytes == 4 * formulas.cache_bytes(2, 12, 2, 16, 4)


@pytest.fixture(scope="module")
def peaked_backend(tiny_config: ModelConfig) -> MiniMindBackend:
    """The tiny model with sharper next-token distributions (embeddings × 5), so that
    sampled rows agree for a while and split gradually."""
    model = MiniMindLM(tiny_config).init_weights(1234).eval()
    with torch.no_grad():
        model.token_table().mul_(5.0)  # (V, C); tied: a view of the LM head
    return MiniMindBackend(model, name="peaked")


@pytest.mark.numeric
@pytest.mark.parametrize("mode", ["cached", "recompute"])
@pytest.mark.parametrize("kind", ["dynamic", "static", "sliding"])
def test_rows_with_one_history_share_a_forward_row(
    peaked_backend: MiniMindBackend, tokenizer: TextTokenizer, mode: str, kind: str
) -> None:
    shared, separate = shared_and_separate(
        peaked_backend, tokenizer, {"share_identical_rows": True}, {}, mode=mode, kind=kind,
        sampling=SamplingSettings(temperature=0.7, top_p=0.9, seed=5), new_tokens=12, rows=12,
    )
    assert shared.generated_ids == separate.generated_ids  # each row still draws its own
    assert shared.texts() == separate.texts()
    rows = [r.forward_rows for r in shared.records]
    assert rows[0] == 1 and rows == sorted(rows)  # groups only ever split
    assert len({n for n in rows if 1 < n < 12}) >= 2  # partial groups that split again
    # A row's forward row at step t is its history up to t-1: count the distinct ones.
    ids = shared.generated_ids
    for step, n in enumerate(rows[1:], start=1):
        assert n == len({tuple(row[:step]) for row in ids})
    if mode == "cached" and kind == "dynamic":
        last = shared.records[-1]  # the cache holds one row per distinct history
        distinct = len({tuple(row[:-1]) for row in ids})
        assert last.cache_total_bytes == distinct * formulas.cache_bytes(2, 12 + 11, 2, 16, 4)
    assert [r.forward_rows for r in separate.records] == [1] + [12] * 11  # prefill shared only


@pytest.mark.numeric
def test_agreeing_rows_are_fed_once(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    s = SamplingSettings(temperature=1e-4, top_p=1.0, seed=3)  # every row takes the argmax
    prompt = prompt_of(9, tiny_backend.vocab_size)
    shared = run(
        tiny_backend,
        tokenizer,
        prompt,
        sampling=s,
        max_new_tokens=8,
        batch_size=5,
        stop_at_eos=False,
        share_identical_rows=True,
    )
    assert [r.forward_rows for r in shared.records] == [1] * 8
    assert len(set(map(tuple, shared.generated_ids))) == 1
    assert shared.records[-1].cache_total_bytes == formulas.cache_bytes(2, 9 + 7, 2, 16, 4)


def test_syllable_split_between_prompt_and_answer_is_shown_whole(
    tokenizer: TextTokenizer,
) -> None:
    """A prompt cut mid-syllable (`--prompt-tokens P`): the first new token finishes it."""
    ids = tokenizer.encode("캐시를 삣앐")  # the last syllables are byte tokens
    cut = next(i for i in range(1, len(ids)) if REPLACEMENT in tokenizer.decode(ids[:i]))
    prompt, answer = ids[:cut], ids[cut:]  # the prompt ends inside a syllable
    backend = ScriptedBackend(tokenizer.vocab_size, [[*answer, answer[-1]]])
    s = run(backend, tokenizer, prompt, sampling=GREEDY, max_new_tokens=len(answer))
    pieces = [r.token_texts[0] for r in s.records]
    assert all(REPLACEMENT not in p for p in pieces)
    # The first piece carries the syllable's bytes from the prompt (and the space
    # token they came with): the answer reads "삣앐", whole.
    assert "".join(pieces).lstrip() == "삣앐"
