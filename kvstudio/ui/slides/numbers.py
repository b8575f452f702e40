"""numbers.json: the one layout the slide pack's numbers have, from the window and the script.

Owns `NUMBERS_VERSION`, `TOP_LEVEL_KEYS` and `numbers_document`, which both
writers call (Lecture → Export slide pack in ``classroom.py`` and
``scripts/export_examples.py``), plus the pieces they share: `live_numbers`
(one entry per live run, by mode) and `sample_numbers` (Sample ×N); and the
pack's tables from the same records: `live_tables` (<mode>-steps.csv) and
`answer_rows` (sample-answers.csv). The
layout is documented in docs/window.md ("numbers.json"); `export_slide_pack`
adds ``slide_canvas``, ``headlines`` and ``skipped_empty_charts``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from kvstudio.engine.records import Mode
from kvstudio.ui.plots.answer_histogram import ordered_answers
from kvstudio.ui.run.engine_adapter import AnswerCounts
from kvstudio.ui.run.store import RunTrace

NUMBERS_VERSION = 2  # 1 was the two layouts before this one (script vs window)

# Every numbers.json has these keys, whichever writer made it (a value may be null or empty).
TOP_LEVEL_KEYS = ("version", "language", "model", "live", "samples", "ttft_repeated_ms", "labs")


def live_numbers(traces: Iterable[RunTrace]) -> dict[str, Any]:
    """The live runs' numbers, by mode ("cached", "recompute"), at the step looked at."""
    out: dict[str, Any] = {}
    for trace in traces:
        info = trace.info
        sampling = info.request.settings.sampling
        out[trace.mode] = {
            "model": info.model or None,  # the run's own model (the window's may have changed)
            "greedy": sampling.temperature == 0,  # temperature 0 means argmax
            "temperature": sampling.temperature,
            "prompt": info.request.prompt,
            "prompt_tokens": info.prompt_len,
            "steps": len(trace.records),
            "tokens_fed": trace.tokens_fed_total,
            "ttft_ms": trace.ttft_ms,
            "decode_ms_per_token": trace.decode_ms_per_token,
            "cache_bytes": trace.last.cache_total_bytes if trace.last else 0,
            "text": trace.generated_text,
        }
    return out


def sample_numbers(counts: AnswerCounts) -> dict[str, Any]:
    """The Sample ×N result: its settings and each temperature's distinct answers."""
    return {
        "model": counts.model or None,  # the model that wrote the answers, not the window's now
        "prompt": counts.prompt,
        "samples_per_temperature": counts.samples_per_temperature,
        "answer_tokens": counts.answer_tokens,
        "sampling": asdict(counts.sampling) if counts.sampling is not None else None,
        "temperatures": [
            {"temperature": t, "greedy": t == 0, "distinct": counts.distinct(i),
             "counts": [list(pair) for pair in counts.counts[i]]}
            for i, t in enumerate(counts.temperatures)
        ],
    }


def numbers_document(
    *,
    language: str,
    model: str | None,
    traces: Iterable[RunTrace],
    counts: AnswerCounts | None,
    labs: Mapping[str, Any],
    ttft_repeated_ms: Mapping[Mode, Sequence[float]] | None = None,
) -> dict[str, Any]:
    """numbers.json's content (before the pack adds the canvas, headlines and skipped charts).

    `language` is the slides' language ("ko" or "en"); `model` the model's
    name (None when none is loaded); `traces` the live runs; `counts` the
    Sample ×N result if any; `labs` each lab's numbers by lab name;
    `ttft_repeated_ms` the repeated prefill's times per mode if measured.
    """
    return {
        "version": NUMBERS_VERSION,
        "language": language,
        "model": model,
        "live": live_numbers(traces),
        "samples": sample_numbers(counts) if counts is not None else None,
        "ttft_repeated_ms": ({mode: list(ms) for mode, ms in ttft_repeated_ms.items()}
                             if ttft_repeated_ms is not None else None),
        "labs": dict(labs),
    }


def _header(text: str) -> str:
    """A CSV column's name in the window's language (numbers.json keeps English keys)."""
    return QCoreApplication.translate("SlideTables", text)


# The CSV columns, for lupdate (each is looked up by `_header` when a pack is written).
_COLUMNS = (
    QT_TRANSLATE_NOOP("SlideTables", "step"), QT_TRANSLATE_NOOP("SlideTables", "phase"),
    QT_TRANSLATE_NOOP("SlideTables", "token"), QT_TRANSLATE_NOOP("SlideTables", "token_id"),
    QT_TRANSLATE_NOOP("SlideTables", "tokens_fed"),
    QT_TRANSLATE_NOOP("SlideTables", "elapsed_ms"),
    QT_TRANSLATE_NOOP("SlideTables", "cache_bytes"),
    QT_TRANSLATE_NOOP("SlideTables", "cache_length"), QT_TRANSLATE_NOOP("SlideTables", "mask"),
    QT_TRANSLATE_NOOP("SlideTables", "answer no."), QT_TRANSLATE_NOOP("SlideTables", "answer"),
    QT_TRANSLATE_NOOP("SlideTables", "count at T = {0} (of {1})"),
)


def live_tables(traces: Iterable[RunTrace]) -> dict[str, list[dict[str, Any]]]:
    """One row per step per run, for <mode>-steps.csv (at the step looked at)."""
    tables: dict[str, list[dict[str, Any]]] = {}
    for trace in traces:
        tables[f"{trace.mode} steps"] = [
            {
                _header("step"): r.step,
                _header("phase"): r.phase,
                _header("token"): r.token_texts[0] if r.token_texts else "",
                _header("token_id"): r.token_ids[0] if r.token_ids else -1,
                _header("tokens_fed"): r.tokens_fed,
                _header("elapsed_ms"): r.elapsed_s * 1000.0,
                _header("cache_bytes"): r.cache_total_bytes,
                _header("cache_length"): r.cache_length,
                _header("mask"): f"{r.attention_mask_shape[0]}x{r.attention_mask_shape[1]}",
            }
            for r in trace.records
        ]
    return tables


def answer_rows(counts: AnswerCounts) -> list[dict[str, Any]]:
    """sample-answers.csv: one row per distinct answer, its count at each temperature."""
    rows = []
    for number, (answer, per_t) in enumerate(ordered_answers(counts), start=1):
        # Numbered over all temperatures (the histogram's "answer no."), not a per-T rank.
        row: dict[str, Any] = {_header("answer no."): number, _header("answer"): answer}
        for t, n in zip(counts.temperatures, per_t, strict=True):
            row[_header("count at T = {0} (of {1})").format(
                f"{t:g}", counts.samples_per_temperature)] = n
        rows.append(row)
    return rows
