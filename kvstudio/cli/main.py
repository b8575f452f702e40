"""The `kvstudio` command: the labs, headless (also `python -m kvstudio`).

Owns the one parser (`build_parser`; every subcommand module registers its
own subcommands on it), `main`, and the lab subcommands with their tables.
The work itself happens in ``kvstudio.labs`` (experiments), ``kvstudio.engine``
(formulas) and ``kvstudio.cli.bench``; this module only turns their results
into text. Errors the user can fix print one clear line and exit with status
2, never a traceback: number arguments have bounded types
(``kvstudio.cli.args``), sizes are checked against the model before any work,
and a run past the window's cost threshold (``engine.costs``) needs ``--yes``
(``common.confirm_cost``). Long runs show progress on stderr
(``common.drain``); model loading is ``common.load_backend``.

Subcommands: ``compare``, ``sample``, ``sweep``, ``bench``, ``info``; plus
``train``/``eval-model`` (``kvstudio.cli.train``), ``convert``
(``kvstudio.cli.convert``), ``chat`` (``kvstudio.cli.chat``) and ``project``
(``kvstudio.cli.project``, which also prints ``compare --cache
paged|fp16|int8|int4``'s extra tables). They are imported like any module: a
broken one fails at once, loudly.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

import torch

from kvstudio.cli import args as cli_args
from kvstudio.cli import bench, chat, common, convert, project, train
from kvstudio.engine import costs, formulas
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.kv_cache import ALL_CACHE_KINDS, CacheSpec
from kvstudio.engine.cache.layout import cache_plan
from kvstudio.engine.cache.quantized import QUANT_BITS
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import MODES, Mode, SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.common import Progress, check_fits, lab_prompt_ids
from kvstudio.labs.compare import CompareResult, ModeRun, compare_modes
from kvstudio.labs.sample import SamplingResult, repeated_sampling
from kvstudio.labs.sweep import SweepResult, length_sweep

log = logging.getLogger(__name__)

DEFAULT_QUESTION = "KV 캐시가 무엇인지 한 문장으로 설명해 주세요."


# ---- argument parsing ----------------------------------------------------------------------
# Every number argument has a bounded type from ``kvstudio.cli.args`` (shared by all subcommands).


class _Parser(argparse.ArgumentParser):
    """Mistakes on the command line are one `error:` line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see: {self.prog} --help)\n")


def _model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        default=None,
        help="model folder, MiniMind .pth, or transformers folder (default: the shipped model)",
    )
    p.add_argument("--dtype", default="float32", choices=("float32", "float16", "bfloat16"))
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument(
        "--threads", type=cli_args.thread_count, default=1,
        help="torch CPU threads, 1 … the CPU cores (default 1: see README)",
    )


def _cache_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache", default="dynamic", choices=ALL_CACHE_KINDS, help="KV cache kind")
    p.add_argument("--window", type=cli_args.tokens, default=64, help="sliding window W (tokens)")
    p.add_argument("--max-length", type=cli_args.tokens, default=2048, help="static cache length")
    p.add_argument(
        "--block-size", type=cli_args.tokens, default=16,
        help="paged cache block (tokens; at most the model's positions)",
    )


