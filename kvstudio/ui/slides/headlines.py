"""The lesson's headline numbers for each live chart, computed from the runs on screen.

Owns `Headline` (one large line and a few smaller ones) and one function per
chart: tokens fed ("246 vs 13,728 tokens fed"), time per step (TTFT and
ms/token per mode), KV cache ("2,048 B per token · 204,800 B per 100 tokens")
and repeated sampling ("distinct answers 10 / 29 / 30"). Every number comes
from the run's records or the model's shapes, never from a constant: read
from `RunTrace` / `RunStore` (totals, formulas, the runs with steps, the run
whose cache is shown) and `AnswerCounts`, the same sources the charts' export
headlines read. The presenter view shows them; nothing here draws.

Two runs of different length are never set side by side as if they were one
comparison: tokens fed are compared at the steps both runs have (and the
headline says so), times say that N differs. `keep_together` is the line-break
policy every headline is shown with: a line breaks only between its " · "
parts, and inside a long part never between a number and its unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from PySide6.QtCore import QCoreApplication

from kvstudio.charts.korean import attach_particles
from kvstudio.charts.plots.names import mode_name
from kvstudio.engine.records import MODES
from kvstudio.ui.run.engine_adapter import AnswerCounts
from kvstudio.ui.run.store import RunStore, RunTrace

NBSP = "\u00a0"
SEPARATOR = " · "
WHOLE_PART = 28  # a " · " part this long or shorter never breaks inside
_AROUND_NUMBER = re.compile(r"(?<=[\d%×])\s+(?=\S)|(?<=[=≈≥≤<>:→])\s+(?=[\d−-])"
                            r"|(?<=\S)\s+(?=[=≈≥≤]\s*\d)")


@dataclass(frozen=True)
class Headline:
    big: str  # the one number to read from the back row
    lines: list[str] = field(default_factory=list)  # what it is made of


def count(n: float) -> str:
    """13728 → "13,728" (the course writes thousands this way in both languages)."""
    return f"{round(n):,}"


def keep_together(text: str) -> str:
    """`text` with its particles fitted and no line break inside a number and its unit.

    The line-break policy: breaks go between " · " parts; a part of at most
    `WHOLE_PART` characters is kept whole (non-breaking spaces), a longer one
    may break between words but never after a number ("204,800 B", "N = 64",
    "2.7 ms/token" stay on one line).
    """
    parts = []
    for part in attach_particles(text).split(SEPARATOR):
        if len(part) <= WHOLE_PART:
            parts.append(part.replace(" ", NBSP))
        else:
            parts.append(_AROUND_NUMBER.sub(NBSP, part))
    return SEPARATOR.join(parts)


def lab_headline(text: str) -> Headline:
    """A lab's export headline for the presenter: its first line big, the rest below."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return Headline(QCoreApplication.translate("Headlines", "Run the lab to see its numbers"))
    return Headline(lines[0], lines[1:])


def _same_n(traces: list[RunTrace]) -> bool:
    return len({len(t.records) for t in traces}) <= 1


def _different_n(traces: list[RunTrace]) -> str:
    """"runs of different length: Cached N = 64, Recompute N = 5"."""
    return QCoreApplication.translate("Headlines", "runs of different length: {0}").format(
        ", ".join(f"{mode_name(t.mode)} N = {len(t.records)}" for t in traces))


