"""`kvstudio sample`: repeated sampling, distinct answers per temperature.

Owns the ``sample`` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its table; the numbers come from
``kvstudio.labs.sampling.temperature``, the window's lab: the same samples again in
recompute mode (``--no-both-modes`` skips them). Every default is the course preset's
(``kvstudio.labs.course.COURSE``: ko-chat, its question, T 0.3, 0.85, 1.5 ×
30 samples, top-k off, top-p 0.85, penalty 1.0, seed 42), and the table
ends with the settings line that made it. Answers are printed as a student
reads them: no role word or template marker, a cut character as its bytes.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

import torch

from kvstudio.cli import args as cli_args
from kvstudio.cli import common
from kvstudio.cli.lab_options import add_lab_option
from kvstudio.engine import costs
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.records import MODES, Mode, SamplingSettings
from kvstudio.labs.common import check_fits
from kvstudio.labs.course import COURSE, setting_changes
from kvstudio.labs.registry import SAMPLE
from kvstudio.labs.sampling.sample import SamplingResult
from kvstudio.labs.sampling.temperature import TemperatureLabResult, temperature_lab


def add_subcommands(sub: Any) -> None:
    """Register ``sample`` on the one parser (``kvstudio.cli.main``)."""
    s = sub.add_parser(
        "sample",
        help="repeated sampling: distinct answers per temperature",
        description="n samples per temperature, one batch of n rows each, same seed.",
    )
    for name in ("temperatures", "samples", "new_tokens", "prompt"):
        add_lab_option(s, SAMPLE.param(name))
    s.add_argument("--raw", action="store_true", help="use --prompt as is, without ChatML")
    for name in ("top_k", "top_p", "penalty", "seed", "both_modes"):
        add_lab_option(s, SAMPLE.param(name))
    s.add_argument(
        "--show", type=cli_args.bounded(0, cli_args.MAX_COUNT), default=3,
        help="most frequent answers to print",
    )
    common.model_options(s, COURSE.chat_model)
    common.add_yes_option(s)
    s.set_defaults(func=cmd_sample)


def cmd_sample(args: argparse.Namespace) -> int:
    loaded = common.prepare(args, COURSE.chat_model)
    tokenizer = loaded.tokenizer
    question = common.prompt_text(args.prompt)
    prompt = tokenizer.encode(question) if args.raw else tokenizer.chat_ids(question)
    if not prompt:
        raise ValueError("The prompt encodes to no tokens; give some text.")
    settings = SamplingSettings(
        temperature=COURSE.temperature,  # each of --temperatures replaces it
        top_k=args.top_k,
        top_p=args.top_p,
        repetition_penalty=args.repetition_penalty,
        seed=args.seed,
    )
    check_fits(loaded.backend, args.samples, len(prompt), args.new_tokens, "cached", CacheSpec())
    modes: tuple[Mode, ...] = MODES if args.both_modes else ("cached",)
    fed = len(args.temperatures) * sum(
        costs.generation_cost(mode, len(prompt), args.new_tokens, rows=args.samples).tokens_fed
        for mode in modes)
    common.confirm_cost(
        args, fed,
        f"Sampling {args.samples:,} × {len(args.temperatures):,} temperature(s) × "
        f"{args.new_tokens:,} tokens" + (" in both modes" if args.both_modes else ""),
        "ask for fewer samples, temperatures or new tokens, or --no-both-modes",
    )
    print(
        f"Prompt: {common.short(question)!r} ({len(prompt):,} tokens); {args.samples:,} samples "
        f"× {len(args.temperatures):,} temperatures, ≤ {args.new_tokens:,} new tokens, "
        f"{torch.get_num_threads()} torch thread(s)"
    )
    lab: TemperatureLabResult = common.drain(
        temperature_lab(
            loaded.backend, tokenizer, prompt, args.temperatures, samples=args.samples,
            new_tokens=args.new_tokens, seed=args.seed, check_both_modes=args.both_modes,
            settings=settings,
        ),
        TemperatureLabResult,
    )
    print_sampling(lab.cached, args.show)
    same = lab.same_answers_count
    if same is not None:
        print(f"  recompute mode, same seed: {same[0]:,} of {same[1]:,} answers the same")
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
    print(f"  settings: {result.settings_line}")
    changes = setting_changes(replace(result.settings, temperature=COURSE.temperature))
    if changes:
        print(f"  changed from the course preset: {'; '.join(changes)}")
