"""Reading a small file that a user pointed at, safely: a regular file only, never more than
a stated size.

Owns `read_capped`: the file is opened without blocking (a FIFO cannot hang
the caller), must be a regular file (not a device, pipe or folder), and is
read with a cap (a link to ``/dev/zero`` or a mistaken multi-gigabyte file
cannot fill memory). Every refusal is a `ValueError` naming the file and what
to choose instead. `read_text` and `read_json` add the decoding (UTF-8, then
JSON that is not nested absurdly deep), with the same kind of messages.
The small typed readers (`read_int`, `read_float`, `read_bool`, `read_str`,
`read_list`, `read_fields`) check the values such a file holds, each raising a
`ValueError` that names the field (`where`).

Every text or JSON file the app reads goes through here: run files
(``runfile_checks``), model and projector configs (``config``, ``scale``),
tokenizer files, chat turns, prompts, training data and reports.
Checkpoints and safetensors are read by their own loaders (``kvstudio.files.checkpoints``),
after `require_regular_file`.
It sits in the engine because the engine reads its own config.json and tokenizer files.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any, TypeVar

MIB = 1024 * 1024
MAX_LIST_ITEMS = 131_072  # entries in a list read from a file (a run file: one per position)

T = TypeVar("T")


def require_regular_file(path: Path, expected: str) -> None:
    """ValueError unless `path` is a regular file; for files a library reads itself.

    Checked with ``stat`` (which follows links), never by opening: a FIFO or a device
    named as model weights must be refused before ``safetensors`` or ``torch.load``
    opens it, since they block (holding the GIL) or read without end.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError as exc:
        raise ValueError(f"{path} does not exist; choose {expected}.") from exc
    except OSError as exc:
        raise ValueError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(
            f"{path} is not a regular file (a device, pipe or folder); choose {expected}."
        )


def read_capped(path: Path, limit: int, expected: str) -> bytes:
    """The file's bytes, if it is a regular file of at most `limit` bytes; else ValueError.

    `expected` names what the file should be, for the messages
    (e.g. "a saved run (.kvrun.json)").
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError as exc:
        raise ValueError(f"{path} does not exist; choose {expected}.") from exc
    except OSError as exc:
        raise ValueError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(
                f"{path} is not a regular file (a device, pipe or folder); choose {expected}."
            )
        if info.st_size > limit:
            raise ValueError(_too_big(path, limit, expected))
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(MIB, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise ValueError(_too_big(path, limit, expected))
        return b"".join(chunks)
    except OSError as exc:
        raise ValueError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    finally:
        os.close(fd)


def _too_big(path: Path, limit: int, expected: str) -> str:
    size = f"{limit // MIB} MiB" if limit >= MIB else f"{limit // 1024} KiB"
    return f"{path} is larger than {size}, far more than {expected} holds; choose {expected}."


def read_text(path: Path, limit: int, expected: str, *, encoding: str = "utf-8") -> str:
    """The file as text (`read_capped`, then decoded); ValueError naming the file if not text.

    `encoding` may be ``"utf-8-sig"`` for files a spreadsheet saved (a BOM first).
    """
    raw = read_capped(path, limit, expected)
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is not UTF-8 text ({exc.reason}); save it as UTF-8 or choose {expected}."
        ) from None


def read_json(path: Path, limit: int, expected: str) -> Any:
    """The file's JSON value (`read_text`, then parsed); ValueError naming the file if not JSON.

    Arrays nested thousands deep (the parser recurses once per level) and numbers
    of thousands of digits are refused with the same kind of message.
    """
    text = read_text(path, limit, expected)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); fix it or choose "
            f"{expected}."
        ) from None
    except RecursionError:
        raise ValueError(
            f"{path} is nested thousands of levels deep; it is damaged or not {expected}."
        ) from None
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise ValueError(f"{path} cannot be read as JSON ({exc}); choose {expected}.") from None


# ---- small typed readers -----------------------------------------------------------------------
def read_int(value: Any, where: str, low: int, high: int) -> int:
    """An integer (not a bool, not a float) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where} must be a whole number, got {show_value(value)}.")
    if not low <= value <= high:
        raise ValueError(f"{where} must be between {low:,} and {high:,}, got {show_value(value)}.")
    return value


def read_float(value: Any, where: str, low: float, high: float) -> float:
    """A finite number in [low, high] (integers allowed)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where} must be a number, got {show_value(value)}.")
    try:
        number = float(value)
    except OverflowError as exc:
        raise ValueError(f"{where} is too large, got {show_value(value)}.") from exc
    if not math.isfinite(number) or not low <= number <= high:
        if math.isinf(low) and math.isinf(high):
            raise ValueError(f"{where} must be a finite number, got {show_value(value)}.")
        raise ValueError(f"{where} must be a finite number between {low:g} and {high:g}, "
                         f"got {show_value(value)}.")
    return number


def read_bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{where} must be true or false, got {show_value(value)}.")
    return value


def read_str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{where} must be text, got {show_value(value)}.")
    return value


def read_list(
    value: Any,
    where: str,
    item: Callable[[Any, str], T],
    *,
    length: int | None = None,
    min_length: int = 0,
    max_length: int = MAX_LIST_ITEMS,
) -> tuple[T, ...]:
    """A list whose items pass `item`; `length` (if given) or the bounds fix its size."""
    if not isinstance(value, list):
        raise ValueError(f"{where} must be a list, got {show_value(value)}.")
    if length is not None and len(value) != length:
        raise ValueError(f"{where} must have {length} entries, got {len(value)}.")
    if not min_length <= len(value) <= max_length:
        raise ValueError(
            f"{where} must have {min_length} to {max_length:,} entries, got {len(value):,}."
        )
    return tuple(item(v, f"{where}[{i}]") for i, v in enumerate(value))


FieldCheck = Callable[[Any, str], Any]


def read_fields(
    cls: type[T], value: Any, where: str, checks: Mapping[str, FieldCheck]
) -> T:
    """A frozen dataclass from an object: each known field passes its check, the rest default.

    A field without its own check is checked by the type of its default (a
    bounded whole number, a finite number, text or true/false), so a setting
    added to the dataclass later is still checked; the dataclass's own
    validation then checks its range. Keys the dataclass does not have are
    ignored, so files written by a version with more settings still open.
    """
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be an object, got {show_value(value)}.")
    kwargs: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name not in value:
            if f.default is MISSING and f.default_factory is MISSING:
                raise ValueError(f"{where} lacks {f.name}; the file is incomplete.")
            continue
        check = checks.get(f.name) or _check_like(f.default)
        if check is None:
            raise ValueError(f"{where}.{f.name} cannot be read from a file.")
        kwargs[f.name] = check(value[f.name], f"{where}.{f.name}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where} is not valid: {exc}") from exc


def _check_like(default: Any) -> FieldCheck | None:
    """A check for a field from the type of its default value (None if it has no plain type)."""
    if isinstance(default, bool):
        return read_bool
    if isinstance(default, int):
        return lambda v, w: read_int(v, w, -(1 << 63), (1 << 63) - 1)
    if isinstance(default, float):
        return lambda v, w: read_float(v, w, -math.inf, math.inf)
    if isinstance(default, str):
        return read_str
    return None


def show_value(value: Any) -> str:
    """A short, safe description of a bad value (never the repr of a deep structure)."""
    if isinstance(value, bool | float) or value is None:
        return repr(value)
    if isinstance(value, int):
        digits = len(str(abs(value))) if abs(value) < 10**40 else 41
        return repr(value) if digits <= 40 else f"a number of {digits}+ digits"
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else repr(value[:40] + "…")
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__