def _prompt_options(p: argparse.ArgumentParser, default_tokens: int | None) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--prompt-tokens",
        type=cli_args.tokens,
        default=default_tokens,
        help="build a prompt of exactly P tokens from the lab text (cut or repeated)",
    )
    group.add_argument("--prompt", default=None, help="prompt text instead")
    p.add_argument("--chat", action="store_true", help="wrap --prompt in the ChatML template")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="kvstudio",
        description="KV Studio labs, headless: the KV cache, tokens fed, timing and sampling.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser(
        "compare",
        help="cached vs recompute: tokens fed, times, cache bytes (the lab table)",
        description=(
            "Greedy generation in both modes. Exactly N tokens are generated (eos is ignored, "
            "like the notebook's min_new_tokens) so the formulas apply."
        ),
    )
    _prompt_options(c, 183)
    c.add_argument(
        "--new-tokens", type=cli_args.tokens, default=64, help="N new tokens (default 64)"
    )
    c.add_argument("--mode", default="both", choices=("both", "cached", "recompute"))
    c.add_argument("--stop-at-eos", action="store_true", help="stop when the model writes eos")
    c.add_argument(
        "--samples", type=cli_args.rows, default=30, help="--cache paged: rows of the sampling run"
    )
    c.add_argument(
        "--sample-tokens", type=cli_args.tokens, default=48,
        help="--cache paged: their token budget",
    )
    _cache_options(c)
    _model_options(c)
    common.add_yes_option(c)
    c.set_defaults(func=cmd_compare)

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
    s.add_argument("--prompt", default=None, help=f"question (default: {DEFAULT_QUESTION})")
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
    _model_options(s)
    common.add_yes_option(s)
    s.set_defaults(func=cmd_sample)

    w = sub.add_parser("sweep", help="time and tokens fed as P or N grows")
    w.add_argument("--vary", choices=("new", "prompt"), default="new")
    w.add_argument("--values", type=cli_args.token_list, default=[8, 16, 32, 64, 128])
    w.add_argument("--fixed", type=cli_args.tokens, default=64, help="the other length")
    _cache_options(w)
    _model_options(w)
    common.add_yes_option(w)
    w.set_defaults(func=cmd_sweep)

    i = sub.add_parser("info", help="describe the model and its KV cache geometry")
    _model_options(i)
    i.set_defaults(func=cmd_info)

    b = sub.add_parser("bench", help="speed: cached/recompute ms per token, TTFT, overhead")
    bench.add_arguments(b)
    b.set_defaults(func=bench.run_from_args)

    for module in (train, convert, chat, project):  # each registers its own subcommands
        module.add_subcommands(sub)
    return parser


# ---- helpers -------------------------------------------------------------------------------
def _cache_spec(args: argparse.Namespace) -> CacheSpec:
    return CacheSpec(
        args.cache, max_length=args.max_length, window=args.window, block_size=args.block_size
    )


def _prompt_text(text: str) -> str:
    """The prompt as given, if it is text: not empty or blank, valid UTF-8 (ValueError)."""
    common.utf8_argument(text)
    if not text.strip():
        raise ValueError("The prompt is empty: give a question or some text with --prompt.")
    return text


def _prompt_ids(args: argparse.Namespace, tokenizer: TextTokenizer) -> list[int]:
    if args.prompt is not None:
        prompt = _prompt_text(args.prompt)
        ids = tokenizer.chat_ids(prompt) if args.chat else tokenizer.encode(prompt)
        if not ids:
            raise ValueError("The prompt encodes to no tokens; give some text.")
        return ids
    return lab_prompt_ids(tokenizer, args.prompt_tokens)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.2f}"


def _short(text: str, width: int = 70) -> str:
    flat = text.replace("\n", "⏎")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# ---- compare -------------------------------------------------------------------------------
def cmd_compare(args: argparse.Namespace) -> int:
    loaded = common.prepare(args)
    backend, tokenizer = loaded.backend, loaded.tokenizer
    prompt = _prompt_ids(args, tokenizer)
    spec = _cache_spec(args)
    n = args.new_tokens
    modes: tuple[Mode, ...] = MODES if args.mode == "both" else (args.mode,)
    for mode in modes:  # positions and memory first: a run that cannot fit is not priced
        check_fits(backend, 1, len(prompt), n, mode, spec)
    fed = sum(costs.generation_cost(mode, len(prompt), n).tokens_fed for mode in modes)
    if spec.kind == "paged":  # three caches for the sampling run, then a greedy check
        question = len(tokenizer.chat_ids(DEFAULT_QUESTION))
        check_fits(backend, args.samples, question, args.sample_tokens, "cached", spec)
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
        f"Prompt: P={len(prompt)} tokens, N={n} new tokens, {spec.kind} cache"
        + (f" (W={spec.window})" if spec.kind == "sliding" else "")
        + f", greedy, {torch.get_num_threads()} torch thread(s), {backend.device}"
    )
    if args.mode == "both":
        result: CompareResult = common.drain(
            compare_modes(backend, tokenizer, prompt, n, cache=spec, stop_at_eos=args.stop_at_eos),
            CompareResult,
        )
        print_compare(result, backend)
    else:
        print_single(backend, tokenizer, prompt, n, args.mode, spec, args.stop_at_eos)
    if spec.kind == "paged" or spec.kind in QUANT_BITS:
        project.print_scale_sections(args, backend, tokenizer, prompt)
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


