"""`kvstudio serve-bench URL`: the serving lab's requests against a served engine.

Owns the ``serve-bench`` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its text: the server (vLLM, SGLang, llama.cpp's
``llama-server`` or any other OpenAI-compatible one, known by its metrics),
then per request when it was sent, TTFT, the inter-token latency median and
95th percentile (gaps between streamed chunks), end-to-end, the tokens and
cached prompt tokens the server reported; then the server's own metrics over
the run (counters: their change; gauges: before, peak while running, after).
With ``--compare`` the same file runs through KV Studio's engine on the course's
chat model, and its figures stand beside the server's (prefix hits beside the
server's cached tokens, answer tokens beside its generated tokens, and per
request whether the answers are the same text). The work is
``kvstudio.labs.serving.served``; nothing is sent anywhere but the URL given.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kvstudio.cli import args as cli_args
from kvstudio.cli import common
from kvstudio.cli.lab_options import add_lab_option
from kvstudio.cli.serving import requests_options
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.serving.records import PREFIX_MODES, PrefixMode, SchedulerConfig
from kvstudio.engine.serving.request_file import read_request_lines
from kvstudio.labs import bounds
from kvstudio.labs.course import COURSE
from kvstudio.labs.registry import SERVING
from kvstudio.labs.serving import openai_http, served
from kvstudio.labs.serving.lab import EXAMPLE_REQUESTS, load_requests, serving, shared_system
from kvstudio.labs.serving.records import SchedulerRun, ServingResult

# The prefix cache KV Studio's run uses beside each server (--prefix-cache auto).
PREFIX_FOR_SERVER: dict[str, PrefixMode] = {
    "vLLM": "blocks", "SGLang": "radix", "llama.cpp": "radix", "unknown": "blocks"}


def add_subcommands(sub: Any) -> None:
    """Register ``serve-bench`` on the one parser (``kvstudio.cli.main``)."""
    s = sub.add_parser(
        "serve-bench",
        help="the serving lab's requests against a served engine (vLLM, SGLang, llama-server)",
        description="Send a requests file to an OpenAI-compatible server with streaming, "
        "measure TTFT, inter-token latency and end-to-end per request, and read the server's "
        "Prometheus /metrics before and after (vLLM, SGLang, llama.cpp). Nothing is sent "
        "anywhere but URL.",
    )
    s.add_argument("url", metavar="URL",
                   help=f"the server's address, e.g. {openai_http.EXAMPLE_URL} (/v1 optional)")
    s.add_argument("--model", dest="served_model", default=None, metavar="NAME",
                   help="the model name the server serves (default: its only one)")
    requests_options(s)
    s.add_argument("--plain", action="store_true",
                   help="POST /v1/completions with plain text (system prompt, newline, "
                   "question) instead of /v1/chat/completions with messages")
    add_lab_option(s, SERVING.param("answer_tokens"))
    s.add_argument("--temperature", type=cli_args.temperature, default=0.0,
                   help="0 = greedy (default), as KV Studio's run")
    s.add_argument("--seed", type=cli_args.seed, default=None,
                   help="sent with each request (servers that sample with a seed)")
    s.add_argument("--sequential", action="store_true",
                   help="send one request after another (default: each at its arrival, "
                   "concurrently)")
    s.add_argument("--step-ms", type=cli_args.argument_type(bounds.arrival_step_ms,
                                                             "whole number"),
                   default=round(served.DEFAULT_STEP_S * 1000),
                   help="'@K' in the file = sent K × this many ms after the first request "
                   f"(0 … {bounds.MAX_ARRIVAL_STEP_MS:,}; default "
                   f"{round(served.DEFAULT_STEP_S * 1000)})")
    s.add_argument("--timeout", type=cli_args.argument_type(bounds.server_timeout,
                                                             "whole number"),
                   default=round(openai_http.DEFAULT_TIMEOUT_S),
                   help="seconds to wait for any one answer or piece of a stream (1 … "
                   f"{bounds.MAX_SERVER_TIMEOUT_S:,}; "
                   f"default {round(openai_http.DEFAULT_TIMEOUT_S)})")
    s.add_argument("--compare", action="store_true",
                   help="also run the same requests through KV Studio's engine (continuous "
                   "batching) and show its figures beside the server's")
    s.add_argument("--prefix-cache", choices=("auto", *PREFIX_MODES), default="auto",
                   help="KV Studio's prefix cache for --compare (auto: blocks beside vLLM, "
                   "radix beside SGLang and llama.cpp)")
    add_lab_option(s, SERVING.param("max_batch"), " (--compare; --sequential: 1)")
    s.add_argument("--compare-model", dest="model", default=None, metavar="MODEL",
                   help="KV Studio's model for --compare: ko-chat (default, the course's), "
                   "ko-base, a model folder or a MiniMind .pth")
    s.add_argument("--threads", type=cli_args.thread_count, default=1,
                   help="torch CPU threads for --compare, 1 … the CPU cores (default 1)")
    s.set_defaults(func=cmd_serve_bench, dtype="float32", device="cpu")


def cmd_serve_bench(args: argparse.Namespace) -> int:
    path = args.requests if args.requests is not None else EXAMPLE_REQUESTS
    system = common.utf8_argument(shared_system(args.system or "", args.requests),
                                  "The system prompt")
    lines = read_request_lines(path)  # a bad file is refused before anything is sent
    endpoint: served.Endpoint = "completions" if args.plain else "chat"
    print(f"Requests: {len(lines)} from {path}"
          + (f" · system prompt {common.short(system, 40)!r}" if system else ""))
    run = served.serve_requests(
        args.url, lines, model=args.served_model, endpoint=endpoint, system=system,
        max_tokens=args.max_new_tokens, temperature=args.temperature, seed=args.seed,
        sequential=args.sequential, step_s=args.step_ms / 1000, timeout_s=args.timeout,
    )
    kv_run = kvstudio_run(args, path, lines, system, run) if args.compare else None
    print_run(run, kv_run)
    return 0


def kvstudio_run(args: argparse.Namespace, path: Path, lines: Any, system: str,
                 run: served.ServedRun) -> SchedulerRun:
    """The same requests through KV Studio's engine (one round: single measurements)."""
    loaded = common.prepare(args, COURSE.chat_model)
    requests = load_requests(path, loaded.tokenizer, loaded.backend, system=system,
                             max_new_tokens=args.max_new_tokens,
                             chat=False if args.plain else None, lines=lines)
    prefix: PrefixMode = (PREFIX_FOR_SERVER[run.server] if args.prefix_cache == "auto" else
                          args.prefix_cache)
    config = SchedulerConfig(policy="continuous", max_batch=1 if args.sequential else
                             args.max_batch, prefix_cache=prefix)
    sampling = (SamplingSettings.greedy_settings(COURSE.seed) if args.temperature == 0 else
                SamplingSettings(temperature=args.temperature, top_k=COURSE.top_k,
                                 top_p=COURSE.top_p, seed=args.seed or COURSE.seed))
    result: ServingResult = common.drain(
        serving(loaded.backend, loaded.tokenizer, requests, (config,), system=system,
                sampling=sampling, repeats=1), ServingResult)
    return result.runs[0]


