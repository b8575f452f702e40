"""`kvstudio compare`: cached against recompute, the lab table on the command line.

Owns the ``compare`` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its tables: tokens fed, times and cache bytes for
both modes against the formulas (`print_compare`), or one mode alone
(`print_single`). The numbers come from the lab's declared run
(``kvstudio.labs.cache.compare``; ``--mode cached|recompute``: its one-mode run, one
round); with ``--cache paged|fp16|int8|int4`` it adds the paged or quantized lab's table:
that lab's declared run (the window's), given this command's prompt and N as options, its
record printed by ``kvstudio.cli.tools.project``.
It runs on the course preset's base model (``ko-base``; ``--cache paged``,
whose table is a sampling run, on the chat model) at its P = 183, N = 64;
``--preset notebook`` is the seed notebook's case (the 16-token sentence,
N = 64, both modes).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

import torch

from kvstudio.cli import common
from kvstudio.cli.args import argument_type
from kvstudio.cli.lab_options import add_lab_option, lab_option_help, lab_params
from kvstudio.cli.tools import project
from kvstudio.engine import costs
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.cache.quantized import QUANT_BITS
from kvstudio.engine.records import MODES, Mode
from kvstudio.labs.cache.compare import CompareResult, ModeRun, RepeatedCompare
from kvstudio.labs.cache.paged import question_ids
from kvstudio.labs.course import CACHE_PRESETS, COURSE, NOTEBOOK
from kvstudio.labs.number_format import table_float
from kvstudio.labs.registry import COMPARE, PAGED


def add_subcommands(sub: Any) -> None:
    """Register ``compare`` on the one parser (``kvstudio.cli.main``)."""
    c = common.lab_subcommand(
        sub, COMPARE, "cached vs recompute: tokens fed, times, cache bytes (the lab table)",
        "Greedy generation in both modes. Exactly N tokens are generated (eos is ignored, "
        "like the notebook's min_new_tokens) so the formulas apply.",
        extra_help={"preset": f" (course: P = {COURSE.prompt_tokens}, N = {COURSE.new_tokens}, "
                    f"the lecture; notebook: the seed notebook's {NOTEBOOK.prompt_tokens}-token "
                    f"sentence, N = {NOTEBOOK.new_tokens}); --prompt-tokens / --new-tokens "
                    "override it", "repeats": " (--mode both)"},
        overrides={"new_tokens": {"default": None}},  # None: the preset's
        skip=("prompt_tokens", "dtype"))  # --prompt-tokens or --prompt; --dtype: the model's
    prompt = c.add_mutually_exclusive_group()
    # P and N: None = the preset's (the window's preset box fills its boxes the same way).
    add_lab_option(prompt, COMPARE.param("prompt_tokens"), " (the lab text cut or repeated; a "
                   "cut that would split a character leaves its bytes out and says so)",
                   default=None)
    prompt.add_argument("--prompt", default=None, help="prompt text instead")
    c.add_argument("--chat", action="store_true", help="wrap --prompt in the ChatML template")
    c.add_argument("--mode", default="both", choices=("both", "cached", "recompute"))
    c.add_argument("--stop-at-eos", action="store_true", help="stop when the model writes eos")
    # --cache paged: the paged lab's sampling run, its bounds the lab's (the window's boxes)
    for option, name in (("--samples", "samples"), ("--sample-tokens", "new_tokens")):
        param = replace(PAGED.param(name), name=option)  # its messages name the option
        c.add_argument(option, type=argument_type(param.parse, "whole number"),
                       default=param.default, help=f"--cache paged: {lab_option_help(param)}")
    common.cache_options(c)
    common.finish_subcommand(c, cmd_compare, COURSE.cache_model, yes=True)


def cmd_compare(args: argparse.Namespace) -> int:
    preset = CACHE_PRESETS[args.preset]
    loaded = common.prepare(args, COURSE.model_for_cache(args.cache))
    backend, tokenizer = loaded.backend, loaded.tokenizer
    asked = args.prompt_tokens if args.prompt_tokens is not None else preset.prompt_tokens
    prompt = common.prompt_ids(
        args, tokenizer, asked, short_text=preset is NOTEBOOK and asked == NOTEBOOK.prompt_tokens
    )
    spec = common.cache_spec(args)
    n = args.new_tokens if args.new_tokens is not None else preset.new_tokens
    modes: tuple[Mode, ...] = MODES if args.mode == "both" else (args.mode,)
    # The lab's run: its checks (positions, memory) now, so a run that cannot fit is not
    # priced; its work when drained. --mode cached|recompute: that mode alone, one round.
    job = COMPARE.run(loaded, {**lab_params(COMPARE, args), "dtype": args.dtype},
                      prompt_ids=prompt, cache=spec, stop_at_eos=args.stop_at_eos,
                      mode=args.mode)
    scale = project.start_scale_lab(args, loaded, prompt, n)  # its checks too, now
    rounds = args.repeats if args.mode == "both" else 1
    fed = rounds * sum(costs.generation_cost(mode, len(prompt), n).tokens_fed for mode in modes)
    if spec.kind == "paged":  # three caches for the sampling run, then a greedy check
        question = len(question_ids(loaded))
        fed += 3 * costs.generation_cost(
            "cached", question, args.sample_tokens, rows=args.samples
        ).tokens_fed
        fed += 2 * costs.generation_cost("cached", len(prompt), n).tokens_fed
    elif spec.kind in QUANT_BITS:  # the model's own cache and three quantized ones
        fed += 4 * costs.generation_cost("cached", len(prompt), n).tokens_fed
    common.confirm_cost(
        args, fed, f"This comparison (P={len(prompt):,}, N={n:,})",
        "use a shorter prompt, fewer new tokens or --mode cached"
        + (" (or fewer --samples / --sample-tokens)" if spec.kind == "paged" else ""),
    )
    print(
        f"Preset: {preset.name}; prompt: P={len(prompt)} tokens, N={n} new tokens, {spec.kind} "
        "cache"
        + (f" (W={spec.window})" if spec.kind == "sliding" else "")
        + f", greedy, {torch.get_num_threads()} torch thread(s), {backend.device}"
    )
    if args.mode == "both":
        repeated: RepeatedCompare = common.drain(job, RepeatedCompare)
        print_compare(repeated.first, backend, repeated)
    else:
        print_single(common.drain(job, ModeRun))
    if scale is not None:
        project.print_scale_section(scale, spec.kind)
    return 0


def _bytes_formula_note(run: ModeRun, allocated: bool, spec: CacheSpec) -> str:
    """'2·L·T·H_kv·d·bytes = 2·4·246·2·32·4' (per layer for a hybrid model: 2·(T_0+…)·…)."""
    plan = run.cache_plan
    if plan is None:
        return ""
    positions = run.records[0].tokens_fed + len(run.records) - 1  # P + N − 1
    rows = run.records[-1].batch_size
    if spec.kind in QUANT_BITS and plan.token_bytes is not None:
        per_token = plan.token_bytes * len(plan.layers)
        return f"T·{per_token} ({spec.kind} layout, scales included), T={positions}"
    numbers = plan.formula_text(positions, allocated=allocated, batch_size=rows)
    letters = "2·L·T·H_kv·d·bytes" if plan.uniform else "2·ΣT_l·H_kv·d·bytes"
    if allocated and any(layer.preallocated is not None for layer in plan.layers):
        letters = letters.replace("T", "M", 1)  # a static cache allocates M tokens per layer
    note = f"{letters} = {numbers}"
    if allocated and spec.kind == "paged":
        blocks = -(-positions // spec.block_size)
        note += f" (⌈{positions}/{spec.block_size}⌉ = {blocks} blocks)"
    return note


def timing_rows(repeated: RepeatedCompare) -> list[tuple[str, str, str, str]]:
    """TTFT, ms/token, tokens/s and total: medians of k rounds with min–max, or said single."""
    k = len(repeated.rounds)
    rows = []
    for label, value in (("TTFT / prefill (ms)", repeated.ttft_ms),
                         ("decode (ms/token)", repeated.decode_ms_per_token),
                         ("total (ms)", repeated.total_ms)):
        c, r = value("cached"), value("recompute")
        if k == 1:
            note = "single measurement"
        else:
            note = (f"median of {k} rounds, min–max {c.low:,.2f}–{c.high:,.2f} | "
                    f"{r.low:,.2f}–{r.high:,.2f}")
        if label.startswith("decode"):
            note = "median decode step (prefill apart), " + note
        rows.append((label, f"{c.median:,.2f}", f"{r.median:,.2f}", note))
        if label.startswith("decode"):
            rows.append(("tokens/s", f"{1000 / c.median:,.0f}" if c.median else "—",
                         f"{1000 / r.median:,.0f}" if r.median else "—", "1000 ÷ ms/token"))
    return rows


def print_compare(result: CompareResult, backend: LanguageModel,
                  repeated: RepeatedCompare | None = None) -> None:
    """The lab table; `repeated` (k rounds, `result` its first) gives the times' medians."""
    c, r = result.cached, result.recompute
    p, n = result.prompt_tokens, len(c.token_ids)
    held_note = "storage the cache holds"
    if c.cache_pool_bytes is not None:  # paged: the rows' blocks, not the pool's tensors
        held_note = f"blocks the rows hold (the pool's storage: {c.cache_pool_bytes:,} bytes)"
    repeated = repeated or RepeatedCompare((result,))
    rows = [
        ("tokens fed (measured)", f"{c.tokens_fed:,}", f"{r.tokens_fed:,}", ""),
        (
            "tokens fed (formula)",
            f"{c.tokens_fed_formula:,}",
            f"{r.tokens_fed_formula:,}",
            "P+(N−1) | P·N+N(N−1)/2",
        ),
        *timing_rows(repeated),
        ("KV allocated (measured)", f"{c.cache_bytes:,}", f"{r.cache_bytes:,}", held_note),
        (
            "KV allocated (formula)",
            f"{c.cache_allocated_formula:,}",
            "—",
            _bytes_formula_note(c, True, result.cache_spec),
        ),
        ("KV used (measured)", f"{c.cache_used_bytes:,}", f"{r.cache_used_bytes:,}", "real tokens"),
        ("KV used (formula)", f"{c.cache_bytes_formula:,}", "—",
         _bytes_formula_note(c, False, result.cache_spec)),
    ]
    print()
    print(f"  {'':<27}{'cached':>14}{'recompute':>14}   (KV rows in bytes)")
    for label, a, b, note in rows:
        print(f"  {label:<27}{a:>14}{b:>14}   {note}")
    print()
    if c.cache_plan is not None and not c.cache_plan.uniform:
        print(f"  cache layers:      {c.cache_plan.kinds_summary()} (each layer's own formula)")
    ok_fed = c.tokens_fed == c.tokens_fed_formula and r.tokens_fed == r.tokens_fed_formula
    ok_bytes = c.allocated_matches and c.used_matches
    same = sum(a == b for a, b in zip(c.token_ids, r.token_ids, strict=False))
    if result.identical:
        print(f"  identical tokens:  yes ({same}/{n})")
    else:
        print(
            f"  identical tokens:  NO — first difference at step {result.first_divergent_step} "
            f"({same}/{n} equal)"
        )
    why = (
        f"{result.cache_spec.kind} cache vs recompute"
        if result.cache_spec.kind in QUANT_BITS
        else "fp rounding only"
    )
    print(f"  max |Δlogit|:      {table_float(result.max_logit_diff)} (over {n} steps, {why})")
    print(
        f"  formulas match:    tokens fed {'yes' if ok_fed else 'NO'}, "
        f"cache bytes {'yes' if ok_bytes else 'NO'} (allocated "
        f"{'yes' if c.allocated_matches else 'NO'}, used {'yes' if c.used_matches else 'NO'})"
    )
    k = len(repeated.rounds)
    print(f"  speed:             recompute / cached: {repeated.decode_ratio:.1f}× per decoded "
          f"token, {repeated.speed_ratio:.1f}× in total time "
          f"({'single measurement' if k == 1 else f'medians of {k} rounds'})")
    print(f"  P={p}, N={n}: text (cached): {common.short(c.text)!r}")


def print_single(run: ModeRun) -> None:
    """One mode alone (``--mode cached|recompute``): one round, every time said single."""
    steps = len(run.records)
    decode = run.decode_seconds_per_token
    print()
    print(f"  mode                   {run.mode}")
    print(f"  tokens fed             {run.tokens_fed:,} measured, {run.tokens_fed_formula:,} by "
          "the formula")
    print(f"  TTFT / prefill         {common.ms(run.ttft_seconds)} ms (single measurement)")
    if decode:
        print(f"  decode                 {common.ms(decode)} ms/token (median of "
              f"{steps - 1} decode steps, prefill apart) · {1 / decode:,.0f} tokens/s "
              "(1000 ÷ ms/token)")
    print(f"  total                  {common.ms(run.total_seconds)} ms (single measurement)")
    print(f"  KV cache bytes         {run.cache_bytes:,} allocated, "
          f"{run.cache_used_bytes:,} used")
    print(f"  text                   {common.short(run.text)!r}")
