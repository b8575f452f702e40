"""A served engine's Prometheus metrics: read, and named for the serving lab.

Owns `parse_prometheus` (a small parser of Prometheus' text format: `Scrape`,
its `Sample`s), `KNOWN_METRICS` (the vLLM, SGLang and llama.cpp metrics the
serving lab explains, each with KV Studio's figure it is the counterpart of),
`server_kind` (which engine a scrape came from) and `metric_readings` (the
known counters' change over a run and the gauges' before, peak and after; for
a server it does not know, the counters that changed). ``served.py`` reads
``/metrics`` and uses it. It never imports Qt and never prints.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

ServerKind = Literal["vLLM", "SGLang", "llama.cpp", "unknown"]


# ---- Prometheus text format -----------------------------------------------------------------
@dataclass(frozen=True)
class Sample:
    """One line of a Prometheus scrape: a metric's name, its labels and its value."""

    name: str
    labels: tuple[tuple[str, str], ...]
    value: float


@dataclass(frozen=True)
class Scrape:
    """One read of ``/metrics``: its samples and the types its ``# TYPE`` lines declare."""

    samples: tuple[Sample, ...]
    types: tuple[tuple[str, str], ...] = ()  # (family name, counter|gauge|histogram|…)

    def total(self, name: str) -> float | None:
        """The sum of `name` over its label sets (one engine: one value); None if absent."""
        values = [s.value for s in self.samples if s.name == name]
        return math.fsum(values) if values else None

    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.name for s in self.samples))

    def type_of(self, name: str) -> str:
        """The declared type of `name`'s family ('' when undeclared)."""
        types = dict(self.types)
        for family in (name, name.removesuffix("_total"), name.removesuffix("_created")):
            if family in types:
                return types[family]
        return ""


_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|(?=\}))')
_ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def _number(text: str) -> float:
    """A sample value: a float, NaN, +Inf or -Inf (ValueError otherwise)."""
    value = {"+inf": math.inf, "inf": math.inf, "-inf": -math.inf}.get(text.lower())
    return float(text) if value is None else value


def parse_prometheus(text: str) -> Scrape:
    """The samples of Prometheus' text exposition format (``# HELP``, ``# TYPE``,
    ``name{label="value",…} value [timestamp]``). Lines it cannot read are skipped; a text
    with sample lines none of which it reads is not Prometheus' format (ValueError)."""
    samples: list[Sample] = []
    types: dict[str, str] = {}
    unread = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 4 and parts[1] == "TYPE":
                types[parts[2]] = parts[3].strip()
            continue
        sample = _parse_sample(line)
        if sample is None:
            unread += 1
        else:
            samples.append(sample)
    if unread and not samples:
        raise ValueError("The /metrics answer is not in Prometheus' text format "
                         f"({unread:,} lines, none of them a metric).")
    return Scrape(tuple(samples), tuple(types.items()))


def _parse_sample(line: str) -> Sample | None:
    match = _NAME.match(line)
    if match is None:
        return None
    name, rest = match.group(), line[match.end():]
    labels: list[tuple[str, str]] = []
    if rest.startswith("{"):
        pos = 1
        while True:
            if rest[pos:].lstrip().startswith("}"):
                pos = rest.index("}", pos) + 1
                break
            label = _LABEL.match(rest, pos)
            if label is None:
                return None
            text = re.sub(r"\\[\\\"n]", lambda m: _ESCAPES[m.group()], label.group(2))
            labels.append((label.group(1), text))
            pos = label.end()
        rest = rest[pos:]
    fields = rest.split()
    if not fields or len(fields) > 2 or (rest and not rest[0].isspace()):
        return None
    try:
        value = _number(fields[0])
    except ValueError:
        return None
    return Sample(name, tuple(labels), value)


# ---- the metrics each engine exports ---------------------------------------------------------
# KV Studio's figure each metric is the counterpart of (`kvstudio_figures`):
Figure = Literal["prompt_tokens", "prefill_tokens", "prefix_hit_tokens", "answer_tokens",
                 "steps", "preemptions", "peak_running", "peak_blocks_fraction", ""]


@dataclass(frozen=True)
class KnownMetric:
    """A metric one engine exports that the serving lab explains."""

    server: ServerKind
    names: tuple[str, ...]  # its name, then the names older versions gave it
    kind: Literal["counter", "gauge"]
    meaning: str
    figure: Figure = ""  # KV Studio's figure of the same kind ('' when none)


