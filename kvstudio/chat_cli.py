"""`kvstudio chat --turns FILE`: a scripted conversation, with and without cache reuse.

Owns the `chat` subcommand (registered through ``kvstudio.cli``'s extension
list) and its table: per turn, both ways, the tokens fed for the prompt, TTFT,
decode ms/token and the cache's bytes, then whether the greedy answers were
identical. The conversation runs in ``kvstudio.core.chat``; with
``--rounds R`` it runs R times from scratch and the times are medians (the
tokens fed are the same every round).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from typing import Any

import torch

from kvstudio.core.chat import (
    DEFAULT_MAX_NEW_TOKENS,
    ChatSession,
    ChatTurn,
    WayResult,
    chat_conversation,
    read_turns,
)
from kvstudio.core.kv_cache import CacheSpec


def add_subcommands(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "chat",
        help="a multi-turn chat with and without KV-cache reuse, turn by turn",
        description=(
            "Run a conversation (one user turn per line of a UTF-8 file) on the chat model, "
            "once keeping the KV cache across turns (each turn feeds only its new tokens) and "
            "once re-feeding the whole history every turn; print tokens fed, TTFT, decode "
            "ms/token and cache bytes per turn, and whether the greedy answers were identical."
        ),
    )
    p.add_argument("--turns", required=True, help="UTF-8 text file, one user turn per line")
    p.add_argument(
        "--max-new-tokens",
        type=_positive,
        default=DEFAULT_MAX_NEW_TOKENS,
        help=f"answer length limit per turn (default {DEFAULT_MAX_NEW_TOKENS}; eos ends sooner)",
    )
    p.add_argument(
        "--context-limit",
        type=_positive,
        default=None,
        help="positions the conversation may use (default: the model's)",
    )
    p.add_argument("--cache", default="dynamic", choices=("dynamic", "static"))
    p.add_argument("--system", default=None, help="a system message before the first turn")
    p.add_argument(
        "--rounds", type=_positive, default=3, help="run the conversation R times; median times"
    )
    p.add_argument("--model", default=None, help="model folder or MiniMind .pth (default: ko-chat)")
    p.add_argument("--dtype", default="float32", choices=("float32", "float16", "bfloat16"))
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--threads", type=_positive, default=1, help="torch CPU threads (default 1)")
    p.set_defaults(func=run_chat)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def run_chat(args: argparse.Namespace) -> int:
    from kvstudio.cli import _prepare  # the CLI's one way of opening a model

    turns = read_turns(args.turns)
    loaded = _prepare(args)
    backend, tokenizer = loaded.backend, loaded.tokenizer
    if not tokenizer.has_chat_tokens:
        raise ValueError("This tokenizer has no ChatML tokens; the chat needs a chat model.")
    limit = args.context_limit
    spec = CacheSpec(args.cache, max_length=limit or 4096)

    def session() -> ChatSession:
        return ChatSession(
            backend,
            tokenizer,
            max_new_tokens=args.max_new_tokens,
            cache=spec,
            context_limit=limit,
            system=args.system,
        )

    list(session().run_turn(turns[0]))  # warm-up: the first forward builds the fast weights
    rounds: list[list[ChatTurn]] = []
    stopped = ""
    for index in range(args.rounds):
        chat = session()
        done: list[ChatTurn] = []
        try:  # odd rounds run the re-feed way first in every turn: interleaved timing
            for item in chat_conversation(chat, turns, refeed_first=index % 2 == 1):
                if isinstance(item, ChatTurn):
                    done.append(item)
        except ValueError as exc:  # the context limit: the turns before it still count
            stopped = str(exc)
        rounds.append(done)
    first = rounds[0]
    shown_limit = first[0].context_limit if first else limit
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


def print_table(rounds: Sequence[Sequence[ChatTurn]]) -> None:
    first = rounds[0]
    print()
    print(
        f"{'turn':>4} {'history':>7} │ {'prompt tokens fed':^17} │ {'TTFT ms':^15} │ "
        f"{'decode ms/token':^15} │ {'cache KiB':^15} │ {'answer':>6} │ same"
    )
    print(
        f"{'':>4} {'':>7} │ {'reuse':>8}{'re-feed':>9} │ {'reuse':>7}{'re-feed':>8} │ "
        f"{'reuse':>7}{'re-feed':>8} │ {'reuse':>7}{'re-feed':>8} │ {'tokens':>6} │"
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
            f"{len(turn.answer_ids):>6} │ {'yes' if turn.identical else 'NO'}"
        )
    for turn in first:
        print(f"  {turn.turn}. user: {turn.user_text}")
        print(f"     assistant: {turn.answer_text}")
    same = [turn.identical for turn in first]
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
        f"{'; every round the same' if agree_rounds else '; rounds differ'})"
    )
