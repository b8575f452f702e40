"""Checks for everything a run file holds, before any of it reaches a record or a plot.

Owns reading a run file safely (a regular file only, never more than
`MAX_RUN_FILE_BYTES`, so a FIFO or a link to ``/dev/zero`` is refused at once)
and the field checks `runfile.loads_runs` applies: every number finite and in
range, every list the right length, and the numbers consistent with each other
(steps numbered 0, 1, 2 …, at most `max_new_tokens` records, prompt plus new
tokens within the positions a model can have). A bad value is a `ValueError`
naming the field and what is wrong, so nothing damaged is drawn, replayed or
exported later.

To check a new part of the file, add a function that takes the parsed value
and a `where` string and returns the typed value, built from the small
readers in ``kvstudio.engine.small_files`` (`read_int`, `read_float`, `read_str`,
`read_list`, `read_fields`).
It knows nothing about Qt, and does not build `SavedRun` itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kvstudio.engine.records import MODES, Candidate, Mode, StepRecord
from kvstudio.engine.small_files import (
    read_bool,
    read_capped,
    read_float,
    read_int,
    read_list,
    read_str,
)
from kvstudio.engine.small_files import show_value as _show

MAX_RUN_FILE_BYTES = 64 * 1024 * 1024  # a saved run is ≈1 KB per step: room for ~30,000 steps
MAX_POSITIONS = 131_072  # prompt + new tokens in any run file (the largest contexts stepped)
MAX_BATCH = 4096  # rows per record
MAX_LAYERS = 1024
MAX_BYTES = 1 << 50  # one pebibyte: more than any cache this app can hold
MAX_SECONDS = 86_400.0  # one step taking more than a day is a damaged number
MAX_TOKEN_ID = (1 << 31) - 1
MAX_RUNS = 64
# One logits row per step when kept: a vocabulary's floats. 2^18 is above every
# vocabulary KV Studio steps (Qwen3's embeddings have 151,936 rows); 2,000,000
# entries were read and checked one by one for 9 s.
MAX_VOCABULARY = 1 << 18


# ---- reading the file ------------------------------------------------------------------------
def read_run_bytes(path: Path) -> bytes:
    """The run file's bytes, if it is a regular file of at most `MAX_RUN_FILE_BYTES`; else
    ValueError (see `small_files.read_capped`)."""
    return read_capped(path, MAX_RUN_FILE_BYTES, "a saved run (.kvrun.json)")


def read_mode(value: Any, where: str) -> Mode:
    if value not in MODES:
        raise ValueError(
            f"{where} is an unknown mode {_show(value)} (expected cached or recompute)."
        )
    return value  # type: ignore[no-any-return]


# ---- step records ------------------------------------------------------------------------------
def _token_id(value: Any, where: str) -> int:
    return read_int(value, where, 0, MAX_TOKEN_ID)


def _count(value: Any, where: str) -> int:
    return read_int(value, where, 0, MAX_TOKEN_ID)


def _probability(value: Any, where: str) -> float:
    return read_float(value, where, 0.0, 1.0)


def _byte_count(value: Any, where: str) -> int:
    return read_int(value, where, 0, MAX_BYTES)


def _layer_bytes(value: Any, where: str) -> tuple[int, int]:
    k, v = read_list(value, where, _byte_count, length=2)
    return k, v


def _candidate(value: Any, where: str) -> Candidate:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be an object, got {_show(value)}.")
    for key in ("token_id", "text", "probability"):
        if key not in value:
            raise ValueError(f"{where} lacks {key}.")
    return Candidate(
        _token_id(value["token_id"], f"{where}.token_id"),
        read_str(value["text"], f"{where}.text"),
        _probability(value["probability"], f"{where}.probability"),
    )


def _logit(value: Any, where: str) -> float:
    if value == -math.inf:  # a masked logit is a real value
        return -math.inf
    return read_float(value, where, -math.inf, math.inf)


RECORD_KEYS = (
    "step", "phase", "mode", "token_ids", "token_texts", "tokens_fed", "elapsed_s",
    "cache_layer_bytes", "cache_allocated_bytes", "cache_used_bytes", "cache_length",
    "attention_mask_shape", "survivors_top_k", "survivors_top_p", "chosen_probability",
    "top_candidates", "finished",
)


def read_record(
    raw: Any, where: str, *, step: int, mode: Mode, prompt_len: int, batch: int | None,
    layers: int,
) -> StepRecord:
    """One step record, checked field by field against the run it belongs to.

    `batch` is the first record's row count (None for the first record);
    `layers` the model's layer count (0 if the file does not say).
    """
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where} must be an object, got {_show(raw)}.")
    missing = [k for k in RECORD_KEYS if k not in raw]
    if missing:
        raise ValueError(
            f"{where} is not a complete step record (lacks {', '.join(missing)}); "
            "the file is damaged."
        )
    number = read_int(raw["step"], f"{where}.step", 0, MAX_POSITIONS)
    if number != step:
        raise ValueError(f"{where} is numbered {number}; steps must run 0, 1, 2, …")
    phase = raw["phase"]
    if phase not in ("prefill", "decode"):
        raise ValueError(f"{where}.phase must be prefill or decode, got {_show(phase)}.")
    if raw["mode"] != mode:
        raise ValueError(f"{where}: mode {_show(raw['mode'])} differs from the run's.")
    ids = read_list(raw["token_ids"], f"{where}.token_ids", _token_id, min_length=1,
                    max_length=MAX_BATCH)
    rows = len(ids) if batch is None else batch
    if len(ids) != rows:
        raise ValueError(f"{where} has {len(ids)} rows but the run's first step has {rows}.")
    known = prompt_len + step  # tokens known before this step
    layer_bytes = read_list(raw["cache_layer_bytes"], f"{where}.cache_layer_bytes",
                            _layer_bytes, max_length=MAX_LAYERS,
                            **({"length": layers} if layers else {}))
    allocated = _byte_count(raw["cache_allocated_bytes"], f"{where}.cache_allocated_bytes")
    used = _byte_count(raw["cache_used_bytes"], f"{where}.cache_used_bytes")
    if used > allocated:
        raise ValueError(f"{where}: the cache uses {used:,} bytes but holds only {allocated:,}.")
    mask = read_list(raw["attention_mask_shape"], f"{where}.attention_mask_shape",
                     lambda v, w: read_int(v, w, 1, max(MAX_POSITIONS, MAX_BATCH)), length=2)
    forward_rows = read_int(raw.get("forward_rows", 0), f"{where}.forward_rows", 0, rows)
    last_logits = raw.get("last_logits")
    if isinstance(last_logits, list) and len(last_logits) > MAX_VOCABULARY:  # before any entry
        raise ValueError(
            f"{where}.last_logits holds {len(last_logits):,} logits; a logits row is one per "
            f"token of the vocabulary, at most {MAX_VOCABULARY:,}. The file is damaged: save "
            "the run again."
        )
    return StepRecord(
        step=number,
        phase=phase,
        mode=mode,
        token_ids=ids,
        token_texts=read_list(raw["token_texts"], f"{where}.token_texts", read_str,
                              length=rows),
        tokens_fed=read_int(raw["tokens_fed"], f"{where}.tokens_fed", 1, known),
        elapsed_s=read_float(raw["elapsed_s"], f"{where}.elapsed_s", 0.0, MAX_SECONDS),
        cache_layer_bytes=layer_bytes,
        cache_allocated_bytes=allocated,
        cache_used_bytes=used,
        cache_length=read_int(raw["cache_length"], f"{where}.cache_length", 0, known),
        attention_mask_shape=(mask[0], mask[1]),
        survivors_top_k=read_list(raw["survivors_top_k"], f"{where}.survivors_top_k", _count,
                                  length=rows),
        survivors_top_p=read_list(raw["survivors_top_p"], f"{where}.survivors_top_p", _count,
                                  length=rows),
        chosen_probability=read_list(raw["chosen_probability"],
                                     f"{where}.chosen_probability", _probability, length=rows),
        top_candidates=read_list(
            raw["top_candidates"], f"{where}.top_candidates",
            lambda v, w: read_list(v, w, _candidate, max_length=1000), length=rows),
        finished=read_list(raw["finished"], f"{where}.finished", read_bool, length=rows),
        last_logits=None if last_logits is None else read_list(
            last_logits, f"{where}.last_logits", _logit, max_length=MAX_VOCABULARY),
        forward_rows=forward_rows,
    )


def check_lengths(where: str, prompt_len: int, max_new_tokens: int, records: int,
                  max_positions: int) -> None:
    """Prompt and budget fit the positions, and the records fit the budget."""
    limit = max_positions or MAX_POSITIONS
    if prompt_len + max_new_tokens > limit:
        raise ValueError(
            f"{where}: {prompt_len:,} prompt tokens + max_new_tokens {max_new_tokens:,} is "
            f"more than the {limit:,} positions a model can have; the file is damaged."
        )
    if records > max_new_tokens:
        raise ValueError(
            f"{where} holds {records:,} steps but max_new_tokens is {max_new_tokens:,}."
        )


def require(data: Mapping[str, Any], keys: Sequence[str], where: str) -> None:
    missing = [k for k in keys if k not in data]
    if missing:
        raise ValueError(f"{where} lacks {', '.join(missing)}; the file is incomplete.")