KNOWN_METRICS: tuple[KnownMetric, ...] = (
    # vLLM (V1 engine names first; older releases in the alternatives)
    KnownMetric("vLLM", ("vllm:prompt_tokens_total",), "counter",
                "prompt tokens of the requests (cached ones included)", "prompt_tokens"),
    KnownMetric("vLLM", ("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"),
                "counter", "prompt tokens looked up in the prefix cache"),
    KnownMetric("vLLM", ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
                "counter", "prompt tokens found in the prefix cache (whole blocks)",
                "prefix_hit_tokens"),
    KnownMetric("vLLM", ("vllm:generation_tokens_total",), "counter", "tokens generated",
                "answer_tokens"),
    KnownMetric("vLLM", ("vllm:num_preemptions_total",), "counter",
                "requests preempted (their blocks freed, recomputed later)", "preemptions"),
    KnownMetric("vLLM", ("vllm:request_success_total",), "counter", "requests finished"),
    KnownMetric("vLLM", ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"), "gauge",
                "fraction of the KV block pool in use (0–1)"),
    KnownMetric("vLLM", ("vllm:num_requests_running",), "gauge", "requests in the running batch",
                "peak_running"),
    KnownMetric("vLLM", ("vllm:num_requests_waiting",), "gauge", "requests waiting for room"),
    # SGLang (--enable-metrics)
    KnownMetric("SGLang", ("sglang:prompt_tokens_total",), "counter", "prompt tokens prefilled"),
    KnownMetric("SGLang", ("sglang:cached_tokens_total",), "counter",
                "prompt tokens found in the radix cache", "prefix_hit_tokens"),
    KnownMetric("SGLang", ("sglang:generation_tokens_total",), "counter", "tokens generated",
                "answer_tokens"),
    KnownMetric("SGLang", ("sglang:cache_hit_rate",), "gauge",
                "share of prompt tokens served from the radix cache"),
    KnownMetric("SGLang", ("sglang:token_usage",), "gauge",
                "fraction of the KV token pool in use (0–1)"),
    KnownMetric("SGLang", ("sglang:num_running_reqs",), "gauge", "requests running",
                "peak_running"),
    KnownMetric("SGLang", ("sglang:num_queue_reqs",), "gauge", "requests waiting"),
    # llama.cpp's llama-server (--metrics)
    KnownMetric("llama.cpp", ("llamacpp:prompt_tokens_total",), "counter",
                "prompt tokens evaluated (cached ones left out)", "prefill_tokens"),
    KnownMetric("llama.cpp", ("llamacpp:prompt_tokens_cached_total",), "counter",
                "prompt tokens reused from a slot's cache", "prefix_hit_tokens"),
    KnownMetric("llama.cpp", ("llamacpp:tokens_predicted_total",), "counter", "tokens generated",
                "answer_tokens"),
    KnownMetric("llama.cpp", ("llamacpp:n_decode_total",), "counter",
                "llama_decode() calls (model steps)", "steps"),
    KnownMetric("llama.cpp", ("llamacpp:n_busy_slots_per_decode",), "gauge",
                "average busy slots per llama_decode() (rows per step, since start)"),
    KnownMetric("llama.cpp", ("llamacpp:requests_processing",), "gauge", "requests in slots",
                "peak_running"),
    KnownMetric("llama.cpp", ("llamacpp:requests_deferred",), "gauge",
                "requests waiting for a slot"),
)
_PREFIXES: tuple[tuple[str, ServerKind], ...] = (
    ("vllm:", "vLLM"), ("sglang:", "SGLang"), ("llamacpp:", "llama.cpp"))


def server_kind(scrape: Scrape) -> ServerKind:
    """Which engine exported these metrics, by their names' prefixes."""
    counts = {kind: sum(n.startswith(prefix) for n in scrape.names())
              for prefix, kind in _PREFIXES}
    best = max(counts, key=lambda k: counts[k])
    return best if counts[best] else "unknown"


@dataclass(frozen=True)
class MetricReading:
    """One metric over the run: a counter's change, a gauge's before, peak and after."""

    name: str
    kind: Literal["counter", "gauge"]
    meaning: str
    before: float | None
    after: float | None
    peak: float | None = None  # gauges: the largest value read (before, while running, after)
    figure: Figure = ""

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


def _first_name(metric: KnownMetric, scrapes: Sequence[Scrape]) -> str | None:
    for name in metric.names:
        if any(s.total(name) is not None for s in scrapes):
            return name
    return None


def metric_readings(before: Scrape, after: Scrape, during: Sequence[Scrape] = ()
                    ) -> tuple[MetricReading, ...]:
    """The known metrics found (a counter's change, a gauge's before/peak/after); for an
    unknown server, every counter that changed (by its declared type or a ``_total`` name)."""
    readings: list[MetricReading] = []
    every = (before, *during, after)
    for metric in KNOWN_METRICS:
        name = _first_name(metric, every)
        if name is None:
            continue
        seen = [v for s in every if (v := s.total(name)) is not None]
        readings.append(MetricReading(
            name, metric.kind, metric.meaning, before.total(name), after.total(name),
            peak=max(seen) if metric.kind == "gauge" and seen else None, figure=metric.figure))
    if readings:
        return tuple(readings)
    for name in after.names():  # a server it does not know: the counters that moved
        declared = after.type_of(name)
        if declared != "counter" and not (declared in ("", "untyped") and
                                          name.endswith("_total")):
            continue
        old, new = before.total(name), after.total(name)
        if old is not None and new is not None and new != old:
            readings.append(MetricReading(name, "counter", "", old, new))
    return tuple(readings)
