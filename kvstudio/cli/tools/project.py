"""`kvstudio project`, and the extra tables of `kvstudio compare --cache paged|fp16|int8|int4`.

Owns argument parsing and printing for the scale labs; the numbers come from
``kvstudio.labs.scale`` (the projector) and, for ``compare``, from the paged and
quantized labs' declared runs (``PAGED.run``, ``QUANTIZED.run``: the window's, on
``compare``'s prompt and N), whose result records it prints. Registered on the one
parser in ``kvstudio.cli.main``, like every subcommand module.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from typing import Any

from kvstudio.cli import args as cli_args
from kvstudio.cli import common
from kvstudio.cli.lab_options import add_lab_option
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.quantized import QUANT_BITS
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.cache.paged import PagedLabResult
from kvstudio.labs.cache.quantized import QuantLabResult
from kvstudio.labs.common import finish
from kvstudio.labs.course import COURSE, settings_line
from kvstudio.labs.number_format import table_float
from kvstudio.labs.projector import ProjectionCheck, projection_check
from kvstudio.labs.registry import PAGED, PROJECTOR, QUANTIZED
from kvstudio.labs.scale import (
    PRESETS,
    ModelGeometry,
    fits_in,
    geometry_of_backend,
    human_bytes,
    load_config,
    preset,
    variants,
)


def add_subcommands(subparsers: Any) -> None:
    """Register `project` on the `kvstudio` command's subparsers."""
    p = subparsers.add_parser(
        "project",
        help="KV cache bytes for a real model: context × batch, from its config.json",
        description=(
            "Bytes per token 2·L·H_kv·d·bytes and the cache for a context length × batch, for "
            "a preset (numbers from the published config.json), any local config.json, or the "
            "loaded model (then also checked against bytes measured in a real run)."
        ),
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--preset", default=None, help=f"one of: {', '.join(PRESETS)}")
    source.add_argument("--config", default=None, help="a config.json or a transformers folder")
    for param in PROJECTOR.params:  # --context, --batch, --bits: declared with the lab
        if param.option is not None:  # (the source: --preset, --config or --model)
            add_lab_option(p, param)
    p.add_argument(
        "--model", default=None,
        help=f"without --preset/--config: this model (ko-base, ko-chat or a path; default "
        f"{COURSE.cache_model})",
    )
    p.add_argument("--dtype", default="float32", choices=("float32", "float16", "bfloat16"))
    p.add_argument("--device", default="cpu")
    p.add_argument(
        "--threads", type=cli_args.thread_count, default=1,
        help="torch CPU threads, 1 … the CPU cores (default 1)",
    )
    p.set_defaults(func=run_project)


def run_project(args: argparse.Namespace) -> int:
    check: ProjectionCheck | None = None
    bits = args.bits
    if args.preset is not None:
        geometry = preset(args.preset)
    elif args.config is not None:
        geometry = load_config(args.config)
    else:
        loaded = common.prepare(args, COURSE.cache_model)
        geometry = geometry_of_backend(loaded.backend)
        bits = args.bits or 8 * loaded.backend.dtype_bytes
        check = _check_loaded(loaded.backend, loaded.tokenizer, args)
    print_projection(geometry, args.context, args.batch, bits or geometry.dtype_bits)
    if check is not None:
        ok = "equal ✓" if check.equal else "DIFFERENT ✗"
        print(
            f"\n  check: a real run of {check.batch} row(s) × {check.context} tokens holds "
            f"{check.measured_bytes:,} bytes (measured from the cache tensors); the projection "
            f"for that length says {check.projected_bytes:,}: {ok}"
        )
    return 0


def _check_loaded(
    backend: LanguageModel, tokenizer: TextTokenizer, args: argparse.Namespace
) -> ProjectionCheck:
    from kvstudio.labs.common import lab_prompt_ids

    limit = getattr(getattr(backend, "model", None), "rope_cos", None)
    positions = int(limit.shape[0]) if limit is not None else 512
    context = max(2, min(args.context, positions, 256))
    new = min(8, context - 1)
    prompt = lab_prompt_ids(tokenizer, context - new + 1)
    batch = min(args.batch, 8)
    run = projection_check(backend, tokenizer, prompt, batch=batch, new_tokens=new)
    return finish(run, ProjectionCheck)


def print_projection(g: ModelGeometry, context: int, batch: int, bits: int) -> None:
    per_token = g.bytes_per_token(bits)
    total = g.cache_bytes(context, batch, bits)
    print(f"Model: {g.name}")
    print(f"  source: {g.source}")
    window = f", window W={g.window} on {g.window_layers} of {g.layers} layers" if g.window else ""
    print(
        f"  L={g.layers} layers, H={g.heads} query heads, H_kv={g.kv_heads} K/V heads, "
        f"d={g.head_dim}{window}"
    )
    if bits < 16:  # a quantized layout: the numbers and one float16 scale per K/V head
        print(
            f"  bytes per token = 2·L·H_kv·(d·bits/8 + 2 scale bytes) = 2·{g.layers}·"
            f"{g.kv_heads}·({g.head_dim}·{bits}/8 + 2) = {per_token:,} B"
        )
    else:
        print(
            f"  bytes per token = 2·L·H_kv·d·bytes = 2·{g.layers}·{g.kv_heads}·{g.head_dim}·"
            f"{bits / 8:g} = {per_token:,} B ({bits}-bit, "
            f"{'the config dtype' if bits == g.dtype_bits else 'asked for'})"
        )
    held = g.window_tokens(context) if g.window and g.window_layers == g.layers else context
    print(
        f"  cache for batch {batch:,} × context {context:,}"
        + (f" (the window W = {g.window:,} keeps W − 1 = {held:,})" if held != context else "")
        + f" = {total:,} B ({human_bytes(total)})"
    )
    weights = g.weights_nbytes
    print(
        f"  weights: {g.parameters:,} parameters × {g.weight_bytes} bytes = {human_bytes(weights)}"
        + ("" if g.parameters_measured is not None else " (counted from the config)")
    )
    fits = ", ".join(f"{gib} GiB {'✓' if ok else '✗'}" for gib, ok in fits_in(total, weights))
    print(f"  cache + weights = {human_bytes(total + weights)}: fits in {fits}")
    print()
    print(f"  {'what changes':<28}{'bytes/token':>14}{'cache (bytes)':>22}")
    for row in variants(g, context, batch, bits):
        print(f"  {row.label:<28}{row.bytes_per_token:>14,}{row.total_bytes:>22,}")


# ---- compare --cache paged | fp16 | int8 | int4 --------------------------------------------
def start_scale_lab(
    args: argparse.Namespace, loaded: LoadedModel, prompt: Sequence[int], new_tokens: int
) -> Iterator[object] | None:
    """The paged or quantized lab's declared run (the window's) on `compare`'s prompt and N,
    its checks done now (None for the other caches); `print_scale_section` drains it."""
    if args.cache == "paged":  # the sampling run's rows and budget, then greedy on our prompt
        return PAGED.run(
            loaded,
            {"samples": args.samples, "new_tokens": args.sample_tokens,
             "block_size": args.block_size},
            greedy_prompt_ids=list(prompt), greedy_tokens=new_tokens,
        )
    if args.cache in QUANT_BITS:  # the model's own cache, then fp16, int8 and int4
        return QUANTIZED.run(loaded, {"new_tokens": new_tokens}, prompt_ids=list(prompt))
    return None


def print_scale_section(job: Iterator[object], cache: str) -> None:
    """Run `start_scale_lab`'s job (progress on stderr) and print its result record."""
    if cache == "paged":
        print_paged(common.drain(job, PagedLabResult))
    else:
        print_quantized(common.drain(job, QuantLabResult))


def print_paged(r: PagedLabResult) -> None:
    print()
    print(
        f"Paged cache, block size b={r.block_size}: {r.samples} samples of one question "
        f"(P={r.prompt_tokens}, budget N={r.new_tokens}), three caches, same draws"
    )
    print(f"  settings: {settings_line(r.settings, samples=r.samples, answer_tokens=r.new_tokens)}")
    lengths = sorted(r.answer_lengths)
    print(f"  answer lengths (tokens, eos included): {lengths[0]} … {lengths[-1]}")
    steps = len(r.dynamic_bytes)
    print(f"  the run took {steps} steps; bytes held at the end, measured from the tensors:")
    print(f"  {'':<27}{'bytes':>12}")
    per = r.bytes_per_token
    rows = [  # (cache, bytes held, how they add up)
        ("preallocated (static)", r.static_bytes[-1],
         f"{r.samples} rows × (P+N = {r.prompt_tokens + r.new_tokens}) × {per:,}"),
        ("dynamic", r.dynamic_bytes[-1],
         f"{r.samples} rows × {r.dynamic_bytes[-1] // (r.samples * per)} tokens × {per:,}"),
        ("paged (blocks held)", r.paged_bytes[-1],
         f"{r.paged_bytes[-1] // r.block_bytes} blocks × {r.block_bytes:,}"),
        ("paged (slots with tokens)", r.paged_steps[-1].used_bytes,
         "the rest: empty slots of last blocks"),
    ]
    for label, value, note in rows:
        print(f"  {label:<27}{value:>12,}   {note}")
    print(
        f"  hand count: P//b = {r.shared_prompt_blocks} shared prompt block(s) + Σ(⌈len/b⌉ − "
        f"{r.shared_prompt_blocks}) = {r.hand_count_blocks} blocks "
        f"({'matches' if r.hand_count_blocks * r.block_bytes == r.paged_bytes[-1] else 'DIFFERS'})"
    )
    print(
        f"  copies on write: {r.copies_on_write}; same samples in all three: "
        f"{'yes' if r.same_samples else 'NO'}; the pool's storage: "
        f"{r.paged_steps[-1].pool_bytes:,} bytes (blocks held plus free blocks)"
    )
    print(
        f"  greedy, {r.greedy_tokens} tokens: paged chooses the dynamic cache's tokens: "
        f"{'yes' if r.greedy_identical else 'NO'}"
    )


def print_quantized(r: QuantLabResult) -> None:
    print()
    ref = r.reference
    print(
        f"Quantized caches vs the model's own (fp{ref.bits}) cache: greedy, P={r.prompt_tokens}, "
        f"N={r.new_tokens}, cache holds {ref.cache_tokens} tokens"
    )
    print(
        f"  {'cache':<8}{'bytes':>11}{'formula':>11}{'× smaller':>11}"
        f"{'max |Δlogit|':>14}{'diverges at':>13}  answer"
    )
    name = f"fp{ref.bits}"
    print(
        f"  {name:<8}{ref.cache_bytes:>11,}{ref.formula_bytes:>11,}{1:>11.2f}"
        f"{'—':>14}{'—':>13}  reference"
    )
    for run in r.runs:
        ratio = ref.cache_bytes / max(run.cache_bytes, 1)
        step = "—" if run.first_divergent_step is None else f"step {run.first_divergent_step}"
        changed = "changed" if run.answer_changed else "same"
        print(
            f"  {run.kind:<8}{run.cache_bytes:>11,}{run.formula_bytes:>11,}{ratio:>11.2f}"
            f"{table_float(run.max_logit_diff):>14}{step:>13}  {changed}"
        )
    print("  layouts: fp16 2 bytes a number; int8 1 byte + a float16 scale per token and K/V head;")
    print("  int4 two numbers a byte + the same scales. max |Δlogit| is over the steps whose")
    print("  context still equals the reference's (up to and including the first divergent step).")
