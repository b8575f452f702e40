"""`kvstudio sample`: repeated sampling, distinct answers per temperature.

Owns the ``sample`` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its table; the numbers come from
``kvstudio.labs.sampling.temperature``, the window's lab run as declared: the same samples again in
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
from kvstudio.cli.lab_options import lab_params
from kvstudio.engine import costs
from kvstudio.engine.records import MODES, Mode
from kvstudio.labs.common import prompt_ids
from kvstudio.labs.course import COURSE, setting_changes
from kvstudio.labs.registry import SAMPLE
from kvstudio.labs.sampling.sample import SamplingResult
from kvstudio.labs.sampling.temperature import TemperatureLabResult


def add_subcommands(sub: Any) -> None:
    """Register ``sample`` on the one parser (``kvstudio.cli.main``)."""
    s = common.lab_subcommand(sub, SAMPLE, "repeated sampling: distinct answers per temperature",
                              "n samples per temperature, one batch of n rows each, same seed.")
    common.raw_option(s)
    s.add_argument("--show", type=cli_args.bounded(0, cli_args.MAX_COUNT), default=3,
                   help="most frequent answers to print")
    common.finish_subcommand(s, cmd_sample, COURSE.chat_model, yes=True)


def cmd_sample(args: argparse.Namespace) -> int:
    loaded = common.prepare(args, COURSE.chat_model)
    params = lab_params(SAMPLE, args)
    question = common.utf8_argument(params["prompt"])
    job = SAMPLE.run(loaded, params, raw=args.raw)  # the prompt and the batch checked
    prompt = prompt_ids(loaded, question, args.raw)
    samples, temperatures, n = params["samples"], params["temperatures"], params["new_tokens"]
    modes: tuple[Mode, ...] = MODES if params["both_modes"] else ("cached",)
    fed = len(temperatures) * sum(
        costs.generation_cost(mode, len(prompt), n, rows=samples).tokens_fed for mode in modes)
    common.confirm_cost(
        args, fed,
        f"Sampling {samples:,} × {len(temperatures):,} temperature(s) × {n:,} tokens"
        + (" in both modes" if params["both_modes"] else ""),
        "ask for fewer samples, temperatures or new tokens, or --no-both-modes",
    )
    print(
        f"Prompt: {common.short(question)!r} ({len(prompt):,} tokens); {samples:,} samples "
        f"× {len(temperatures):,} temperatures, ≤ {n:,} new tokens, "
        f"{torch.get_num_threads()} torch thread(s)"
    )
    lab: TemperatureLabResult = common.drain(job, TemperatureLabResult)
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
