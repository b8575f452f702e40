"""The multi-turn chat: reusing the cache across turns chooses exactly the tokens of re-feeding.

Tokens fed are counted here from the tensors the backend receives (a counting
wrapper), not from what the chat reports, and the answers are checked against
the stepper run on the whole history. The logits both ways chose from agree to
float32 rounding (`core.rounding`), not bit for bit: reuse's prefill has other
row counts than re-feed's, and the turn reports the largest gap.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import torch

from core.rounding import rounding_bound
from kvstudio.cli.main import main
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import MODELS_DIR, load_model_folder
from kvstudio.labs.chat.session import ChatSession, ChatTurn, ContextFullError, read_turns
from kvstudio.labs.common import Progress, finish

# Compares computations of different shapes (reuse feeds a turn's new tokens, re-feed the whole
# history): rerun under other CPU kernels by tests/core/test_other_cpus.py.
pytestmark = pytest.mark.numeric

TURNS = ["안녕하세요", "오늘 날씨 어때요?", "고마워요"]
SHIPPED = MODELS_DIR.parent / "prompts" / "chat_4turns.txt"


class CountingBackend:
    """Passes everything to `inner` and notes the width of every tensor fed to the model."""

    def __init__(self, inner: MiniMindBackend) -> None:
        self.inner = inner
        self.fed: list[int] = []

    def forward_last(self, input_ids: torch.Tensor, cache: Any, window: int | None) -> Any:
        self.fed.append(int(input_ids.shape[1]))  # (1, T): T tokens fed
        return self.inner.forward_last(input_ids, cache, window)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def turns_of(session: ChatSession, turns: list[str], **kw: bool) -> list[ChatTurn]:
    """`turns` on `session`, one after another: each one's `ChatTurn`."""
    return [t for text in turns for t in session.run_turn(text, **kw) if isinstance(t, ChatTurn)]


def stepper_answer(
    backend: MiniMindBackend, tok: TextTokenizer, prompt: list[int], budget: int
) -> tuple[int, ...]:
    stepper = Stepper(
        backend,
        tok,
        prompt,
        sampling=SamplingSettings.greedy_settings(),
        max_new_tokens=budget,
        stop_at_eos=True,
    )
    ids: list[int] = []
    for record in stepper:
        ids.append(record.token_ids[0])
    return tuple(ids)


def check_three_turns(backend: MiniMindBackend, tok: TextTokenizer, turns: list[str]) -> None:
    counting = CountingBackend(backend)
    session = ChatSession(counting, tok, max_new_tokens=8)  # type: ignore[arg-type]
    cached_before = 0  # tokens the reuse cache holds when a turn starts
    history: list[int] = []
    for text in turns:
        counting.fed.clear()
        turn = next(t for t in session.run_turn(text) if isinstance(t, ChatTurn))
        reuse, refeed = turn.reuse, turn.refeed
        assert reuse is not None and refeed is not None
        prompt = session.history[: turn.history_tokens]
        assert prompt[: len(history)] == history  # the history only grows
        # The re-feed answer is the stepper's greedy answer on the whole history.
        assert refeed.token_ids == stepper_answer(backend, tok, prompt, len(refeed.token_ids))
        assert reuse.token_ids == refeed.token_ids and turn.identical is True
        # The logits both ways chose from: equal to float32 rounding of their magnitude,
        # which a plain forward over the history and the answer gives.
        with torch.inference_mode():
            plain = backend.model(torch.tensor([prompt + list(reuse.token_ids[:-1])]))
        assert turn.max_abs_logit_diff is not None
        assert 0.0 <= turn.max_abs_logit_diff <= rounding_bound(plain[0, len(prompt) - 1 :])
        generated = len(reuse.token_ids)
        reuse_calls, refeed_calls = counting.fed[:generated], counting.fed[generated:]
        # Reuse: the new turn's tokens (+ the last answer's token never fed), then one per token.
        assert reuse_calls[0] == len(prompt) - cached_before == turn.new_tokens
        assert reuse_calls[1:] == [1] * (generated - 1)
        # Re-feed: the whole history, then one per token.
        assert refeed_calls[0] == len(prompt) == turn.history_tokens
        assert refeed_calls[1:] == [1] * (generated - 1)
        assert reuse.prompt_tokens_fed == reuse_calls[0]
        assert refeed.prompt_tokens_fed == refeed_calls[0]
        assert reuse.decode_tokens_fed == refeed.decode_tokens_fed == generated - 1
        assert reuse.cache_tokens == refeed.cache_tokens == len(prompt) + generated - 1
        cached_before = len(prompt) + generated - 1
        history = session.history[:]
    assert len(session.turns) == len(turns)
    later = session.turns[-1]
    assert later.reuse is not None and later.refeed is not None
    assert later.reuse.prompt_tokens_fed < later.refeed.prompt_tokens_fed


