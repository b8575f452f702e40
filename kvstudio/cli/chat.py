"""`kvstudio chat --turns FILE`: a scripted conversation, with and without cache reuse.

Owns the `chat` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its table: per turn, both ways, the tokens fed for
the prompt, TTFT, decode ms/token and the cache's bytes, then whether the
greedy answers were identical and the largest |Δlogit| between the ways (float32
rounding: their prefills have other row counts). The conversation runs in
``kvstudio.labs.chat.session``; with
``--rounds R`` it runs R times from scratch and the times are medians (the
tokens fed are the same every round). Before any turn runs, the turns file is
read capped (``labs.chat.session.read_turns``), ``--context-limit`` is capped at the
model's positions, two static caches must fit the free memory, and a
conversation that would feed 50,000 tokens or more needs ``--yes``; each turn
done is reported on stderr.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from typing import Any

import torch

from kvstudio.cli import common
from kvstudio.engine import formulas, limits
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.labs.chat.session import (
    ChatSession,
    ChatTurn,
    WayResult,
    chat_conversation,
    conversation_cost,
    model_positions,
    read_turns,
)
from kvstudio.labs.common import Progress
from kvstudio.labs.course import COURSE
from kvstudio.labs.registry import CHAT


def add_subcommands(subparsers: Any) -> None:
    p = common.lab_subcommand(
        subparsers, CHAT, "a multi-turn chat with and without KV-cache reuse, turn by turn",
        "Run a conversation (one user turn per line of a UTF-8 file) on the chat model, once "
        "keeping the KV cache across turns (each turn feeds only its new tokens) and once "
        "re-feeding the whole history every turn; print tokens fed, TTFT, decode ms/token and "
        "cache bytes per turn, and whether the greedy answers were identical.",
        extra_help={"answer_tokens": "; eos ends sooner",
                    "context_limit": " (at most the model's positions)",
                    "rounds": ": the conversation runs R times"})
    p.add_argument("--turns", required=True, help="UTF-8 text file, one user turn per line")
    p.add_argument("--cache", default="dynamic", choices=("dynamic", "static"))
    p.add_argument("--system", default=None, help="a system message before the first turn")
    common.finish_subcommand(p, run_chat, COURSE.chat_model, yes=True, model_help=(
        f"ko-chat, ko-base, a model folder or MiniMind .pth (default: {COURSE.chat_model})"))


def _context_limit(args: argparse.Namespace, backend: LanguageModel) -> int | None:
    """--context-limit, capped at the model's positions (saying so on stderr)."""
    positions = model_positions(backend)
    limit: int | None = args.context_limit
    if limit is not None and limit > positions:
        print(
            f"note: --context-limit {limit:,} is more than the model's {positions:,} positions; "
            f"using {positions:,}.",
            file=sys.stderr,
        )
        limit = positions
    return limit


def _check_static_memory(backend: LanguageModel, spec: CacheSpec) -> None:
    """Two static caches (the kept one and a re-feed's) are allocated whole: they must fit."""
    if spec.kind != "static":
        return
    per_token = formulas.bytes_per_token(
        backend.num_layers, backend.num_kv_heads, backend.head_dim, backend.dtype_bytes
    )
    limits.check_fits_memory(
        2 * spec.max_length * per_token,
        f"Two static caches of {spec.max_length:,} tokens (reuse and re-feed)",
        backend.device,
        "Use a smaller --context-limit or the dynamic cache.",
    )


def run_chat(args: argparse.Namespace) -> int:
    system = (
        None if args.system is None
        else common.utf8_argument(args.system, "The system message")
    )
    turns = read_turns(args.turns)
    loaded = common.prepare(args, COURSE.chat_model)
    backend, tokenizer = loaded.backend, loaded.tokenizer
    if not tokenizer.has_chat_tokens:
        raise ValueError("This tokenizer has no ChatML tokens; the chat needs a chat model.")
    limit = _context_limit(args, backend)
    spec = CacheSpec(args.cache, max_length=min(limit or 4096, model_positions(backend)))
    _check_static_memory(backend, spec)

    def session() -> ChatSession:
        return ChatSession(
            backend,
            tokenizer,
            max_new_tokens=args.max_new_tokens,
            cache=spec,
            context_limit=limit,
            system=system,
        )

    cost = conversation_cost(session(), turns)
    first = conversation_cost(session(), turns[:1])
    common.confirm_cost(
        args, args.rounds * cost.tokens_fed + first.tokens_fed,
        f"This conversation ({cost.turns:,} of {len(turns):,} turns fit, both ways, "
        f"{args.rounds} round(s))",
        "use fewer turns, fewer --rounds, a smaller --max-new-tokens or --context-limit",
    )
    list(session().run_turn(turns[0]))  # warm-up: the first forward builds the fast weights
    rounds: list[list[ChatTurn]] = []
    stopped = ""
    progress = common.ProgressLine()
    total = args.rounds * max(cost.turns, 1)
    try:
        for index in range(args.rounds):
            chat = session()
            done: list[ChatTurn] = []
            try:  # odd rounds run the re-feed way first in every turn: interleaved timing
                for item in chat_conversation(chat, turns, refeed_first=index % 2 == 1):
                    if isinstance(item, ChatTurn):
                        done.append(item)
                        progress(Progress(
                            "chat", f"round {index + 1} of {args.rounds}, turn {item.turn}",
                            index * max(cost.turns, 1) + item.turn, total,
                        ))
            except ValueError as exc:  # the context limit: the turns before it still count
                stopped = str(exc)
            rounds.append(done)
    finally:
        progress.close()
    first_round = rounds[0]
    shown_limit = first_round[0].context_limit if first_round else limit
    print(
        f"Conversation: {args.turns}, {len(turns)} turns, greedy, at most {args.max_new_tokens} "
        f"new tokens per answer, {spec.kind} cache, context limit {shown_limit}, "
        f"{args.rounds} round(s), ways alternating first (times: medians), "
        f"{torch.get_num_threads()} torch thread(s)"
    )
    print_table(rounds)
    if stopped:
        print(f"stopped: {stopped}")
    return 0


