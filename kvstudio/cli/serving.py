"""`kvstudio serving`: many requests through static and continuous batching, on the real model.

Owns the ``serving`` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its text: per request its prompt tokens,
prefix-hit tokens, TTFT, inter-token latency p50/p95, end-to-end time, answer
tokens, ``same tokens as solo run: yes|no`` (each request really runs alone
too) and the largest |Δlogit| between the two runs (float32 rounding: a batch's
products round a row differently from one row's); per scheduler a totals
block (throughput, wasted token slots beside their formula, peak blocks and
bytes, prefix hits, preemptions, the solo check); with ``--timeline`` the
requests × steps picture. The numbers come from the lab's declared run
(``SERVING.run``: ``kvstudio.labs.serving.lab.run``, the window's and the notebook's
too; the command line's own knobs go to it as the run's options). Without
``--requests`` it runs the shipped example
(``kvstudio/resources/prompts/serving_requests.txt``) with its system prompt, on the
course's chat model.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kvstudio.cli import args as cli_args
from kvstudio.cli import common, serving_batching
from kvstudio.cli.lab_options import add_lab_option, lab_params
from kvstudio.engine.serving.records import POLICIES, ServingStep
from kvstudio.engine.serving.request_file import read_request_lines
from kvstudio.labs.common import Spread
from kvstudio.labs.course import COURSE, settings_line
from kvstudio.labs.registry import SERVING
from kvstudio.labs.serving import size as serving_size
from kvstudio.labs.serving.batching import ServingLabResult
from kvstudio.labs.serving.lab import EXAMPLE_REQUESTS
from kvstudio.labs.serving.records import SchedulerRun, ServingResult

# One character per request and step in --timeline.
TIMELINE_MARKS = {
    "future": " ", "waiting": ".", "prefill": "P", "decode": "D", "idle": "_",
    "preempted": "x", "finished": " ",
}
SYSTEM_HELP = " (with --requests, '': none)"


def requests_option(p: argparse.ArgumentParser) -> None:
    """--requests: the requests file (the lab's ``requests``; also serve-bench's)."""
    p.add_argument(
        "--requests", type=Path, default=None,
        help=f"the requests file (default: the shipped example, {EXAMPLE_REQUESTS.name}, "
        "with its system prompt)",
    )


def requests_options(p: argparse.ArgumentParser) -> None:
    """--requests and --system: the requests file and its system prompt (serve-bench's)."""
    requests_option(p)
    add_lab_option(p, SERVING.param("system"), SYSTEM_HELP)


def add_subcommands(sub: Any) -> None:
    """Register ``serving`` on the one parser (``kvstudio.cli.main``): the lab's declared
    options (the sweep's in `serving_batching`'s group), then the command line's own."""
    s = common.lab_subcommand(
        sub, SERVING, "many requests, one model: static vs continuous batching, prefix caching",
        "Run a requests file (one question per line, '@K ' = arrives at step K, "
        "'+N ' = its own token budget) through static or continuous batching on the real "
        "model, and check every answer against the same request run alone.",
        extra_help={"system": SYSTEM_HELP, "policy": "; both: one after the other",
                    "chunk": " (continuous only: prompt chunks and decode rows together, at "
                    "most N tokens per step)",
                    "block_size": " (at most the model's positions)",
                    "prefix": " (blocks: whole blocks, chained hashes; radix: token-exact)"},
        overrides={"policy": {"choices": (*POLICIES, "both")},
                   "block_size": {"type": cli_args.block_size}},
        skip=("batch_sizes", "repeats", "context"))  # the sweep's: serving_batching's group
    requests_option(s)
    s.add_argument("--plain", action="store_true",
                   help="feed the lines as plain text, without the ChatML template")
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


def cmd_serving(args: argparse.Namespace) -> int:
    if serving_batching.wanted(args):
        return serving_batching.run(args)
    if args.chunk and args.policy != "continuous":
        raise ValueError("--chunk is chunked prefill, a continuous-batching policy: add "
                         "--policy continuous.")
    common.utf8_argument(args.system, "The system prompt")
    path = args.requests if args.requests is not None else EXAMPLE_REQUESTS
    read_request_lines(path)  # a bad file is refused before the model loads
    loaded = common.prepare(args, COURSE.chat_model)
    params = {**lab_params(SERVING, args), "batch_sizes": []}  # the requests, no sweep
    both = params["policy"] == "both"
    if both:
        del params["policy"]
    # The command line's own settings, which the lab's run reads (`labs.serving.lab.run`).
    job = SERVING.run(loaded, params, requests=args.requests, policies=POLICIES if both else None,
                      plain=args.plain, confirmed=args.yes,
                      confirm_hint="Add --yes to run it anyway.")
    result: ServingResult = common.drain(job, ServingLabResult).serving
    template = "plain text" if args.plain or not loaded.tokenizer.has_chat_tokens else "ChatML"
    print(f"Requests: {len(result.requests)} from {path} · {template}"
          + (f" · system prompt {common.short(result.system, 40)!r}" if result.system else "")
          + f" · {settings_line(result.sampling)}")
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
