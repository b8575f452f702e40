"""The serving lab's requests against a served engine: any OpenAI-compatible server.

Owns `serve_requests`: it sends a requests file's questions (the serving lab's
format, ``engine/serving/request_file``) to a server that speaks OpenAI's API
(vLLM, SGLang, llama.cpp's ``llama-server`` …) with ``stream: true``, one
thread per request, each sent at its arrival (``@K`` = K × `step_s` after the
first) or one after another (`sequential`), and measures from the stream, per
request: TTFT (send → first streamed text), the gaps between streamed chunks
(ITL median and 95th percentile), end-to-end, and the tokens the server
reports (``usage``; llama.cpp's ``timings`` also say how many prompt tokens it
took from its cache). Before and after, and every `poll_s` while the requests
run, it reads the server's Prometheus ``/metrics`` and reports, through
``metrics.py``, the counters it knows for vLLM, SGLang and llama.cpp (their
change over the run) and the gauges (before, peak while running, after); a
server it does not know gets the list of counters that changed.
`kvstudio_figures` gives KV Studio's own run's figures of the same kind, for
the comparison the command line prints.

Nothing leaves the machine unless the caller gives a URL: there is no default
server. Only the standard library talks to the server (urllib, threads): no
HTTP client to install for a lab that sends a handful of requests (see
docs/stack.md; the HTTP itself is ``openai_http.py``). Every failure is one
ValueError that says what to do: a bad
URL, nothing listening, an answer that is not OpenAI's, a timeout, an HTTP
error with the server's own message.

It never imports Qt and never prints.
"""

from __future__ import annotations

import http.client
import itertools
import json
import math
import statistics
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from kvstudio.engine.serving.request_file import RequestLine
from kvstudio.labs.serving.metrics import (
    MetricReading,
    Scrape,
    ServerKind,
    metric_readings,
    parse_prometheus,
    server_kind,
)
from kvstudio.labs.serving.openai_http import (
    DEFAULT_TIMEOUT_S,
    check_base_url,
    choose_model,
    error_text,
    open_url,
    read_body,
    served_models,
)
from kvstudio.labs.serving.records import SchedulerRun

Endpoint = Literal["chat", "completions"]

MAX_METRICS_BYTES = 16 * 1024 * 1024  # vLLM's histograms are a few hundred KB
MAX_STREAM_BYTES = 16 * 1024 * 1024  # one request's stream
MAX_LINE_BYTES = 1024 * 1024  # one SSE line
DEFAULT_STEP_S = 0.1  # '@K' = sent K × this after the first request
DEFAULT_POLL_S = 0.25  # /metrics read this often while requests run (the gauges' peaks)