def test_three_turns_reuse_equals_refeed_tiny(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    check_three_turns(tiny_backend, tokenizer, TURNS)


@pytest.fixture(scope="module")
def ko_chat() -> tuple[MiniMindBackend, TextTokenizer]:
    folder = MODELS_DIR / "ko-chat"
    if not (folder / "model.safetensors").exists():
        pytest.skip("the shipped ko-chat model is not in kvstudio/resources/models")
    loaded = load_model_folder(folder)
    return MiniMindBackend(loaded.model, name="ko-chat"), loaded.tokenizer


def test_three_turns_reuse_equals_refeed_ko_chat(
    ko_chat: tuple[MiniMindBackend, TextTokenizer],
) -> None:
    backend, tok = ko_chat
    check_three_turns(backend, tok, read_turns(SHIPPED)[:3])


def test_a_turn_without_reuse_is_caught_up_later(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    """Reuse off for turn 2: turn 3's reuse feeds everything its cache lacks, same tokens."""
    both = turns_of(ChatSession(tiny_backend, tokenizer, max_new_tokens=5), TURNS)
    session = ChatSession(tiny_backend, tokenizer, max_new_tokens=5)
    first = turns_of(session, TURNS[:1])
    second = turns_of(session, TURNS[1:2], reuse=False)
    third = turns_of(session, TURNS[2:])
    assert second[0].reuse is None and second[0].identical is None
    assert [t.answer_ids for t in first + second + third] == [t.answer_ids for t in both]
    reuse = third[0].reuse
    assert reuse is not None
    lacking = third[0].history_tokens - (first[0].history_tokens + len(first[0].answer_ids) - 1)
    assert reuse.prompt_tokens_fed == lacking == third[0].new_tokens


def test_static_cache_chat_matches_dynamic(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    dynamic = turns_of(ChatSession(tiny_backend, tokenizer, max_new_tokens=5), TURNS)
    static = turns_of(
        ChatSession(
            tiny_backend, tokenizer, max_new_tokens=5, cache=CacheSpec("static", max_length=128)
        ),
        TURNS,
    )
    assert [t.answer_ids for t in static] == [t.answer_ids for t in dynamic]
    assert all(t.identical for t in static)
    assert static[0].reuse is not None and static[0].reuse.cache_bytes > 0


def test_context_limit_refuses_a_turn_before_running(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    counting = CountingBackend(tiny_backend)
    first_len = len(tokenizer.chat_ids(TURNS[0]))
    session = ChatSession(counting, tokenizer, max_new_tokens=6, context_limit=first_len + 3)  # type: ignore[arg-type]
    (turn,) = turns_of(session, TURNS[:1])
    assert len(turn.answer_ids) <= 3  # the answer was cut to fit the limit
    assert turn.cut_by_limit == (turn.answer_ids[-1] != tokenizer.eos_id)
    history = session.history[:]
    counting.fed.clear()
    with pytest.raises(ContextFullError, match="Start a new chat"):  # fits a new chat alone
        list(session.run_turn(TURNS[0]))
    assert counting.fed == []  # nothing ran
    assert session.history == history and len(session.turns) == 1  # nothing lost
    session.reset()
    assert turns_of(session, TURNS[:1])[0].turn == 1


def test_bad_chat_input_says_what_to_do(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, tmp_path: Path
) -> None:
    session = ChatSession(tiny_backend, tokenizer)
    with pytest.raises(ValueError, match="empty"):
        list(session.run_turn("   "))
    with pytest.raises(ValueError, match="at least one way"):
        list(session.run_turn("안녕", reuse=False, refeed=False))
    with pytest.raises(ValueError, match="sliding"):
        ChatSession(tiny_backend, tokenizer, cache=CacheSpec("sliding"))
    with pytest.raises(ValueError, match="No turns file"):
        read_turns(tmp_path / "missing.txt")
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match="UTF-8"):
        read_turns(latin)
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(ValueError, match="no turns"):
        read_turns(blank)


def test_shipped_conversation_has_four_korean_turns() -> None:
    turns = read_turns(SHIPPED)
    assert len(turns) == 4
    assert all(any("가" <= ch <= "힣" for ch in turn) for turn in turns)


def test_chat_command_prints_both_ways(
    capsys: pytest.CaptureFixture[str], ko_chat: object, tmp_path: Path
) -> None:
    code = main(["chat", "--turns", str(SHIPPED), "--rounds", "1", "--max-new-tokens", "12"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "prompt tokens fed" in out and "TTFT ms" in out and "decode ms/token" in out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1] in "1234" and "│" in line]
    assert [row[0] for row in rows] == ["1", "2", "3", "4"]
    reuse_fed = [int(row[3]) for row in rows]
    refeed_fed = [int(row[4]) for row in rows]
    assert reuse_fed[0] == refeed_fed[0] and all(
        r < f for r, f in zip(reuse_fed[1:], refeed_fed[1:], strict=True)
    )
    assert "identical tokens: yes (4 of 4 turns" in out
    # Beside each turn's "yes": the largest |Δlogit| between the ways (float32 rounding).
    assert all(row[-3] == "yes" and float(row[-1]) < 1e-3 for row in rows)
    assert "max |Δlogit| " in out.splitlines()[-1]
    code = main(["chat", "--turns", str(tmp_path / "none.txt")])
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith("error: No turns file")


def test_the_order_of_the_ways_changes_nothing_but_the_order(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    counting = CountingBackend(tiny_backend)
    first = turns_of(ChatSession(tiny_backend, tokenizer, max_new_tokens=5), TURNS)
    swapped_session = ChatSession(counting, tokenizer, max_new_tokens=5)  # type: ignore[arg-type]
    swapped = turns_of(swapped_session, TURNS, refeed_first=True)
    for a, b in zip(first, swapped, strict=True):
        assert a.answer_ids == b.answer_ids and b.identical
        assert a.reuse is not None and b.reuse is not None and b.refeed is not None
        assert a.reuse.prompt_tokens_fed == b.reuse.prompt_tokens_fed
    last = swapped[-1]
    assert last.refeed is not None
    # The last turn's first forward was the re-feed's whole history.
    generated = len(last.answer_ids)
    assert counting.fed[-2 * generated] == last.history_tokens == last.refeed.prompt_tokens_fed


def test_a_cancelled_turn_leaves_the_conversation_as_it_was(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    """Closed after the reuse way ran: no half turn in the history or in the kept cache."""
    reference = turns_of(ChatSession(tiny_backend, tokenizer, max_new_tokens=5), TURNS[:2])
    session = ChatSession(tiny_backend, tokenizer, max_new_tokens=5)
    turns_of(session, TURNS[:1])
    history = session.history[:]
    running = session.run_turn(TURNS[1])
    assert next(running).stage == "reuse"  # type: ignore[union-attr]
    running.close()  # what the lab thread does on Cancel
    assert session.history == history and len(session.turns) == 1
    (again,) = turns_of(session, TURNS[1:2])
    assert again.answer_ids == reference[1].answer_ids and again.identical
    assert again.reuse is not None and again.reuse.prompt_tokens_fed == again.history_tokens
    (third,) = turns_of(session, TURNS[2:])  # and reuse works again after that
    assert third.reuse is not None and third.reuse.prompt_tokens_fed == third.new_tokens
    assert third.new_tokens < third.history_tokens


class CancelDuringStep:
    """A backend whose forward call number `at` is running when the user presses Cancel.

    Counts the forward calls that start after the cancel: a turn that checks for
    Cancel between steps makes none (the one in flight finishes, nothing follows).
    """

    def __init__(self, inner: MiniMindBackend, at: int) -> None:
        self.inner = inner
        self.at = at
        self.calls = 0
        self.cancel = threading.Event()
        self.after_cancel = 0

    def forward_last(self, input_ids: torch.Tensor, cache: Any, window: int | None) -> Any:
        self.calls += 1
        if self.cancel.is_set():
            self.after_cancel += 1
        elif self.calls == self.at:
            self.cancel.set()  # Cancel comes while this step runs
        return self.inner.forward_last(input_ids, cache, window)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def drive_like_the_lab_thread(items: Any, cancel: threading.Event) -> list[object]:
    """What `GeneratorWorker` does: Cancel is checked between items, then the generator closed."""
    seen = []
    for item in items:
        seen.append(item)
        if cancel.is_set():
            items.close()
            break
    return seen


@pytest.mark.parametrize(
    ("at", "chunk"),
    [
        (1, None),  # during the reuse way's prefill (one chunk: the default size)
        (3, None),  # during a decode step
        (2, 8),  # during the second chunk of a prefill fed 8 tokens at a time
    ],
)
def test_cancel_during_a_turn_stops_after_the_step_in_flight(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, at: int, chunk: int | None
) -> None:
    """Cancel takes effect within one forward call, not after a whole way (issue 19)."""
    budget = 10
    (reference,) = turns_of(ChatSession(tiny_backend, tokenizer, max_new_tokens=budget), TURNS[:1])
    assert len(reference.answer_ids) == budget  # no early eos: the way has steps left to skip
    assert reference.history_tokens > 2 * 8  # the 8-token chunks make three or more steps
    backend = CancelDuringStep(tiny_backend, at)
    sizes = {} if chunk is None else {"prefill_chunk": chunk}
    session = ChatSession(backend, tokenizer, max_new_tokens=budget, **sizes)  # type: ignore[arg-type]
    seen = drive_like_the_lab_thread(session.run_turn(TURNS[0]), backend.cancel)
    assert backend.calls == at and backend.after_cancel == 0
    progress = [item for item in seen if isinstance(item, Progress)]
    assert len(progress) == len(seen) == at  # one progress record per forward call
    assert [p.done for p in progress] == list(range(1, at + 1))
    assert session.history == [] and session.turns == []  # nothing of the turn stays


def test_a_prefill_fed_in_chunks_answers_and_counts_as_one(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    """Chunked prefill: the same answers, tokens fed, cache and identical check, more steps."""
    whole = ChatSession(tiny_backend, tokenizer, max_new_tokens=6)
    counting = CountingBackend(tiny_backend)
    chunked = ChatSession(counting, tokenizer, max_new_tokens=6, prefill_chunk=8)  # type: ignore[arg-type]
    for text in TURNS:
        (a,) = [t for t in whole.run_turn(text) if isinstance(t, ChatTurn)]
        counting.fed.clear()
        items = list(chunked.run_turn(text))
        b = items[-1]
        assert isinstance(b, ChatTurn)
        assert b.answer_ids == a.answer_ids and b.identical and b.new_tokens == a.new_tokens
        for x, y in ((a.reuse, b.reuse), (a.refeed, b.refeed)):
            assert x is not None and y is not None
            assert y.prompt_tokens_fed == x.prompt_tokens_fed
            assert y.decode_tokens_fed == x.decode_tokens_fed
            assert (y.cache_tokens, y.cache_bytes) == (x.cache_tokens, x.cache_bytes)
        assert b.reuse is not None and b.refeed is not None
        assert max(counting.fed) <= 8  # no forward call was fed more than a chunk
        assert sum(counting.fed) == b.reuse.tokens_fed + b.refeed.tokens_fed
        progress = [item for item in items if isinstance(item, Progress)]
        assert len(progress) == len(counting.fed)  # a progress record per forward call
        assert progress[-1].done == progress[-1].total  # the bar ends full
    assert chunked.history == whole.history
# ---- issue 19.4: sizes from the model, messages that say what helps, the cost up front -------
def test_a_static_cache_is_sized_from_the_model_not_the_limit_asked_for(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    positions = tiny_backend.model.config.max_position_embeddings
    session = ChatSession(tiny_backend, tokenizer, cache=CacheSpec("static", max_length=10**7),
                          context_limit=10**7)
    assert session.cache_spec.max_length == positions == session.context_limit


def test_an_oversized_first_turn_says_shorten_it(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    long_turn = "안녕하세요 " * 400  # far more tokens than the tiny model's 1024 positions
    at_max = ChatSession(tiny_backend, tokenizer)  # the limit is the model's own
    with pytest.raises(ContextFullError) as info:
        at_max.check_fits(long_turn)
    assert "shorten the turn." in str(info.value) and "raise" not in str(info.value)
    below = ChatSession(tiny_backend, tokenizer, context_limit=64)
    with pytest.raises(ContextFullError, match=r"shorten the turn \(or raise the context limit\)"):
        below.check_fits(long_turn)


def test_conversation_cost_counts_what_the_turns_feed(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    from kvstudio.labs.chat.script import conversation_cost

    counting = CountingBackend(tiny_backend)
    session = ChatSession(counting, tokenizer, max_new_tokens=4)  # type: ignore[arg-type]
    cost = conversation_cost(session, TURNS)
    done = turns_of(session, TURNS)
    assert cost.turns == len(done) == len(TURNS)
    reuse = sum(t.reuse.tokens_fed for t in done if t.reuse)
    refeed = sum(t.refeed.tokens_fed for t in done if t.refeed)
    assert sum(counting.fed) == reuse + refeed
    # Every answer counted at its budget: exact when none ended early, an upper bound else.
    assert all(len(t.answer_ids) == 4 for t in done)  # the seeded tiny model never chose eos
    assert (cost.reuse_tokens_fed, cost.refeed_tokens_fed) == (reuse, refeed)
    # The prefills alone (what each TTFT round feeds again), counted from the tensors too.
    prompts = [sum(t.reuse.prompt_tokens_fed for t in done if t.reuse),
               sum(t.refeed.prompt_tokens_fed for t in done if t.refeed)]
    assert [cost.reuse_prompt_tokens, cost.refeed_prompt_tokens] == prompts
    assert cost.tokens_fed_with(repeats=3) == reuse + refeed + 3 * sum(prompts)
    assert cost.tokens_fed_with(refeed=False) == reuse
    tight = ChatSession(tiny_backend, tokenizer, max_new_tokens=4,
                        context_limit=done[1].history_tokens)
    assert conversation_cost(tight, TURNS).turns == 1  # the second turn would not fit


def test_ttft_repeats_are_interleaved_medians_and_leave_the_chat_as_it_was(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    plain = ChatSession(tiny_backend, tokenizer, max_new_tokens=5)
    timed = ChatSession(tiny_backend, tokenizer, max_new_tokens=5)
    counting = CountingBackend(tiny_backend)
    timed.backend = counting  # type: ignore[assignment]
    for text in TURNS:
        a = [t for t in plain.run_turn(text) if isinstance(t, ChatTurn)][-1]
        before = len(counting.fed)
        b = [t for t in timed.run_turn(text, timing_repeats=3) if isinstance(t, ChatTurn)][-1]
        assert b.answer_ids == a.answer_ids and timed.history == plain.history
        for way in (b.reuse, b.refeed):
            assert way is not None and way.ttft_rounds == 3 and len(way.ttft_repeats_s) == 3
            low, high = way.ttft_range_s
            assert low <= way.ttft_median_s <= high
        # the repeats feed each way's prefill again: the new tokens, and the whole history
        widths = counting.fed[before:]
        assert widths.count(b.new_tokens) >= 3 + 1 and widths.count(b.history_tokens) >= 3 + 1
        assert a.reuse is not None and a.reuse.ttft_rounds == 1  # one sample: said single
    assert timed._cached_tokens == plain._cached_tokens


def test_the_labs_script_run_is_the_conversation_priced_first(
    tiny_model: Any, tokenizer: TextTokenizer
) -> None:
    """``kvstudio chat --turns FILE``: the chat lab's run with the turns as its ``script``.
    The same turns as the conversation run by hand; its cost asked before any turn runs
    (the warm-up turn, the conversation, and every TTFT round's prefills); a turn past the
    context limit ends it, the turns before it kept."""
    from kvstudio.files.loaded import from_minimind
    from kvstudio.labs.chat.records import ChatScript
    from kvstudio.labs.chat.script import conversation_cost
    from kvstudio.labs.registry import CHAT

    loaded = from_minimind(tiny_model, tokenizer, "tiny")
    asked: list[tuple[int, str]] = []
    params = {"answer_tokens": 4, "rounds": 3}
    job = CHAT.run(loaded, params, script=TURNS,
                   confirm_cost=lambda fed, what, hint: asked.append((fed, what)))
    session = ChatSession(loaded.backend, tokenizer, max_new_tokens=4, context_limit=1024)
    cost, warm = conversation_cost(session, TURNS), conversation_cost(session, TURNS[:1])
    assert asked == [(cost.tokens_fed_with(repeats=3) + warm.tokens_fed,
                      "This conversation (3 of 3 turns fit, both ways, 3 TTFT round(s))")]
    result = finish(job, ChatScript)
    by_hand = turns_of(session, TURNS)
    assert [t.answer_ids for t in result.turns] == [t.answer_ids for t in by_hand]
    assert result.stopped == "" and result.script_turns == 3 and result.ttft_rounds == 3
    for turn in result.turns:
        assert turn.reuse is not None and turn.reuse.ttft_rounds == 3

    def refuse(fed: int, what: str, hint: str) -> None:
        raise ValueError("too costly")

    with pytest.raises(ValueError, match="too costly"):
        CHAT.run(loaded, params, script=TURNS, confirm_cost=refuse)
    tight = {**params, "context_limit": by_hand[1].history_tokens}
    short = finish(CHAT.run(loaded, tight, script=TURNS), ChatScript)
    assert len(short.turns) == 1 and "context limit" in short.stopped
