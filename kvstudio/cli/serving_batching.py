"""`kvstudio serving --sweep-batch` and `--fit-budget`: why batching pays, how many users fit.

Owns the two options' arguments (`add_arguments`, which leaves alone the options the
``serving`` subcommand already has: ``--model`` and its kin, ``--block-size``) and
their tables (`run`); the sweep is the serving lab's (``kvstudio.labs.serving.lab.sweep``,
the part ``SERVING.run`` ends with), the budget ``kvstudio.labs.serving.fit.fit_report``. Bad
input raises ValueError, which ``cli/main.py`` prints as one ``error:`` line (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kvstudio.cli import args as cli_args
from kvstudio.cli import common
from kvstudio.cli.lab_options import add_lab_option
from kvstudio.labs import scale
from kvstudio.labs.course import COURSE
from kvstudio.labs.registry import SERVING
from kvstudio.labs.serving import batching as lab
from kvstudio.labs.serving import fit as fit_lab
from kvstudio.labs.serving import lab as serving_lab

DEFAULT_REQUEST_TOKENS = 256  # prompt + answer tokens of each request in --fit-budget


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add --sweep-batch, --fit-budget and their settings to `parser` (model options too
    when it has none yet)."""
    group = parser.add_argument_group("why batching pays, how many users fit")
    group.add_argument(
        "--sweep-batch", action="store_true",
        help="time one decode step at several batch sizes, beside the bytes it reads and "
        "the FLOPs it computes",
    )
    add_lab_option(group, SERVING.param("batch_sizes"))
    add_lab_option(group, SERVING.param("context"))
    add_lab_option(group, SERVING.param("repeats"), ": each time is their median")
    group.add_argument(
        "--fit-budget", action="store_true",
        help="how many requests of --request-tokens fit in memory at once (the projector's "
        "GPU sizes, and --budget-bytes, which is also checked against the continuous "
        "scheduler's admission on the loaded model)",
    )
    group.add_argument(
        "--request-tokens", type=cli_args.tokens, default=DEFAULT_REQUEST_TOKENS,
        help=f"prompt + answer tokens of each request (default {DEFAULT_REQUEST_TOKENS})",
    )
    group.add_argument(
        "--budget-bytes", type=cli_args.positive, default=None,
        help="a cache budget in bytes, beside the GPU sizes",
    )
    group.add_argument(
        "--preset", choices=sorted(scale.PRESETS), default=None,
        help="count for a published model's geometry instead of the loaded model",
    )
    if "--model" not in parser._option_string_actions:
        common.model_options(parser, COURSE.chat_model)


def wanted(args: argparse.Namespace) -> bool:
    """True when the command line asked for the sweep or the budget."""
    return bool(getattr(args, "sweep_batch", False) or getattr(args, "fit_budget", False))


def run(args: argparse.Namespace) -> int:
    """Print the batch sweep and/or the users-that-fit table; 0 on success."""
    if not wanted(args):
        raise ValueError("Give --sweep-batch or --fit-budget.")
    if args.sweep_batch:
        sizes = lab.check_batch_sizes(args.batch_sizes)  # before the model loads
        # Each round (and one warm-up pass) prefills every size's rows and feeds two steps.
        fed = (args.sweep_rounds + 1) * sum(sizes) * (args.sweep_context + 2)
        common.confirm_cost(
            args, fed, f"This sweep of {len(sizes)} batch size(s) × {args.sweep_rounds:,} rounds",
            "give fewer --sweep-rounds, smaller --batch-sizes or a shorter --sweep-context",
        )
    needs_model = args.sweep_batch or args.preset is None
    loaded = common.prepare(args, COURSE.chat_model) if needs_model else None
    if loaded is not None and args.sweep_batch:
        params = {"batch_sizes": args.batch_sizes, "repeats": args.sweep_rounds,
                  "context": args.sweep_context}
        job = serving_lab.sweep(loaded, SERVING.check(params))  # the declared bounds
        print_sweep(common.drain(job, lab.BatchSweepResult))
    if args.fit_budget:
        fit, check = fit_lab.fit_report(loaded, request_tokens=args.request_tokens,
                                        block_size=args.block_size,
                                        budget_bytes=args.budget_bytes, preset=args.preset)
        print_fit(fit)
        if check is not None:
            print_admission(check)
    return 0