def print_compare(result: CompareResult, backend: LanguageModel) -> None:
    c, r = result.cached, result.recompute
    p, n = result.prompt_tokens, len(c.token_ids)
    rows = [
        ("tokens fed (measured)", f"{c.tokens_fed:,}", f"{r.tokens_fed:,}", ""),
        (
            "tokens fed (formula)",
            f"{c.tokens_fed_formula:,}",
            f"{r.tokens_fed_formula:,}",
            "P+(N−1) | P·N+N(N−1)/2",
        ),
        ("TTFT / prefill (ms)", _ms(c.ttft_seconds), _ms(r.ttft_seconds), ""),
        (
            "decode (ms/token)",
            _ms(c.decode_seconds_per_token),
            _ms(r.decode_seconds_per_token),
            "mean of steps after the prefill",
        ),
        ("total (ms)", _ms(c.total_seconds), _ms(r.total_seconds), ""),
        (
            "KV allocated (measured)",
            f"{c.cache_bytes:,}",
            f"{r.cache_bytes:,}",
            "storage the cache holds",
        ),
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
    print(f"  {'':<27}{'cached':>14}{'recompute':>14}")
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
    print(f"  max |Δlogit|:      {result.max_logit_diff:.3g} (over {n} steps, {why})")
    print(
        f"  formulas match:    tokens fed {'yes' if ok_fed else 'NO'}, "
        f"cache bytes {'yes' if ok_bytes else 'NO'} (allocated "
        f"{'yes' if c.allocated_matches else 'NO'}, used {'yes' if c.used_matches else 'NO'})"
    )
    print(f"  speed:             recompute took {result.speed_ratio:.1f}× as long as cached")
    print(f"  P={p}, N={n}: text (cached): {_short(c.text)!r}")


def print_single(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt: Sequence[int],
    n: int,
    mode: str,
    spec: CacheSpec,
    stop_at_eos: bool,
) -> None:
    stepper = Stepper(
        backend,
        tokenizer,
        prompt,
        mode="cached" if mode == "cached" else "recompute",
        sampling=SamplingSettings.greedy_settings(),
        max_new_tokens=n,
        cache=spec,
        stop_at_eos=stop_at_eos,
    )
    progress = common.ProgressLine()
    records = []
    try:
        for record in stepper:
            records.append(record)
            progress(Progress("compare", mode, len(records), n, record))
    finally:
        progress.close()
    steps = len(records)
    fed = sum(r.tokens_fed for r in records)
    formula = formulas.tokens_fed(stepper.mode, len(prompt), steps)
    decode = [r.elapsed_s for r in records[1:]]
    print()
    print(f"  mode                   {mode}")
    print(f"  tokens fed             {fed:,} measured, {formula:,} by the formula")
    print(f"  TTFT / prefill         {_ms(records[0].elapsed_s)} ms")
    if decode:
        print(f"  decode                 {_ms(sum(decode) / len(decode))} ms/token")
    print(f"  total                  {_ms(sum(r.elapsed_s for r in records))} ms")
    last = records[-1]
    print(f"  KV cache bytes         {last.cache_allocated_bytes:,} allocated, "
          f"{last.cache_used_bytes:,} used")
    print(f"  text                   {_short(stepper.text())!r}")


# ---- sample --------------------------------------------------------------------------------
def cmd_sample(args: argparse.Namespace) -> int:
    loaded = common.prepare(args)
    tokenizer = loaded.tokenizer
    question = _prompt_text(args.prompt) if args.prompt is not None else DEFAULT_QUESTION
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
        f"Prompt: {_short(question)!r} ({len(prompt)} tokens); {args.samples} samples × "
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
        top = "; ".join(f"{count}× {_short(text, 40)!r}" for text, count in t.counts[:show])
        print(
            f"  {t.temperature:>11g}  {t.distinct:>5}/{len(t.answers):<3} "
            f"{_ms(t.seconds):>10}   {top}"
        )
    print()
    print(f"  total generation time: {_ms(result.total_seconds)} ms")


# ---- sweep ---------------------------------------------------------------------------------
def cmd_sweep(args: argparse.Namespace) -> int:
    loaded = common.prepare(args)
    spec = _cache_spec(args)
    runs = [(v, args.fixed) if args.vary == "prompt" else (args.fixed, v) for v in args.values]
    for mode in MODES:  # the longest run must fit (as length_sweep checks), then the cost
        check_fits(loaded.backend, 1, max(p for p, _ in runs), max(n for _, n in runs), mode,
                   spec)
    fed = sum(costs.generation_cost(mode, p, n).tokens_fed for p, n in runs for mode in MODES)
    common.confirm_cost(args, fed, f"This sweep of {len(runs):,} length(s)",
                 "sweep fewer or shorter lengths")
    result: SweepResult = common.drain(
        length_sweep(
            loaded.backend,
            loaded.tokenizer,
            vary=args.vary,
            values=args.values,
            fixed=args.fixed,
            cache=spec,
        ),
        SweepResult,
    )
    print()
    print(
        f"  {'mode':<10}{'P':>6}{'N':>6}{'fed':>10}{'formula':>10}{'total ms':>11}{'ms/token':>10}"
    )
    for pt in result.points:
        print(
            f"  {pt.mode:<10}{pt.prompt_tokens:>6}{pt.new_tokens:>6}{pt.tokens_fed:>10,}"
            f"{pt.tokens_fed_formula:>10,}{_ms(pt.seconds):>11}"
            f"{_ms(pt.seconds / pt.new_tokens):>10}"
        )
    return 0


# ---- info ----------------------------------------------------------------------------------
def cmd_info(args: argparse.Namespace) -> int:
    loaded = common.prepare(args)
    b = loaded.backend
    per_token = formulas.bytes_per_token(b.num_layers, b.num_kv_heads, b.head_dim, b.dtype_bytes)
    print(
        f"KV cache: {b.num_layers} layers × {b.num_kv_heads} KV heads × {b.head_dim} dims × "
        f"{b.dtype_bytes} bytes × 2 (K and V) = {per_token:,} bytes per token"
    )
    plan = cache_plan(b, CacheSpec())  # the model's own attention, dynamic cache
    print(f"Layers: {plan.kinds_summary()}")
    if plan.is_hybrid:
        tokens = 4096
        full = formulas.cache_bytes(b.num_layers, tokens, b.num_kv_heads, b.head_dim,
                                    b.dtype_bytes)
        print(
            f"        sliding layers keep at most their window, so at T = {tokens:,} the cache "
            f"holds {plan.used_bytes(tokens):,} bytes, not {full:,} (every layer full)"
        )
    print(f"Tokenizer: {loaded.tokenizer.vocab_size} tokens; eos id {loaded.tokenizer.eos_id}")
    return 0


# ---- entry point ---------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None) or getattr(
        args, "handler", None
    )
    if handler is None:
        parser.error("choose a command")
    try:
        return int(handler(args) or 0)
    except ValueError as exc:
        log.debug("details", exc_info=True)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (OSError, RuntimeError) as exc:
        log.debug("details", exc_info=True)  # --verbose shows the traceback
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
