"""`kvstudio serving`: many requests through static and continuous batching, on the real model.

Owns the ``serving`` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its text: per request its prompt tokens,
prefix-hit tokens, TTFT, inter-token latency p50/p95, end-to-end time, answer
tokens, ``same tokens as solo run: yes|no`` (each request really runs alone
too) and the largest |Δlogit| between the two runs (float32 rounding: a batch's
products round a row differently from one row's); per scheduler a totals
block (throughput, wasted token slots beside their formula, peak blocks and
bytes, prefix hits, preemptions, the solo check); with ``--timeline`` the
requests × steps picture. The numbers come from
``kvstudio.labs.serving.lab``. Without ``--requests`` it runs the shipped example
(``kvstudio/resources/prompts/serving_requests.txt``) with its system prompt, on the
course's chat model.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kvstudio.cli import args as cli_args
from kvstudio.cli import common, serving_batching
from kvstudio.cli.lab_options import add_lab_option
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.serving.records import (
    POLICIES,
    PREFIX_MODES,
    Policy,
    SchedulerConfig,
    ServingStep,
)
from kvstudio.engine.serving.request_file import read_request_lines
from kvstudio.labs import bounds
from kvstudio.labs.common import Spread
from kvstudio.labs.course import COURSE, settings_line
from kvstudio.labs.registry import SERVING
from kvstudio.labs.serving import size as serving_size
from kvstudio.labs.serving.lab import (
    EXAMPLE_REQUESTS,
    EXAMPLE_SYSTEM,
    load_requests,
    serving,
)
from kvstudio.labs.serving.records import SchedulerRun, ServingResult

# One character per request and step in --timeline.
TIMELINE_MARKS = {
    "future": " ", "waiting": ".", "prefill": "P", "decode": "D", "idle": "_",
    "preempted": "x", "finished": " ",
}


def requests_options(p: argparse.ArgumentParser) -> None:
    """--requests and --system: the requests file and its system prompt (also serve-bench's)."""
    p.add_argument(
        "--requests", type=Path, default=None,
        help=f"the requests file (default: the shipped example, {EXAMPLE_REQUESTS.name}, "
        "with its system prompt)",
    )
    add_lab_option(p, SERVING.param("system"), " (with --requests, '': none)")


def add_subcommands(sub: Any) -> None:
    """Register ``serving`` on the one parser (``kvstudio.cli.main``)."""
    s = sub.add_parser(
        "serving",
        help="many requests, one model: static vs continuous batching, prefix caching",
        description="Run a requests file (one question per line, '@K ' = arrives at step K, "
        "'+N ' = its own token budget) through static or continuous batching on the real "
        "model, and check every answer against the same request run alone.",
    )
    requests_options(s)
    s.add_argument("--plain", action="store_true",
                   help="feed the lines as plain text, without the ChatML template")
    add_lab_option(s, SERVING.param("policy"), "; both: one after the other",
                   choices=(*POLICIES, "both"))
    add_lab_option(s, SERVING.param("chunk"), " (continuous only: prompt chunks and decode "
                   "rows together, at most N tokens per step)")
    s.add_argument("--block-size", type=cli_args.block_size, default=16,
                   help=f"b, tokens per block of the pool (1 … {bounds.MAX_BLOCK_SIZE}, at most "
                   "the model's positions; default 16)")
    s.add_argument("--prefix-cache", choices=PREFIX_MODES, default="none",
                   help="none, blocks (vLLM: whole blocks, chained hashes) or radix (SGLang: "
                   "token-exact); default none")
    add_lab_option(s, SERVING.param("max_batch"))
    s.add_argument("--blocks", type=cli_args.positive, default=None,
                   help="the block budget (the memory budget, in blocks); default: no limit")
    add_lab_option(s, SERVING.param("answer_tokens"))
    s.add_argument("--rounds", type=cli_args.bounded(1, 50, "rounds"), default=3,
                   help="repeat each run k times, interleaved; times are medians (default 3; "
                   "1 = single measurements)")
    s.add_argument("--temperature", type=cli_args.temperature, default=0.0,
                   help="0 = greedy (default); above 0 samples with the course's top-k/top-p "
                   "and each request's own seed")
    s.add_argument("--seed", type=cli_args.seed, default=COURSE.seed)
    s.add_argument("--timeline", action="store_true",
                   help="print the requests × steps timeline (P prefill, D decode, . waiting, "
                   "_ idle row, x preempted)")
    common.model_options(s, COURSE.chat_model)
    s.add_argument("--yes", action="store_true",
                   help=f"run even past {serving_size.ASK_CELLS:,} request-step records "
                   "(requests × steps × runs; without it such a run is refused, as in the "
                   "window), or a long --sweep-batch")
    serving_batching.add_arguments(s)  # --sweep-batch, --fit-budget
    s.set_defaults(func=cmd_serving)


def scheduler_configs(args: argparse.Namespace) -> list[SchedulerConfig]:
    """The configurations `--policy` and the knobs ask for (ValueError for a bad mix)."""
    policies: tuple[Policy, ...] = POLICIES if args.policy == "both" else (args.policy,)
    if args.chunk and args.policy != "continuous":
        raise ValueError("--chunk is chunked prefill, a continuous-batching policy: add "
                         "--policy continuous.")
    return [
        SchedulerConfig(policy=policy, max_batch=args.max_batch, chunk=args.chunk or None,
                        block_size=args.block_size, block_budget=args.blocks,
                        prefix_cache=args.prefix_cache)
        for policy in policies
    ]


def cmd_serving(args: argparse.Namespace) -> int:
    if serving_batching.wanted(args):
        return serving_batching.run(args)
    configs = scheduler_configs(args)
    path = args.requests if args.requests is not None else EXAMPLE_REQUESTS
    system = args.system or None  # '': the example's with the example, else none
    if system is None:
        system = EXAMPLE_SYSTEM if args.requests is None else ""
    system = common.utf8_argument(system, "The system prompt")
    lines = read_request_lines(path)  # a bad file is refused before the model loads
    loaded = common.prepare(args, COURSE.chat_model)
    requests = load_requests(
        path, loaded.tokenizer, loaded.backend, system=system,
        max_new_tokens=args.max_new_tokens, chat=False if args.plain else None, lines=lines,
    )
    if args.temperature != 0:  # -1 is refused by the one rule, never greedy
        sampling = SamplingSettings(temperature=args.temperature, top_k=COURSE.top_k,
                                    top_p=COURSE.top_p, seed=args.seed)
    else:
        sampling = SamplingSettings.greedy_settings(args.seed)
    # Past the size every front refuses, --yes runs it (if its records fit in memory).
    serving_size.check_size(requests, configs, args.rounds, confirmed=args.yes,
                            confirm_hint="Add --yes to run it anyway.",
                            device=loaded.backend.device)
    template = "plain text" if args.plain or not loaded.tokenizer.has_chat_tokens else "ChatML"
    print(f"Requests: {len(requests)} from {path} · {template}"
          + (f" · system prompt {common.short(system, 40)!r}" if system else "")
          + f" · {settings_line(sampling)}")
    result: ServingResult = common.drain(
        serving(loaded.backend, loaded.tokenizer, requests, configs, system=system,
                sampling=sampling, repeats=args.rounds, confirmed=args.yes),
        ServingResult,
    )
    print_result(result, timeline=args.timeline)
    return 0


def time_text(value: Spread | None, single: bool) -> str:
    """A time as the timing policy prints it: the median with its range, or one value."""
    if value is None:
        return "—"
    if single:
        return f"{common.ms(value.median)} ms"
    return f"{common.ms(value.median)} ms ({common.ms(value.low)}–{common.ms(value.high)})"


def print_result(result: ServingResult, timeline: bool = False) -> None:
    single = result.single_measurement
    how = ("single measurements" if single else
           f"medians of {result.repeats} interleaved rounds (min–max)")
    print(f"Times: model time per step, laid end to end; {how}.")
    for run in result.runs:
        print()
        print(f"== {run.config.label} ==")
        for o in run.outcomes:
            r = o.request
            print(
                f"request {r.index + 1} (@{r.arrival}): prompt {o.prompt_tokens} tokens · "
                f"prefix hit {o.prefix_hit} · TTFT {time_text(o.ttft_s, single)} · "
                f"ITL p50 {time_text(o.itl_p50_s, single)} · p95 "
                f"{time_text(o.itl_p95_s, single)} · end-to-end {time_text(o.e2e_s, single)} · "
                f"answer {o.answer_tokens} tokens"
                + (f" · preempted {o.preemptions}×" if o.preemptions else "")
                + f" · same tokens as solo run: {'yes' if o.identical_to_solo else 'no'}"
                + f" (max |Δlogit| {logit_gap_text(o.max_abs_logit_diff)})"
            )
            print(f"    {common.short(r.text, 50)} → {common.short(o.answer_text, 70)}")
        print_totals(run, single)
        if timeline:
            print_timeline(run.steps)


def logit_gap_text(gap: float | None) -> str:
    """A max |Δlogit| as printed: two significant digits (0 when bit for bit)."""
    return "—" if gap is None else f"{gap:.2g}"


def print_totals(run: SchedulerRun, single: bool) -> None:
    t = run.totals
    tps = t.throughput_tps
    throughput = (f"{tps.median:,.0f} tokens/s" if single else
                  f"{tps.median:,.0f} tokens/s ({tps.low:,.0f}–{tps.high:,.0f})")
    print(f"  totals: {t.steps} steps · {t.answer_tokens} answer tokens in "
          f"{time_text(t.total_s, single)} · throughput {throughput}")
    print(f"  slots fed: {t.slots_fed:,} = {t.prefill_tokens:,} prefill + {t.decode_tokens:,} "
          f"decode + {t.padding_slots:,} wasted (formula: {t.padding_formula:,})")
    print(f"  peak blocks: {t.peak_blocks} × {t.block_bytes:,} B = {t.peak_cache_bytes:,} bytes"
          f" · prefix hits {t.prefix_hit_tokens:,} tokens · preemptions {t.preemptions}")
    same = sum(o.identical_to_solo for o in run.outcomes)
    print(f"  same tokens as solo runs: {same} of {len(run.outcomes)} · max |Δlogit| "
          f"{logit_gap_text(run.max_abs_logit_diff)} (float32 rounding: batched products "
          "round a row differently)")


def print_timeline(steps: tuple[ServingStep, ...]) -> None:
    """Requests × steps: one character per cell (see `TIMELINE_MARKS`)."""
    print("  timeline (P prefill, D decode, . waiting, _ idle row, x preempted):")
    if not steps:
        return
    for i in range(len(steps[0].requests)):
        cells = "".join(TIMELINE_MARKS[s.requests[i].phase] for s in steps)
        print(f"    {i + 1:>3} |{cells.rstrip()}")
