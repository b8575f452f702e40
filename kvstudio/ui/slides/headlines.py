"""The lesson's headline numbers for each live chart, computed from the runs on screen.

Owns `Headline` (one large line and a few smaller ones) and one function per
chart: tokens fed ("246 vs 13,728 tokens fed"), time per step (TTFT and
ms/token per mode), KV cache ("2,048 B per token · 204,800 B per 100 tokens")
and repeated sampling ("distinct answers 10 / 29 / 30"). Every number comes
from the run's records or the model's shapes, never from a constant: read
from `RunTrace` / `RunStore` (totals, formulas, the runs with steps, the run
whose cache is shown) and `AnswerCounts`, the same sources the charts' export
headlines read. The presenter view shows them; nothing here draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QCoreApplication

from kvstudio.engine.records import MODES
from kvstudio.ui.app.names import mode_name
from kvstudio.ui.run.engine_adapter import AnswerCounts
from kvstudio.ui.run.store import RunStore


@dataclass(frozen=True)
class Headline:
    big: str  # the one number to read from the back row
    lines: list[str] = field(default_factory=list)  # what it is made of


def count(n: float) -> str:
    """13728 → "13,728" (the course writes thousands this way in both languages)."""
    return f"{round(n):,}"


def tokens_fed(store: RunStore) -> Headline:
    totals = {t.mode: t for t in store.stepped_traces()}
    if not totals:
        return Headline(
            QCoreApplication.translate("Headlines", "Step to feed the model"),
            [QCoreApplication.translate("Headlines", "Tokens fed appear after a step.")],
        )
    fed = {mode: trace.tokens_fed_total for mode, trace in totals.items()}
    if len(fed) == 2:
        big = QCoreApplication.translate("Headlines", "{0} vs {1} tokens fed").format(
            count(fed["cached"]), count(fed["recompute"])
        )
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
        same_n = len(totals["cached"].records) == len(totals["recompute"].records)
        if same_n:
            lines.append(
                QCoreApplication.translate("Headlines", "recompute fed {0:.1f}× as many").format(
                    fed["recompute"] / fed["cached"]
                )
            )
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