def _median(rounds: Sequence[Sequence[ChatTurn]], turn: int, way: str, field: str) -> float:
    values = []
    for done in rounds:
        if turn < len(done):
            result: WayResult | None = done[turn].way(way)  # type: ignore[arg-type]
            if result is not None:
                values.append(float(getattr(result, field)))
    return statistics.median(values) if values else 0.0


def _gap(gap: float | None) -> str:
    """A max |Δlogit| as printed: two significant digits ("0" when bit for bit)."""
    return "—" if gap is None else f"{gap:.2g}"


def print_table(rounds: Sequence[Sequence[ChatTurn]]) -> None:
    first = rounds[0]
    print()
    print(
        f"{'turn':>4} {'history':>7} │ {'prompt tokens fed':^17} │ {'TTFT ms':^15} │ "
        f"{'decode ms/token':^15} │ {'cache KiB':^15} │ {'answer':>6} │ same │ max |Δlogit|"
    )
    print(
        f"{'':>4} {'':>7} │ {'reuse':>8}{'re-feed':>9} │ {'reuse':>7}{'re-feed':>8} │ "
        f"{'reuse':>7}{'re-feed':>8} │ {'reuse':>7}{'re-feed':>8} │ {'tokens':>6} │      │"
    )
    total_reuse = total_refeed = 0
    for index, turn in enumerate(first):
        reuse, refeed = turn.reuse, turn.refeed
        ttft_reuse = _median(rounds, index, "reuse", "ttft_s") * 1e3
        ttft_refeed = _median(rounds, index, "refeed", "ttft_s") * 1e3
        assert reuse is not None and refeed is not None  # the CLI runs both ways
        total_reuse += reuse.tokens_fed
        total_refeed += refeed.tokens_fed
        print(
            f"{turn.turn:>4} {turn.history_tokens:>7} │ {reuse.prompt_tokens_fed:>8}"
            f"{refeed.prompt_tokens_fed:>9} │ {ttft_reuse:>7.2f}{ttft_refeed:>8.2f} │ "
            f"{_median(rounds, index, 'reuse', 'decode_ms_per_token'):>7.2f}"
            f"{_median(rounds, index, 'refeed', 'decode_ms_per_token'):>8.2f} │ "
            f"{reuse.cache_bytes / 1024:>7.1f}{refeed.cache_bytes / 1024:>8.1f} │ "
            f"{len(turn.answer_ids):>6} │ {'yes' if turn.identical else ' NO'}  │ "
            f"{_gap(turn.max_abs_logit_diff)}"
        )
    for turn in first:
        print(f"  {turn.turn}. user: {turn.user_text}")
        print(f"     assistant: {turn.answer_text}")
    same = [turn.identical for turn in first]
    gaps = [t.max_abs_logit_diff for t in first if t.max_abs_logit_diff is not None]
    agree_rounds = all(
        [t.answer_ids for t in done] == [t.answer_ids for t in first] for done in rounds
    )
    print(
        f"tokens fed over the conversation (prompts and answers): {total_reuse:,} with reuse, "
        f"{total_refeed:,} re-feeding the history"
    )
    print(
        f"identical tokens: {'yes' if all(same) else 'NO'} ({sum(map(bool, same))} of "
        f"{len(same)} turns chose the same greedy tokens both ways"
        f"{'; every round the same' if agree_rounds else '; rounds differ'}); "
        f"max |Δlogit| {_gap(max(gaps, default=None))} (float32 rounding: the ways' "
        "prefills have other row counts)"
    )