def _mib(n: float) -> str:
    return f"{n / 1024**2:,.2f}"


def print_sweep(result: lab.BatchSweepResult) -> None:
    work = result.work
    print()
    print(f"  Why batching pays: one decode step of {result.model_label} on {result.device}, "
          f"{result.context} prompt tokens per row")
    print(f"  weights read per step: {_mib(work.weight_bytes)} MiB "
          f"({work.product_parameters:,} parameters in products)")
    if result.peaks is not None:
        peaks = result.peaks
        print(f"  this machine at best (fastest of {peaks.bandwidth.count} rounds): copy "
              f"{peaks.bandwidth.high / 1e9:,.1f} GB/s, matmul {peaks.flops.high / 1e9:,.1f} "
              f"GFLOP/s (n = {peaks.matmul_size}); ridge {peaks.balance:,.1f} FLOP/byte")
    print()
    print(f"  {'B':>4}{'keys':>6}{'ms/step':>10}{'min–max':>16}{'tokens/s':>11}"
          f"{'KV MiB':>9}{'read MiB':>10}{'GFLOP':>8}{'FLOP/B':>8}  bound")
    for p in result.points:
        low, high = 1000 * p.step_seconds.low, 1000 * p.step_seconds.high
        print(f"  {p.batch:>4}{p.keys:>6}{p.ms_per_step:>10.3f}{f'{low:.3f}–{high:.3f}':>16}"
              f"{p.tokens_per_second:>11,.0f}{_mib(p.kv_bytes):>9}{_mib(p.bytes_read):>10}"
              f"{p.flops / 1e9:>8.3f}{p.intensity:>8.2f}  {p.bound or '—'}")
    print()
    print(f"  Times: the median of {result.rounds} interleaved rounds (one step each), with "
          "the fastest and slowest round. FLOPs = 2 · B · parameters + 4 · B · L · H · d · keys; "
          "bytes read = the weights once + every row's K/V (the cache's own nbytes). Bound: "
          f"the larger of bytes ÷ copy speed and FLOPs ÷ matmul speed; 'overhead' when the "
          f"step takes over {lab.OVERHEAD_FACTOR:g}× both.")
    print(f"  Throughput {result.points[-1].batch} rows ÷ 1 row: {result.speedup:.1f}×.")


def print_fit(fit: fit_lab.FitResult) -> None:
    source = "measured from the cache tensors" if fit.measured else "from the preset's formula"
    print()
    print(f"  How many users fit: {fit.model_label}, {fit.request_tokens:,} tokens per request")
    print(f"  {fit.bytes_per_token:,} B per token ({source}); a block of {fit.block_size} "
          f"tokens {fit.block_bytes:,} B")
    print()
    print(f"  {'budget':<26}{'weights':>12}{'for the cache':>16}{'contiguous':>12}{'paged':>10}")
    for row in fit.rows:
        print(f"  {row.label:<26}{scale.human_bytes(row.weight_bytes):>12}"
              f"{scale.human_bytes(row.budget_bytes):>16}{row.requests_dense:>12,}"
              f"{row.requests_paged:>10,}")
    print()
    print("  contiguous: ⌊budget ÷ (bytes per token · tokens)⌋; paged: ⌊budget ÷ block⌋ "
          "blocks ÷ ⌈tokens ÷ b⌉ per request.")


def print_admission(check: fit_lab.AdmissionCheck) -> None:
    print()
    print(f"  Checked on the loaded model: {check.offered} requests of {check.request_tokens:,} "
          f"tokens arrive at once; the continuous scheduler, with {check.budget_blocks:,} "
          f"blocks of {check.block_bytes:,} B, admitted {check.admitted} (formula "
          f"{check.formula}), holding {check.blocks_used:,} blocks: "
          f"{'equal' if check.equal else 'DIFFERENT'}")


def main(argv: Any = None) -> int:
    """Run the two options on their own (``python -m kvstudio.cli.serving_batching``)."""
    parser = argparse.ArgumentParser(prog="kvstudio serving")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
