"""`kvstudio sample`: repeated sampling, distinct answers per temperature.

Owns the ``sample`` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its table; the numbers come from
``kvstudio.labs.sample``.
"""

from __future__ import annotations

import argparse
from typing import Any

import torch

from kvstudio.cli import args as cli_args
from kvstudio.cli import common
from kvstudio.engine import costs
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.records import SamplingSettings
from kvstudio.labs.common import check_fits
from kvstudio.labs.sample import SamplingResult, repeated_sampling


def add_subcommands(sub: Any) -> None:
    """Register ``sample`` on the one parser (``kvstudio.cli.main``)."""
    s = sub.add_parser(
        "sample",
        help="repeated sampling: distinct answers per temperature",
        description="n samples per temperature, one batch of n rows each, same seed.",
    )
    s.add_argument("--temperatures", type=cli_args.number_list, default=[0.3, 0.7, 1.0, 1.3])
    s.add_argument("--samples", type=cli_args.rows, default=30, help="samples per temperature")
    s.add_argument(
        "--new-tokens", type=cli_args.tokens, default=32, help="token budget per answer"
    )
    s.add_argument("--prompt", default=None, help=f"question (default: {common.DEFAULT_QUESTION})")
    s.add_argument("--raw", action="store_true", help="use --prompt as is, without ChatML")
    s.add_argument(
        "--top-k", type=cli_args.bounded(0, cli_args.MAX_COUNT), default=0, help="0 = off"
    )
    s.add_argument(
        "--top-p", type=cli_args.number, default=0.85, help="the course setting 0.85; 1.0 = off"
    )
    s.add_argument("--repetition-penalty", type=cli_args.number, default=1.0, help="1.0 = off")
    s.add_argument("--seed", type=cli_args.seed, default=42)
    s.add_argument(
        "--show", type=cli_args.bounded(0, cli_args.MAX_COUNT), default=3,
        help="most frequent answers to print",
    )
    common.model_options(s)
    common.add_yes_option(s)
    s.set_defaults(func=cmd_sample)


def cmd_sample(args: argparse.Namespace) -> int:
    loaded = common.prepare(args)
    tokenizer = loaded.tokenizer
    question = common.DEFAULT_QUESTION
    if args.prompt is not None:
        question = common.prompt_text(args.prompt)
    prompt = tokenizer.encode(question) if args.raw else tokenizer.chat_ids(question)
    if not prompt:
        raise ValueError("The prompt encodes to no tokens; give some text.")
    settings = SamplingSettings(
        temperature=1.0,
        top_k=args.top_k,
        top_p=args.top_p,
        repetition_penalty=args.repetition_penalty,
        seed=args.seed,
    )
    check_fits(loaded.backend, args.samples, len(prompt), args.new_tokens, "cached", CacheSpec())
    fed = len(args.temperatures) * costs.generation_cost(
        "cached", len(prompt), args.new_tokens, rows=args.samples
    ).tokens_fed
    common.confirm_cost(
        args, fed,
        f"Sampling {args.samples:,} × {len(args.temperatures):,} temperature(s) × "
        f"{args.new_tokens:,} tokens",
        "ask for fewer samples, temperatures or new tokens",
    )
    print(
        f"Prompt: {common.short(question)!r} ({len(prompt)} tokens); {args.samples} samples × "
        f"{len(args.temperatures)} temperatures, ≤{args.new_tokens} new tokens, "
        f"top-k {args.top_k or 'off'}, top-p {args.top_p if args.top_p < 1 else 'off'}, "
        f"seed {args.seed}, {torch.get_num_threads()} torch thread(s)"
    )
    result: SamplingResult = common.drain(
        repeated_sampling(
            loaded.backend,
            tokenizer,
            prompt,
            args.temperatures,
            args.samples,
            args.new_tokens,
            settings=settings,
        ),
        SamplingResult,
    )
    print_sampling(result, args.show)
    return 0


def print_sampling(result: SamplingResult, show: int) -> None:
    print()
    print(f"  {'temperature':>11}  {'distinct':>8}  {'time (ms)':>10}   most frequent answers")
    for t in result.temperatures:
        top = "; ".join(f"{count}× {common.short(text, 40)!r}" for text, count in t.counts[:show])
        print(
            f"  {t.temperature:>11g}  {t.distinct:>5}/{len(t.answers):<3} "
            f"{common.ms(t.seconds):>10}   {top}"
        )
    print()
    print(f"  total generation time: {common.ms(result.total_seconds)} ms")