def tokens_fed(store: RunStore) -> Headline:
    totals = {t.mode: t for t in store.stepped_traces()}
    if not totals:
        return Headline(
            QCoreApplication.translate("Headlines", "Step to feed the model"),
            [QCoreApplication.translate("Headlines", "Tokens fed appear after a step.")],
        )
    fed = {mode: trace.tokens_fed_total for mode, trace in totals.items()}
    same_n = _same_n(list(totals.values()))
    if len(fed) == 2 and same_n:
        big = QCoreApplication.translate("Headlines", "{0} vs {1} tokens fed").format(
            count(fed["cached"]), count(fed["recompute"])
        )
    elif len(fed) == 2:  # compared where both runs are: the first n steps of each
        n = min(len(t.records) for t in totals.values())
        at_n = {mode: t.tokens_fed_cumulative[n - 1] for mode, t in totals.items()}
        big = QCoreApplication.translate("Headlines", "{0} vs {1} tokens fed in N = {2} steps"
                                         ).format(count(at_n["cached"]),
                                                  count(at_n["recompute"]), n)
    else:
        ((mode, total),) = fed.items()
        big = QCoreApplication.translate("Headlines", "{0} tokens fed ({1})").format(
            count(total), mode_name(mode)
        )
    lines = []
    for mode in MODES:
        trace = totals.get(mode)
        if trace is None:
            continue
        p, n = trace.info.prompt_len, len(trace.records)
        formula = (
            QCoreApplication.translate("Headlines", "P+(N−1)")
            if mode == "cached"
            else QCoreApplication.translate("Headlines", "P·N+N(N−1)/2")
        )
        lines.append(
            QCoreApplication.translate("Headlines", "{0}: P = {1}, N = {2} → {3} = {4}").format(
                mode_name(mode), p, n, formula, count(trace.formula_total)
            )
        )
    if len(fed) == 2 and fed["cached"] > 0:
        if same_n:
            lines.append(
                QCoreApplication.translate("Headlines", "recompute fed {0:.1f}× as many").format(
                    fed["recompute"] / fed["cached"]
                )
            )
        else:
            lines.append(_different_n(list(totals.values())))
    return Headline(big, lines)


def step_time(store: RunStore) -> Headline:
    traces = store.stepped_traces()
    if not traces:
        return Headline(QCoreApplication.translate("Headlines", "Step to time the model"), [])
    parts, lines = [], []
    for trace in traces:
        per_token = trace.decode_ms_per_token
        ttft = trace.ttft_ms or 0.0
        if per_token is not None:
            parts.append(
                QCoreApplication.translate("Headlines", "{0}: {1:.1f} ms/token").format(
                    mode_name(trace.mode), per_token
                )
            )
        lines.append(
            QCoreApplication.translate(
                "Headlines", "{0}: time to first token {1:.1f} ms, {2} steps"
            ).format(mode_name(trace.mode), ttft, len(trace.records))
        )
    if not _same_n(traces):
        lines.append(_different_n(traces))
    big = (
        " · ".join(parts)
        if parts
        else QCoreApplication.translate("Headlines", "TTFT {0:.1f} ms").format(
            traces[0].ttft_ms or 0.0
        )
    )
    return Headline(big, lines)


def cache_bytes(store: RunStore) -> Headline:
    trace = store.cache_trace
    if trace is None:
        return Headline(QCoreApplication.translate("Headlines", "Step to fill the cache"), [])
    info = trace.info
    per_token = info.formula_cache_bytes(1)
    big = QCoreApplication.translate("Headlines", "{0} B per token · {1} B per 100 tokens").format(
        count(per_token), count(info.formula_cache_bytes(100))
    )
    lines = [
        QCoreApplication.translate("Headlines", "2·L·H_kv·d·bytes = 2·{0}·{1}·{2}·{3}").format(
            info.num_layers, info.num_kv_heads, info.head_dim, info.dtype_bytes
        )
    ]
    record = trace.last
    if trace.mode == "cached" and record is not None:
        lines.append(
            QCoreApplication.translate(
                "Headlines", "measured now: {0} B for T = {1} tokens"
            ).format(count(record.cache_used_bytes), record.cache_length)
        )
    elif trace.mode == "recompute":
        lines.append(QCoreApplication.translate("Headlines", "recompute keeps no cache"))
    return Headline(big, lines)


def answers(counts: AnswerCounts | None) -> Headline:
    if counts is None or not counts.temperatures:
        return Headline(QCoreApplication.translate("Headlines", "Sample ×N to count answers"), [])
    distinct = " / ".join(str(counts.distinct(i)) for i in range(len(counts.temperatures)))
    temps = " / ".join(f"{t:g}" for t in counts.temperatures)
    return Headline(
        QCoreApplication.translate("Headlines", "distinct answers {0}").format(distinct),
        [
            QCoreApplication.translate("Headlines", "T = {0}").format(temps),
            QCoreApplication.translate("Headlines", "{0} samples per temperature").format(
                counts.samples_per_temperature
            ),
        ],
    )
