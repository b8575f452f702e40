"""`kvstudio chat --turns FILE`: a scripted conversation, with and without cache reuse.

Owns the `chat` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its table: per turn, both ways, the tokens fed for
the prompt, TTFT, decode ms/token and the cache's bytes, then whether the
greedy answers were identical and the largest |Δlogit| between the ways (float32
rounding: their prefills have other row counts). The conversation is the chat
lab's declared run (``kvstudio.labs.chat.lab``, the window's and the notebook's
too) with the turns file as its ``script``: it checks, before any turn runs, that
the first turn fits, that two static caches fit the free memory, and asks
`common.confirm_cost` (``--yes``) what the whole script feeds; ``--rounds`` k
times each turn's TTFT k times, interleaved (the median). The turns file is read
capped (``labs.chat.session.read_turns``); a ``--context-limit`` past the model's
positions is capped there, and said so on stderr.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from typing import Any

import torch

from kvstudio.cli import common
from kvstudio.cli.lab_options import lab_params
from kvstudio.labs.chat.records import ChatScript
from kvstudio.labs.chat.session import read_turns
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
                    "context_limit": " (at most the model's positions)"})
    p.add_argument("--turns", required=True, help="UTF-8 text file, one user turn per line")
    p.add_argument("--cache", default="dynamic", choices=("dynamic", "static"))
    p.add_argument("--system", default=None, help="a system message before the first turn")
    common.finish_subcommand(p, run_chat, COURSE.chat_model, yes=True, model_help=(
        f"ko-chat, ko-base, a model folder or MiniMind .pth (default: {COURSE.chat_model})"))


def run_chat(args: argparse.Namespace) -> int:
    system = (
        None if args.system is None
        else common.utf8_argument(args.system, "The system message")
    )
    turns = read_turns(args.turns)
    loaded = common.prepare(args, COURSE.chat_model)
    params = lab_params(CHAT, args)
    job = CHAT.run(loaded, params, script=turns, cache_kind=args.cache, system=system,
                   confirm_cost=partial(common.confirm_cost, args))
    result: ChatScript = common.drain(job, ChatScript)
    if params["context_limit"] > result.context_limit:
        print(
            f"note: --context-limit {params['context_limit']:,} is more than the model's "
            f"{result.context_limit:,} positions; using {result.context_limit:,}.",
            file=sys.stderr,
        )
    k = result.ttft_rounds
    print(
        f"Conversation: {args.turns}, {len(turns)} turns, greedy, at most {args.max_new_tokens} "
        f"new tokens per answer, {args.cache} cache, context limit {result.context_limit}, "
        f"TTFT {'a single measurement' if k == 1 else f'the median of {k} interleaved rounds'}"
        f", decode the median step, {torch.get_num_threads()} torch thread(s)"
    )
    print_table(result)
    if result.stopped:
        print(f"stopped: {result.stopped}")
    return 0


def _gap(gap: float | None) -> str:
    """A max |Δlogit| as printed: two significant digits ("0" when bit for bit)."""
    return "—" if gap is None else f"{gap:.2g}"


def print_table(result: ChatScript) -> None:
    turns = result.turns
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
    for turn in turns:
        reuse, refeed = turn.reuse, turn.refeed
        assert reuse is not None and refeed is not None  # the CLI runs both ways
        total_reuse += reuse.tokens_fed
        total_refeed += refeed.tokens_fed
        print(
            f"{turn.turn:>4} {turn.history_tokens:>7} │ {reuse.prompt_tokens_fed:>8}"
            f"{refeed.prompt_tokens_fed:>9} │ {reuse.ttft_median_s * 1e3:>7.2f}"
            f"{refeed.ttft_median_s * 1e3:>8.2f} │ {reuse.decode_ms_per_token:>7.2f}"
            f"{refeed.decode_ms_per_token:>8.2f} │ "
            f"{reuse.cache_bytes / 1024:>7.1f}{refeed.cache_bytes / 1024:>8.1f} │ "
            f"{len(turn.answer_ids):>6} │ {'yes' if turn.identical else ' NO'}  │ "
            f"{_gap(turn.max_abs_logit_diff)}"
        )
    for turn in turns:
        print(f"  {turn.turn}. user: {turn.user_text}")
        print(f"     assistant: {turn.answer_text}")
    same = [turn.identical for turn in turns]
    gaps = [t.max_abs_logit_diff for t in turns if t.max_abs_logit_diff is not None]
    print(
        f"tokens fed over the conversation (prompts and answers): {total_reuse:,} with reuse, "
        f"{total_refeed:,} re-feeding the history"
    )
    print(
        f"identical tokens: {'yes' if all(same) else 'NO'} ({sum(map(bool, same))} of "
        f"{len(same)} turns chose the same greedy tokens both ways); "
        f"max |Δlogit| {_gap(max(gaps, default=None))} (float32 rounding: the ways' "
        "prefills have other row counts)"
    )
