"""Saved runs: a run's step records plus what produced them, as versioned JSON.

Owns the run file format (``kvstudio-run``, version 1), writing it atomically,
reading it back with a `ValueError` that says what is wrong for any bad or
partial file, and `RunReplay`, which hands the saved records out one step at
a time with no model loaded — for a classroom laptop that should not compute
live. One file may hold several runs (e.g. the latest cached and recompute
runs that a window shows side by side) and the Sample ×N results shown with
them (`SavedSamples`, under ``"samples"``; older files have none).

It knows nothing about Qt or how runs are drawn.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kvstudio.engine.cache.spec import CACHE_KINDS, CacheSpec
from kvstudio.engine.records import Mode, SamplingSettings, StepRecord
from kvstudio.engine.small_files import (
    FieldCheck,
    read_bool,
    read_fields,
    read_float,
    read_int,
    read_list,
    read_str,
)
from kvstudio.files import runfile_checks as checks
from kvstudio.files.folder_write import atomic_write_bytes

log = logging.getLogger(__name__)

RUN_FORMAT = "kvstudio-run"
RUN_FORMAT_VERSION = 1
RUN_SUFFIX = ".kvrun.json"


@dataclass(frozen=True)
class ModelFacts:
    """The cache geometry of the model that made a run, so formulas can be redrawn."""

    num_layers: int = 0  # L
    num_kv_heads: int = 0  # H_kv
    head_dim: int = 0  # d
    dtype_bytes: int = 4  # bytes per cached number
    max_positions: int = 0  # positions the model handles; 0 = not recorded (older files)


@dataclass(frozen=True)
class SavedRun:
    """One run: its inputs, settings and every step record."""

    model_name: str
    prompt: str  # the text as typed
    prompt_ids: tuple[int, ...]  # what the model saw (after the chat template, if any)
    mode: Mode
    sampling: SamplingSettings
    max_new_tokens: int
    cache: CacheSpec = field(default_factory=CacheSpec)
    use_chat_template: bool = False
    model: ModelFacts = field(default_factory=ModelFacts)
    records: tuple[StepRecord, ...] = ()
    prompt_pieces: tuple[str, ...] = ()  # text each prompt token adds, for token chips
    note: str = ""  # free text, e.g. which lecture this is for

    @property
    def text(self) -> str:
        """The generated text of row 0, as the records report it."""
        return "".join(r.token_texts[0] for r in self.records if r.token_texts)


@dataclass(frozen=True)
class SavedSamples:
    """One Sample ×N result: distinct answers and their counts per temperature."""

    prompt: str  # the text as typed
    temperatures: tuple[float, ...]
    samples_per_temperature: int  # N
    answer_tokens: int  # the most tokens each answer could have
    counts: tuple[tuple[tuple[str, int], ...], ...]  # per temperature: (answer, count), most first
    sampling: SamplingSettings = field(default_factory=SamplingSettings)  # the other knobs
    use_chat_template: bool = False

    def distinct(self, index: int) -> int:
        return len(self.counts[index])


MAX_SAMPLE_SETS = 16  # Sample ×N results one file holds
MAX_SAMPLES = 100_000  # answers per temperature a file may claim
MAX_TEMPERATURES = 64


def samples_to_dict(samples: SavedSamples) -> dict[str, Any]:
    return {
        "prompt": samples.prompt,
        "use_chat_template": samples.use_chat_template,
        "temperatures": list(samples.temperatures),
        "samples_per_temperature": samples.samples_per_temperature,
        "answer_tokens": samples.answer_tokens,
        "sampling": _dataclass_dict(samples.sampling),
        "counts": [[[answer, n] for answer, n in row] for row in samples.counts],
    }


# ---- writing -------------------------------------------------------------------------------
def run_to_dict(run: SavedRun, keep_logits: bool = False) -> dict[str, Any]:
    records = []
    for record in run.records:
        d = record.to_dict()
        if not keep_logits:
            d["last_logits"] = None  # a vocabulary of floats per step: large, rarely needed
        records.append(d)
    return {
        "model_name": run.model_name,
        "prompt": run.prompt,
        "prompt_ids": list(run.prompt_ids),
        "mode": run.mode,
        "sampling": _dataclass_dict(run.sampling),
        "max_new_tokens": run.max_new_tokens,
        "cache": _dataclass_dict(run.cache),
        "use_chat_template": run.use_chat_template,
        "model": _dataclass_dict(run.model),
        "prompt_pieces": list(run.prompt_pieces),
        "note": run.note,
        "records": records,
    }


def _dataclass_dict(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def dumps_runs(
    runs: Sequence[SavedRun], keep_logits: bool = False, samples: Sequence[SavedSamples] = ()
) -> str:
    document: dict[str, Any] = {
        "format": RUN_FORMAT,
        "version": RUN_FORMAT_VERSION,
        "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runs": [run_to_dict(r, keep_logits) for r in runs],
    }
    if samples:
        document["samples"] = [samples_to_dict(s) for s in samples]
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


def save_runs(
    path: str | os.PathLike[str],
    runs: SavedRun | Sequence[SavedRun],
    keep_logits: bool = False,
    samples: Sequence[SavedSamples] = (),
) -> Path:
    """Write runs (and Sample ×N results) to `path` atomically; ValueError says why it failed."""
    items = [runs] if isinstance(runs, SavedRun) else list(runs)
    if not items:
        raise ValueError("There is no run to save yet: step the model at least once.")
    data = dumps_runs(items, keep_logits, samples).encode("utf-8")
    target = Path(path)
    if not target.parent.is_dir():
        raise ValueError(f"Cannot save the run: the folder {target.parent} does not exist.")
    try:
        atomic_write_bytes(target, data)
    except OSError as exc:
        raise ValueError(
            f"Cannot save the run to {target}: {exc.strerror or exc}. Choose a folder you can "
            "write to with free space; nothing was written."
        ) from exc
    log.info("Saved %d run(s) to %s", len(items), target)
    return target


# ---- reading -------------------------------------------------------------------------------
def load_runs(path: str | os.PathLike[str]) -> list[SavedRun]:
    """Read a run file; every problem is a ValueError naming the file and what to do.

    Only a regular file of at most `MAX_RUN_FILE_BYTES` is read (a FIFO or a
    link to a device is refused at once), and every value is checked before it
    becomes a record (see ``runfile_checks``).
    """
    p = Path(path)
    return loads_runs(checks.read_run_bytes(p), str(p))


def loads_runs(data: bytes | str, where: str = "the run file") -> list[SavedRun]:
    return _runs_of(_document(data, where), where)


def _document(data: bytes | str, where: str) -> dict[str, Any]:
    """The run file's JSON object, parsed once, its format and version checked."""
    if len(data) > checks.MAX_RUN_FILE_BYTES:
        raise ValueError(f"{where} is too large to be a KV Studio run file.")
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{where} is not a KV Studio run file (not UTF-8 text).") from exc
    else:
        text = data
    if not text.strip():
        raise ValueError(f"{where} is empty; it was probably not saved completely.")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        # A string that never ends ran into the end of the file (json reports a raw
        # line break inside a string differently), so both mean the file was cut.
        # A literal cut in half ("fals", "nu") fails where it starts.
        tail = text[exc.pos :].strip()
        half_literal = bool(tail) and any(
            word.startswith(tail) for word in ("true", "false", "null", "NaN", "-Infinity")
        )
        cut = (
            exc.pos >= len(text.rstrip()) - 1
            or exc.msg.startswith("Unterminated string")
            or half_literal
            or (exc.msg.startswith("Invalid \\u") and exc.pos >= len(text.rstrip()) - 6)
        )
        hint = (
            "the file is cut short (an interrupted copy?)"
            if cut
            else (f"{exc.msg} at line {exc.lineno}")
        )
        raise ValueError(f"{where} is not valid JSON: {hint}. Save the run again.") from exc
    except RecursionError as exc:
        raise ValueError(
            f"{where} is nested far deeper than a run file; it is damaged or not a run file."
        ) from exc
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise ValueError(f"{where} is not a KV Studio run file ({exc}).") from exc
    if not isinstance(document, dict) or document.get("format") != RUN_FORMAT:
        raise ValueError(
            f'{where} is not a KV Studio run file (expected "format": "{RUN_FORMAT}").'
        )
    version = document.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"{where} has no valid format version; save the run again.")
    if version > RUN_FORMAT_VERSION:
        raise ValueError(
            f"{where} was saved by a newer KV Studio (format {version}; this one reads up to "
            f"{RUN_FORMAT_VERSION}). Update KV Studio to open it."
        )
    return document