def _ms(value: float | None) -> str:
    return "—" if value is None else common.ms(value)


def _count(value: int | float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.3g}"


def print_run(run: served.ServedRun, kv_run: SchedulerRun | None = None) -> None:
    how = ("one after another" if run.sequential else
           f"each at its arrival (@K = K × {run.step_s * 1000:g} ms), concurrently")
    print(f"Server: {run.server} at {run.url} · model {run.model!r} · "
          f"/v1/{'chat/completions' if run.endpoint == 'chat' else 'completions'} streamed · "
          f"{'greedy' if run.temperature == 0 else f'temperature {run.temperature:g}'} · "
          f"sent {how}")
    print("Times: single measurements on this machine's clock (one run of the file), in ms; "
          "ITL = the gaps between streamed chunks.")
    kv = {o.request.index: o for o in kv_run.outcomes} if kv_run is not None else {}
    header = (f"{'#':>3} {'@K':>4} {'sent':>9} {'TTFT':>9} {'ITL p50':>8} {'ITL p95':>8} "
              f"{'end-to-end':>10} {'chunks':>6} {'tokens':>6} {'prompt':>6} {'cached':>6}")
    if kv:
        header += f" {'KV Studio: prompt':>17} {'hit':>4} {'same answer':>11}"
    print(header)
    for r in run.requests:
        row = (f"{r.index + 1:>3} {r.arrival:>4} {_ms(r.sent_s):>9} {_ms(r.ttft_s):>9} "
               f"{_ms(r.itl_p50_s):>8} {_ms(r.itl_p95_s):>8} {_ms(r.e2e_s):>10} {r.chunks:>6} "
               f"{_count(r.completion_tokens):>6} {_count(r.prompt_tokens):>6} "
               f"{_count(r.cached_tokens):>6}")
        o = kv.get(r.index)
        if o is not None:
            same = "yes" if r.answer.strip() == o.answer_text.strip() else "no"
            row += f" {o.prompt_tokens:>17} {o.prefix_hit:>4} {same:>11}"
        print(row)
    for r in run.requests:
        print(f"  {r.index + 1:>2}. {common.short(r.text, 40)} → {common.short(r.answer, 70)}"
              + (f" [{r.finish_reason}]" if r.finish_reason else ""))
    print(f"Whole run: {common.ms(run.wall_s)} ms (single measurement)")
    print_metrics(run, kv_run)


def print_metrics(run: served.ServedRun, kv_run: SchedulerRun | None) -> None:
    print()
    if run.metrics_note:
        print(f"Server metrics: {run.metrics_note}")
        return
    if run.server == "unknown":
        print("Server metrics: no vLLM, SGLang or llama.cpp names; the counters that changed:")
        for m in run.metrics:
            print(f"  {m.name}: {_count(m.before)} → {_count(m.after)} (+{_count(m.delta)})")
        if not run.metrics:
            print("  (none)")
        return
    print(f"Server metrics ({run.server}, /metrics before and after, and {run.scrapes_during} "
          f"times while the requests ran, every {run.poll_s * 1000:g} ms; a gauge: before → "
          "the highest read → after, a peak between two reads is missed):")
    figures = served.kvstudio_figures(kv_run) if kv_run is not None else {}
    width = max(len(m.name) for m in run.metrics) if run.metrics else 0
    for m in run.metrics:
        if m.kind == "counter":
            value = f"+{_count(m.delta)}" if m.delta is not None else "—"
        else:
            value = f"{_count(m.before)} → max {_count(m.peak)} → {_count(m.after)}"
        line = f"  {m.name:<{width}}  {value:<24} {m.meaning}"
        if m.figure and m.figure in figures:
            line += (f" · KV Studio: {served.figure_label(m.figure)} "
                     f"{_count(figures[m.figure])}")
        print(line)
    rate = run.prefix_hit_rate
    if rate is not None:
        print(f"  prefix cache hit rate over the run: {rate:.1%} of the prompt tokens looked up")
    if kv_run is not None:
        print(f"KV Studio's run: {kv_run.config.label} · {kv_run.totals.steps} steps · "
              f"prefix hits {kv_run.totals.prefix_hit_tokens:,} tokens (one round: single "
              "measurements)")