def scrape_metrics(base: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> Scrape:
    """``GET /metrics`` as a `Scrape` (ValueError when absent or not Prometheus' text)."""
    url = f"{base}/metrics"
    raw = read_body(open_url(url, None, timeout_s), url, MAX_METRICS_BYTES, timeout_s)
    return parse_prometheus(raw.decode("utf-8", "replace"))


# ---- one streamed request ---------------------------------------------------------------------
@dataclass(frozen=True)
class ServedRequest:
    """One request as the server answered it, measured from its stream (seconds on this
    machine's clock, one measurement each)."""

    index: int  # its line order in the requests file (0, 1, …)
    text: str  # the question
    arrival: int  # @K from the file
    max_tokens: int  # the budget asked for
    sent_s: float  # when it was sent, after the run began
    ttft_s: float  # send → first streamed text
    e2e_s: float  # send → end of the stream
    chunks: int  # streamed pieces that carried text
    itl_p50_s: float | None  # median gap between those pieces (None: fewer than two)
    itl_p95_s: float | None
    answer: str
    finish_reason: str | None
    prompt_tokens: int | None = None  # as the server counted them (usage), if it said
    completion_tokens: int | None = None
    cached_tokens: int | None = None  # prompt tokens the server took from its cache, if it said


def _int_or_none(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def request_body(line: RequestLine, model: str, endpoint: Endpoint, system: str,
                 max_tokens: int, temperature: float, seed: int | None) -> dict[str, Any]:
    """The JSON of one streamed request, as the serving lab would feed it: ChatML-like
    messages (the server applies its chat template) or plain text (system, newline,
    question, as ``kvstudio serving --plain``)."""
    body: dict[str, Any] = {
        "model": model, "max_tokens": max_tokens, "temperature": temperature,
        "stream": True, "stream_options": {"include_usage": True},
    }
    if seed is not None:
        body["seed"] = seed
    if endpoint == "chat":
        messages = [{"role": "system", "content": system}] if system else []
        body["messages"] = [*messages, {"role": "user", "content": line.text}]
    else:
        body["prompt"] = f"{system}\n{line.text}" if system else line.text
    return body


def _event(payload: str, url: str) -> dict[str, Any]:
    try:
        event = json.loads(payload)
    except ValueError:
        raise ValueError(f"{url} streamed an event that is not JSON ({payload[:60]!r}): is it "
                         "an OpenAI-compatible server?") from None
    if not isinstance(event, dict):
        raise ValueError(f"{url} streamed {payload[:60]!r}, not an OpenAI event.")
    if "error" in event:
        raise ValueError(f"{url} reported an error in the stream: "
                         f"{error_text(json.dumps(event).encode())}")
    return event


def _event_text(event: dict[str, Any], endpoint: Endpoint) -> str:
    """The text one event carries ('' for a usage-only or role-only event)."""
    choices = event.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    choice = choices[0]
    if endpoint == "chat":
        delta = choice.get("delta")
        text = delta.get("content") if isinstance(delta, dict) else None
    else:
        text = choice.get("text")
    return text if isinstance(text, str) else ""


def _gaps(times: Sequence[float]) -> tuple[float | None, float | None]:
    gaps = [b - a for a, b in itertools.pairwise(times)]
    if not gaps:
        return None, None
    return float(statistics.median(gaps)), float(np.percentile(gaps, 95))


def measure_request(
    base: str, line: RequestLine, index: int, model: str, *, endpoint: Endpoint, system: str,
    max_tokens: int, temperature: float, seed: int | None, timeout_s: float, started: float,
) -> ServedRequest:
    """Send one request, streamed, and measure it (times after `started`, perf_counter)."""
    body = request_body(line, model, endpoint, system, max_tokens, temperature, seed)
    url = f"{base}/v1/chat/completions" if endpoint == "chat" else f"{base}/v1/completions"
    sent = time.perf_counter()
    response = open_url(url, body, timeout_s)
    times: list[float] = []
    pieces: list[str] = []
    finish: str | None = None
    usage: dict[str, Any] = {}
    timings: dict[str, Any] = {}
    for event in _events(response, url, timeout_s):
        now = time.perf_counter()
        text = _event_text(event, endpoint)
        if text:
            times.append(now)
            pieces.append(text)
        choices = event.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            finish = choices[0].get("finish_reason") or finish
        if isinstance(event.get("usage"), dict):
            usage = event["usage"]
        if isinstance(event.get("timings"), dict):
            timings = event["timings"]
    end = time.perf_counter()
    if not times:
        raise ValueError(f"{url} streamed no text for request {index + 1} ({line.text[:30]!r})"
                         f"{f', finish reason {finish}' if finish else ''}: is the model name "
                         "right, and does the endpoint stream?")
    p50, p95 = _gaps(times)
    details = usage.get("prompt_tokens_details")
    cached = _int_or_none(details.get("cached_tokens")) if isinstance(details, dict) else None
    if cached is None:
        cached = _int_or_none(timings.get("cache_n"))  # llama-server
    completion = _int_or_none(usage.get("completion_tokens"))
    if completion is None:
        completion = _int_or_none(timings.get("predicted_n"))
    prompt = _int_or_none(usage.get("prompt_tokens"))
    if prompt is None and "prompt_n" in timings:  # llama-server: evaluated + cached
        evaluated = _int_or_none(timings.get("prompt_n"))
        prompt = None if evaluated is None else evaluated + (cached or 0)
    return ServedRequest(
        index=index, text=line.text, arrival=line.arrival, max_tokens=max_tokens,
        sent_s=sent - started, ttft_s=times[0] - sent, e2e_s=end - sent, chunks=len(times),
        itl_p50_s=p50, itl_p95_s=p95, answer="".join(pieces), finish_reason=finish,
        prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached,
    )


def _events(response: http.client.HTTPResponse, url: str, timeout_s: float
            ) -> Iterator[dict[str, Any]]:
    """The JSON events of a server-sent event stream, up to ``data: [DONE]`` or its end."""
    where = urllib.parse.urlsplit(url).netloc
    read = 0
    try:
        while True:
            try:
                raw = response.readline(MAX_LINE_BYTES + 1)
            except TimeoutError:
                raise ValueError(f"{where} sent nothing for {timeout_s:g} s in the middle of "
                                 "an answer (a longer --timeout waits more).") from None
            except (http.client.HTTPException, OSError) as exc:
                raise ValueError(f"{where} broke off the stream ({exc}).") from None
            if not raw:
                return
            read += len(raw)
            if read > MAX_STREAM_BYTES or len(raw) > MAX_LINE_BYTES:
                raise ValueError(f"{url} streamed more than {MAX_STREAM_BYTES:,} bytes for "
                                 "one answer.")
            line = raw.decode("utf-8", "replace").strip()
            if not line or line.startswith((":", "event:", "id:", "retry:")):
                continue
            if not line.startswith("data:"):
                raise ValueError(f"{url} did not answer with an OpenAI event stream (got "
                                 f"{line[:60]!r}): is it an OpenAI-compatible server?")
            payload = line[5:].strip()
            if payload == "[DONE]":
                return
            yield _event(payload, url)
    finally:
        response.close()


# ---- the whole run ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ServedRun:
    """The requests file against one server: each request's measurement and the server's
    metrics over the run."""

    url: str
    model: str
    endpoint: Endpoint
    server: ServerKind  # by its metrics' names ('unknown' also when it has no /metrics)
    requests: tuple[ServedRequest, ...]  # in file order
    metrics: tuple[MetricReading, ...]  # known ones; for an unknown server the moved counters
    metrics_note: str | None  # why there are none (no /metrics, not Prometheus …)
    wall_s: float  # first send → last answer's end (one measurement)
    sequential: bool  # one request after another (else each at its arrival)
    step_s: float  # '@K' = sent K × step_s after the run began
    scrapes_during: int = 0  # /metrics reads while the requests ran
    system: str = ""
    temperature: float = 0.0
    poll_s: float = DEFAULT_POLL_S  # /metrics read this often while they ran

    def reading(self, *names: str) -> MetricReading | None:
        """The first of `names` the server reported."""
        for r in self.metrics:
            if r.name in names:
                return r
        return None

    @property
    def prefix_hit_rate(self) -> float | None:
        """vLLM's prefix cache hits over its queries during the run (None: not reported)."""
        hits = self.reading("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total")
        queries = self.reading("vllm:prefix_cache_queries_total",
                               "vllm:gpu_prefix_cache_queries_total")
        if hits is None or queries is None or hits.delta is None or not queries.delta:
            return None
        return hits.delta / queries.delta


@dataclass
class _Poller:
    """Reads /metrics every `poll_s` while the requests run (the gauges' peaks)."""

    base: str
    poll_s: float
    timeout_s: float
    scrapes: list[Scrape] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.wait(self.poll_s):
            try:
                self.scrapes.append(scrape_metrics(self.base, min(self.timeout_s, 5.0)))
            except ValueError:
                continue  # a missed reading only lowers the peak's resolution


def serve_requests(
    url: str,
    lines: Sequence[RequestLine],
    *,
    model: str | None = None,
    endpoint: Endpoint = "chat",
    system: str = "",
    max_tokens: int = 32,
    temperature: float = 0.0,
    seed: int | None = None,
    sequential: bool = False,
    step_s: float = DEFAULT_STEP_S,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    poll_s: float = DEFAULT_POLL_S,
) -> ServedRun:
    """Send `lines` (a requests file's, `read_request_lines`) to the server at `url`, streamed,
    and measure them; see the module doc. `max_tokens`: the budget of a line without ``+N``.
    ValueError, before any request is sent, for a bad URL, nothing listening, a server that
    does not speak OpenAI's API or does not serve `model`; after, for a failed request."""
    if not lines:
        raise ValueError("No requests to send.")
    if endpoint not in ("chat", "completions"):
        raise ValueError(f"Unknown endpoint {endpoint!r}; choose chat or completions.")
    for name, value in (("step", step_s), ("poll interval", poll_s), ("timeout", timeout_s)):
        if not math.isfinite(value) or value < 0 or (name != "step" and value <= 0):
            raise ValueError(f"The {name} must be a finite number of seconds above 0.")
    base = check_base_url(url)
    chosen = choose_model(model, served_models(base, timeout_s), base)
    note: str | None = None
    try:
        before: Scrape | None = scrape_metrics(base, timeout_s)
    except ValueError as exc:
        before = None
        note = (f"no metrics: {exc} (vLLM and SGLang export them at /metrics; llama-server "
                "with --metrics; SGLang with --enable-metrics)")
    poller = _Poller(base, poll_s, timeout_s)
    watcher = threading.Thread(target=poller.run, daemon=True) if before else None
    results: list[ServedRequest | None] = [None] * len(lines)
    errors: list[tuple[int, str]] = []
    started = time.perf_counter()

    def one(i: int) -> None:
        line = lines[i]
        try:
            results[i] = measure_request(
                base, line, i, chosen, endpoint=endpoint, system=system,
                max_tokens=line.max_new_tokens or max_tokens, temperature=temperature,
                seed=seed, timeout_s=timeout_s, started=started)
        except ValueError as exc:
            errors.append((i, str(exc)))

    if watcher is not None:
        watcher.start()
    try:
        if sequential:
            for i in range(len(lines)):
                one(i)
                if errors:
                    break
        else:
            threads = []
            for i in sorted(range(len(lines)), key=lambda j: lines[j].arrival):
                wait = started + lines[i].arrival * step_s - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                thread = threading.Thread(target=one, args=(i,), daemon=True)
                thread.start()
                threads.append(thread)
            for thread in threads:
                thread.join()
    finally:
        poller.stop.set()
        if watcher is not None:
            watcher.join()
    wall = time.perf_counter() - started
    if errors:
        i, message = min(errors)
        raise ValueError(f"Request {i + 1} ({lines[i].text[:30]!r}) failed: {message}")
    readings: tuple[MetricReading, ...] = ()
    kind: ServerKind = "unknown"
    if before is not None:
        try:
            after = scrape_metrics(base, timeout_s)
        except ValueError as exc:
            note = f"no metrics after the run: {exc}"
        else:
            kind = server_kind(after)
            readings = metric_readings(before, after, poller.scrapes)
    done = tuple(r for r in results if r is not None)
    return ServedRun(
        url=base, model=chosen, endpoint=endpoint, server=kind, requests=done,
        metrics=readings, metrics_note=note, wall_s=wall, sequential=sequential, step_s=step_s,
        scrapes_during=len(poller.scrapes), system=system, temperature=temperature,
        poll_s=poll_s,
    )


# ---- beside KV Studio's own run ---------------------------------------------------------------
def kvstudio_figures(run: SchedulerRun) -> dict[str, float]:
    """KV Studio's own figures for the same requests, keyed as `KnownMetric.figure`."""
    t = run.totals
    running = [sum(r.phase in ("prefill", "decode") for r in s.requests) for s in run.steps]
    return {
        "prompt_tokens": float(sum(o.prompt_tokens for o in run.outcomes)),
        "prefill_tokens": float(t.prefill_tokens),
        "prefix_hit_tokens": float(t.prefix_hit_tokens),
        "answer_tokens": float(t.answer_tokens),
        "steps": float(t.steps),
        "preemptions": float(t.preemptions),
        "peak_running": float(max(running, default=0)),
    }


def figure_label(figure: str) -> str:
    """How the comparison names KV Studio's figure."""
    return {
        "prompt_tokens": "prompt tokens",
        "prefill_tokens": "prompt tokens fed (prefix hits left out)",
        "prefix_hit_tokens": "prefix hits",
        "answer_tokens": "answer tokens",
        "steps": "scheduler steps",
        "preemptions": "preemptions",
        "peak_running": "most requests running at once",
    }.get(figure, figure)
