"""Reading a small file that a user pointed at, safely: a regular file only, never more than
a stated size.

Owns `read_capped`: the file is opened without blocking (a FIFO cannot hang
the caller), must be a regular file (not a device, pipe or folder), and is
read with a cap (a link to ``/dev/zero`` or a mistaken multi-gigabyte file
cannot fill memory). Every refusal is a `ValueError` naming the file and what
to choose instead. `read_text` and `read_json` add the decoding (UTF-8, then
JSON that is not nested absurdly deep), with the same kind of messages.

Every text or JSON file the app reads goes through here: run files
(``runfile_checks``), model and projector configs (``config``, ``scale``),
tokenizer files, chat turns, prompts, training data and reports.
Checkpoints and safetensors are read by their own loaders (``checkpoints``).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

MIB = 1024 * 1024


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