def _runs_of(document: dict[str, Any], where: str) -> list[SavedRun]:
    runs = document.get("runs")
    if not isinstance(runs, list) or not runs:
        raise ValueError(f"{where} holds no runs.")
    if len(runs) > checks.MAX_RUNS:
        raise ValueError(f"{where} holds {len(runs)} runs; a run file holds at most "
                         f"{checks.MAX_RUNS}.")
    return [_run_from_dict(r, f"{where}, run {i + 1}") for i, r in enumerate(runs)]


# What each setting in a file may hold; the dataclasses check their own ranges.
_SAMPLING_FIELDS: dict[str, FieldCheck] = {
    "temperature": lambda v, w: read_float(v, w, -math.inf, math.inf),
    "top_k": lambda v, w: read_int(v, w, 0, checks.MAX_TOKEN_ID),
    "top_p": lambda v, w: read_float(v, w, -math.inf, math.inf),
    "repetition_penalty": lambda v, w: read_float(v, w, -math.inf, math.inf),
    "seed": lambda v, w: read_int(v, w, -(1 << 63), (1 << 64) - 1),
}
_CACHE_FIELDS: dict[str, FieldCheck] = {
    "kind": read_str,
    "max_length": lambda v, w: read_int(v, w, 1, checks.MAX_POSITIONS),
    "window": lambda v, w: read_int(v, w, 1, checks.MAX_POSITIONS),
    "block_size": lambda v, w: read_int(v, w, 1, checks.MAX_POSITIONS),
}
_FACT_FIELDS: dict[str, FieldCheck] = {
    "num_layers": lambda v, w: read_int(v, w, 0, checks.MAX_LAYERS),
    "num_kv_heads": lambda v, w: read_int(v, w, 0, 4096),
    "head_dim": lambda v, w: read_int(v, w, 0, 65_536),
    "dtype_bytes": lambda v, w: read_int(v, w, 1, 8),
    "max_positions": lambda v, w: read_int(v, w, 0, checks.MAX_POSITIONS),
}


