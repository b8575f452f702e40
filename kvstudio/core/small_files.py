"""Reading a small file that a user pointed at, safely: a regular file only, never more than
a stated size.

Owns `read_capped`: the file is opened without blocking (a FIFO cannot hang
the caller), must be a regular file (not a device, pipe or folder), and is
read with a cap (a link to ``/dev/zero`` or a mistaken multi-gigabyte file
cannot fill memory). Every refusal is a `ValueError` naming the file and what
to choose instead. Run files (``runfile_checks``) and model configs
(``config``) read through it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

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
