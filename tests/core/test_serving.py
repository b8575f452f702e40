"""Serving: batching never changes an answer; hits, padding and admission follow the arithmetic.

On the tiny seeded model. Every request's greedy tokens equal its solo run (a
batch of one, whole prefill, no prefix cache) under every policy × prefix
mode × block size, with requests whose prompt is entirely a cached prefix and
requests preempted and recomputed, and every logit that chose them equals the
solo run's to float32 rounding (`core.rounding`: the products run over all of
a step's rows, and a kernel rounds a row differently in a batch of another
size, so bit-for-bit equality would hold on some CPUs only); prefix hits are
⌊min(shared, P − 1) / b⌋·b (blocks) and min(shared, P − 1) (radix); static
batching wastes Σ(P_max − P_r) + Σ(n_max − n_r) slots; the block budget admits
exactly the requests whose blocks fit.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch

from core.rounding import assert_within_rounding
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.block_pool import BlockPool
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.generate import Stepper
from kvstudio.engine.model import Block, MiniMindLM
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.serving.engine import LLMEngine, solo_answer, solo_run
from kvstudio.engine.serving.model_runner import serving_model
from kvstudio.engine.serving.prefix import BlockHashCache, RadixCache
from kvstudio.engine.serving.records import RequestSpec, SchedulerConfig, ServingStep
from kvstudio.engine.serving.request import Request, RequestStatus, max_logit_gap
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import from_minimind
from kvstudio.labs.common import finish
from kvstudio.labs.registry import SERVING
from kvstudio.labs.serving.batching import ServingLabResult
from kvstudio.labs.serving.lab import EXAMPLE_SYSTEM, serving
from kvstudio.labs.serving.records import ServingResult

# The tests marked `numeric` compare batched against alone: rerun under other CPU kernels by
# tests/core/test_other_cpus.py. The others check arithmetic, plans and refusals, which no
# kernel changes.

SHARED = 21  # tokens every prompt of the mixed set begins with
ODD = 5  # the odd block size


def random_ids(count: int, seed: int, low: int = 3) -> list[int]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(low, 250, (count,), generator=gen).tolist()


@pytest.fixture(scope="module")
def mixed_requests() -> list[RequestSpec]:
    """Six requests: different lengths and arrivals, one shared prefix, two prompts that are
    entirely a cached prefix (the first 16 shared tokens; request 0's whole prompt)."""
    shared = random_ids(SHARED, 0)
    tails = [random_ids(n, 10 + i) for i, n in enumerate((5, 17, 0, 30))]
    prompts = [shared + tail for tail in tails]
    prompts += [shared[:16], list(prompts[0])]
    arrivals = (0, 0, 2, 1, 6, 8)
    budgets = (12, 9, 10, 14, 8, 6)
    return [RequestSpec(i, f"q{i}", tuple(p), a, n)
            for i, (p, a, n) in enumerate(zip(prompts, arrivals, budgets, strict=True))]


@pytest.fixture(scope="module")
def solo_runs(tiny_backend: MiniMindBackend, mixed_requests: list[RequestSpec]) -> list[Request]:
    """Each request alone, with the logits (V,) that chose each of its tokens."""
    return [solo_run(tiny_backend, r, keep_logits=True) for r in mixed_requests]


@pytest.fixture(scope="module")
def solo(tiny_backend: MiniMindBackend, mixed_requests: list[RequestSpec]) -> list[tuple[int, ...]]:
    return [solo_answer(tiny_backend, r) for r in mixed_requests]


def run(backend: MiniMindBackend, requests: list[RequestSpec], config: SchedulerConfig
        ) -> tuple[LLMEngine, list[ServingStep]]:
    engine = LLMEngine(backend, requests, config, keep_logits=True)
    return engine, list(engine.steps())


def assert_logits_as_solo(engine: LLMEngine, solo_runs: list[Request], label: str) -> None:
    """Every token of every request was chosen from the logits of its solo run, to float32
    rounding (a tiny random model's greedy tokens hardly depend on the keys, so tokens alone
    could miss a wrong key; a wrong key moves the logits far past rounding)."""
    for r, alone in zip(engine.requests, solo_runs, strict=True):
        assert len(r.logits) == len(alone.logits), label
        for step, (a, b) in enumerate(zip(r.logits, alone.logits, strict=True)):
            assert_within_rounding(a, b, f"{label}, request {r.request_id}, token {step}")
        gap = max_logit_gap(r, alone)  # what the lab shows
        assert gap == max(float((a - b).abs().max())
                          for a, b in zip(r.logits, alone.logits, strict=True))


POLICIES = [("static", None), ("continuous", None), ("continuous", 7)]


@pytest.mark.numeric
@pytest.mark.parametrize(("policy", "chunk"), POLICIES, ids=["static", "continuous", "chunk7"])
@pytest.mark.parametrize("prefix", ["none", "blocks", "radix"])
def test_every_answer_equals_its_solo_run(
    tiny_backend: MiniMindBackend, mixed_requests: list[RequestSpec], solo: list[tuple[int, ...]],
    solo_runs: list[Request], policy: str, chunk: int | None, prefix: str,
) -> None:
    budgets = {1: 70, 16: 6, ODD: 15}  # tight: continuous runs preempt and recompute
    preempted = 0
    for b in (1, 16, ODD):
        for budget in (None, budgets[b]):
            config = SchedulerConfig(policy=policy, chunk=chunk, block_size=b,  # type: ignore
                                     prefix_cache=prefix, max_batch=4, block_budget=budget)
            engine, steps = run(tiny_backend, mixed_requests, config)
            answers = [tuple(r.output_token_ids) for r in engine.requests]
            assert answers == solo, config.label
            assert_logits_as_solo(engine, solo_runs, config.label)
            preempted += sum(r.num_preemptions for r in engine.requests)
            assert all(s.blocks_used <= (budget or s.blocks_used) for s in steps)
            cached = engine.kv_cache_manager.prefix.refs
            assert steps[-1].blocks_used == len(cached)  # only the cache's blocks are left
    if policy == "continuous":
        assert preempted > 0  # the tight budgets really preempted someone


@pytest.mark.numeric
def test_solo_runs_are_the_ordinary_stepper(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, mixed_requests: list[RequestSpec],
    solo: list[tuple[int, ...]], solo_runs: list[Request],
) -> None:
    """The solo reference chooses what the engine every other lab runs chooses, from the
    logits of the ordinary cached forward (to rounding: one prefill call against a query
    per call, each attending on its own)."""
    model = tiny_backend.model
    for request, answer, alone in zip(mixed_requests, solo, solo_runs, strict=True):
        stepper = Stepper(tiny_backend, tokenizer, list(request.prompt_ids),
                          sampling=SamplingSettings.greedy_settings(),
                          max_new_tokens=request.max_new_tokens)
        assert tuple(r.token_ids[0] for r in stepper) == answer
        cache = tiny_backend.new_cache(CacheSpec("dynamic"), 1)
        feed = torch.tensor([request.prompt_ids])
        with torch.inference_mode():
            for token, logits in zip(answer, alone.logits, strict=True):
                expected = model(feed, cache, logits_to_keep=1)[0, -1]  # (V,)
                assert_within_rounding(logits, expected, f"request {request.index}")
                feed = torch.tensor([[token]])


@pytest.mark.parametrize(("policy", "mode", "b"), list(itertools.product(
    ("static", "continuous"), ("blocks", "radix"), (1, 16, ODD))))
@pytest.mark.numeric
def test_prefix_hits_follow_the_arithmetic(
    tiny_backend: MiniMindBackend, policy: str, mode: str, b: int
) -> None:
    shared = random_ids(SHARED, 1)
    a = shared + random_ids(9, 2, low=3)
    other = [*shared, 252, *random_ids(6, 3)]  # 252: differs from a right after the shared part
    requests = [
        RequestSpec(0, "a", tuple(a), 0, 4),
        RequestSpec(1, "b", tuple(other), 6, 4),  # shares SHARED tokens with a
        RequestSpec(2, "c", tuple(shared[:16]), 12, 4),  # entirely a cached prefix
        RequestSpec(3, "d", tuple(a), 18, 4),  # a's whole prompt again
    ]
    config = SchedulerConfig(policy=policy, block_size=b, prefix_cache=mode)  # type: ignore
    engine, _ = run(tiny_backend, requests, config)
    hits = [r.prefix_hit for r in engine.requests]
    shared_with_earlier = [0, SHARED, 16, len(a)]
    lengths = [len(r.prompt_ids) for r in requests]
    for hit, shared_len, length in zip(hits, shared_with_earlier, lengths, strict=True):
        exact = min(shared_len, length - 1)  # the last prompt token is always computed
        assert hit == (exact // b * b if mode == "blocks" else exact)
    for r, request in zip(engine.requests, requests, strict=True):
        assert tuple(r.output_token_ids) == solo_answer(tiny_backend, request)


@pytest.mark.numeric
def test_static_padding_is_the_formula(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, mixed_requests: list[RequestSpec]
) -> None:
    now = [RequestSpec(r.index, r.text, r.prompt_ids, 0, r.max_new_tokens) for r in mixed_requests]
    config = SchedulerConfig(policy="static", max_batch=len(now))
    result = finish(serving(tiny_backend, tokenizer, now, [config]), ServingResult)
    run_ = result.runs[0]
    prompts = [len(r.prompt_ids) for r in now]
    answers = [o.answer_tokens for o in run_.outcomes]
    formula = sum(max(prompts) - p for p in prompts) + sum(max(answers) - n for n in answers)
    assert run_.totals.padding_slots == formula == run_.totals.padding_formula
    assert run_.totals.steps == max(answers)  # one prefill step, then until the last row ends
    idle = [s.idle_rows for s in run_.steps]
    assert idle == [sum(1 for n in answers if n <= k) for k in range(max(answers))]
    assert run_.all_identical


@pytest.mark.parametrize("budget", [7, 8])
def test_admission_refuses_exactly_when_the_blocks_run_out(
    tiny_backend: MiniMindBackend, budget: int
) -> None:
    b = 4
    lengths = (9, 6, 12, 5)  # ⌈P / 4⌉ = 3, 2, 3, 2 blocks
    requests = [RequestSpec(i, str(i), tuple(random_ids(n, 30 + i)), 0, 3)
                for i, n in enumerate(lengths)]
    config = SchedulerConfig(block_size=b, block_budget=budget)
    engine = LLMEngine(tiny_backend, requests, config)
    first = engine.step()
    needs = [-(-n // b) for n in lengths]
    fits = max(k for k in range(len(needs) + 1) if sum(needs[:k]) <= budget)
    assert first.admitted == tuple(range(fits))  # 2 at 7 blocks (3 + 2, the next needs 3)
    assert first.blocks_used == sum(needs[:fits])
    assert first.blocks_free == budget - sum(needs[:fits])
    assert first.blocks_free < needs[fits]  # refused because the next one does not fit
    assert [r.phase for r in first.requests][fits] == "waiting"


def test_schedule_plans_and_only_the_runner_runs_the_model(
    tiny_backend: MiniMindBackend, mixed_requests: list[RequestSpec],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`schedule()` returns a frozen plan (who runs, how many tokens, blocks taken) and runs
    nothing; the runner runs it and changes no request; `update_from_output` applies it."""
    engine = LLMEngine(tiny_backend, mixed_requests, SchedulerConfig(chunk=7, block_size=4))
    forwards: list[int] = []
    packed = tiny_backend.model.forward_packed

    def counted(*args: object, **kwargs: object) -> torch.Tensor:
        forwards.append(1)
        return packed(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tiny_backend.model, "forward_packed", counted)
    scheduler, first, second = engine.scheduler, engine.requests[0], engine.requests[1]
    scheduler.add_request(first)
    scheduler.add_request(second)
    plan = scheduler.schedule()
    assert forwards == []  # planned, not run
    assert [(c.request_id, c.start, c.num_tokens, c.is_prefill) for c in plan.scheduled] == [
        (0, 0, 7, True)]  # the chunk of 7 is spent on request 0's prompt
    assert dict(plan.admitted) == {0: 0} and plan.preempted == ()
    assert first.status is RequestStatus.RUNNING and second.status is RequestStatus.WAITING
    assert len(first.block_table) == 2 and first.num_computed_tokens == 0  # blocks, no K/V yet
    with pytest.raises(AttributeError):
        plan.step = 5  # type: ignore[misc]  # frozen
    output = engine.model_runner.execute_model(plan, engine.by_id)
    assert forwards == [1] and dict(output.sampled) == {}  # the prompt is not done yet
    assert first.num_computed_tokens == 0  # the runner changed no request
    scheduler.update_from_output(plan, output)
    assert first.num_computed_tokens == 7 and first.output_token_ids == []


@pytest.mark.numeric
def test_a_request_goes_waiting_running_finished_or_through_preempted(
    tiny_backend: MiniMindBackend, mixed_requests: list[RequestSpec],
) -> None:
    config = SchedulerConfig(block_size=4, block_budget=20, max_batch=6)
    engine = LLMEngine(tiny_backend, mixed_requests, config)
    seen: list[list[RequestStatus]] = [[r.status] for r in engine.requests]
    for step in engine.steps():
        for r, statuses in zip(engine.requests, seen, strict=True):
            if statuses[-1] is not r.status:
                statuses.append(r.status)
            if r.request_id in step.preempted:
                assert r.status is RequestStatus.PREEMPTED and not r.block_table
    w, run, pre, fin = (RequestStatus.WAITING, RequestStatus.RUNNING,
                        RequestStatus.PREEMPTED, RequestStatus.FINISHED)
    preempted = [statuses for statuses in seen if pre in statuses]
    assert preempted  # the small pool preempted someone
    for statuses, r in zip(seen, engine.requests, strict=True):
        assert statuses[:2] == [w, run] and statuses[-1] is fin, statuses
        assert statuses.count(pre) == r.num_preemptions
        assert all(b is run for a, b in itertools.pairwise(statuses) if a is pre)
        if pre not in statuses:
            assert statuses == [w, run, fin]


@pytest.mark.numeric
def test_preempted_requests_are_recomputed_and_identical(
    tiny_backend: MiniMindBackend, mixed_requests: list[RequestSpec], solo: list[tuple[int, ...]],
    solo_runs: list[Request],
) -> None:
    config = SchedulerConfig(block_size=4, block_budget=20, max_batch=6)
    engine, steps = run(tiny_backend, mixed_requests, config)
    preempted = {i for s in steps for i in s.preempted}
    assert preempted
    for s in steps:
        for i in s.preempted:
            assert s.requests[i].phase == "preempted" and s.requests[i].blocks == 0
    assert [tuple(r.output_token_ids) for r in engine.requests] == solo
    assert_logits_as_solo(engine, solo_runs, config.label)


def test_radix_copies_a_shared_partial_block_before_writing(
    tiny_backend: MiniMindBackend,
) -> None:
    pool = BlockPool(1, 4, 1, 2)
    radix = RadixCache(pool)
    table = [pool.allocate() for _ in range(3)]  # 10 tokens: blocks of 4, 4, 2
    pool.mark_written(table, 0, 10)
    radix.insert(list(range(10)), table)
    hit, blocks = radix.match([*range(6), 99, 98])
    assert hit == 6 and blocks == table[:2]  # the partial second block is shared
    assert pool.writable(blocks[1], 2) != table[1]  # slot 2 holds someone's token: copy
    assert pool.copies_on_write == 1
    hashes = BlockHashCache(pool)
    hashes.insert(list(range(10)), table)
    assert hashes.match(list(range(9)))[0] == 8  # whole blocks only: ⌊8 / 4⌋ · 4
    assert hashes.match([0, 1, 2, 3, 9, 9, 9, 9, 9])[0] == 4  # the chain stops at block 1


@pytest.mark.numeric
def test_the_lab_reports_times_per_repeat_and_every_step(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, mixed_requests: list[RequestSpec]
) -> None:
    configs = [SchedulerConfig(policy="static"), SchedulerConfig(chunk=8, prefix_cache="radix")]
    items = list(serving(tiny_backend, tokenizer, mixed_requests, configs, repeats=2))
    result = items[-1]
    assert isinstance(result, ServingResult)
    steps = [i for i in items if isinstance(i, ServingStep)]
    assert len(steps) == sum(len(r.steps) for r in result.runs)  # the first round, live
    for run_ in result.runs:
        assert run_.all_identical
        assert run_.totals.total_s.count == 2 and not result.single_measurement
        assert run_.totals.answer_tokens == sum(o.answer_tokens for o in run_.outcomes)
        assert run_.totals.peak_cache_bytes == run_.totals.peak_blocks * run_.totals.block_bytes
        for o in run_.outcomes:
            assert o.ttft_s.median <= o.e2e_s.median
            assert o.first_token_step >= o.request.arrival
            phases = [s.requests[o.request.index].phase for s in run_.steps]
            assert phases[: o.request.arrival] == ["future"] * o.request.arrival
    fed = [s.prefill_tokens + s.decode_tokens for s in result.runs[1].steps]
    assert max(fed) <= 8  # the chunk is a token budget per step


@pytest.mark.numeric
def test_a_row_has_its_logits_alone_in_any_batch(tiny_backend: MiniMindBackend) -> None:
    """The packed forward's rows are independent: a row gives its logits alone in a batch of
    any size, to float32 rounding (a product rounds a row by the batch's row count)."""
    model = tiny_backend.model

    def self_attention(block: Block, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
                       ) -> torch.Tensor:  # each row sees only itself
        return torch.cat([block.attend(q[i][None, None], k[i][None, None], v[i][None, None],
                                       None, False) for i in range(q.shape[0])])

    ids = torch.tensor(random_ids(5, 40))
    positions = torch.tensor([3, 0, 7, 1, 2])
    with torch.inference_mode():
        together = model.forward_packed(ids, positions, self_attention, torch.arange(5))
        for i in range(5):
            alone = model.forward_packed(ids[i : i + 1], positions[i : i + 1], self_attention,
                                         torch.tensor([0]))
            assert int(alone[0].argmax()) == int(together[i].argmax())
            assert_within_rounding(alone[0], together[i], f"row {i}")
        # The same call twice is one computation: that much is bit for bit.
        assert torch.equal(model.forward_packed(ids, positions, self_attention,
                                                torch.arange(5)), together)


@pytest.mark.numeric
def test_sampled_answers_equal_their_solo_runs_too(
    tiny_backend: MiniMindBackend, mixed_requests: list[RequestSpec]
) -> None:
    """Each request draws from its own generator (seed + its index): batching moves no draw."""
    sampling = SamplingSettings(temperature=1.2, top_k=0, top_p=0.9, seed=7)
    alone = [solo_answer(tiny_backend, r, sampling) for r in mixed_requests]
    config = SchedulerConfig(chunk=6, block_size=ODD, prefix_cache="radix", max_batch=3)
    engine = LLMEngine(tiny_backend, mixed_requests, config, sampling)
    list(engine.steps())
    assert [tuple(r.output_token_ids) for r in engine.requests] == alone
    assert len(set(alone)) > 1


def test_a_transformers_model_is_refused() -> None:
    class NotOurs:
        name = "hf"

    with pytest.raises(ValueError, match="runs on KV Studio's own models"):
        serving_model(NotOurs())  # type: ignore[arg-type]


def test_a_blank_system_prompt_is_the_examples_only_with_the_example(
    tiny_model: MiniMindLM, tokenizer: TextTokenizer, tmp_path: Path
) -> None:
    """One rule for every front (the lab's run): left blank, the shipped example keeps its
    system prompt and one's own requests file gets none; a typed one is used either way."""
    loaded = from_minimind(tiny_model, tokenizer, "tiny")
    own = tmp_path / "requests.txt"
    own.write_text("안녕하세요\n", encoding="utf-8")

    def system_of(system: str, requests: Path | None) -> str:
        params = {"system": system, "answer_tokens": 2, "rounds": 1, "batch_sizes": []}
        result = finish(SERVING.run(loaded, params, requests=requests), ServingLabResult)
        assert result.serving is not None
        return result.serving.system

    assert system_of("", None) == system_of("  ", None) == EXAMPLE_SYSTEM
    assert system_of("", own) == system_of("  ", own) == ""
    assert system_of(" 짧게 ", own) == system_of("짧게", None) == "짧게"