def _run_from_dict(data: Any, where: str) -> SavedRun:
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} is not an object.")
    checks.require(
        data,
        ("model_name", "prompt", "prompt_ids", "mode", "sampling", "max_new_tokens", "records"),
        where,
    )
    mode = checks.read_mode(data["mode"], f"{where}: mode")
    try:
        sampling = read_fields(SamplingSettings, data["sampling"], "sampling", _SAMPLING_FIELDS)
        cache = read_fields(CacheSpec, data.get("cache", {}), "cache", _CACHE_FIELDS)
        facts = read_fields(ModelFacts, data.get("model", {}), "model", _FACT_FIELDS)
    except ValueError as exc:
        raise ValueError(f"{where} has bad settings: {exc}") from exc
    if cache.kind not in CACHE_KINDS:
        raise ValueError(f"{where} has an unknown cache kind {cache.kind!r}.")
    prompt_ids = read_list(
        data["prompt_ids"], f"{where}: prompt_ids",
        lambda v, w: read_int(v, w, 0, checks.MAX_TOKEN_ID), min_length=1,
    )
    max_new = read_int(data["max_new_tokens"], f"{where}: max_new_tokens", 1, checks.MAX_POSITIONS)
    raw_records = data["records"]
    if not isinstance(raw_records, list):
        raise ValueError(f"{where}: records must be a list.")
    checks.check_lengths(where, len(prompt_ids), max_new, len(raw_records), facts.max_positions)
    records: list[StepRecord] = []
    for i, raw in enumerate(raw_records):
        records.append(checks.read_record(
            raw, f"{where}, step {i}", step=i, mode=mode, prompt_len=len(prompt_ids),
            batch=records[0].batch_size if records else None, layers=facts.num_layers,
        ))
    pieces = read_list(data.get("prompt_pieces", []), f"{where}: prompt_pieces", read_str)
    if pieces and len(pieces) != len(prompt_ids):
        raise ValueError(f"{where}: prompt_pieces has {len(pieces)} entries for "
                         f"{len(prompt_ids)} prompt tokens.")
    return SavedRun(
        model_name=read_str(data["model_name"], f"{where}: model_name"),
        prompt=read_str(data["prompt"], f"{where}: prompt"),
        prompt_ids=prompt_ids,
        mode=mode,
        sampling=sampling,
        max_new_tokens=max_new,
        cache=cache,
        use_chat_template=read_bool(data.get("use_chat_template", False),
                                    f"{where}: use_chat_template"),
        model=facts,
        records=tuple(records),
        prompt_pieces=pieces,
        note=read_str(data.get("note", ""), f"{where}: note"),
    )


@dataclass(frozen=True)
class RunFile:
    """Everything a run file holds: the runs and the Sample ×N results."""

    runs: tuple[SavedRun, ...]
    samples: tuple[SavedSamples, ...] = ()


def load_run_file(path: str | os.PathLike[str]) -> RunFile:
    """`load_runs` plus the file's Sample ×N results, every value checked the same way."""
    p = Path(path)
    return loads_run_file(checks.read_run_bytes(p), str(p))


def loads_run_file(data: bytes | str, where: str = "the run file") -> RunFile:
    document = _document(data, where)  # parsed once: a 30,000-step file is 0.6 s of JSON
    runs = _runs_of(document, where)  # every problem with the file as a whole is reported here
    raw = document.get("samples", [])
    samples = read_list(raw, f"{where}: samples", _samples_from_dict, max_length=MAX_SAMPLE_SETS)
    return RunFile(tuple(runs), samples)


def _temperature(value: Any, where: str) -> float:
    return read_float(value, where, 0.0, 1e6)


def _answer_count(value: Any, where: str) -> tuple[str, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"{where} must be an [answer, count] pair.")
    return read_str(value[0], f"{where}: answer"), read_int(
        value[1], f"{where}: count", 1, MAX_SAMPLES)


def _samples_from_dict(data: Any, where: str) -> SavedSamples:
    """A Sample ×N result from a file: every value checked, the counts adding up to N."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} is not an object.")
    checks.require(data, ("prompt", "temperatures", "samples_per_temperature", "answer_tokens",
                          "counts"), where)
    temperatures = read_list(data["temperatures"], f"{where}: temperatures", _temperature,
                             min_length=1, max_length=MAX_TEMPERATURES)
    n = read_int(data["samples_per_temperature"], f"{where}: samples_per_temperature", 1,
                 MAX_SAMPLES)
    answer_tokens = read_int(data["answer_tokens"], f"{where}: answer_tokens", 1,
                             checks.MAX_POSITIONS)
    rows = read_list(data["counts"], f"{where}: counts",
                     lambda v, w: read_list(v, w, _answer_count, max_length=n),
                     length=len(temperatures))
    for t, row in zip(temperatures, rows, strict=True):
        total = sum(c for _, c in row)
        if total != n:
            raise ValueError(f"{where}, T = {t:g}: the counts add up to {total}, not the {n} "
                             "samples; the file is damaged.")
        if len({a for a, _ in row}) != len(row):
            raise ValueError(f"{where}, T = {t:g}: an answer is counted twice; the file is "
                             "damaged.")
    try:
        sampling = read_fields(SamplingSettings, data.get("sampling", {}), "sampling",
                               _SAMPLING_FIELDS)
    except ValueError as exc:
        raise ValueError(f"{where} has bad sampling settings: {exc}") from exc
    return SavedSamples(
        prompt=read_str(data["prompt"], f"{where}: prompt"),
        temperatures=temperatures,
        samples_per_temperature=n,
        answer_tokens=answer_tokens,
        counts=rows,
        sampling=sampling,
        use_chat_template=read_bool(data.get("use_chat_template", False),
                                    f"{where}: use_chat_template"),
    )


# ---- replay --------------------------------------------------------------------------------
class RunReplay:
    """Hands out a saved run's records one step at a time; no model needed.

    Mirrors the part of `Stepper` a viewer uses: `step()`, `finished`,
    `step_index`, iteration, plus `reset()` to start over.
    """

    def __init__(self, run: SavedRun) -> None:
        if not run.records:
            raise ValueError("This saved run has no steps to replay.")
        self.run = run
        self.mode: Mode = run.mode
        self._position = 0

    @property
    def finished(self) -> bool:
        return self._position >= len(self.run.records)

    @property
    def step_index(self) -> int:
        return self._position

    @property
    def total_steps(self) -> int:
        return len(self.run.records)

    @property
    def records(self) -> list[StepRecord]:
        """The records handed out so far (what a live stepper's `records` would hold)."""
        return list(self.run.records[: self._position])

    def step(self) -> StepRecord:
        if self.finished:
            raise ValueError("The replay is at its end; reset it to play it again.")
        record = self.run.records[self._position]
        self._position += 1
        return record

    def reset(self) -> None:
        self._position = 0

    def __iter__(self) -> Iterator[StepRecord]:
        while not self.finished:
            yield self.step()

